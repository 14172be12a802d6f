"""Detections built by the fast path equal the constructor's, and stay frozen."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.engine.detection import Detection, MeasureValues, new_match, renumber
from workbench.engine.events import Event


@given(
    st.text(max_size=4),
    st.one_of(st.none(), st.text(max_size=3), st.integers()),
    st.integers(0, 10**6),
    st.sampled_from(["match", "timeout"]),
    st.one_of(st.integers(), st.floats(allow_nan=False)),
    st.lists(st.integers(0, 100), max_size=4),
)
def test_new_match_equals_the_constructor(
    pattern: str, key: object, instance: int, kind: str, t: float, seqs: list[int]
) -> None:
    events = tuple(Event("e", i, key, {"x": i}, seq=i) for i in seqs)
    channels = tuple("b" for _ in seqs)
    fast = new_match(pattern, key, instance, kind, t, events, channels)
    slow = Detection(pattern, key, instance, kind, t, events, channels)
    assert type(fast) is Detection
    assert fast == slow
    assert repr(fast) == repr(slow)
    assert [getattr(fast, f.name) for f in dataclasses.fields(Detection)] == [
        getattr(slow, f.name) for f in dataclasses.fields(Detection)
    ]


def test_new_match_is_frozen_picklable_and_owns_its_extra() -> None:
    a = new_match("p", "k", 1, "match", 5, (), ())
    b = new_match("p", "k", 2, "match", 5, (), ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.instance = 3  # type: ignore[misc]
    assert pickle.loads(pickle.dumps(a)) == a
    assert dataclasses.replace(a, instance=2) == b
    assert a.extra is not b.extra


def test_renumber_changes_only_the_instance() -> None:
    m = MeasureValues({"n": 1}, {"n": "value"})
    e = Event("a", 1, "k", seq=0)
    d = Detection("p", "k", 1, "timeout", 9, (e,), ("a",), ("x",), initiator=e, extra={"q": 1}, measures=m)
    expected = dataclasses.replace(d, instance=5)
    renumber(d, 5)
    assert d == expected
    assert repr(d) == repr(expected)
    assert d.measures is m
