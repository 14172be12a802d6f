"""The columnar condition evaluator equals the scalar evaluator row by row, or declines."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.backends.columnar.vector import event_mask
from workbench.engine.expr.evaluate import EMPTY_FRAME, compile_tree
from workbench.engine.expr.parse import parse_expr
from workbench.results import frame_to_events

FIELDS = ("i", "f", "s", "b", "m", "n", "z")


def frame_of(rows: list[tuple[object, ...]]) -> pd.DataFrame:
    df = pd.DataFrame(
        {
            "type": ["x"] * len(rows),
            "time": list(range(len(rows))),
            "i": pd.array([r[0] for r in rows], dtype="Int64"),
            "f": pd.array([r[1] for r in rows], dtype="float64"),
            "s": pd.Series([r[2] for r in rows], dtype=object),
            "b": pd.Series([r[3] for r in rows], dtype=bool),
            "m": pd.Series([r[4] for r in rows], dtype=object),
            "n": pd.array([r[5] for r in rows], dtype="int64"),
        }
    )
    return df


rows_st = st.lists(
    st.tuples(
        st.one_of(st.none(), st.integers(-5, 5), st.integers(-(2**60), 2**60)),
        st.one_of(st.none(), st.floats(-10, 10, allow_nan=False), st.just(float("nan")), st.just(0.0)),
        st.one_of(st.none(), st.sampled_from(["", "a", "b", "ab"])),
        st.booleans(),
        st.one_of(st.none(), st.integers(-3, 3), st.sampled_from(["a", "b"]), st.floats(-3, 3)),
        st.integers(-4, 4),
    ),
    min_size=1,
    max_size=12,
)

leaf = st.one_of(
    st.sampled_from([f"e.{f}" for f in FIELDS] + ["e.time", "e.type"]),
    st.integers(-3, 3).map(str),
    st.sampled_from(["0", "2.5", "0.0", "'a'", "''", "True", "None", str(2**60)]),
)


def _extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    binop = st.sampled_from(["+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"])
    return st.one_of(
        st.tuples(inner, binop, inner).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        inner.map(lambda x: f"(not {x})"),
        inner.map(lambda x: f"(-{x})"),
        inner.map(lambda x: f"({x} is None)"),
        inner.map(lambda x: f"({x} is not None)"),
        st.tuples(inner, st.lists(leaf, min_size=1, max_size=3)).map(
            lambda t: f"({t[0]} in [{', '.join(t[1])}])"
        ),
    )


expr_st = st.recursive(leaf, _extend, max_leaves=6)


def scalar_truths(text: str, frame: pd.DataFrame) -> list[bool] | None:
    """Per row the scalar condition's truth; ``None`` when any row raises."""
    run = compile_tree(parse_expr(text))
    out = []
    for e in frame_to_events(frame, key_column=None):
        try:
            v = run(e, EMPTY_FRAME, None)
        except Exception:
            return None
        out.append(v is not None and bool(v))
    return out


@settings(max_examples=600, deadline=None)
@given(expr_st, rows_st)
def test_vector_equals_scalar_or_declines(text: str, rows: list[tuple[object, ...]]) -> None:
    frame = frame_of(rows)
    mask = event_mask(parse_expr(text), frame.get, len(frame))
    want = scalar_truths(text, frame)
    if mask is None:
        return
    assert want is not None, f"vectorised {text!r} but the scalar evaluator raises on some row"
    assert mask.tolist() == want, text


@pytest.mark.parametrize(
    "text",
    [
        "e.f > 1.5",
        "e.i >= 2 and e.f < 0",
        "e.s == 'a' or e.s in ['b', '']",
        "not (e.i + e.n * 2 > 3)",
        "e.z > 1 or e.f is None",
        "e.n // 2 == 1 and e.n % 3 != 0",
        "e.s != 1",
        "e.m is not None",
        "e.b and e.f / 2 > 0.5",
    ],
)
def test_common_conditions_are_vectorised(text: str) -> None:
    rows = [(1, 2.0, "a", True, "a", 3), (None, None, None, False, 2, -4), (3, -1.0, "", True, None, 0)]
    frame = frame_of(rows)
    mask = event_mask(parse_expr(text), frame.get, len(frame))
    assert mask is not None, text
    assert mask.tolist() == scalar_truths(text, frame)


@pytest.mark.parametrize(
    "text",
    [
        "e.s > 1",
        "e.f / e.n > 0",
        "e.m > 1",
        "e.i * 2 > 1",
        "abs(e.f) > 1",
        "e.f ** 2 > 1",
        "e.s + 'x' == 'ax'",
    ],
)
def test_declines_where_the_scalar_path_must_decide(text: str) -> None:
    rows = [(2**60, 2.0, "a", True, "a", 0), (1, 1.0, "b", False, 2, 1)]
    frame = frame_of(rows)
    assert event_mask(parse_expr(text), frame.get, len(frame)) is None


def test_mask_is_a_plain_bool_array() -> None:
    frame = frame_of([(1, 2.0, "a", True, "a", 3)])
    mask = event_mask(parse_expr("e.f > 1"), frame.get, 1)
    assert isinstance(mask, np.ndarray)
    assert mask.dtype == bool


@pytest.mark.parametrize(
    ("values", "dtype"),
    [
        ([2**64 - 1, 2**63, 7], "uint64"),  # (as int64 they wrapped negative: 'e.v > 5' missed them)
        ([2**64 - 1, None, 7], "UInt64"),
        ([-(2**63), 0, 7], "int64"),  # (np.abs of the smallest int64 is negative: no bound)
        ([3, 2**53 + 1, 7], "uint64"),
    ],
)
@pytest.mark.parametrize("text", ["e.v > 5", "e.v < 100", "e.v + 0 > 5", "e.v * 2 > 5", "e.v == 7"])
def test_extreme_integer_columns_equal_the_scalar_path(
    values: list[int | None], dtype: str, text: str
) -> None:
    frame = pd.DataFrame({"type": "x", "time": [0, 1, 2], "v": pd.array(values, dtype=dtype)})
    mask = event_mask(parse_expr(text), frame.get, len(frame))
    if mask is not None:
        assert mask.tolist() == scalar_truths(text, frame), text
