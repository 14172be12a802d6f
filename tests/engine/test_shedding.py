"""The engine-wide budget (``Engine(max_live=...)``): the oldest partial matches and instances go first."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.detection import Detection, TraceKind
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import Quantifier, SequencePattern, Stage
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine
from workbench.engine.shedding import DEFAULT_MAX_LIVE, live
from workbench.errors import CepError


def ev(t: int, typ: str, key: object) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key}


def linear() -> Pattern:
    return SequencePattern("linear", (Stage("a", types=("a",)), Stage("c", types=("c",))))


def general() -> Matcher:
    return NFAMatcher(
        SequencePattern("general", (Stage("a", types=("a",)), Stage("c", types=("c",)))), specialise=False
    )


def flink() -> Pattern:
    stages = (Stage("a", types=("a",)), Stage("c", types=("c",)))
    return SequencePattern("flink", stages, flink_order=True)


def loop() -> Pattern:
    stages = (
        Stage("a", types=("a",)),
        Stage("b", types=("b",), quantifier=Quantifier(1, None)),
        Stage("c", types=("c",)),
    )
    return SequencePattern("loop", stages)


def group() -> Pattern:
    channels = (Channel("b", "b"), Channel("c", "c"))
    return ReactionGroup("group", "and", channels=channels, initiator=Initiator("a"))


KINDS: dict[str, Callable[[], Pattern | Matcher]] = {
    "linear": linear, "general": general, "flink": flink, "loop": loop, "group": group,
}  # fmt: skip


def first_seq(d: Detection) -> int:
    start = d.initiator if d.initiator is not None else d.events[0]
    return start.seq


def test_the_plans_are_the_ones_meant() -> None:
    assert Engine([linear()]).matchers[0].fast_path == "linear"  # type: ignore[attr-defined]
    assert Engine([loop()]).matchers[0].fast_path == "loop"  # type: ignore[attr-defined]
    assert Engine([general()]).matchers[0].fast_path is None  # type: ignore[attr-defined]


@settings(max_examples=40, deadline=None)
@given(
    kinds=st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=3, unique=True),
    keys=st.lists(st.integers(0, 6), min_size=1, max_size=400),
    limit=st.integers(1, 60),
)
def test_shed_partial_matches_are_always_the_oldest_across_keys_and_patterns(
    kinds: list[str], keys: list[int], limit: int
) -> None:
    engine = Engine([KINDS[k]() for k in kinds], max_live=limit)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine.process_many(ev(t, "a", k) for t, k in enumerate(keys))
        engine.shedder.limit = None  # complete what survived, with nothing shed any more
        n = len(keys)
        engine.process_many(
            [ev(n, "b", k) for k in sorted(set(keys))] + [ev(n + 1, "c", k) for k in sorted(set(keys))]
        )
        engine.finish()
    dropped = engine.host.context.budget.dropped_by_pattern
    for name in kinds:
        kept = sorted({first_seq(d) for d in engine.detections if d.pattern == name and d.kind == "match"})
        # every `a` started one partial match (instance); the kept ones are the newest n of them
        assert kept == list(range(n - len(kept), n))
        assert len(kept) + dropped.get(name, 0) == n
    assert engine.stats["dropped"] == sum(dropped.values())


@settings(max_examples=30, deadline=None)
@given(
    events=st.lists(
        st.tuples(st.integers(0, 40), st.sampled_from("abc"), st.integers(0, 4)), min_size=1, max_size=300
    ),
    kinds=st.lists(st.sampled_from(sorted(KINDS)), min_size=1, max_size=5, unique=True),
)
def test_a_budget_never_reached_changes_no_detection(
    events: list[tuple[int, str, int]], kinds: list[str]
) -> None:
    # a limit just above anything these patterns can hold makes the engine count often, never shed
    rows = [ev(t, typ, k) for t, typ, k in sorted(events, key=lambda x: x[0])]
    counted = Engine([KINDS[k]() for k in kinds], max_live=4 * len(rows) * len(kinds))
    free = Engine([KINDS[k]() for k in kinds], max_live=None)
    for engine in (counted, free):
        for i in range(0, len(rows), 7):  # several calls: the count carries over between them
            engine.process_many(rows[i : i + 7])
        engine.finish()
    assert counted.detections == free.detections
    assert counted.stats == free.stats


def test_shedding_warns_once_per_pattern_with_stable_text_and_traces_the_budget() -> None:
    engine = Engine([linear(), group()], max_live=20, trace=True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        engine.process_many(ev(t, "a", t % 8) for t in range(5000))
    texts = [str(w.message) for w in seen]
    assert sorted(texts) == sorted(
        f"pattern {name!r}: the engine held more than 20 partial matches and group instances; the oldest "
        "were dropped (max_live; given once per run, the run's stats count every dropped one)"
        for name in ("linear", "group")
    )
    pruned = [r for r in engine.trace_records if r.kind == TraceKind.PRUNED]
    assert len(pruned) == engine.stats["dropped"] > 4900
    assert {r.detail["reason"] for r in pruned} == {"budget: more than 20 partial matches in the engine"}


@pytest.mark.filterwarnings("ignore:pattern 'linear'")
def test_peak_live_stays_near_the_limit() -> None:
    # the count follows the growth it sees: between two counts the total passes the limit by little
    engine = Engine([linear()], max_live=1000)
    peak = 0
    for t in range(50_000):
        engine.process(ev(t, "a", t % 8))
        if t % 50 == 0:
            peak = max(peak, sum(len(ks.states[0].runs) for ks in engine._keys.values()))  # type: ignore[attr-defined]
    assert 800 <= peak <= 1100


@pytest.mark.parametrize("feed", ["one_by_one", "list"])
def test_a_linear_pattern_never_passes_the_limit(feed: str) -> None:
    # one event starts at most one linear partial match, so the count comes before the limit can pass
    engine = Engine([linear()], max_live=1000)
    events = [ev(t, "a", t % 8) for t in range(20_000)]
    peak = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for chunk in (
            [[e] for e in events]
            if feed == "one_by_one"
            else [events[i : i + 777] for i in range(0, 20_000, 777)]
        ):
            engine.process_many(chunk)
            peak = max(peak, sum(len(ks.states[0].runs) for ks in engine._keys.values()))  # type: ignore[attr-defined]
    assert 875 <= peak <= 1000


def test_bounded_patterns_are_counted_rarely_far_from_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # a census walks every key: far below the limit, a linear pattern needs almost none
    from workbench.engine import shedding

    counts = {"linear": 0, "general": 0}
    for kind in counts:
        calls = 0
        real = shedding.live

        def counted(m: Matcher, s: object, real: Callable[[Matcher, object], int] = real) -> int:
            nonlocal calls
            calls += 1
            return real(m, s)

        monkeypatch.setattr(shedding, "live", counted)
        engine = Engine([KINDS[kind]()])
        engine.process_many([ev(t, "a" if t % 2 else "c", t % 50) for t in range(40_000)])
        counts[kind] = calls
        monkeypatch.setattr(shedding, "live", real)
    assert counts["linear"] <= 50  # the first count only (one per key)
    assert counts["general"] >= 4 * max(counts["linear"], 25)  # no bound: a count every few thousand events


def test_idle_states_and_keys_go_when_shedding_empties_them() -> None:
    engine = Engine([linear()], max_live=10, forget_idle_keys=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        engine.process_many(ev(t, "a", t) for t in range(10_000))  # one partial match per key
    assert engine.stats["keys"] <= 20
    assert engine.stats["dropped"] + engine.stats["keys"] == 10_000


def test_keys_whose_instances_all_ended_leave_nothing_behind() -> None:
    engine = Engine([linear(), group()], forget_idle_keys=True)
    for k in range(2000):
        engine.process_many([ev(3 * k, "a", k), ev(3 * k + 1, "b", k), ev(3 * k + 2, "c", k)])
    engine.finish()
    assert len([d for d in engine.detections if d.kind == "match"]) == 4000
    assert engine.stats["keys"] == 0
    assert not engine._keys  # type: ignore[attr-defined]


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "10"])
def test_a_bad_limit_is_refused(bad: object) -> None:
    with pytest.raises(CepError, match="max_live"):
        Engine([], max_live=bad)  # type: ignore[arg-type]
    with pytest.raises(CepError, match="max_live"):
        ShardedEngine([], 2, max_live=bad)  # type: ignore[arg-type]


def test_the_default_limit_is_documented_and_applies() -> None:
    assert Engine([]).shedder.limit == DEFAULT_MAX_LIVE
    assert Engine([], max_live=None).shedder.limit is None


def test_the_sharded_engine_reports_stats_and_splits_the_budget() -> None:
    sharded = ShardedEngine([linear()], 4, max_live=40)
    assert all(e.shedder.limit == 10 for e in sharded.engines)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sharded.process_many(ev(t, "a", t % 16) for t in range(3000))
        sharded.process({"type": "a", "time": 1, "key": 0})  # late
    stats = sharded.stats
    assert stats["late"] == 1
    assert stats["dropped"] == sum(e.stats["dropped"] for e in sharded.engines) > 2900
    assert stats["keys"] == 16


def _live(engine: Engine) -> int:
    states = [(engine.matchers[i], state) for ks in engine.keys.values() for i, state in ks.states.items()]
    return sum(live(m, state) for m, state in states)


@pytest.mark.filterwarnings("ignore:pattern ")
@pytest.mark.parametrize("kind", ["linear", "group"])
def test_events_released_by_advance_time_and_finish_are_counted_too(kind: str) -> None:
    # out of order: process_many only buffers them; advance_time starts every partial match
    engine = Engine([KINDS[kind]()], max_live=1000, out_of_orderness=10**9)
    engine.process_many([ev(t, "a", t % 8) for t in range(20_000)])
    assert _live(engine) == 0
    engine.advance_time(10**7)
    assert 800 <= _live(engine) <= 3_000
    assert engine.stats["dropped"] >= 17_000
