"""numpy numbers in events are the Python numbers they equal: numpy's fixed-width integers wrap
around silently, so sums, averages and comparisons over them went wrong without an error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.engine.events import Event
from workbench.engine.expr.values import clean
from workbench.session.session import CepSession

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]


@given(kind=st.sampled_from(INTS), data=st.data())
def test_a_numpy_integer_is_the_python_integer(kind: type[np.integer], data: st.DataObject) -> None:
    info = np.iinfo(kind)
    value = data.draw(st.integers(min_value=int(info.min), max_value=int(info.max)))
    cleaned = clean(kind(value))
    assert type(cleaned) is int
    assert cleaned == value


@given(value=st.floats(allow_nan=False, width=32), kind=st.sampled_from([np.float32, np.float64]))
def test_a_numpy_float_is_the_python_float_exactly(value: float, kind: type[np.floating]) -> None:
    cleaned = clean(kind(value))
    assert type(cleaned) is float
    assert cleaned == float(kind(value))


def test_numpy_nan_is_null_and_bool_is_bool() -> None:
    assert clean(np.float32("nan")) is None
    assert clean(np.bool_(True)) is True
    assert clean(np.array([[1, 2], [3, np.nan]])) == [[1, 2], [3, None]]  # an array: a list
    day = np.datetime64("2024-01-01")
    assert clean(day) is day  # not a number: as it is


@pytest.mark.filterwarnings("error")  # numpy's overflow warning was the only sign of the wrap-around
def test_sums_and_averages_of_numpy_integers_are_exact() -> None:
    big = np.int64(2**62)
    events = [{"type": t, "time": i, "price": big} for i, t in enumerate(["a", "a", "b"])]
    session = CepSession()
    session.define(
        "sequence s measures tot = sum(a.price), m = avg(a.price)\n"
        "  begin a: a one or more next b: b where b.price >= avg(a.price)"
    )
    session.replay(["s"], events, trace=False)
    frame = session.matches("s")
    assert frame["tot"].tolist() == [2**63, 2**62]
    top = np.uint64(2**64 - 1)
    session.define("sequence u begin a: a one or more next b: b where b.price > avg(a.price)")
    session.replay(["u"], [{"type": "a", "time": 1, "price": top}, {"type": "b", "time": 2, "price": top}])
    assert session.detections("u") == []  # equal prices: not greater (the wrapped average was)


def test_a_value_an_aggregate_cannot_take_is_a_recorded_fault_whatever_its_error_class() -> None:
    """numpy's error for adding two datetime64 needs its dtypes to be built: saying it again with
    the aggregate's words as that class raised a TypeError out of the run. (Built events: a mapping's
    datetime64 is read as milliseconds, as a DataFrame's datetime column is.)"""
    day = np.datetime64("2024-01-01")
    events = [Event("a", 1, None, {"price": day}), Event("a", 2, None, {"price": day})]
    session = CepSession()
    session.define(
        "sequence s begin a: a where e.price is not None one or more next b: b where b.price > avg(a.price)"
    )
    done = session.replay(["s"], [*events, {"type": "b", "time": 3, "price": 1}], trace=False)
    faults = done.outcome.errors
    assert faults[0].where == "aggregate 'avg_a_price' (avg of 'price')"
    assert faults[0].kind == "TypeError"
    assert "cannot take datetime64" in faults[0].message


def test_an_array_field_reads_as_a_list_in_conditions_and_channel_matches() -> None:
    """An array's ``==`` is elementwise and its truth an error: a condition over one stopped the
    run with numpy's ValueError. Read as the list of its elements, it compares as a list does."""
    frame = pd.DataFrame(
        {"type": ["a", "b"], "time": [1, 2], "tags": [np.array([1, 2]), np.array([3, 4])], "user": "u"}
    )
    session = CepSession()
    session.define("sequence s begin a: a where e.tags == [1, 2] and 2 in e.tags next b: b where e.tags")
    session.define("sequence t begin a: a where e.tags > 1 next b: b")
    assert [d.seqs for d in session.replay(["s"], frame, trace=False).outcome.detections] == [(0, 1)]
    done = session.replay(["t"], frame, trace=False)
    assert done.outcome.detections == []
    assert done.outcome.errors[0].kind == "TypeError"  # a list is no number: a fault, the run goes on
    events = [
        {"type": "login", "time": 1, "user": "u"},
        {"type": "b", "time": 2, "p": np.array([1, 2]), "user": "u"},
    ]
    session.define("group g\n  on login(user as U)\n  @and {\n    c: b(p = [1, 2], user = U)\n  }")
    assert [d.seqs for d in session.replay(["g"], events, trace=False).outcome.detections] == [(1,)]
