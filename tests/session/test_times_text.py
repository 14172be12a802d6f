"""A time column of text: ISO 8601 dates are read as dates; anything else says how to give times."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.errors import CepError
from workbench.session.times import TimeFormat, with_time_unit


def test_iso_text_becomes_datetimes_without_a_unit() -> None:
    data = pd.DataFrame({"time": ["2024-01-01T00:00:00", "2024-01-01T00:00:00.005"], "v": [1, 2]})
    out = with_time_unit(data, None, None)
    assert isinstance(out, pd.DataFrame)
    assert out["time"].tolist() == [pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-01 00:00:00.005")]
    assert TimeFormat.of_input(out).dates
    assert not pd.api.types.is_datetime64_any_dtype(data["time"])  # the input is not changed


def test_mixed_offsets_become_utc() -> None:
    data = pd.DataFrame({"t": ["2024-01-01T01:00:00+01:00", "2024-01-01T00:00:01Z"]})
    out = with_time_unit(data, None, None)
    assert isinstance(out, pd.DataFrame)
    assert out["t"].tolist() == [
        pd.Timestamp("2024-01-01", tz="UTC"),
        pd.Timestamp("2024-01-01 00:00:01", tz="UTC"),
    ]


def test_numbers_and_numeric_objects_are_left_alone() -> None:
    numbers = pd.DataFrame({"time": [1, 2]})
    assert with_time_unit(numbers, None, None) is numbers
    objects = pd.DataFrame({"time": pd.Series([1, 2.5], dtype=object)})
    assert with_time_unit(objects, None, None) is objects


@pytest.mark.parametrize("bad", ["noon", "12", "2024-13-01"])
def test_other_text_names_the_row_and_says_how(bad: str) -> None:
    data = pd.DataFrame({"time": ["2024-01-01T00:00:00", bad]}, index=[10, 11])
    with pytest.raises(
        CepError, match=rf"column 'time', row 11: '{bad}' is neither a number nor an ISO 8601"
    ) as err:
        with_time_unit(data, None, None)
    assert "--time-unit s|ms|us|ns|date" in str(err.value)


def test_numbers_written_as_text_become_numbers() -> None:
    data = pd.DataFrame({"time": ["1", "2.5", None, "1700000000000"]})
    out = with_time_unit(data, None, None)
    assert isinstance(out, pd.DataFrame)
    assert out["time"].tolist()[:2] == [1.0, 2.5]
    assert pd.isna(out["time"].iloc[2])
    assert out["time"].iloc[3] == 1_700_000_000_000
    assert not TimeFormat.of_input(out).dates


@pytest.mark.parametrize("bad", ["abc", "2024-01-01T00:00:00", "1,5"])
def test_a_value_that_is_not_a_number_in_a_column_of_numbers_is_named(bad: str) -> None:
    # why: one bad cell makes a CSV's numeric column text; the first time says it is numbers
    data = pd.DataFrame({"time": ["1", "2", bad, "4"]}, index=[0, 1, 2, 3])
    with pytest.raises(CepError, match=rf"column 'time', row 2: '{bad}' is not a number, as the column's"):
        with_time_unit(data, None, None)


def test_repeated_index_labels_do_not_confuse_the_first_time() -> None:
    data = pd.DataFrame({"time": ["5", "6", "x"]}, index=[0, 0, 1])
    with pytest.raises(CepError, match=r"row 1: 'x' is not a number"):
        with_time_unit(data, None, None)
