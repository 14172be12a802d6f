"""Measures as columns of the detections DataFrame."""

from __future__ import annotations

import pandas as pd

from workbench.engine import Detection, Event
from workbench.engine.detection import MeasureValues
from workbench.engine.nfa.measures import RESERVED_MEASURE_NAMES
from workbench.results import DETECTION_COLUMNS, detections_to_frame
from workbench.session.times import TimeFormat


def _d(pattern: str, values: dict[str, object], kinds: dict[str, str] | None = None, i: int = 1) -> Detection:
    ev = (Event("a", 1000 * i, "k", seq=i),)
    return Detection(
        pattern, "k", i, "match", 1000 * i, ev, ("a",), measures=MeasureValues(values, kinds or {})
    )


def test_reserved_names_are_the_fixed_columns() -> None:
    assert set(DETECTION_COLUMNS) == RESERVED_MEASURE_NAMES


def test_no_measures_no_columns() -> None:
    frame = detections_to_frame([Detection("p", "k", 1, "match", 0, (), ())])
    assert list(frame.columns) == list(DETECTION_COLUMNS)
    assert "time_columns" not in frame.attrs
    assert list(detections_to_frame([]).columns) == list(DETECTION_COLUMNS)


def test_columns_follow_the_fixed_ones_in_declared_order_and_patterns_in_order() -> None:
    ds = [_d("p", {"z": 1, "a": 2}, i=1), _d("q", {"m": 3, "a": 4}, i=2), _d("p", {"z": 5, "a": 6}, i=3)]
    frame = detections_to_frame(ds)
    assert list(frame.columns) == [*DETECTION_COLUMNS, "z", "a", "m"]
    assert frame["z"].tolist()[0::2] == [1, 5]
    assert pd.isna(frame["z"][1])
    assert frame["a"].tolist() == [2, 4, 6]


def test_dtypes_follow_the_values() -> None:
    ds = [
        _d("p", {"i": 1, "im": 1, "f": 1, "b": True, "bm": False, "s": "x", "n": None}, i=1),
        _d("p", {"i": 2, "im": None, "f": 2.5, "b": False, "bm": None, "s": None, "n": None}, i=2),
    ]
    frame = detections_to_frame(ds)
    assert str(frame["i"].dtype) == "int64"
    assert str(frame["im"].dtype) == "Int64"
    assert frame["im"].isna().tolist() == [False, True]
    assert str(frame["f"].dtype) == "float64"
    assert frame["f"].tolist() == [1.0, 2.5]
    assert str(frame["b"].dtype) == "bool"
    assert str(frame["bm"].dtype) == "boolean"
    assert frame["s"].dtype == object
    assert frame["s"].tolist() == ["x", None]
    assert frame["n"].dtype == object


def test_time_and_duration_measures_become_dates_for_datetime_input() -> None:
    kinds = {"at": "time", "took": "duration", "v": "value"}
    ds = [
        _d("p", {"at": 5000, "took": 1500, "v": 2}, kinds, i=1),
        _d("p", {"at": None, "took": None, "v": 3}, kinds, i=2),
    ]
    frame = detections_to_frame(ds)
    assert frame.attrs["time_columns"] == ("at",)
    assert frame.attrs["duration_columns"] == ("took",)
    assert TimeFormat().frame(frame) is frame  # numbers stay numbers
    dated = TimeFormat(True, "UTC").frame(frame)
    assert dated["at"][0] == pd.Timestamp("1970-01-01 00:00:05", tz="UTC")
    assert pd.isna(dated["at"][1])
    assert dated["took"][0] == pd.Timedelta(milliseconds=1500)
    assert pd.isna(dated["took"][1])
    assert dated["v"].tolist() == [2, 3]
    assert dated["emit_time"][0] == pd.Timestamp("1970-01-01 00:00:01", tz="UTC")


def test_a_run_without_detections_still_has_its_patterns_measure_columns() -> None:
    # (the columns came from the detections: no detection, no 'av' column, and res["av"] failed)
    from workbench.session.session import CepSession

    session = CepSession()
    session.define("sequence ab\n    measures av = first(a).v, n = count(b)\n    begin a: a\n    next b: b\n")
    for types, rows in ((["a", "b"], 1), (["a", "a"], 0)):
        session.replay(["ab"], pd.DataFrame({"type": types, "time": [1, 2], "key": "k", "v": [1, 2]}))
        frame = session.matches("ab")
        assert list(frame.columns[-2:]) == ["av", "n"]
        assert len(frame) == rows
