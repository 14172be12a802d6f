"""A pure-Python stand-in for a distributed keyed runtime, to test KeyedDriver without Flink.

It behaves like Flink's keyed operator where it matters: each key's state is pickled between
calls, the runtime keeps at most one timer per key and millisecond, watermarks lag behind the
events by an arbitrary (random) amount and only ever grow, timers of different keys fire in an
arbitrary order, and the end of input brings the final watermark.
"""

from __future__ import annotations

import math
import pickle
import random
from collections.abc import Hashable, Sequence

from workbench.backends.base import Input, compile_all
from workbench.backends.keyed import HostOutput, KeyedDriver, KeyRecord, collect_results
from workbench.backends.replay import plan_replay
from workbench.engine.matcher import Matcher
from workbench.engine.runtime import RunResult

END = 2**63 - 1


def simulate(
    matchers: Sequence[Matcher],
    inputs: Sequence[Input],
    *,
    rng: random.Random,
    out_of_orderness: int | float = 0,
    until: int | None = None,
    finish: bool = True,
    trace: bool = False,
) -> RunResult:
    """Run through KeyedDriver as a distributed runtime would, with random watermark progress."""
    plan = plan_replay(inputs, out_of_orderness=out_of_orderness, until=until, finish=finish)
    host = KeyedDriver(
        compile_all(matchers), horizon=plan.horizon, final_after=plan.final_after, tracing=trace
    )
    states: dict[Hashable, bytes] = {}
    timers: set[tuple[int, Hashable]] = set()
    outputs: list[HostOutput] = []
    watermark = -(2**63)
    max_ts = -(2**63)

    def wake(state: KeyRecord, key: Hashable) -> None:
        # One runtime timer per key, at its next due item (as the Flink operator does).
        due = host.next_due(state)
        if due is not None and (state.wake is None or _millis(due) < state.wake):
            state.wake = _millis(due)
            timers.add((state.wake, key))

    def fire_until(wm: int) -> None:
        while True:
            # Flink fires one key's timers in time order; across keys, any order must do.
            due_keys = sorted({k for t, k in timers if t <= wm}, key=repr)
            if not due_keys:
                return
            key = rng.choice(due_keys)
            ts = min(t for t, k in timers if k == key and t <= wm)
            timers.discard((ts, key))
            if key not in states:
                continue
            state: KeyRecord = pickle.loads(states[key])
            if state.wake is not None and state.wake <= ts:
                state.wake = None
            outs, _ = host.advance(state, key, max(ts, wm) + 1)
            outputs.extend(outs)
            wake(state, key)
            if state.is_empty():
                del states[key]
            else:
                states[key] = pickle.dumps(state)

    for key in host.startup_keys():
        state = KeyRecord()
        host.initial_timers(state, key)
        wake(state, key)
        states[key] = pickle.dumps(state)
    for position, (event, late) in enumerate(plan.events):
        ts = _millis(event.time)
        if late or ts <= watermark:
            outputs.extend(host.late(event, position))
        elif host.wants(event):
            state = pickle.loads(states[event.key]) if event.key in states else KeyRecord()
            host.accept(state, event, position)
            if state.wake is None or ts < state.wake:
                timers.add((ts, event.key))
                state.wake = ts
            states[event.key] = pickle.dumps(state)
        if not late:
            max_ts = max(max_ts, ts)
        if rng.random() < 0.4 and math.isfinite(out_of_orderness):
            # Any watermark up to Flink's bounded-out-of-orderness one is legal.
            target = max_ts - math.ceil(out_of_orderness) - 1
            if target > watermark:
                watermark = rng.randint(watermark, target) if watermark > -(2**62) else target
                fire_until(watermark)
    watermark = END
    fire_until(watermark)
    return collect_results(outputs)


def _millis(t: int | float) -> int:
    return t if isinstance(t, int) else (END if t == math.inf else math.floor(t))
