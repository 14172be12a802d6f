"""The memory budget: ``python -m benchmarks.memory [--only cap,budget,keys] [--events N] [--keys N]``.

Reports (never asserts):

``cap``   8 keys, each driving an exploding pattern (``begin a followed by any b``: every ``a`` starts a
          partial match that only a ``b`` would end, so they pile up). Events/s and peak memory of the
          events that arrive once every key is at ``max_partial_matches`` (each one drops the oldest),
          against the same events with no cap (the partial matches keep piling up). Each mode runs in
          a fresh child process, so the peaks are separate. The ratio ``uncapped / capped`` should stay
          under 2.
``budget`` 8 keys whose partial matches pile up with no per-key cap (``begin a followed by b``: an
          ``a`` event costs the same however many wait, unlike ``followed by any`` above, whose
          every event steps every partial match of its key), against the engine-wide budget
          (``Engine(max_live=...)``, default :data:`~workbench.engine.shedding.DEFAULT_MAX_LIVE`):
          fill the engine to the budget, then time ``--events`` more (each count sheds the oldest
          partial matches across the keys). Peak RSS of the child against 512 MB, and the ratio of
          the rate with no budget (the partial matches keep piling up) to the rate at the budget,
          which should stay under 2.
``keys``  N distinct keys (default 1,000,000), each with an ``a`` that starts a partial match and a
          group instance and a ``b`` that ends both. The engine's traced memory (``tracemalloc``,
          outputs not collected) before the run, after it, and the keys left in its table: after the
          run it should be back within 10 % of the baseline with ``forget_idle_keys=True`` (printed
          next to the default, which keeps one instance counter per key).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Iterator

from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, SequencePattern, Stage
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.runtime import Engine
from workbench.engine.shedding import DEFAULT_MAX_LIVE

__all__ = ["main"]

KEYS = 8


def exploding(cap: int | None) -> SequencePattern:
    any_b = Stage("b", types=("b",), contiguity=Contiguity.NONDETERMINISTIC_RELAXED)
    return SequencePattern("explode", (Stage("a", types=("a",)), any_b), max_partial_matches=cap)


def _stream(n: int, start: int = 0) -> Iterator[Event]:
    for i in range(start, start + n):
        yield Event("a", i, i % KEYS, {})


def piling() -> SequencePattern:
    """``begin a followed by b`` with no window and no per-key cap: every ``a`` waits for a ``b``."""
    stages = (Stage("a", types=("a",)), Stage("b", types=("b",)))
    return SequencePattern("pile", stages, max_partial_matches=None)


def _cap_child(mode: str, limit: int | None, fill: int, events: int) -> dict[str, float]:
    """One mode in this (child) process: fill every key to ``fill``, then time ``events`` more.

    ``mode`` ``"cap"``: the exploding pattern with ``max_partial_matches=limit``; ``"budget"``:
    the piling pattern in an engine with ``max_live=limit``.
    """
    # the default warning filters, as a user has them (the old per-event text grew the registry)
    if mode == "cap":
        engine = Engine([exploding(limit)], collect=False)
    else:
        engine = Engine([piling()], collect=False, max_live=limit)
    engine.process_many(_stream(KEYS * fill))
    gc.collect()
    t0 = time.process_time()  # CPU time: a busy machine does not skew the ratio
    engine.process_many(_stream(events, KEYS * fill))
    seconds = time.process_time() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"rate": events / seconds, "peak_mb": peak_mb, "dropped": engine.stats["dropped"]}


def _child(spec: list[object]) -> dict[str, float]:
    """Run one measurement in a fresh process (its own peak memory); its JSON result."""
    cmd = [sys.executable, "-m", "benchmarks.memory", "--child", json.dumps(spec)]
    result: dict[str, float] = json.loads(
        subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    )
    return result


def bench_cap(cap: int, events: int) -> None:
    capped, free = _child(["cap", cap, cap, events]), _child(["cap", None, cap, events])
    print(
        f"cap keys={KEYS} max_partial_matches={cap} events={events} "
        f"capped_events_per_s={capped['rate']:.0f} uncapped_events_per_s={free['rate']:.0f} "
        f"ratio={free['rate'] / capped['rate']:.2f} capped_peak_mb={capped['peak_mb']:.1f} "
        f"uncapped_peak_mb={free['peak_mb']:.1f} dropped={capped['dropped']:.0f}"
    )


def bench_budget(live: int, events: int) -> None:
    held, free = (
        _child(["budget", live, live // KEYS, events]),
        _child(["budget", None, live // KEYS, events]),
    )
    print(
        f"budget keys={KEYS} max_live={live} events={events} "
        f"budget_events_per_s={held['rate']:.0f} unlimited_events_per_s={free['rate']:.0f} "
        f"ratio={free['rate'] / held['rate']:.2f} budget_peak_mb={held['peak_mb']:.1f} "
        f"unlimited_peak_mb={free['peak_mb']:.1f} dropped={held['dropped']:.0f}"
    )


def _keys_patterns() -> list[SequencePattern | ReactionGroup]:
    seq = SequencePattern("s", (Stage("a", types=("a",)), Stage("b", types=("b",))))
    group = ReactionGroup("g", "and", channels=(Channel("b", "b"),), initiator=Initiator("a"))
    return [seq, group]


def bench_keys(n: int, forget: bool) -> None:
    engine = Engine(_keys_patterns(), collect=False, forget_idle_keys=forget)
    warm = 1_000  # the baseline is taken once the engine's loop and caches are built

    def feed(lo: int, hi: int) -> None:
        engine.process_many(Event(kind, 2 * i + (kind == "b"), i, {}) for i in range(lo, hi) for kind in "ab")

    tracemalloc.start()
    feed(0, warm)
    gc.collect()
    base = tracemalloc.get_traced_memory()[0]
    t0 = time.process_time()
    feed(warm, warm + n)
    seconds = time.process_time() - t0
    gc.collect()
    after, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    mb = 2**20
    print(
        f"keys distinct={n} forget_idle_keys={forget} cpu_seconds={seconds:.1f} "
        f"baseline_mb={base / mb:.2f} after_mb={after / mb:.2f} growth={(after - base) / base:.1%} "
        f"peak_mb={peak / mb:.1f} keys_left={len(engine._keys)}"
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory")
    parser.add_argument("--only", default="cap,budget,keys")
    parser.add_argument("--cap", type=int, default=10_000, help="max_partial_matches per key (cap)")
    parser.add_argument("--events", type=int, default=100_000, help="events timed at the cap (cap)")
    parser.add_argument("--max-live", type=int, default=DEFAULT_MAX_LIVE, help="engine budget (budget)")
    parser.add_argument("--keys", type=int, default=1_000_000, help="distinct keys (keys)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_cap_child(*json.loads(args.child))))
        return
    only = set(args.only.split(","))
    if "cap" in only:
        bench_cap(args.cap, args.events)
    if "budget" in only:
        bench_budget(args.max_live, args.events)
    if "keys" in only:
        bench_keys(args.keys, forget=True)
        bench_keys(args.keys, forget=False)


if __name__ == "__main__":
    main()
