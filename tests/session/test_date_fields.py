"""Datetime fields other than the time come back as dates in measures.

A DataFrame's datetime columns are epoch milliseconds in the engine (the time and every field); a
measure that picks such a field (``first(a).opened``) is shown as a Timestamp in that column's
zone, and a difference of two as a Timedelta, whether or not the time column held datetimes. A
measure over the time is a date only when the time column held datetimes.
"""

from __future__ import annotations

import pandas as pd

from workbench.session.runs import to_frame
from workbench.session.session import CepSession
from workbench.session.times import TimeFormat

PATTERN = """sequence slow
    partition by order
    measures opened = first(a).opened, shipped = last(b).shipped, took = last(b).shipped - first(a).opened,
             at = first(b).time, price = first(b).price, wait = first(b).time - first(a).time
    begin a: created
    followed by b: shipped where b.shipped - a.opened > 1h
"""


def _frame(times: object) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "time": times,
            "order": [1, 1, 2, 2],
            "type": ["created", "shipped", "created", "shipped"],
            "opened": pd.to_datetime(["2026-01-01 09:00", None, "2026-01-01 11:00", None]).tz_localize(
                "Europe/Paris"
            ),
            "shipped": pd.to_datetime([None, "2026-01-01 13:00", None, "2026-01-01 11:30"]).tz_localize(
                "Europe/Paris"
            ),
            "price": [1.0, 2.0, 3.0, 4.0],
        }
    )


def _run(data: pd.DataFrame) -> pd.DataFrame:
    session = CepSession()
    session.define(PATTERN)
    done = session.replay(["slow"], data)
    return to_frame(done.outcome.detections, TimeFormat.of_input(data))


def test_field_measures_are_dates_in_their_zone_with_a_datetime_time() -> None:
    data = _frame(
        pd.to_datetime(["2026-01-01 10:00", "2026-01-01 12:00", "2026-01-01 12:30", "2026-01-01 13:00"])
    )
    out = _run(data)
    assert len(out) == 1  # order 2 shipped 30 minutes after it was opened: no match
    row = out.iloc[0]
    assert row["opened"] == pd.Timestamp("2026-01-01 09:00", tz="Europe/Paris")
    assert str(out["opened"].dt.tz) == "Europe/Paris"
    assert row["shipped"] == pd.Timestamp("2026-01-01 13:00", tz="Europe/Paris")
    assert row["took"] == pd.Timedelta(hours=4)
    assert row["at"] == pd.Timestamp("2026-01-01 12:00")  # the time column's zone (naive)
    assert row["wait"] == pd.Timedelta(hours=2)
    assert row["price"] == 2.0


def test_field_measures_are_dates_even_when_the_time_is_a_number() -> None:
    out = _run(_frame([1, 2, 3, 4]))
    row = out.iloc[0]
    assert row["opened"] == pd.Timestamp("2026-01-01 09:00", tz="Europe/Paris")
    assert row["took"] == pd.Timedelta(hours=4)
    assert row["at"] == 2  # the time stays the number it was
    assert row["wait"] == 1
    assert out["emit_time"].tolist() == [2]


def test_of_input_lists_the_datetime_fields_with_their_zones() -> None:
    data = _frame([1, 2, 3, 4])
    assert TimeFormat.of_input(data) == TimeFormat(
        False, None, (("opened", data["opened"].dt.tz), ("shipped", data["shipped"].dt.tz))
    )
    assert TimeFormat.of_input(data[["time", "order", "type"]]) == TimeFormat()


def test_late_events_keep_their_datetime_fields_as_dates() -> None:
    from workbench.results import events_to_frame

    data = _frame(
        pd.to_datetime(["2026-01-01 10:00", "2026-01-01 12:00", "2026-01-01 09:30", "2026-01-01 13:00"])
    )
    session = CepSession()
    session.define(PATTERN)
    late = session.replay(["slow"], data).outcome.late
    assert [e.seq for e in late] == [2]
    out = TimeFormat.of_input(data).events(events_to_frame(late))
    assert out["time"].tolist() == [pd.Timestamp("2026-01-01 09:30")]
    assert out["opened"].tolist() == [pd.Timestamp("2026-01-01 11:00", tz="Europe/Paris")]
    assert out["price"].tolist() == [3.0]


def test_the_frames_attrs_are_plain_values_so_parquet_can_write_them() -> None:
    import json

    from workbench.results import detections_to_frame

    data = _frame([1, 2, 3, 4])
    session = CepSession()
    session.define(PATTERN)
    raw = detections_to_frame(session.replay(["slow"], data).outcome.detections)
    assert (
        json.loads(json.dumps(raw.attrs))["measure_exprs"] == raw.attrs["measure_exprs"]
    )  # to_parquet writes JSON
    # the attrs travel with the frame through pandas operations, and still tell the dates
    shown = TimeFormat.of_input(data).frame(raw.drop(columns=["price"]))
    assert shown["opened"].tolist() == [pd.Timestamp("2026-01-01 09:00", tz="Europe/Paris")]
