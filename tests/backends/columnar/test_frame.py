"""EventColumns builds exactly the events (and errors) of frame_to_events, and knows keys' positions."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.backends.columnar.frame import EventColumns, convert_column
from workbench.engine.events import Event
from workbench.errors import EventError
from workbench.results import frame_to_events

cell = st.one_of(
    st.none(),
    st.integers(-3, 3),
    st.floats(allow_nan=True, allow_infinity=False, width=32),
    st.sampled_from(["a", "b", ""]),
    st.booleans(),
)


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 8))
    types = draw(st.lists(st.one_of(st.sampled_from(["x", "y", ""]), st.none()), min_size=n, max_size=n))
    time_kind = draw(st.sampled_from(["int", "float", "datetime", "tz", "gap"]))
    base = draw(st.lists(st.integers(0, 10_000), min_size=n, max_size=n))
    times: pd.Series
    if time_kind == "int":
        times = pd.Series(base, dtype="int64")
    elif time_kind == "float":
        times = pd.Series([b / 4 for b in base], dtype="float64")
    elif time_kind == "datetime":
        times = pd.Series(pd.to_datetime(base, unit="ms"))
    elif time_kind == "tz":
        times = pd.Series(pd.to_datetime(base, unit="ms", utc=True).tz_convert("Europe/Paris"))
    else:
        times = pd.Series([None if b % 5 == 0 else b for b in base], dtype="float64")
    keys = draw(
        st.lists(st.one_of(st.none(), st.sampled_from([1, 1.0, True, "k", 2.5])), min_size=n, max_size=n)
    )
    data = {
        "type": pd.Series(types, dtype=object),
        "time": times,
        "key": pd.Series(keys, dtype=object),
        "a": pd.Series(draw(st.lists(cell, min_size=n, max_size=n)), dtype=object),
        "f": pd.Series(draw(st.lists(st.floats(allow_nan=True, width=32), min_size=n, max_size=n))),
        "d": pd.Series(
            pd.to_timedelta(draw(st.lists(st.integers(0, 5000), min_size=n, max_size=n)), unit="ms")
        ),
        "o": pd.Series([pd.Timestamp(b, unit="ms") if b % 2 else b for b in base], dtype=object),
    }
    return pd.DataFrame(data, index=[f"r{i}" for i in range(n)])


def outcome(build: object) -> object:
    try:
        return build()  # type: ignore[operator]
    except EventError as err:
        return ("EventError", str(err), err.position, err.field)


@settings(max_examples=300, deadline=None)
@given(frames(), st.sampled_from(["key", None]))
def test_same_events_and_errors_as_frame_to_events(frame: pd.DataFrame, key: str | None) -> None:
    want = outcome(lambda: frame_to_events(frame, key_column=key))
    got = outcome(lambda: EventColumns.from_frame(frame, key_column=key).events())
    assert got == want
    if isinstance(want, list):  # field order too (reprs, the events DataFrame's columns)
        assert [list(e.fields) for e in got] == [list(e.fields) for e in want]  # type: ignore[attr-defined]


def test_key_codes_follow_python_equality_and_positions_count_per_key() -> None:
    frame = pd.DataFrame(
        {"type": ["x"] * 6, "time": range(6), "key": pd.Series([1, "k", 1.0, None, True, "k"], dtype=object)}
    )
    cols = EventColumns.from_frame(frame)
    codes = cols.key_codes().tolist()
    assert codes[0] == codes[2] == codes[4]  # 1 == 1.0 == True, as dict keys
    assert codes[1] == codes[5]
    assert len({codes[0], codes[1], codes[3]}) == 3
    assert cols.key_positions().tolist() == [0, 0, 1, 0, 2, 1]


def test_columns_are_what_conditions_read() -> None:
    frame = pd.DataFrame(
        {"type": ["x", "y"], "time": pd.to_datetime([1000, 2000], unit="ms"), "p": [1.5, None]}
    )
    cols = EventColumns.from_frame(frame)
    assert cols.column("time") is not None
    assert cols.column("time").tolist() == [1000, 2000]  # type: ignore[union-attr]
    assert cols.column("seq").tolist() == [0, 1]  # type: ignore[union-attr]
    assert cols.column("key") is None
    assert cols.column("nope") is None


def test_missing_column_is_named() -> None:
    with pytest.raises(EventError, match="no time column"):
        EventColumns.from_frame(pd.DataFrame({"type": ["x"]}))


def test_events_at_builds_the_constructors_events() -> None:

    df = pd.DataFrame(
        {
            "type": ["a", "b", "c"],
            "time": [1, 2, 3],
            "key": ["k", "j", "k"],
            "x": [1.5, None, 2.0],
            "y": ["u", "v", "w"],
        }
    )
    cols = EventColumns.from_frame(df)
    got = cols.events_at([0, 2])
    want = [Event("a", 1, "k", {"x": 1.5, "y": "u"}, 0), Event("c", 3, "k", {"x": 2.0, "y": "w"}, 2)]
    assert got == want
    assert all(type(e) is Event for e in got)
    assert [repr(e) for e in cols.events()] == [repr(e.with_seq(-1)) for e in cols.events_at([0, 1, 2])]


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_datetimes_of_every_unit_become_floored_milliseconds(unit: str) -> None:
    times = pd.to_datetime(["1969-12-31 23:59:58.9995", None, "2024-05-01 12:00:00.0017"]).as_unit(unit)
    got = convert_column(pd.Series(times)).tolist()
    # milliseconds are floored (before 1970 too); a column of seconds already floored the values
    first, last = (-2000, 1714564800000) if unit == "s" else (-1001, 1714564800001)
    assert got == [first, pd.NA, last]


def test_an_open_ended_date_far_beyond_the_nanosecond_range_converts() -> None:
    column = pd.Series(pd.to_datetime(["2024-12-31", "9999-12-31"]).as_unit("us"))
    assert convert_column(column).tolist() == [1735603200000, 253402214400000]
    stamps = pd.Series([pd.Timestamp("9999-12-31").as_unit("us"), "text"], dtype=object)
    assert convert_column(stamps).tolist() == [253402214400000, "text"]
    frame = pd.DataFrame(
        {
            "type": ["a", "b"],
            "time": pd.to_datetime(["2300-01-01", "2300-01-02"]).as_unit("us"),
            "valid_to": column,
        }
    )
    events = EventColumns.from_frame(frame).events()
    assert [(e.time, e.fields["valid_to"]) for e in events] == [
        (10413792000000, 1735603200000),
        (10413878400000, 253402214400000),
    ]


def test_a_time_held_by_the_index_gets_a_hint() -> None:
    by_date = pd.DataFrame({"type": ["a"]}, index=pd.DatetimeIndex(["2024-01-01"], name="ts"))
    with pytest.raises(
        EventError,
        match=r"the times are the index: frame.reset_index\(\) makes them the column 'ts', then --time ts",
    ):
        EventColumns.from_frame(by_date)
    named = pd.DataFrame({"type": ["a"]}, index=pd.Index([1], name="time"))
    with pytest.raises(EventError, match=r"it is the index: frame.reset_index\(\) makes it a column"):
        EventColumns.from_frame(named)
