"""``timestamp(text)``: ISO 8601 text as epoch milliseconds, the unit of event times."""

from __future__ import annotations

import datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from workbench.engine.expr import compile_expr

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
MOMENTS = st.datetimes(min_value=datetime.datetime(1, 1, 2), max_value=datetime.datetime(9999, 12, 30))  # noqa: DTZ001
OFFSETS = st.integers(min_value=-14 * 60, max_value=14 * 60).map(lambda m: datetime.timedelta(minutes=m))


@given(moment=MOMENTS, offset=OFFSETS, sep=st.sampled_from(["T", " "]))
def test_timestamp_is_the_moment_in_milliseconds(
    moment: datetime.datetime, offset: datetime.timedelta, sep: str
) -> None:
    aware = moment.replace(tzinfo=datetime.timezone(offset))
    expected = (aware - EPOCH) // datetime.timedelta(milliseconds=1)
    assert compile_expr("timestamp(x)")({"x": aware.isoformat(sep=sep)}) == expected
    naive = (moment.replace(tzinfo=datetime.UTC) - EPOCH) // datetime.timedelta(milliseconds=1)
    assert compile_expr("timestamp(x)")({"x": moment.isoformat(sep=sep)}) == naive  # UTC


def test_timestamp_of_null_is_null_and_of_other_values_an_error() -> None:
    assert compile_expr("timestamp(x) is None")({"x": None}) is True
    with pytest.raises(TypeError, match="takes ISO 8601 text"):
        compile_expr("timestamp(x)")({"x": 5})
    for bad in ("yesterday", "2024-13-01"):
        with pytest.raises(ValueError, match="cannot read"):
            compile_expr("timestamp(x)")({"x": bad})
