"""Detections, reactions and trace records as DataFrames; DataFrames back into events."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from workbench.engine import Detection, Event, Reaction, TraceKind, TraceRecord
from workbench.errors import CepError, EventError
from workbench.results import (
    DETECTION_COLUMNS,
    DETECTION_EVENT_COLUMNS,
    EVENT_COLUMNS,
    REACTION_COLUMNS,
    TRACE_COLUMNS,
    detection_events_to_frame,
    detections_to_frame,
    events_to_frame,
    frame_to_events,
    reactions_to_frame,
    trace_to_frame,
)

A = Event("a", 10, "k1", {"x": 1, "kind": "buy"}, seq=0)
B = Event("b", 25, "k1", {"y": 2.5}, seq=3)
C = Event("c", 7, ("k", 2), {}, seq=1)

D1 = Detection("p", "k1", 1, "match", 30, (A, B), ("ca", "cb"), ("cn",), initiator=A, extra={"exit": "and"})
D2 = Detection("q", ("k", 2), 4, "timeout", 100.5, (C,), ("s1",))
D3 = Detection("q", "k3", 2, "timeout", 50, (), ())


def test_one_row_per_detection_with_documented_columns() -> None:
    df = detections_to_frame([D1, D2, D3])
    assert list(DETECTION_COLUMNS) == list(df.columns)
    rows = df.to_dict("records")
    assert rows[0]["pattern"] == "p"
    assert rows[0]["key"] == "k1"
    assert rows[0]["instance"] == 1
    assert rows[0]["kind"] == "match"
    assert rows[0]["n_events"] == 2
    assert rows[0]["events"] == (0, 3)
    assert rows[0]["types"] == ("a", "b")
    assert rows[0]["channels"] == ("ca", "cb")
    assert rows[0]["negated"] == ("cn",)
    assert rows[0]["initiator"] == 0
    assert (rows[0]["first_time"], rows[0]["last_time"]) == (10.0, 25.0)
    assert rows[0]["extra"] == {"exit": "and"}
    assert rows[1]["key"] == ("k", 2)  # tuple keys stay whole objects
    assert pd.isna(rows[1]["initiator"])
    assert rows[1]["emit_time"] == 100.5
    assert rows[2]["n_events"] == 0
    assert pd.isna(rows[2]["first_time"])
    assert str(df["first_time"].dtype) == "Int64"  # integral times, one missing: nullable integers
    assert str(df["instance"].dtype) == "int64"
    assert str(df["initiator"].dtype) == "Int64"


def test_event_times_keep_the_input_numbers() -> None:
    """first_time/last_time are integers for integer input (no 1.269630e+12), floats for floats."""
    ints = detections_to_frame([D1])
    assert str(ints["first_time"].dtype) == str(ints["last_time"].dtype) == "int64"
    assert ints["first_time"].tolist() == [10]
    half = Event("a", 2.5, "k1", {}, seq=9)
    floats = detections_to_frame([D1, Detection("p", "k1", 2, "match", 3, (half,), ("ca",))])
    assert str(floats["first_time"].dtype) == "float64"
    assert floats["first_time"].tolist() == [10.0, 2.5]


def test_integral_emit_times_stay_integers() -> None:
    df = detections_to_frame([D1, D3])
    assert str(df["emit_time"].dtype) == "int64"
    assert df["emit_time"].tolist() == [30, 50]


def test_empty_inputs_give_empty_frames_with_the_same_columns() -> None:
    for fn, cols in (
        (detections_to_frame, DETECTION_COLUMNS),
        (detection_events_to_frame, DETECTION_EVENT_COLUMNS),
        (reactions_to_frame, REACTION_COLUMNS),
        (trace_to_frame, TRACE_COLUMNS),
        (events_to_frame, EVENT_COLUMNS),
    ):
        df = fn([])
        assert len(df) == 0
        assert list(cols) == list(df.columns), fn.__name__
    # Same dtypes as a non-empty frame for the integer columns.
    assert str(detections_to_frame([])["instance"].dtype) == "int64"


def test_long_form_one_row_per_detection_event_with_fields() -> None:
    df = detection_events_to_frame([D1, D2, D3])
    assert list(df.columns)[: len(DETECTION_EVENT_COLUMNS)] == list(DETECTION_EVENT_COLUMNS)
    # fields in order of first appearance; 'kind' clashes with the detection kind column
    assert list(df.columns)[len(DETECTION_EVENT_COLUMNS) :] == ["x", "field_kind", "y"]
    assert df["detection"].tolist() == [0, 0, 1]
    assert df["position"].tolist() == [0, 1, 0]
    assert df["channel"].tolist() == ["ca", "cb", "s1"]
    assert df["seq"].tolist() == [0, 3, 1]
    assert df["type"].tolist() == ["a", "b", "c"]
    assert df["time"].tolist() == [10, 25, 7]
    assert df["kind"].tolist() == ["match", "match", "timeout"]
    assert df["field_kind"].tolist()[0] == "buy"
    assert df["x"].tolist()[0] == 1
    assert math.isnan(df["x"].tolist()[1])  # b has no x
    assert df["y"].tolist()[1] == 2.5


def test_reactions_frame() -> None:
    r = Reaction("p", "k1", 1, "ca", A, 10)
    df = reactions_to_frame([r])
    assert list(df.columns) == [*REACTION_COLUMNS, "x", "kind"]  # no clash here
    row = df.to_dict("records")[0]
    assert (row["channel"], row["status"], row["seq"], row["type"], row["event_time"]) == (
        "ca",
        "accepted",
        0,
        "a",
        10,
    )


def test_trace_frame_reads_counts_from_detail() -> None:
    recs = [
        TraceRecord(1, "p", "k", 1, TraceKind.STARTED, None, 0),
        TraceRecord(2, "p", "k", 1, TraceKind.COUNTED, "c", 1, {"count": 2, "of": 3}),
        TraceRecord(9, "p", "k", 1, TraceKind.TIMED_OUT),
    ]
    df = trace_to_frame(recs)
    assert list(TRACE_COLUMNS) == list(df.columns)
    assert df["kind"].tolist() == ["started", "counted", "timed_out"]
    assert df["element"].tolist() == [None, "c", None]
    assert df["count"].tolist() == [pd.NA, 2, pd.NA]
    assert df["of"].tolist() == [pd.NA, 3, pd.NA]
    assert df["event_seq"].tolist() == [0, 1, pd.NA]


def test_frame_to_events_round_trip() -> None:
    events = [Event("a", 1, "k", {"x": 1}), Event("b", 2, None, {"y": "z"}), Event("a", 3, "k", {"x": 2})]
    df = events_to_frame(events)
    back = frame_to_events(df)
    assert back == events  # seq is not a field; missing fields are dropped, not NaN


def test_frame_to_events_datetimes_become_ms() -> None:
    df = pd.DataFrame(
        {
            "type": ["a", "b"],
            "time": pd.to_datetime(["1970-01-01 00:00:01.5", "2024-01-01 00:00:00.0"], utc=True).tz_convert(
                "Europe/Berlin"
            ),
            "key": ["k", "k"],
            "seen": pd.to_datetime(["1970-01-01 00:00:02", None]),
            "dur": pd.to_timedelta(["2s", "1ms"]),
        }
    )
    ev = frame_to_events(df)
    assert ev[0].time == 1500
    assert ev[1].time == 1704067200000
    assert ev[0].fields == {"seen": 2000, "dur": 2000}
    assert all(type(v) is int for v in ev[0].fields.values())
    assert ev[1].fields == {"dur": 1}  # NaT: no such field
    assert all(isinstance(e.time, int) for e in ev)


def test_frame_to_events_t_column_and_no_key() -> None:
    df = pd.DataFrame({"type": ["a"], "t": [5], "v": [1.5]})
    assert frame_to_events(df) == [Event("a", 5, None, {"v": 1.5})]


def test_frame_to_events_whole_float_times_become_int() -> None:
    df = pd.DataFrame({"type": ["a", "b"], "time": [1.0, 2.5]})
    assert [e.time for e in frame_to_events(df)] == [1, 2.5]


@pytest.mark.parametrize(
    ("frame", "words"),
    [
        (pd.DataFrame({"time": [1]}), ["type column 'type'"]),
        (pd.DataFrame({"type": ["a"]}), ["time column 'time'"]),
        (
            pd.DataFrame({"type": ["a", None], "time": [1, 2]}, index=[10, 11]),
            ["row 1", "index 11", "'type'"],
        ),
        (pd.DataFrame({"type": ["a", "b"], "time": [1, None]}), ["row 1", "missing event time", "'time'"]),
        (pd.DataFrame({"type": ["a"], "time": ["noon"]}), ["row 0", "column 'time'", "milliseconds"]),
        (pd.DataFrame({"type": ["a"], "time": [1], "key": [[1, 2]]}), ["row 0", "column 'key'", "hashable"]),
        (pd.DataFrame({"type": [3], "time": [1]}), ["row 0", "column 'type'", "must be a string"]),
    ],
)
def test_frame_to_events_bad_rows_name_row_and_column(frame: pd.DataFrame, words: list[str]) -> None:
    with pytest.raises(EventError) as info:
        frame_to_events(frame)
    assert isinstance(info.value, CepError)
    for w in words:
        assert w in str(info.value)


def test_frame_to_events_explicit_fields() -> None:
    df = pd.DataFrame({"type": ["a"], "time": [1], "x": [1], "y": [2]})
    assert frame_to_events(df, fields=["y"])[0].fields == {"y": 2}
    with pytest.raises(EventError, match="'z'"):
        frame_to_events(df, fields=["z"])


def test_engine_does_not_import_pandas_through_results() -> None:
    import subprocess
    import sys

    code = "import workbench.engine, sys; assert 'pandas' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_doctests() -> None:
    import doctest

    import workbench.results

    assert doctest.testmod(workbench.results).failed == 0


def test_detection_frame_keeps_equal_length_tuples_as_cells() -> None:
    events = (Event("a", 3, "k", seq=0), Event("b", 5, "k", seq=4))
    one = detections_to_frame([Detection("p", ("k", 1), 1, "match", 9, events, ("a", "b"))])
    assert one["events"].tolist() == [(0, 4)]
    assert one["key"].tolist() == [("k", 1)]
    assert one["types"].tolist() == [("a", "b")]
    assert (one["first_time"].tolist(), one["last_time"].tolist()) == ([3.0], [5.0])
    empty = detections_to_frame([Detection("p", None, 2, "timeout", 7, (), ())])
    assert empty["first_time"].isna().all()
    assert empty["n_events"].tolist() == [0]


def test_integers_past_int64_stay_exact_in_object_columns() -> None:
    from workbench.engine import run
    from workbench.language import compile_pattern

    p = compile_pattern("sequence s measures id = first(a).id begin a: a")
    found = run(
        p, [{"type": "a", "time": 0, "id": 12345678901234567890}, {"type": "a", "time": 2**63, "id": 1}]
    )
    frame = detections_to_frame(found.detections)
    assert frame["id"].tolist() == [12345678901234567890, 1]
    assert frame["emit_time"].tolist() == [0, 2**63]


def test_times_beyond_the_dates_pandas_holds_are_nat_with_a_warning() -> None:
    from workbench.session.times import TimeFormat

    dates = TimeFormat.of_column(pd.Series(pd.to_datetime(["2024-01-01"])))
    with pytest.warns(RuntimeWarning, match="1 time\\(s\\) beyond the dates pandas can hold"):
        shown = dates.series([1704067200000, 86_400_000 * 10**9])
    assert shown.iloc[0] == pd.Timestamp("2024-01-01")
    assert pd.isna(shown.iloc[1])
