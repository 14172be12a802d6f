"""Dates and durations in event mappings, timedelta columns, and live feeds of either.

A list of dicts holding ``datetime``/``date``/``timedelta`` values (numpy's and pandas' too) is
read as a DataFrame with those columns is: milliseconds in the engine, dates and durations in the
output. A DataFrame's timedelta column comes back as Timedeltas, and a live feed takes a DataFrame
with a datetime time column (its clock stamps the events) and reads its datetime fields.
"""

from __future__ import annotations

import datetime
import math

import hypothesis.strategies as st
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings

from workbench.backends.columnar.frame import convert_column
from workbench.engine.expr import parse_expr
from workbench.engine.nfa.measures import measure_kind
from workbench.errors import EventError
from workbench.session.datetimes import datetimes
from workbench.session.notes import fine_fields_note, input_notes
from workbench.session.records import plain_record, plain_value, records_format
from workbench.session.runs import to_frame
from workbench.session.session import CepSession
from workbench.session.shown import Shown
from workbench.session.times import TimeFormat

PARIS = datetime.timezone(datetime.timedelta(hours=1))

PATTERN = """sequence s
    partition by order
    measures opened = first(a).opened, wait = first(a).wait, due = first(a).time + first(a).wait,
        twice = first(a).wait * 2, took = last(b).time - first(a).time
    begin a: created where a.opened > timestamp('2026-01-01 08:00') and a.wait > 60000
    followed by b: shipped
"""


def _naive(*parts: int) -> datetime.datetime:
    return datetime.datetime(*parts)  # noqa: DTZ001  # naive on purpose


def _detections(session: CepSession, data: object) -> pd.DataFrame:
    done = session.replay(["s"], data)
    assert [f.message for f in done.outcome.errors] == []
    return to_frame(done.outcome.detections, session.times, session.partitions())


def _rows(opened: object, wait: object, times: tuple[object, object]) -> list[dict[str, object]]:
    return [
        {"time": times[0], "type": "created", "order": 1, "opened": opened, "wait": wait},
        {"time": times[1], "type": "shipped", "order": 1},
    ]


def test_mappings_with_datetimes_and_timedeltas_give_them_back() -> None:
    session = CepSession()
    session.define(PATTERN)
    rows = _rows(
        _naive(2026, 1, 1, 9), datetime.timedelta(minutes=5), (_naive(2026, 1, 1, 8), _naive(2026, 1, 1, 9))
    )
    out = _detections(session, rows)
    assert len(out) == 1
    row = out.iloc[0]
    assert row["opened"] == pd.Timestamp("2026-01-01 09:00")
    assert row["wait"] == pd.Timedelta(minutes=5)
    assert row["due"] == pd.Timestamp("2026-01-01 08:05")
    assert row["twice"] == pd.Timedelta(minutes=10)
    assert row["took"] == pd.Timedelta(hours=1)
    assert row["first_time"] == pd.Timestamp("2026-01-01 08:00")


def test_mappings_with_zoned_datetimes_are_the_same_moments() -> None:
    session = CepSession()
    session.define(PATTERN)
    rows = _rows(
        datetime.datetime(2026, 1, 1, 10, tzinfo=PARIS),  # 09:00 UTC, after 08:00
        np.timedelta64(2, "m"),
        (pd.Timestamp("2026-01-01 09:00", tz=PARIS), datetime.datetime(2026, 1, 1, 11, tzinfo=PARIS)),
    )
    out = _detections(session, rows)
    assert out["opened"].tolist() == [pd.Timestamp("2026-01-01 10:00", tz=PARIS)]
    assert out["wait"].tolist() == [pd.Timedelta(minutes=2)]
    assert out["first_time"].tolist() == [pd.Timestamp("2026-01-01 09:00", tz=PARIS)]


def test_a_time_mixing_naive_and_zoned_datetimes_is_refused_as_in_a_dataframe() -> None:
    session = CepSession()
    session.define(PATTERN)
    rows = _rows(
        _naive(2026, 1, 1, 9), 1, (pd.Timestamp("2026-01-01 09:00", tz=PARIS), _naive(2026, 1, 1, 9))
    )
    with pytest.raises(EventError, match=r"row 1 .*time must be a number"):
        session.replay(["s"], rows)
    with pytest.raises(EventError, match=r"row 1 .*time must be a number"):
        session.replay(["s"], pd.DataFrame(rows))


def test_flat_mappings_replay_as_their_table_and_nested_ones_item_by_item() -> None:
    """A list of flat dicts is the DataFrame of its fields (the same detections, column by column);
    events with a ``fields`` mapping, or built events, are read one by one, with the same result."""
    session = CepSession()
    session.define(PATTERN)
    rows = _rows(
        _naive(2026, 1, 1, 9), datetime.timedelta(minutes=5), (_naive(2026, 1, 1, 8), _naive(2026, 1, 1, 9))
    )
    nested = [
        {
            "type": r["type"],
            "time": r["time"],
            "fields": {k: v for k, v in r.items() if k not in ("type", "time")},
        }
        for r in rows
    ]
    flat, table, one_by_one = (_detections(session, data) for data in (rows, pd.DataFrame(rows), nested))
    pd.testing.assert_frame_equal(flat, table)
    pd.testing.assert_frame_equal(flat.drop(columns=["key"]), one_by_one.drop(columns=["key"]))


def test_a_timedelta_column_comes_back_as_timedeltas() -> None:
    session = CepSession()
    session.define(PATTERN)
    frame = pd.DataFrame(
        {
            "time": [1, 2],
            "order": [1, 1],
            "type": ["created", "shipped"],
            "opened": pd.to_datetime(["2026-01-01 09:00", None]),
            "wait": pd.to_timedelta(["90s", None]),
        }
    )
    out = _detections(session, frame)
    assert out["wait"].tolist() == [pd.Timedelta(seconds=90)]
    assert out["twice"].tolist() == [pd.Timedelta(seconds=180)]
    assert out["took"].tolist() == [1]  # numeric times: their difference stays a number
    assert out["due"].tolist() == [90_001]  # a number time plus a duration stays a number
    assert session.times.durations == ("wait",)
    assert session.times_of(["s"]).durations == ("wait",)
    events = session.times.events(pd.DataFrame({"time": [1], "wait": [90_000]}))
    assert events["wait"].tolist() == [pd.Timedelta(seconds=90)]


def test_a_timedelta_field_reads_as_a_duration_in_text() -> None:
    shown = Shown(TimeFormat(durations=("wait",)))
    assert shown.field("wait", 90_000) == "'0:01:30'"
    assert shown.field("wait", "soon") == "'soon'"
    assert shown.field("wait", 1e300) == "1e+300"  # beyond a timedelta: the number as it is
    assert shown.field("other", 90_000) == "90000"


@given(
    st.datetimes(
        min_value=_naive(1900, 1, 1),
        max_value=_naive(2200, 1, 1),
        timezones=st.sampled_from([None, datetime.UTC, PARIS]),
    )
)
def test_a_datetime_value_is_what_a_datetime_column_holds(moment: datetime.datetime) -> None:
    column = datetimes(pd.Series([moment], dtype=object))
    assert column is not None
    assert plain_value(moment) == convert_column(column).iloc[0]
    assert plain_value(pd.Timestamp(moment)) == plain_value(moment)


@given(st.timedeltas(min_value=datetime.timedelta(days=-(10**5)), max_value=datetime.timedelta(days=10**5)))
def test_a_timedelta_value_is_what_a_timedelta_column_holds(delta: datetime.timedelta) -> None:
    assert plain_value(delta) == convert_column(pd.Series(pd.to_timedelta([delta]))).iloc[0]
    assert plain_value(np.timedelta64(pd.Timedelta(delta).value, "ns")) == plain_value(delta)


def test_missing_and_other_values() -> None:
    assert plain_value(pd.NaT) is None
    assert plain_value(np.datetime64("NaT")) is None
    assert plain_value(np.timedelta64("NaT")) is None
    assert plain_value(np.datetime64("300000-01-01")) == 9_404_918_380_800_000  # beyond pandas' dates
    assert plain_value(datetime.date(1970, 1, 2)) == 86_400_000
    assert [plain_value(v) for v in ("x", 1, 1.5, None, [1])] == ["x", 1, 1.5, None, [1]]
    assert plain_record({"type": "a", "fields": {"at": datetime.date(1970, 1, 1)}}) == {
        "type": "a",
        "fields": {"at": 0},
    }


def test_the_format_of_mappings_names_their_dates_zones_and_durations() -> None:
    summer = datetime.timezone(datetime.timedelta(hours=2))
    rows = [
        {
            "t": datetime.datetime(2026, 1, 1, tzinfo=PARIS),
            "a": _naive(2026, 1, 1),
            "d": datetime.timedelta(1),
        },
        {"t": datetime.datetime(2026, 1, 1, tzinfo=summer), "a": pd.NaT, "d": None},
    ]
    f = records_format(rows)
    assert (f.dates, f.tz, f.fields, f.durations) == (True, datetime.UTC, (("a", None),), ("d",))
    assert records_format([{"time": 1, "x": "y"}]) == TimeFormat()
    assert records_format([{"time": 1, "opened": datetime.date(2026, 1, 1)}]).dates is False


def test_a_live_feed_takes_a_frame_with_a_datetime_time_and_reads_its_dates() -> None:
    session = CepSession()
    session.define(PATTERN)
    session.start_feed(["s"], clock=lambda: 5.0)
    frame = pd.DataFrame(
        {
            "time": pd.to_datetime(["2026-01-01 08:00", "2026-01-01 09:00"]),
            "order": [1, 1],
            "type": ["created", "shipped"],
            "opened": pd.to_datetime(["2026-01-01 09:00", None]),
            "wait": pd.to_timedelta(["5min", None]),
        }
    )
    found = session.feed(frame)
    assert [d.key for d in found] == [1]
    assert found[0].time == 5.0  # the feed's clock stamps it
    assert session.live_times.fields == (("opened", None),)
    assert session.live_times.durations == ("wait",)
    found = session.feed(
        [
            {
                "type": "created",
                "order": 2,
                "opened": _naive(2026, 1, 2),
                "wait": datetime.timedelta(hours=1),
            },
            {"type": "shipped", "order": 2},
        ]
    )
    assert [d.key for d in found] == [2]
    assert measure_kind(parse_expr("e.wait"), (), session.live_times.durations) == "duration"


def test_fields_finer_than_a_millisecond_get_a_note_naming_the_first() -> None:
    frame = pd.DataFrame(
        {
            "time": pd.to_datetime(["2026-01-01 00:00:00.000001", "2026-01-01"], format="ISO8601"),
            "wait": pd.to_timedelta(["1ms", None]),
            "at": pd.to_datetime(["2026-01-01", "2026-01-01 00:00:00.000001"], format="ISO8601"),
        }
    )
    note = fine_fields_note(frame, None)
    assert note is not None
    assert note.startswith(
        "column 'at' has parts finer than a millisecond (row 1: 2026-01-01 00:00:00.000001)"
    )
    assert fine_fields_note(frame.drop(columns=["at"]), None) is None  # the time has its own note
    assert [n[:13] for n in input_notes(frame, None, None)] == ["column 'time'", "column 'at' h"]
    assert fine_fields_note(pd.DataFrame({"time": [1], "w": pd.to_timedelta(["1us"])}), None) is not None


def test_an_elapsed_time_column_comes_back_as_timedeltas() -> None:
    session = CepSession()
    session.define(
        "sequence s partition by order measures took = last(b).time - first(a).time, at = first(a).time\n"
        "    begin a: created\n    followed by b: shipped within 2h\n"
    )
    frame = pd.DataFrame(
        {"time": pd.to_timedelta(["1h", "2h", "5h"]), "type": ["created", "shipped", "shipped"], "order": 1}
    )
    out = _detections(session, frame).iloc[0]
    assert (out["first_time"], out["last_time"], out["emit_time"]) == (
        pd.Timedelta(hours=1),
        pd.Timedelta(hours=2),
        pd.Timedelta(hours=2),
    )
    assert (out["took"], out["at"]) == (pd.Timedelta(hours=1), pd.Timedelta(hours=1))
    assert session.times.elapsed
    assert session.times_of(["s"]).elapsed
    assert Shown(session.times).time(3_600_000) == "0 days 01:00:00.000"
    assert session.times.dated() == ()  # not dates: timestamp(...) comparisons are not for them


def test_a_tuple_of_mappings_shows_its_dates_too() -> None:
    session = CepSession()
    session.define(PATTERN)
    rows = _rows(
        _naive(2026, 1, 1, 9), datetime.timedelta(minutes=5), (_naive(2026, 1, 1, 8), _naive(2026, 1, 1, 9))
    )
    out = _detections(session, tuple(rows))
    assert out["first_time"].tolist() == [pd.Timestamp("2026-01-01 08:00")]


FIELD = st.one_of(st.none(), st.integers(-3, 3), st.sampled_from([0.5, 2.0, math.nan]), st.just("t"))


@st.composite
def flat_rows(draw: st.DrawFn) -> list[dict[str, object]]:
    """Flat event dicts with gaps, NULLs, NaN and mixed kinds in a field; keys sometimes missing."""
    n = draw(st.integers(0, 25))
    rows, t = [], 0
    for _ in range(n):
        t += draw(st.sampled_from((0, 1, 2)))
        row: dict[str, object] = {"type": draw(st.sampled_from("abc")), "time": t}
        if draw(st.integers(0, 5)):
            row["k"] = draw(st.sampled_from(("x", "y")))
        if draw(st.booleans()):
            row["v"] = draw(FIELD)
        rows.append(row)
    return rows


GROUPED = """sequence s partition by k measures total = sum(b.v), first_v = first(a).v
    begin a: a
    followed by b: b where b.v > 0 or b.v is None one or more
    followed by c: c within 6ms
"""


@settings(max_examples=150, deadline=None)
@given(flat_rows())
def test_flat_dicts_give_what_the_same_events_read_one_by_one_give(rows: list[dict[str, object]]) -> None:
    """Read as a table (columns typed only where no value changes) or item by item (a ``fields``
    mapping each): the same detections, measures and errors."""
    nested = [
        {
            "type": r["type"],
            "time": r["time"],
            "fields": {k: v for k, v in r.items() if k not in ("type", "time")},
        }
        for r in rows
    ]
    got = []
    for data in (rows, nested):
        session = CepSession()
        session.define(GROUPED)
        try:
            done = session.replay(["s"], data, allow_missing_key=True)
        except EventError as err:  # no event has the partition field: refused either way
            got.append(("refused", err.field))
            continue
        got.append(
            (
                [
                    (d.seqs, d.key, d.instance, d.kind, repr(dict(d.measures)))
                    for d in done.outcome.detections
                ],
                [(f.where, f.kind, f.count) for f in done.outcome.errors],
            )
        )
    assert got[0] == got[1]


def test_a_duration_beyond_what_pandas_holds_is_nat_with_a_warning() -> None:
    with pytest.warns(RuntimeWarning, match="1 duration"):
        got = TimeFormat(durations=("wait",)).events(pd.DataFrame({"time": [1, 2], "wait": [1e20, 5]}))
    assert got["wait"].isna().tolist() == [True, False]


def test_a_duration_beyond_pandas_in_a_list_of_dicts_is_its_milliseconds() -> None:
    session = CepSession()
    session.define("sequence s begin a: a where a.w > 5\n    followed by b: b")
    rows = [{"type": "a", "time": 1, "w": datetime.timedelta(days=999_999_999)}, {"type": "b", "time": 2}]
    done = session.replay(["s"], rows)
    assert [d.seqs for d in done.outcome.detections] == [(0, 1)]
    assert done.outcome.detections[0].events[0]["w"] == 999_999_999 * 86_400_000
