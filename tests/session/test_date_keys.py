"""Partition keys and fields that were datetimes read as dates: in the detections' ``key`` column,
in explain texts (and ``--key`` takes a date), and in the timeline's detail table.

The engine keys ``partition by day`` by the day's epoch milliseconds, and ``partition by day, user``
by ``(milliseconds, user)``: a part of a composite key is the value a one-field key would be.
"""

from __future__ import annotations

import datetime

import pandas as pd
from hypothesis import given
from hypothesis import strategies as st

from workbench.session.session import CepSession
from workbench.session.shown import PLAIN, Shown
from workbench.session.times import TimeFormat
from workbench.widgets.detail import detail_table

DAY1, DAY2 = 1704067200000, 1704153600000  # 2024-01-01 and 2024-01-02, UTC midnight


def _events() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "type": ["a", "b", "a", "b"],
            "time": pd.to_datetime(
                ["2024-01-01 10:00", "2024-01-01 10:01", "2024-01-02 10:00", "2024-01-02 10:02"]
            ).tz_localize("Europe/Paris"),
            "day": pd.to_datetime(["2024-01-01", "2024-01-01", "2024-01-02", "2024-01-02"]),
            "user": ["u", "u", "v", "v"],
            "opened": pd.to_datetime(["2024-01-01 09:00"] * 4).tz_localize("UTC"),
        }
    )


def _session(partition: str) -> CepSession:
    session = CepSession()  # a replay of a DataFrame keeps how its input gave times
    session.define(f"sequence s\n    partition by {partition}\n    begin x: a\n    followed by y: b\n")
    session.replay(["s"], _events())
    return session


def test_a_datetime_partition_key_is_a_datetime_column() -> None:
    session = _session("day")
    assert [d.key for d in session.detections("s")] == [DAY1, DAY2]  # the engine's keys: milliseconds
    frame = session.matches("s")
    assert pd.api.types.is_datetime64_dtype(frame["key"].dtype)
    assert frame["key"].tolist() == [pd.Timestamp("2024-01-01"), pd.Timestamp("2024-01-02")]


def test_a_composite_key_holds_milliseconds_and_shows_dates() -> None:
    session = _session("day, user")
    assert [d.key for d in session.detections("s")] == [(DAY1, "u"), (DAY2, "v")]
    frame = session.matches("s")
    assert frame["key"].tolist() == [(pd.Timestamp("2024-01-01"), "u"), (pd.Timestamp("2024-01-02"), "v")]


def test_explain_shows_keys_and_datetime_fields_as_dates_and_takes_a_date_as_key() -> None:
    session = _session("day")
    text = session.explain("s")
    assert "key='2024-01-02 00:00:00.000' instance 1: fired at t=2024-01-02 10:02:00.000" in text
    assert str(DAY2) not in text
    story = session.explain("s", key="2024-01-02", instance=1)
    assert story.startswith("s key='2024-01-02 00:00:00.000' instance 1: fired")
    assert "opened='2024-01-01 09:00:00.000'" in story  # a datetime field in its own zone (UTC)
    assert "key='2024-01-01" not in story
    composite = _session("day, user").explain("s", key=("2024-01-01", "u"), instance=1)
    assert composite.startswith("s key=('2024-01-01 00:00:00.000', 'u') instance 1: fired")


def test_a_key_that_is_not_a_date_stays_as_given() -> None:
    session = _session("day")
    text = session.explain("s", key="not a day")
    assert text.startswith("s: no instance was started for key 'not a day'")
    assert "keys with instances: '2024-01-01 00:00:00.000', '2024-01-02 00:00:00.000'" in text


def test_the_detail_table_shows_datetime_fields_as_dates() -> None:
    session = _session("user")
    d = session.detections("s")[0]
    html = detail_table(0, d, Shown(session.runs["s"].times))
    assert "opened=&#x27;2024-01-01 09:00:00.000&#x27;" in html
    assert str(DAY1 + 9 * 3_600_000) not in html
    plain = detail_table(0, d, PLAIN)
    assert f"opened={DAY1 + 9 * 3_600_000}" in plain


ZONES = st.sampled_from([None, "UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata"])
MS = st.integers(min_value=-(10**13), max_value=10**13)  # about 1653 to 2286


@given(ms=MS, zone=ZONES)
def test_a_key_shown_as_a_date_names_the_same_key(ms: int, zone: str | None) -> None:
    """What explain writes for a date key, given back to ``--key``, is the engine's key again."""
    times = TimeFormat(False, None, (("day", zone),))
    shown = Shown(times, "day")
    text = shown.key(ms)
    assert text.startswith("'")
    assert text.count("-") >= 2
    assert shown.wanted(text.strip("'")) == ms
    pair = Shown(times, ("day", "user"))
    assert pair.wanted((text.strip("'"), "u")) == (ms, "u")


@given(ms=MS, zone=ZONES)
def test_a_key_as_a_date_is_the_same_moment(ms: int, zone: str | None) -> None:
    stamp = Shown(TimeFormat(False, None, (("day", zone),)), "day").key_value(ms)
    assert isinstance(stamp, pd.Timestamp)
    moment = stamp if stamp.tzinfo is not None else stamp.tz_localize("UTC")
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
    assert (moment.to_pydatetime() - epoch) == datetime.timedelta(milliseconds=ms)


def test_a_key_finer_than_a_millisecond_is_refused_not_merged() -> None:
    # (.123456 and .123999 were cut to the same millisecond: one partition, and a false match)
    import pytest

    from workbench.errors import EventError

    session = CepSession()
    session.define("sequence m\n  partition by day, user\n  begin a: price\n  followed by b: price")
    day = pd.to_datetime(["2024-01-01 00:00:00.123456", "2024-01-01 00:00:00.123999"]).tz_localize("UTC")
    frame = pd.DataFrame({"type": "price", "time": [0, 1], "day": day, "user": "u"})
    with pytest.raises(EventError, match=r"partition key column 'day' holds a time finer than a millisecond"):
        session.replay(["m"], frame)
    session.replay(["m"], frame.assign(day=frame["day"].dt.floor("ms")))  # what the message says to do
    assert len(session.matches("m")) == 1
