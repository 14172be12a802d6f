"""``measures`` and match-wide aggregates in the language: text, API, printer, errors, results."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import Engine
from workbench.engine.nfa.builder import begin
from workbench.engine.nfa.pattern import Measure, Quantifier, SequencePattern, Stage
from workbench.errors import CepError
from workbench.language import compile_pattern, format_pattern, register_function
from workbench.language.functions import unregister_function

TEXT = """sequence p
    measures entry = first(a).price,
             last_b = b.price,
             n = count(b),
             peak = max(b.price),
             mean = avg(price),
             first_any = first(price),
             took = last(b).time - first(a).time
    begin a where e.type == 'a'
    followed by b where e.type == 'b' one or more"""

API = SequencePattern(
    "p",
    (Stage("a", "e.type == 'a'"), Stage("b", "e.type == 'b'", quantifier=Quantifier.one_or_more())),
    measures={
        "entry": "first(matched('a')).price",
        "last_b": "matched('b')[-1].price",
        "n": "count(matched('b'))",
        "peak": "max(matched('b').price)",
        "mean": "avg(matched('*').price)",
        "first_any": "first(matched('*').price)",
        "took": "last(matched('b')).time - first(matched('a')).time",
    },
)


def test_text_and_api_build_the_same_pattern() -> None:
    assert compile_pattern(TEXT) == API
    built = begin("a").where("e.type == 'a'").followed_by("b").where("e.type == 'b'").one_or_more()
    for m in API.measures:
        built = built.measure(m.name, m.expr)
    assert built.build("p").measures == API.measures  # (the builder marks its first stage strict)


def test_the_printer_writes_measures_back() -> None:
    text = format_pattern(API)
    assert "mean = avg(price)" in text
    assert "first_any = first(price)" in text
    assert compile_pattern(text) == API
    assert format_pattern(compile_pattern(text)) == text


@pytest.mark.parametrize(
    "measures",
    [
        {"x": "avg(matched('*').price) * 2 + count(matched('a'))"},
        {"x": "[p for p in matched('b').price if p > 1]"},
        {"x": "sum(matched('*').a)"},  # a field named like a stage cannot be written bare
        {"x": "1", "y": "'text'", "z": "None"},
    ],
)
def test_round_trip(measures: dict[str, str]) -> None:
    p = SequencePattern("p", (Stage("a"), Stage("b")), measures=measures)
    assert compile_pattern(format_pattern(p)) == p


def test_measures_run_and_give_columns() -> None:
    engine = Engine([compile_pattern(TEXT)])
    events = [
        {"type": "a", "time": 0, "price": 10},
        {"type": "b", "time": 4, "price": 12},
        {"type": "b", "time": 9, "price": 14},
    ]
    got = [dict(d.measures) for d in engine.process_many(events)]
    assert got[0] == {
        "entry": 10,
        "last_b": 12,
        "n": 1,
        "peak": 12,
        "mean": 11.0,
        "first_any": 10,
        "took": 4,
    }
    assert (got[-1]["n"], got[-1]["peak"], got[-1]["took"]) == (2, 14, 9)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("sequence s measures x = e.price begin a", "no current event 'e'"),
        ("sequence s measures x = 1, x = 2 begin a", "measure 'x' is defined twice"),
        ("sequence s measures events = 1 begin a", "a column every detection has"),
        ("sequence s measures x = nope(a) begin a", "unknown function 'nope'"),
        ("sequence s measures x = a_ + 1 begin a", "unknown variable or stage 'a_'"),
        ("sequence s measures x = first(matched('zz')) begin a", "unknown stage 'zz'"),
        ("event t(price)\nsequence s measures x = avg(prise) begin a: t", "unknown stage or field 'prise'"),
        ("event t(price)\nsequence s begin a: t where avg(prise) > 1", "unknown stage or field 'prise'"),
        ("sequence s measures x = begin a", "unexpected"),
        ("sequence s begin `*` next b", "cannot be called '*'"),
    ],
)
def test_errors_name_the_place(text: str, message: str) -> None:
    with pytest.raises(CepError, match=message) as info:
        compile_pattern(text)
    assert "line" in str(info.value)


def test_an_error_points_at_the_measure() -> None:
    with pytest.raises(CepError) as info:
        compile_pattern("sequence s\n  measures ok = count(a),\n    bad = e.x\n  begin a")
    span = info.value.span  # type: ignore[attr-defined]
    assert (span.line, span.column) == (3, 11)


def test_a_measure_may_be_written_over_several_lines_and_use_registered_functions() -> None:
    register_function("spread_m", lambda hi, lo: hi - lo, replace=True)
    try:
        p = compile_pattern(
            "sequence s\n  measures gap = spread_m(first(a).price,\n"
            "      last(a).price)\n  begin a one or more"
        )
        assert p.measures == (
            Measure("gap", "spread_m(first(matched('a')).price, last(matched('a')).price)"),
        )
        (d, *_) = Engine([p]).process_many([{"type": "a", "time": 0, "price": 5}])
        assert dict(d.measures) == {"gap": 0}
    finally:
        unregister_function("spread_m")


# ---- match-wide aggregates in conditions ------------------------------------------------------------

WIDE = (
    "sequence w\n  begin a where e.type == 'a' one or more\n"
    "  followed by b where e.type == 'b' and avg(price) > {t}"
)
# the same condition through the incremental aggregates of stage a (b is a single stage)
STAGED = (
    "sequence w\n  begin a where e.type == 'a' one or more\n"
    "  followed by b where e.type == 'b' and (sum(a.price) + e.price) / (count(a) + 1) > {t}"
)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abx"), st.integers(0, 20)), max_size=10),
    st.integers(0, 15),
)
def test_a_match_wide_average_agrees_with_stage_aggregates(
    events: list[tuple[str, int]], threshold: int
) -> None:
    feed = [{"type": t, "time": i, "price": p} for i, (t, p) in enumerate(events)]
    wide = Engine([compile_pattern(WIDE.format(t=threshold))])
    staged = Engine([compile_pattern(STAGED.format(t=threshold))])
    got = [d.seqs for d in wide.process_many(feed) + wide.finish()]
    want = [d.seqs for d in staged.process_many(feed) + staged.finish()]
    assert got == want
    for d in wide.detections:  # and every match's mean, its last event included, is above it
        prices = [e.fields["price"] for e in d.events]
        assert sum(prices) / len(prices) > threshold


def test_a_match_wide_condition_round_trips() -> None:
    p = compile_pattern(WIDE.format(t=4))
    text = format_pattern(p)
    assert "avg((a + b + [e]).price) > 4" in text
    assert compile_pattern(text) == p
