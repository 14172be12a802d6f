"""Duration literals in expressions (``b.time - a.time < 5min``).

* Any number and unit reads as that many milliseconds (Hypothesis against ``float * unit``),
  directly after the number or after one space or tab; anywhere else text is read as before.
* Strings and names that merely contain a unit are never rewritten, and errors keep their places.
* Through the language, a condition with a duration gives the detections of the same condition
  with the milliseconds written out, and ``@timeout(5min)`` is still an annotation's duration.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import run
from workbench.engine.events import Event
from workbench.engine.expr import parse_expr
from workbench.engine.expr.durations import UNITS, duration_marks
from workbench.engine.expr.ir import Binary, Compare, Literal, Name
from workbench.errors import ExpressionError
from workbench.language import compile_text


@settings(deadline=None)
@given(
    st.one_of(st.integers(0, 10**9).map(str), st.decimals(0, 10**6, places=3).map(str)),
    st.sampled_from(sorted(UNITS)),
    st.sampled_from(["", " ", "\t"]),
)
def test_a_number_and_a_unit_is_that_many_milliseconds(number: str, unit: str, gap: str) -> None:
    value = float(number) * UNITS[unit]
    expected = int(value) if value.is_integer() else value
    tree = parse_expr(f"x < {number}{gap}{unit}")
    assert tree == Compare("<", Name("x"), Literal(expected))
    assert isinstance(tree, Compare)
    assert tree.right.span is not None
    assert tree.right.span.column == 5


@pytest.mark.parametrize(
    "text",
    [
        "e.unit == 'over 5min'",  # in a string
        "e.s + e.min > e.h",  # names that are units
        "e.ms5 > 0",  # a name that starts with a unit
        "[x for s in e.items]",  # a name after a keyword, not after a number
    ],
)
def test_text_without_a_duration_is_not_rewritten(text: str) -> None:
    assert duration_marks(text) == (text, {})
    parse_expr(text)


@pytest.mark.parametrize(
    ("text", "column"),
    [
        ("e.x > 5  min", 10),  # two spaces: not a duration (as in the language)
        ("e.x > 5 secs", 9),  # a name that starts with a unit
        ("e.x > 5m", 7),  # no such unit
    ],
)
def test_what_is_no_duration_is_an_error_at_its_place(text: str, column: int) -> None:
    with pytest.raises(ExpressionError) as err:
        parse_expr(text)
    assert err.value.span is not None
    assert err.value.span.column == column


def test_a_bare_underscore_is_still_refused() -> None:
    with pytest.raises(ExpressionError, match="cannot start with '_'"):
        parse_expr("e.x > _")


def test_durations_on_several_lines_and_in_arithmetic() -> None:
    tree = parse_expr("(e.time\n - a.time) >= 1.5h + 30s")
    assert isinstance(tree, Compare)
    assert tree.right == Binary("+", Literal(5_400_000), Literal(30_000))


def _events(rows: list[tuple[str, int]]) -> list[Event]:
    return [Event(typ, t, "k", {}, i) for i, (typ, t) in enumerate(rows)]


def _first_b_in_range(rows: list[tuple[str, int]]) -> list[tuple[int, ...]]:
    """The oracle: each ``a`` with the first later ``b`` 30 s to under 2 min after it (relaxed)."""
    out = []
    for i, (typ, t) in enumerate(rows):
        if typ == "a":
            for j in range(i + 1, len(rows)):
                if rows[j][0] == "b" and 30_000 <= rows[j][1] - t < 120_000:
                    out.append((i, j))
                    break
    return sorted(out)


WINDOWED = compile_text(
    "sequence p no timeouts\n    begin a: a\n"
    "    followed by b: b where b.time - a.time < 2min and b.time - a.time >= 30 s\n"
)[0].pattern


@settings(deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 600_000)), max_size=12))
def test_a_condition_with_a_duration_matches_the_oracle(raw: list[tuple[str, int]]) -> None:
    rows = sorted(raw, key=lambda r: r[1])
    found = sorted(d.seqs for d in run([WINDOWED], _events(rows)).detections)
    assert found == _first_b_in_range(rows)


def test_the_oracle_sees_matches() -> None:
    rows = [("a", 0), ("b", 10_000), ("b", 40_000), ("a", 50_000), ("b", 200_000)]
    assert _first_b_in_range(rows) == [(0, 2)]


def test_an_annotation_duration_is_still_a_duration() -> None:
    text = "group g\n    on login(user as U)\n    @or @timeout({}) {{\n        logout(user = U)\n    }}\n"
    assert compile_text(text.format("5min"))[0].pattern == compile_text(text.format("300000"))[0].pattern
    assert compile_text(text.format("5min"))[0].pattern != compile_text(text.format("5s"))[0].pattern
