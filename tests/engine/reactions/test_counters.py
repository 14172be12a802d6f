"""Counters incremented by channel and exit continuations (``counts``; prova.md 6)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.reactions import Channel, Initiator, ReactionGroup, Var
from workbench.engine.runtime import Engine, run
from workbench.errors import CepError


def ev(t: float, typ: str, key: str = "u", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


def and_group(**counts: str | None) -> ReactionGroup:
    """AND(b, c) per ``a`` initiator; ``counts`` per channel id and ``exit`` for the group."""
    return ReactionGroup(
        "g",
        "and",
        channels=(Channel("b", "b", counts=counts.get("b")), Channel("c", "c", counts=counts.get("c"))),
        initiator=Initiator("a"),
        counts=counts.get("exit"),
    )


def test_true_means_count_and_a_string_names_the_counter() -> None:
    assert Channel("x", "x", counts=True).counts == "Count"  # type: ignore[arg-type]
    assert Channel("x", "x", counts="Seen").counts == "Seen"
    assert Channel("x", "x", counts=False).counts is None  # type: ignore[arg-type]
    with pytest.raises(CepError, match="counts names a counter"):
        Channel("x", "x", counts="not a name")


def test_channel_and_exit_continuations_increment_their_counters() -> None:
    g = and_group(b="Bs", c="Count", exit="Count")
    res = run(g, [ev(0, "a"), ev(1, "b"), ev(2, "b"), ev(3, "c"), ev(4, "a"), ev(5, "c")])
    # instance 1: b at 1 (the second b finds the channel closed), c at 3 -> match; instance 2: c at 5
    assert res.counters == {"Bs": 1, "Count": 3}
    assert [r.counter for r in res.reactions] == ["Bs", "Count", "Count"]


def test_engine_counts_without_collecting_records_and_snapshots_keep_them() -> None:
    engine = Engine([and_group(b="Count")], collect=False)
    engine.process_many([ev(0, "a"), ev(1, "b"), ev(2, "a"), ev(3, "b")])
    assert engine.reactions == []
    assert engine.counters == {"Count": 2}
    blob = engine.snapshot()
    other = Engine([and_group(b="Count")])
    other.restore(blob)
    other.process(ev(4, "b"))  # both instances' b channels already fired
    assert other.counters == {"Count": 2}
    assert json.loads(blob)["state"]["v"]["counters"] == {"$d": [["Count", 2]]}


def test_a_paused_channel_still_runs_its_continuation_and_counts() -> None:
    g = ReactionGroup(
        "g",
        "or",
        channels=(
            Channel("x", "x", paused=True, counts="Count"),
            Channel("go", "go", resume_ids=("x",)),
        ),
        initiator=Initiator("a"),
    )
    res = run(g, [ev(0, "a"), ev(1, "x"), ev(2, "go"), ev(3, "x")])
    assert [r.status for r in res.reactions if r.channel == "x"] == ["paused", "accepted"]
    assert res.counters == {"Count": 2}


def test_a_nested_group_counts_its_matches() -> None:
    inner = ReactionGroup("inner", "and", channels=(Channel("r", "r"),), counts="Count")
    g = ReactionGroup(
        "g",
        "and",
        channels=(Channel("x", "x", match={"n": Var("N")}, counts="Count"), inner),
        initiator=Initiator("a", bind={"N": "n"}),
        counts="Count",
    )
    res = run(g, [ev(0, "a", n=1), ev(1, "x", n=1), ev(2, "r")])
    # the x continuation, the inner exit and the outer exit
    assert res.counters == {"Count": 3}


# ---- against a brute-force model -------------------------------------------------------------------


def model(events: list[tuple[str, str]]) -> dict[str, int]:
    """AND(b, c) per ``a``: each instance's b and c channels react to the first b / c after the
    instance's ``a`` (same key) until the instance completes; the exit counts completed instances."""
    out = {"Bs": 0, "Cs": 0, "Count": 0}
    for i, (typ, key) in enumerate(events):
        if typ != "a":
            continue
        later = [t for t, k in events[i + 1 :] if k == key]
        has_b, has_c = "b" in later, "c" in later
        out["Bs"] += has_b
        out["Cs"] += has_c
        out["Count"] += has_b and has_c
    return {k: v for k, v in out.items() if v}


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcx"), st.sampled_from(["k1", "k2"])), max_size=30))
def test_counters_agree_with_a_brute_force_model(events: list[tuple[str, str]]) -> None:
    g = and_group(b="Bs", c="Cs", exit="Count")
    res = run(g, [ev(t, typ, key) for t, (typ, key) in enumerate(events)])
    assert res.counters == model(events)
    engine = Engine([g], collect=False)
    engine.process_many([ev(t, typ, key) for t, (typ, key) in enumerate(events)])
    engine.finish()
    assert engine.counters == model(events)
