"""The run's memory budget: cap warnings once per pattern and run, ``dropped`` totals, idle keys released."""

from __future__ import annotations

import sys
import warnings
from typing import Any

import pytest

from tests.engine.oracle import is_type
from workbench.engine.nfa.builder import begin
from workbench.engine.nfa.pattern import SequencePattern, Stage
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.runtime import Engine, run


def ev(t: int, typ: str, key: object = "k") -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key}


def exploding(name: str = "p", cap: int = 10) -> SequencePattern:
    """Every ``a`` starts a partial match that only a ``b`` ends: ``a`` events pile up."""
    return SequencePattern(
        name, (Stage("a", is_type("a")), Stage("b", is_type("b"))), max_partial_matches=cap
    )


@pytest.mark.parametrize("specialise", [True, False])
def test_the_cap_warns_once_per_pattern_and_run_and_stats_count_every_drop(specialise: bool) -> None:
    patterns: list[Any] = [exploding("p"), exploding("q", cap=5)]
    if not specialise:
        from workbench.engine.nfa.matcher import NFAMatcher

        patterns = [NFAMatcher(p, specialise=False) for p in patterns]
    events = [ev(t, "a", key=t % 3) for t in range(300)]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        engine = Engine(patterns)
        engine.process_many(events)
    texts = [str(w.message) for w in seen]
    assert len(texts) == 2, texts  # one per pattern, not one per event or per key
    assert all("max_partial_matches" in t and "once per run" in t for t in texts)
    # 3 keys with 100 `a` each: p keeps 10 per key, q keeps 5 per key
    assert engine.stats["dropped"] == 3 * (100 - 10) + 3 * (100 - 5)
    assert engine.host.context.budget.dropped_by_pattern == {"p": 270, "q": 285}


def test_the_warning_text_is_stable_so_the_registry_does_not_grow() -> None:
    # a fresh run warns again (once), with the same text: Python's registry keeps one entry
    module = sys.modules[__name__]
    registry = getattr(module, "__warningregistry__", {})
    registry.clear()
    texts = set()
    for _ in range(3):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            run(
                exploding(cap=2), [ev(t, "a", key=t) for t in range(50)] + [ev(t, "a") for t in range(50, 60)]
            )
        texts |= {str(w.message) for w in seen}
    assert len(texts) == 1


def test_run_result_reports_dropped() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = run(exploding(cap=4), [ev(t, "a") for t in range(10)] + [ev(10, "b")])
    assert res.dropped == 6
    assert [d.seqs[0] for d in res.detections] == [6, 7, 8, 9]  # the oldest were dropped


def test_no_drop_no_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        engine = Engine([exploding(cap=100)])
        engine.process_many([ev(t, "a") for t in range(50)])
    assert engine.stats["dropped"] == 0


# ---------------------------------------------------------------- idle keys


def _sequence() -> SequencePattern:
    return begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).within(5).build("s")


def _group() -> ReactionGroup:
    return ReactionGroup(
        "g",
        "and",
        channels=(Channel("b", "b"),),
        initiator=Initiator("a"),
        timeout_ms=5,
    )


def _plain() -> SequencePattern:
    return begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).build("s")


@pytest.mark.parametrize("trace", [False, True])
def test_keys_whose_instances_ended_leave_no_bookkeeping(trace: bool) -> None:
    n = 3_000
    engine = Engine([_sequence(), _group()], trace=trace, forget_idle_keys=True)
    # each key: an `a` (starts a partial match and a group instance), half of them a `b`
    for i in range(n):
        engine.process(ev(2 * i, "a", key=i))
        if i % 2:
            engine.process(ev(2 * i + 1, "b", key=i))
    engine.advance_time(2 * n + 10)  # the rest time out
    assert engine._keys == {}  # no KeyState left: no instance counters, no timer counts
    assert engine.stats["keys"] == 0
    kinds = {(d.pattern, d.kind) for d in engine.detections}
    assert {("s", "match"), ("g", "match")} <= kinds


def test_instance_ids_stay_unique_per_key_and_pattern_after_release() -> None:
    engine = Engine([_plain()], forget_idle_keys=True)
    for t in range(0, 60, 3):  # the same key goes idle after every match
        engine.process(ev(t, "a"))
        engine.process(ev(t + 1, "b"))
        assert not engine._keys
    ids = [d.instance for d in engine.detections]
    assert len(ids) == 20
    assert len(set(ids)) == 20


def test_by_default_ids_count_per_key_and_the_counters_stay() -> None:
    engine = Engine([_plain()])
    engine.process_many([ev(0, "a", "x"), ev(1, "b", "x"), ev(2, "a", "y"), ev(3, "b", "y"), ev(4, "a", "x")])
    engine.process(ev(5, "b", "x"))
    assert [(d.key, d.instance) for d in engine.detections] == [("x", 1), ("y", 1), ("x", 2)]
    assert set(engine._keys) == {"x", "y"}  # only the counters: no state
    assert not engine.keys


def test_released_counters_survive_a_snapshot() -> None:
    engine = Engine([_plain()], forget_idle_keys=True)
    engine.process_many([ev(0, "a"), ev(1, "b")])
    blob = engine.snapshot()
    other = Engine([_plain()], forget_idle_keys=True)
    other.restore(blob)
    other.process_many([ev(5, "a"), ev(6, "b")])
    assert [d.instance for d in other.detections] == [2]


def test_the_budget_counts_events_fed_not_calls() -> None:
    # one count per event, however they come (one call each, one call for all, or an empty call)
    one_by_one = Engine([exploding()], max_live=1_000)
    for t in range(50):
        one_by_one.process(ev(t, "a"))
    at_once = Engine([exploding()], max_live=1_000)
    at_once.process_many([])
    at_once.process_many([ev(t, "a") for t in range(50)])
    at_once.process_many(())
    assert one_by_one.shedder.countdown == at_once.shedder.countdown
    assert one_by_one.shedder.since == at_once.shedder.since
