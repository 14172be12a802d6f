"""Scaling measurements: ``python -m benchmarks.scaling [--quick] [--only NAME,...]``.

Reports (never asserts) how per-event cost behaves as the workload grows:

``partial``  live partial matches on ONE key from 10 to 100,000 (runs of ``begin a: open followed by
             b: close`` waiting for their ``close``); per-event cost of events no partial match waits
             for (``tick``) and of events that start one more partial match (``open``). Flat means the
             ratio ``cost(100,000) / cost(10)`` stays near 1.
``aggregate`` P5-style running average over a Kleene run of length k: the incremental aggregate
             (``aggregate avg_b = avg(b.price) including current``, O(1) per event) against the same
             condition rescanning the partial match's events (``matched('b')``, Flink's way, O(k)).
             Also the bare accumulators without the NFA.
``keys``     events/s of P4 as the number of keys grows from 10 to 1,000,000.
``floor``    the runtime alone (a do-nothing matcher): the ceiling for any pattern on this engine;
             and P5 written by hand as one specialised loop beside the engine's P5 (what pure Python
             allows for it, and how far the engine is from that).
``dispatch`` one pass, many patterns: events/s with 1, 10, 100 patterns when 90 % of the events are
             of a type no pattern uses.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from benchmarks.patterns import api_patterns
from benchmarks.workload import WorkloadSpec, iter_rows
from workbench.engine.aggregates import Avg, value_with
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Context, Matcher
from workbench.engine.nfa import Contiguity, NFAMatcher, Quantifier, SequencePattern, Stage
from workbench.engine.nfa.conditions import ConditionContext
from workbench.engine.runtime import Engine

__all__ = ["main", "p5_by_hand", "p5_pattern"]

RELAXED = Contiguity.RELAXED
MIN_AVG = 105.0037


def _say(line: str) -> None:
    print(line, flush=True)


def _live(engine: Engine, pattern: str, key: str = "k") -> int:
    """Live partial matches of one key (0 when the key holds no state)."""
    state = engine.state_of(pattern, key)
    return int(state.partial_matches) if state is not None else 0


def _timed(engine: Engine, events: Iterable[Event]) -> tuple[float, int]:
    process = engine.process
    n = 0
    start = time.perf_counter()
    for e in events:
        process(e)
        n += 1
    return time.perf_counter() - start, n


# ---------------------------------------------------------------------------------------------- partial


def _open_close() -> SequencePattern:
    return SequencePattern(
        "open_close",
        (Stage("a", types=("open",)), Stage("b", contiguity=RELAXED, types=("close",))),
        within_ms=None,
        max_partial_matches=None,
        emit_timeouts=False,
    )


def _matcher(pattern: SequencePattern, path: str) -> Matcher:
    """The default matcher, or the general NFA path (``NFAMatcher(specialise=False)``)."""
    if path == "general":
        return NFAMatcher(pattern, specialise=False)
    return compile_matcher(pattern)


def bench_partial(sizes: Sequence[int], probe: int) -> None:
    """Per-event cost with N live partial matches on one key, on the default and the general NFA path."""
    _say("# partial matches on one key: per-event cost (µs) of a 'tick' (awaited by none) and an 'open'")
    for path in ("default", "general"):
        warm = Engine([_matcher(_open_close(), path)])  # first-use costs stay out of the figures
        _timed(warm, [Event(("open", "tick", "close")[i % 3], i, "w", {}, i) for i in range(300)])
        rows: list[tuple[int, float, float]] = []
        seq = 0
        for n in sizes:
            if rows and rows[-1][2] > 1_000:
                _say(f"partial path={path} stopped: an open costs > 1 ms (filling {n} would take too long)")
                break
            gc.collect()
            engine = Engine([_matcher(_open_close(), path)])
            t = 0
            for _ in range(n):
                engine.process(Event("open", t, "k", {}, seq))
                t += 1
                seq += 1
            gc.collect()
            ticks = [Event("tick", t + i, "k", {}, seq + i) for i in range(probe)]
            seq += probe
            t += probe
            tick_s, _ = _timed(engine, ticks)
            few = max(1, probe // 10)  # each open adds a partial match: keep the growth small
            opens = [Event("open", t + i, "k", {}, seq + i) for i in range(few)]
            seq += few
            open_s, _ = _timed(engine, opens)
            live = _live(engine, "open_close")
            tick_us, open_us = tick_s / probe * 1e6, open_s / few * 1e6
            rows.append((n, tick_us, open_us))
            _say(
                f"partial path={path} live={n:>7} tick_us={tick_us:8.2f} open_us={open_us:8.2f} "
                f"live_after={live}"
            )
        (n0, t0, o0), (nl, t1, o1) = rows[0], rows[-1]
        _say(f"partial path={path} ratio {nl}/{n0}: tick={t1 / t0:.2f} open={o1 / o0:.2f}  (1.00 = flat)")


# ---------------------------------------------------------------------------------------------- aggregate


def _keeps_average_by_rescan(e: Event, ctx: ConditionContext) -> bool:
    """Flink's IterativeCondition: re-read every taken trade, then add the candidate."""
    total = 0.0
    n = 0
    for x in ctx.matched("b"):
        total += x["price"]
        n += 1
    return bool((total + e["price"]) / (n + 1) > MIN_AVG)


def p5_pattern(rescan: bool) -> SequencePattern:
    """P5 as benchmarked (incremental ``avg`` aggregate), or with Flink's rescanning condition."""
    base = api_patterns()["P5"]
    if not rescan:
        return base
    a, b, c = base.stages
    assert isinstance(b, Stage)
    b2 = Stage("b", _keeps_average_by_rescan, RELAXED, types=("trade",), quantifier=Quantifier.one_or_more())
    return SequencePattern(
        "P5rescan", (a, b2, c), within_ms=base.within_ms, max_partial_matches=None, emit_timeouts=False
    )


def _long_run(k: int) -> list[Event]:
    """One key: a login, then k trades that all keep the average up (no logout: no output)."""
    out = [Event("login", 0, "k", {"price": 0.0}, 0)]
    out += [Event("trade", i, "k", {"price": 110.0 + (i % 7)}, i) for i in range(1, k + 1)]
    return out


def _matches(engine: Engine) -> int:
    engine.finish()
    return sum(1 for d in engine.detections if d.kind == "match")


def bench_aggregate(run_lengths: Sequence[int], workload_n: int, workload_keys: int) -> None:
    """Incremental aggregates against rescanning the matched events."""
    _say("# aggregate: P5 condition, incremental avg vs rescanning matched('b') (Flink's way)")
    for k in run_lengths:
        events = _long_run(k)
        per_event = []
        live = []
        for rescan in (False, True):
            engine = Engine([p5_pattern(rescan)])
            engine.process(events[0])
            secs, n = _timed(engine, events[1:])
            per_event.append(secs / n * 1e6)
            live.append(_live(engine, engine.matchers[0].name))
        assert live[0] == live[1], live
        inc_us, re_us = per_event
        _say(
            f"aggregate run_length={k:>6} incremental_us_per_trade={inc_us:8.1f} "
            f"rescan_us_per_trade={re_us:9.1f} ratio={re_us / inc_us:6.1f}x live_partial_matches={live[0]}"
        )
    spec = WorkloadSpec(n=workload_n, keys=workload_keys)
    events = [Event(r.type, r.t, r.key, {"price": r.price}, r.id) for r in iter_rows(spec)]
    results = []
    for rescan in (False, True):
        engine = Engine([p5_pattern(rescan)])
        secs, _ = _timed(engine, events)
        results.append((secs, _matches(engine)))
    (inc_s, inc_m), (re_s, re_m) = results
    assert inc_m == re_m, (inc_m, re_m)
    _say(
        f"aggregate P5 on workload(n={workload_n},keys={workload_keys}) "
        f"incremental_events_per_s={len(events) / inc_s:.0f} rescan_events_per_s={len(events) / re_s:.0f} "
        f"ratio={re_s / inc_s:.1f}x matches={inc_m}"
    )
    for k in run_lengths:
        prices = [110.0 + (i % 7) for i in range(k)]
        start = time.perf_counter()
        acc = Avg()
        for p in prices:
            value_with(acc, p)
            acc.update(p)
        inc = time.perf_counter() - start
        start = time.perf_counter()
        taken: list[float] = []
        for p in prices:
            total = 0.0
            for x in taken:
                total += x
            _ = (total + p) / (len(taken) + 1)
            taken.append(p)
        rescan_s = time.perf_counter() - start
        _say(
            f"aggregate bare run_length={k:>6} incremental_ns={inc / k * 1e9:7.0f} "
            f"rescan_ns={rescan_s / k * 1e9:9.0f} ratio={rescan_s / inc:7.1f}x"
        )


# ---------------------------------------------------------------------------------------------- keys


def bench_keys(key_counts: Sequence[int], n: int) -> None:
    """Events/s of P4 as the number of distinct keys grows."""
    _say(f"# keys: P4 events/s on {n} events as the number of keys grows")
    pattern = api_patterns()["P4"]
    for keys in key_counts:
        spec = WorkloadSpec(n=n, keys=keys)
        events = [Event(r.type, r.t, r.key, {"price": r.price}, r.id) for r in iter_rows(spec)]
        gc.collect()
        engine = Engine([pattern])
        secs, _ = _timed(engine, events)
        _say(f"keys={keys:>8} events_per_s={n / secs:9.0f} live_keys={len(engine.keys)}")


# ---------------------------------------------------------------------------------------------- dispatch


def _pair(i: int) -> SequencePattern:
    return SequencePattern(
        f"pair{i}",
        (Stage("a", types=(f"x{i}",)), Stage("b", contiguity=RELAXED, types=(f"y{i}",))),
        within_ms=10_000,
        max_partial_matches=None,
        emit_timeouts=False,
    )


def bench_dispatch(pattern_counts: Sequence[int], n: int) -> None:
    """One pass over the stream with many patterns, most events irrelevant to all of them."""
    _say("# dispatch: many patterns, 90% of events of a type no pattern uses")
    events = []
    for i in range(n):
        typ = ("x0" if i % 20 == 0 else "y0") if i % 10 == 0 else "noise"
        events.append(Event(typ, i, f"k{i % 50}", {}, i))
    base: float | None = None
    for count in pattern_counts:
        engine = Engine([_pair(i) for i in range(count)])
        secs, _ = _timed(engine, events)
        per_event = secs / n * 1e6
        base = base or per_event
        per_pattern = (per_event - base) / max(count - 1, 1) if count > 1 else 0.0
        _say(
            f"dispatch patterns={count:>4} events_per_s={n / secs:9.0f} us_per_event={per_event:7.2f} "
            f"extra_us_per_pattern={per_pattern:5.2f}"
        )


# ---------------------------------------------------------------------------------------------- floor


class _Noop:
    """A matcher that does nothing: what the runtime alone costs per event."""

    name = "noop"

    def event_types(self) -> frozenset[str] | None:
        return None

    def new_state(self, key: Hashable) -> list[int]:
        return [0]

    def process(self, state: list[int], event: Event, ctx: Context) -> None:
        state[0] += 1

    def on_timer(self, state: list[int], time: int | float, token: Hashable, ctx: Context) -> None:
        return None

    def is_idle(self, state: list[int]) -> bool:
        return False


def p5_by_hand(events: Sequence[Event]) -> list[tuple[Event, ...]]:
    """P5 written by hand as one specialised loop (PATTERNS.md's words), matches as event tuples.

    What pure Python allows for P5 with nothing general left: per key a list of runs ``[start
    time, sum, count, taken events, prefixes waiting for a logout]``, expired from the front;
    no instance ids, detection objects, timers, run ids or ordering rules.
    """
    out: list[tuple[Event, ...]] = []
    append = out.append
    runs_of: dict[Hashable, list[list[Any]]] = {}
    for e in events:
        typ = e.type
        if typ != "login" and typ != "trade" and typ != "logout":
            continue  # why: no run reads any other type
        runs = runs_of.get(e.key)
        if runs is None:
            if typ != "login":
                continue  # why: nothing waits on a key that never logged in
            runs = runs_of[e.key] = []
        t = e.time
        while runs and runs[0][0] + P5_WINDOW <= t:  # why: runs start in time order: expire the front
            runs.pop(0)
        if typ == "trade":
            price = e.fields["price"]
            for run in runs:
                if (run[1] + price) / (run[2] + 1) > P5_MIN_AVG:  # why: the trade keeps the average
                    run[1] += price
                    run[2] += 1
                    run[3] = (*run[3], e)
                    run[4].append(run[3])
        elif typ == "logout":
            for run in runs:
                if run[4]:  # why: every prefix taken since the last logout ends here
                    for prefix in run[4]:
                        append((*prefix, e))
                    run[4] = []
        else:
            runs.append([t, 0.0, 0, (e,), []])
    return out


P5_WINDOW, P5_MIN_AVG = 30_000, 105.0037


def bench_floor(n: int) -> None:
    """The runtime's own cost: a bare loop, Engine.process with a do-nothing matcher; and P5 by hand
    against the engine's P5 (``process_many``) on the same events."""
    _say(f"# floor: {n} reference-workload events through the runtime with a do-nothing matcher")
    events = [
        Event(r.type, r.t, r.key, {"price": r.price, "qty": r.qty, "ip": r.ip}, r.id)
        for r in iter_rows(WorkloadSpec(n=n))
    ]
    start = time.perf_counter()
    for _ in events:
        pass
    loop_s = time.perf_counter() - start
    engine = Engine([_Noop()])
    secs, _ = _timed(engine, events)
    _say(f"floor bare_loop_events_per_s={n / loop_s:.0f} runtime_noop_events_per_s={n / secs:.0f}")
    gc.collect()
    by_hand = min(_seconds(lambda: p5_by_hand(events)) for _ in range(3))
    matches = len(p5_by_hand(events))
    engine_s: list[float] = []
    found = 0
    for _ in range(3):
        p5 = Engine([api_patterns()["P5"]])
        start = time.perf_counter()
        p5.process_many(events)
        p5.finish()
        engine_s.append(time.perf_counter() - start)
        found = sum(d.kind == "match" for d in p5.detections)
    _say(
        f"floor p5_by_hand_events_per_s={n / by_hand:.0f} p5_engine_events_per_s={n / min(engine_s):.0f} "
        f"matches={matches}/{found}"
    )


def _seconds(job: Callable[[], object]) -> float:
    start = time.perf_counter()
    job()
    return time.perf_counter() - start


# ---------------------------------------------------------------------------------------------- main

BENCHES: dict[str, Callable[[bool], None]] = {
    "partial": lambda quick: bench_partial(
        (10, 100, 1_000, 10_000) if quick else (10, 100, 1_000, 10_000, 100_000),
        500 if quick else 2_000,
    ),
    "aggregate": lambda quick: bench_aggregate(
        (100, 300) if quick else (100, 300, 1_000),
        5_000 if quick else 20_000,
        250,
    ),
    "keys": lambda quick: bench_keys(
        (10, 1_000, 100_000) if quick else (10, 100, 1_000, 10_000, 100_000, 1_000_000),
        20_000 if quick else 200_000,
    ),
    "floor": lambda quick: bench_floor(20_000 if quick else 200_000),
    "dispatch": lambda quick: bench_dispatch((1, 10) if quick else (1, 10, 100), 5_000 if quick else 50_000),
}


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.scaling", description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sizes (a smoke run)")
    ap.add_argument(
        "--only", default=",".join(BENCHES), help=f"comma-separated subset of {', '.join(BENCHES)}"
    )
    args: Any = ap.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        ap.error(f"unknown benchmark(s) {unknown}; known: {', '.join(BENCHES)}")
    _say(f"# python {sys.version.split()[0]} on {sys.platform}")
    for name in names:
        BENCHES[name](args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
