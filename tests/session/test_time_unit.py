"""``--time-unit``: a time column read as epoch numbers in a unit, or as ISO 8601 text, becomes dates."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.errors import CepError
from workbench.session.session import CepSession
from workbench.session.times import NUMBERS, TimeFormat, of_engine, wall_clock, with_time_unit

SCALE = {"s": 1000, "ms": 1, "us": 1e-3, "ns": 1e-6}


@given(st.lists(st.integers(0, 4_000_000_000), min_size=1, max_size=20), st.sampled_from(sorted(SCALE)))
def test_epoch_numbers_in_any_unit_become_the_same_instants(seconds: list[int], unit: str) -> None:
    """Oracle: the numbers scaled by hand to ms give the engine times the dates stand for."""
    values = [int(s * 1000 / SCALE[unit]) for s in seconds]
    frame = with_time_unit(pd.DataFrame({"time": values}), None, unit)
    assert isinstance(frame, pd.DataFrame)
    fmt = TimeFormat.of_input(frame)
    assert fmt.dates
    back = [fmt.timestamp(s * 1000.0) for s in seconds]
    assert frame["time"].tolist() == back


def test_iso_text_keeps_its_offset_and_mixed_offsets_become_utc() -> None:
    same = with_time_unit(
        pd.DataFrame({"t": ["2024-01-01T00:00:00+01:00", "2024-01-01T00:00:01+01:00"]}), None, "date"
    )
    assert isinstance(same, pd.DataFrame)
    assert TimeFormat.of_input(same).text(1704063600000) == "2024-01-01 00:00:00.000"
    mixed = with_time_unit(
        pd.DataFrame({"time": ["2024-01-01T00:00:00+01:00", "2024-01-01T00:00:00Z"]}), None, "date"
    )
    assert isinstance(mixed, pd.DataFrame)
    assert str(mixed["time"].dt.tz) == "UTC"


@pytest.mark.parametrize(
    ("values", "unit", "message"),
    [
        (["2024-01-01", "yesterday"], "date", "row 1: 'yesterday' is not an ISO 8601 date"),
        (["12", "x"], "s", "row 1: 'x' is not a number of s"),
        ([1e30], "s", r"row 0: 1e\+30 is not an epoch time in s"),
    ],
)
def test_a_value_that_is_not_a_time_is_named(values: list[object], unit: str, message: str) -> None:
    with pytest.raises(CepError, match=message):
        with_time_unit(pd.DataFrame({"time": values}), None, unit)


def test_unknown_unit_missing_column_and_non_frames_are_errors() -> None:
    frame = pd.DataFrame({"time": [1]})
    with pytest.raises(CepError, match="unknown time unit 'parsecs'"):
        with_time_unit(frame, None, "parsecs")
    with pytest.raises(CepError, match="no time column 'when'"):
        with_time_unit(frame, "when", "s")
    with pytest.raises(CepError, match="needs a DataFrame"):
        with_time_unit([{"type": "a", "time": 1}], None, "s")
    assert with_time_unit(frame, None, None) is frame


def test_the_input_is_not_changed() -> None:
    frame = pd.DataFrame({"time": [1, 2]})
    with_time_unit(frame, None, "s")
    assert frame["time"].tolist() == [1, 2]


def test_of_engine_dates_for_a_wall_clock_feed_only() -> None:
    s = CepSession()
    s.define("sequence s begin a: x")
    assert of_engine(s.start_feed(["s"])) == wall_clock()
    ticks = itertools.count()
    assert of_engine(s.start_feed(["s"], clock=lambda: float(next(ticks)))) == NUMBERS
    assert of_engine(object()) == NUMBERS
