"""The detections DataFrame, built column by column: pinned dtypes and values, and a per-row oracle."""

from __future__ import annotations

import math

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import Detection, Event
from workbench.engine.detection import MeasureValues
from workbench.results import DETECTION_COLUMNS, detections_to_frame

L = Event("login", 1000, "u1", {"ip": "a"}, seq=0)
T1 = Event("trade", 1500, "u1", {"price": 101.5}, seq=2)
T2 = Event("trade", 2500, "u1", {"price": 99.0}, seq=5)
OUT = Event("logout", 3000, "u1", {}, seq=7)
X = Event("x", 40, ("k", 2), {}, seq=9)


def _mixed() -> list[Detection]:
    m = MeasureValues({"avg_price": 100.25, "n": 2}, {"avg_price": "value", "n": "value"})
    return [
        Detection("P5", "u1", 1, "match", 3000, (L, T1, T2, OUT), ("a", "b", "b", "c"), measures=m),
        Detection("P5", "u1", 2, "timeout", 31000, (L, T1), ("a", "b")),
        Detection(
            "grp",
            ("k", 2),
            1,
            "match",
            45,
            (X, L),
            ("c1", "c2"),
            ("neg",),
            initiator=X,
            extra={"exit": "and"},
        ),
        Detection("grp", None, 3, "timeout", 50, (), ()),
    ]


def test_mixed_detections_pin_every_column_dtype_and_value() -> None:
    df = detections_to_frame(_mixed())
    assert list(df.columns) == [*DETECTION_COLUMNS, "avg_price", "n"]
    dtypes = {c: str(t) for c, t in df.dtypes.items()}
    assert dtypes == {
        "pattern": "object", "key": "object", "instance": "int64", "kind": "object",
        "emit_time": "int64", "n_events": "int64", "events": "object", "types": "object",
        "channels": "object", "negated": "object", "initiator": "Int64", "first_time": "Int64",
        "last_time": "Int64", "extra": "object", "avg_price": "float64", "n": "Int64",
    }  # fmt: skip
    rows = df.astype(object).where(df.notna(), None).to_dict("records")
    assert rows == [
        {"pattern": "P5", "key": "u1", "instance": 1, "kind": "match", "emit_time": 3000, "n_events": 4,
         "events": (0, 2, 5, 7), "types": ("login", "trade", "trade", "logout"),
         "channels": ("a", "b", "b", "c"), "negated": (), "initiator": None, "first_time": 1000,
         "last_time": 3000, "extra": {}, "avg_price": 100.25, "n": 2},
        {"pattern": "P5", "key": "u1", "instance": 2, "kind": "timeout", "emit_time": 31000, "n_events": 2,
         "events": (0, 2), "types": ("login", "trade"), "channels": ("a", "b"), "negated": (),
         "initiator": None, "first_time": 1000, "last_time": 1500, "extra": {}, "avg_price": None, "n": None},
        {"pattern": "grp", "key": ("k", 2), "instance": 1, "kind": "match", "emit_time": 45, "n_events": 2,
         "events": (9, 0), "types": ("x", "login"), "channels": ("c1", "c2"), "negated": ("neg",),
         "initiator": 9, "first_time": 40, "last_time": 1000, "extra": {"exit": "and"}, "avg_price": None,
         "n": None},
        {"pattern": "grp", "key": None, "instance": 3, "kind": "timeout", "emit_time": 50, "n_events": 0,
         "events": (), "types": (), "channels": (), "negated": (), "initiator": None, "first_time": None,
         "last_time": None, "extra": {}, "avg_price": None, "n": None},
    ]  # fmt: skip
    assert df["extra"][0] is not df["extra"][1]  # each row owns its dict


def _oracle(ds: list[Detection]) -> dict[str, list[object]]:
    """Per row, the plain values of the event-derived columns (the definition, cell by cell)."""
    out: dict[str, list[object]] = {"events": [], "types": [], "first_time": [], "last_time": []}
    for d in ds:
        times = [e.time for e in d.events]
        out["events"].append(tuple(e.seq for e in d.events))
        out["types"].append(tuple(e.type for e in d.events))
        out["first_time"].append(min(times) if times else None)
        out["last_time"].append(max(times) if times else None)
    return out


def _dtype(values: list[object]) -> str:
    present = [v for v in values if v is not None]
    if all(isinstance(v, int) for v in present):
        return "int64" if len(present) == len(values) else "Int64"
    return "float64"


times = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(-1e12, 1e12, allow_nan=False),
    st.just(math.nan),
    st.booleans(),
)


@st.composite
def detections(draw: st.DrawFn) -> list[Detection]:
    out = []
    for i in range(draw(st.integers(0, 6))):
        ts = draw(st.lists(times, max_size=4))
        events = tuple(Event("e", t, "k", seq=j) for j, t in enumerate(ts))
        emit = draw(st.one_of(st.integers(0, 10**6), st.floats(0, 1e6)))
        out.append(Detection("p", "k", i + 1, "match", emit, events, tuple("c" for _ in events)))
    return out


@settings(max_examples=300, deadline=None)
@given(detections())
def test_event_columns_equal_the_per_row_definition(ds: list[Detection]) -> None:
    df = detections_to_frame(ds)
    want = _oracle(ds)
    assert df["events"].tolist() == want["events"]
    assert df["types"].tolist() == want["types"]
    for col in ("first_time", "last_time"):
        assert str(df[col].dtype) == (_dtype(want[col]) if ds else "int64")
        expected = pd.Series(
            want[col]
            if _dtype(want[col]) != "float64"
            else [math.nan if v is None else v for v in want[col]],
            dtype=str(df[col].dtype),
        )
        pd.testing.assert_series_equal(df[col], expected, check_names=False, check_exact=True)
    assert str(df["emit_time"].dtype) == (_dtype([d.time for d in ds]) if ds else "int64")
