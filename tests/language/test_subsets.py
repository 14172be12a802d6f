"""``subset ab = (a, b)`` in the language: text, API, printer, errors, results."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import Engine
from workbench.engine.nfa.absence import AbsencePattern
from workbench.engine.nfa.pattern import Quantifier, SequencePattern, Stage
from workbench.errors import CepError
from workbench.language import compile_pattern, format_pattern

TEXT = """sequence p
    within 50ms
    subset ab = (a, b), bc = (c, b)
    subset only_c = (c)
    measures mean_ab = avg(ab.price),
             n_bc = count(bc),
             start = first(ab).time,
             last_bc = last(bc).price,
             top = max(only_c.price),
             mean = avg(price)
    begin a where e.type == 'a'
    followed by b where e.type == 'b' one or more
    next c where e.type == 'c'"""

API = SequencePattern(
    "p",
    (
        Stage("a", "e.type == 'a'"),
        Stage("b", "e.type == 'b'", quantifier=Quantifier.one_or_more()),
        Stage("c", "e.type == 'c'", contiguity="strict"),  # type: ignore[arg-type]
    ),
    within_ms=50,
    subsets={"ab": ("a", "b"), "bc": ("c", "b"), "only_c": ("c",)},
    measures={  # type: ignore[arg-type]
        "mean_ab": "avg(matched('ab').price)",
        "n_bc": "count(matched('bc'))",
        "start": "first(matched('ab')).time",
        "last_bc": "last(matched('bc')).price",
        "top": "max(matched('only_c').price)",
        "mean": "avg(matched('*').price)",
    },
)


def test_text_equals_api_and_the_printer_round_trips() -> None:
    p = compile_pattern(TEXT)
    assert p == API
    printed = format_pattern(p)
    assert "subset ab = (a, b)" in printed
    assert "subset bc = (c, b)" in printed
    assert compile_pattern(printed) == p


def test_a_subset_with_no_measures_and_quoted_stages_round_trips() -> None:
    p = compile_pattern("sequence s subset xy = (`x y`, z) begin `x y` next z")
    assert isinstance(p, SequencePattern)
    assert dict(p.subsets) == {"xy": ("x y", "z")}
    assert compile_pattern(format_pattern(p)) == p


def test_a_field_named_like_a_subset_prints_unambiguously() -> None:
    p = SequencePattern(
        "s",
        (Stage("a"),),
        subsets={"ab": ("a",)},
        measures={"f": "avg(matched('*').ab)", "s": "avg(matched('ab').x)"},  # type: ignore[arg-type]
    )
    assert compile_pattern(format_pattern(p)) == p


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abcx"), st.integers(-5, 50)), max_size=14))
def test_subset_measures_are_those_of_their_stages(rows: list[tuple[str, int]]) -> None:
    events = [{"type": t, "time": i * 3, "key": "k", "price": p} for i, (t, p) in enumerate(rows)]
    engine = Engine([compile_pattern(TEXT)])
    for d in engine.process_many(events) + engine.finish():
        got = dict(d.measures)
        ab = [e for c, e in zip(d.channels, d.events, strict=True) if c in ("a", "b")]
        bc = [e for c, e in zip(d.channels, d.events, strict=True) if c in ("b", "c")]
        assert got["mean_ab"] == pytest.approx(sum(e.fields["price"] for e in ab) / len(ab))
        assert got["n_bc"] == len(bc)
        assert got["start"] == ab[0].time
        assert got["last_bc"] == (bc[-1].fields["price"] if bc else None)


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ("sequence s subset ab = (a), ab = (b) begin a next b", "subset 'ab' is defined twice", (1, 29)),
        ("sequence s subset a = (b) begin a next b", "a subset cannot be called 'a'", (1, 19)),
        ("sequence s subset matched = (b) begin a next b", "cannot be called 'matched'", (1, 19)),
        ("sequence s\nsubset ab = (a, bb) begin a next b", "unknown stage 'bb' in subset 'ab'", (2, 17)),
        ("sequence s subset ab = (a, b, a) begin a next b", "'a' is listed twice", (1, 31)),
        ("sequence s subset ab = () begin a next b", "unexpected", (1, 25)),
        (
            "sequence s subset ab = (a) measures x = avg(ac.price) begin a",
            "unknown variable or stage 'ac'",
            None,
        ),
        (
            "sequence s subset ab = (a) begin a next b where count(ab) > 1",
            "subset 'ab' can be read only in measures",
            (1, 55),
        ),
        ("sequence s subset ab = (a) measures x = e.price + count(ab) begin a", "no current event", None),
    ],
)
def test_errors_name_the_place(text: str, message: str, where: tuple[int, int] | None) -> None:
    with pytest.raises(CepError, match=message) as info:
        compile_pattern(text)
    assert "line" in str(info.value)
    if where is not None:
        span = info.value.span  # type: ignore[attr-defined]
        assert (span.line, span.column) == where


def test_a_pattern_may_still_use_subset_as_a_field_name() -> None:
    p = compile_pattern("sequence s measures n = max(a.subset) begin a where e.subset > 1")
    (d,) = Engine([p]).process_many([{"type": "a", "time": 0, "subset": 3}])
    assert dict(d.measures) == {"n": 3}


def test_a_standalone_absence_refuses_a_subset_and_a_leading_one_keeps_it() -> None:
    with pytest.raises(CepError, match="'subset' needs stages after the silence"):
        compile_pattern("sequence s subset x = (hb) begin not hb for 30s")
    text = "sequence s subset x = (b) measures n = count(x) begin not hb for 30s followed by b where e.b"
    p = compile_pattern(text)
    assert isinstance(p, AbsencePattern)
    assert isinstance(p.then, SequencePattern)
    assert p.then.subsets == {"x": ("b",)}
    assert compile_pattern(format_pattern(p)) == p
