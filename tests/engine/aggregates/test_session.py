"""Session windows: incremental per-session aggregates against a brute-force regrouping."""

from __future__ import annotations

import math
import statistics

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.aggregates import make_aggregate
from workbench.engine.aggregates.session import Session
from workbench.errors import CepError, PatternError

FUNCTIONS = {
    "count": len,
    "sum": sum,
    "min": min,
    "max": max,
    "avg": statistics.fmean,
}


def _current_session(times: list[int], values: list[int], gap: int) -> list[int]:
    """The values since the last gap of more than ``gap`` (recomputed from scratch)."""
    start = 0
    for i in range(1, len(times)):
        if times[i] - times[i - 1] > gap:
            start = i
    return values[start:]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 12), st.integers(-5, 5)), min_size=1, max_size=40),
    st.integers(1, 10),
    st.sampled_from(sorted(FUNCTIONS)),
)
def test_a_session_aggregate_equals_the_recomputed_session(
    steps: list[tuple[int, int]], gap: int, function: str
) -> None:
    times = [sum(s for s, _ in steps[: i + 1]) for i in range(len(steps))]
    values = [v for _, v in steps]
    session = Session(make_aggregate(function), gap)
    for i, (t, v) in enumerate(zip(times, values, strict=True)):
        session.update(v, t=t)
        expected = FUNCTIONS[function](_current_session(times[: i + 1], values[: i + 1], gap))
        got = session.get()
        assert got is not None
        assert math.isclose(float(got), float(expected)), (function, got, expected)


def test_the_boundary_a_gap_of_exactly_the_gap_keeps_the_session() -> None:
    s = Session(make_aggregate("count"), 10)
    for t in (0, 10, 20):
        s.update(1, t=t)
    assert (s.get(), s.start) == (3, 0)
    s.update(1, t=31)
    assert (s.get(), s.start) == (1, 31)
    c = s.copy()
    c.update(1, t=32)
    assert (s.get(), c.get()) == (1, 2)


def test_bad_use_is_refused() -> None:
    with pytest.raises(PatternError, match="positive"):
        Session(make_aggregate("count"), 0)
    s = Session(make_aggregate("count"), 5)
    with pytest.raises(CepError, match="needs the value's time"):
        s.update(1)
    s.update(1, t=3)
    with pytest.raises(CepError, match="backwards"):
        s.update(1, t=2)
    with pytest.raises(CepError, match="never reverted"):
        s.revert(1)
    assert not s.revertible
