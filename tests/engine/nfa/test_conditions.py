"""Compiled NFA predicates agree with the interpreted condition trees (values and error messages)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.events import Event
from workbench.engine.faults import FaultLog, FaultSink
from workbench.engine.nfa.conditions import (
    FALSE,
    TRUE,
    And,
    Cond,
    ConditionContext,
    Not,
    Or,
    compile_condition,
    compile_predicate,
    needs_context,
    type_test,
)
from workbench.errors import CepRuntimeError

AGGS = frozenset({"total"})
STRINGS = [
    "e.price > 10",
    "e.type == 'a' and e.qty < 3",
    "e.missing > 1",
    "any(e.price > x for x in [1, 5, 20])",
    "(lambda e: e.price)(e) > 2",
    "[e for e in [1, 2]][0] == 1",
    "e.get('qty', 0) >= 2",
    "e.t > 4",
    "total > 3",
    "len(matched('s')) == 0 and e.price > 1",
]


def _leaf(i: int) -> Cond:
    return compile_condition(STRINGS[i], "s", AGGS)


def _trees() -> st.SearchStrategy[Cond]:
    leaves = st.one_of(
        st.sampled_from([TRUE, FALSE]),
        st.integers(0, len(STRINGS) - 1).map(_leaf),
        st.sampled_from([("a",), ("a", "b"), ("c",)]).map(lambda ts: type_test(ts, "s")),
    )
    return st.recursive(
        leaves,
        lambda sub: st.one_of(
            sub.map(Not),
            st.tuples(sub, sub).map(lambda p: And(*p)),
            st.tuples(sub, sub).map(lambda p: Or(*p)),
        ),
        max_leaves=6,
    )


def _ctx(e: Event) -> ConditionContext:
    def aggs(name: str, stage: str | None) -> Any:
        return 4

    return ConditionContext(lambda: {"s": []}, aggs, e.time)


def _outcome(fn: Any, e: Event, ctx: ConditionContext | None) -> tuple[str, Any]:
    try:
        return ("value", bool(fn(e, ctx)))
    except CepRuntimeError as err:
        return ("error", str(err))


events = st.builds(
    Event,
    st.sampled_from(["a", "b", "c"]),
    st.integers(0, 9),
    st.just("k"),
    st.fixed_dictionaries({"price": st.integers(0, 30), "qty": st.integers(0, 5)}),
    st.integers(0, 100),
)


@settings(max_examples=300, deadline=None)
@given(_trees(), events)
def test_compiled_predicate_agrees_with_tree(cond: Cond, e: Event) -> None:
    pred = compile_predicate(cond)
    expected = _outcome(cond, e, _ctx(e))
    assert expected == _outcome(pred, e, _ctx(e))
    if not needs_context(cond):
        assert expected == _outcome(pred, e, None)


def test_a_missing_field_is_null_and_fails_the_comparison() -> None:
    e = Event("a", 1, "k", {"price": 3}, 7)
    assert not compile_predicate(_leaf(2))(e, None)
    assert compile_predicate(compile_condition("e.missing is None", "s", AGGS))(e, None)


def test_a_runtime_error_without_a_fault_sink_raises_naming_condition_and_event() -> None:
    cond = compile_condition("e.price > 'x'", "s", AGGS)
    e = Event("a", 1, "k", {"price": 3}, 7)
    with pytest.raises(CepRuntimeError, match=r"e.price > 'x'.* of stage 's' failed on event #7.*TypeError"):
        compile_predicate(cond)(e, None)


def test_a_runtime_error_with_a_fault_sink_is_recorded_once_and_fails_the_event() -> None:
    sink = FaultSink("p")
    pred = compile_predicate(compile_condition("e.price > 'x' or e.qty > 1", "s", AGGS, sink))
    for i in range(3):
        assert not pred(Event("a", i, "k", {"price": 3, "qty": 5}, i), None)
    [fault] = sink.log.faults
    assert (fault.pattern, fault.kind, fault.count, fault.first_seq) == ("p", "TypeError", 3, 0)
    assert "stage 's'" in fault.where


def test_strict_fault_log_raises_at_the_first_error() -> None:
    sink = FaultSink("p", FaultLog(strict=True))
    pred = compile_predicate(compile_condition("e.price / 0 > 1", "s", AGGS, sink))
    with pytest.raises(CepRuntimeError, match="ZeroDivisionError"):
        pred(Event("a", 1, "k", {"price": 3}, 0), None)


def test_rebound_e_is_not_a_field_read() -> None:
    # ``e`` inside the lambda is an int: the event-field fast path must not apply to it.
    pred = compile_predicate(compile_condition("(lambda e: e + 1)(e.price) == 4", "s", AGGS))
    assert pred(Event("a", 1, "k", {"price": 3}, 0), None)


def test_callable_conditions_need_the_context_and_run_once_per_evaluation() -> None:
    calls: list[int] = []

    def where(e: Event) -> bool:
        calls.append(e.seq)
        return True

    cond = compile_condition(where, "s", AGGS)
    tree = And(cond, Not(cond))
    assert needs_context(tree)
    e = Event("a", 1, "k", {}, 3)
    assert compile_predicate(tree)(e, _ctx(e)) is False
    assert calls == [3]  # memoised within one context, as the interpreted tree
