"""``emit into TYPE`` and ``partition by a, b`` in the language: text, Python API, printer, errors."""

from __future__ import annotations

import pytest

from workbench.engine.nfa import SequencePattern, Stage
from workbench.errors import CepError
from workbench.language import compile_pattern, compile_text, format_pattern

TWO_LEVELS = """
sequence burst
    partition by user, ip
    within 1min
    measures fails = count(f)
    emit into burst
    begin f where e.type == 'fail' times 3
sequence attack
    partition by user, ip
    begin b: burst where e.fails >= 3 times 3
"""


def test_emit_into_compiles_to_the_api_pattern() -> None:
    text = "sequence s measures n = count(a) emit into done begin a: x"
    api = SequencePattern(
        "s", (Stage("a", types=("x",)),), measures={"n": "count(matched('a'))"}, emit_into="done"
    )
    assert compile_pattern(text) == api


def test_printer_round_trips_emit_into_and_composite_keys() -> None:
    for d in compile_text(TWO_LEVELS):
        printed = format_pattern(d.pattern, partition=d.partition)
        (back,) = compile_text(printed)
        assert (back.pattern, back.partition) == (d.pattern, d.partition)
    burst = compile_text(TWO_LEVELS)[0]
    assert burst.partition == ("user", "ip")
    assert burst.pattern.emit_into == "burst"  # type: ignore[union-attr]
    text = format_pattern(burst.pattern, partition=burst.partition)
    assert "    partition by user, ip\n" in text
    assert "    emit into burst\n" in text


def test_single_and_quoted_key_fields() -> None:
    (d,) = compile_text("sequence s partition by symbol begin a")
    assert d.partition == "symbol"
    (d,) = compile_text("sequence s partition by `user id`, ip begin a")
    assert d.partition == ("user id", "ip")
    (back,) = compile_text(format_pattern(d.pattern, partition=d.partition))
    assert back.partition == ("user id", "ip")
    (g,) = compile_text("group g partition by user, ip on a @and { b }")
    assert g.partition == ("user", "ip")


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        (
            "sequence a emit into x begin p: y\nsequence b emit into y begin q: x",
            "patterns feed each other in a cycle ('a' emits into 'x', which 'b' reads; "
            "'b' emits into 'y', which 'a' reads)",
            1,
            22,
        ),
        ("sequence a emit into x begin p: x", "('a' reads 'x', its own)", 1, 22),
        ("sequence a emit into x begin p", "('a' reads 'x', its own)", 1, 22),  # a stage of any type
        (
            "sequence a measures seq = count(p) emit into x begin p: y",
            "measure 'seq' would be a field",
            1,
            21,
        ),
        (  # c.fields is the derived event's mapping, c.get its method: the measure could not be read
            "sequence a measures n = 1, fields = count(p) emit into x begin p: y",
            "measure 'fields' would be a field",
            1,
            28,
        ),
        (
            "sequence a measures get = count(p) emit into x begin p: y",
            "measure 'get' would be a field",
            1,
            21,
        ),
        ("sequence a partition by u, v, u begin p", "the key field 'u' is named twice", 1, 31),
        (
            "event x(n)\nevent y(v)\nsequence a measures m = count(p) emit into x begin p: y",
            "'x' is declared with fields n, but this pattern's measures are m",
            3,
            44,
        ),
        ("sequence a emit into begin p", "unexpected 'p'", 1, 28),  # a type may be called begin
        ("sequence a partition by u, begin p", "unexpected 'p'", 1, 34),
    ],
)
def test_bad_input_is_a_cep_error_with_its_position(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(CepError) as info:
        compile_text(text)
    err = info.value
    assert message in str(err)
    assert str(err).startswith(f"line {line}, column {column}: ")


def test_declarations_in_force_declare_the_emitted_type_with_the_measures() -> None:
    text = """
event fail(user, ip)
sequence burst measures fails = count(f) emit into burst begin f: fail times 3
sequence attack begin b: burst where e.fails > 2 times 3
"""
    assert len(compile_text(text)) == 2
    with pytest.raises(CepError, match="fials") as info:
        compile_text(text.replace("e.fails > 2", "e.fials > 2"))
    assert str(info.value).startswith("line 4, ")


def test_emit_into_needs_no_declarations_and_a_chain_is_no_cycle() -> None:
    text = """
sequence a emit into x begin p: input
sequence b emit into y begin q: x
sequence c begin r: y
"""
    assert [d.pattern.name for d in compile_text(text)] == ["a", "b", "c"]


def test_a_chain_of_three_levels_runs_in_order_in_one_engine() -> None:
    from workbench.engine import run

    patterns = [
        d.pattern
        for d in compile_text(
            """
sequence a emit into x measures v = p.n begin p: input
sequence b emit into y measures w = q.v * 10 begin q: x
sequence c measures z = r.w begin r: y
"""
        )
    ]
    result = run(patterns, [{"type": "input", "time": t, "n": t} for t in (1, 2)])
    got = [(d.pattern, d.time, dict(d.measures)) for d in result.detections]
    assert got == [
        ("a", 1, {"v": 1}),
        ("b", 1, {"w": 10}),
        ("c", 1, {"z": 10}),
        ("a", 2, {"v": 2}),
        ("b", 2, {"w": 20}),
        ("c", 2, {"z": 20}),
    ]
