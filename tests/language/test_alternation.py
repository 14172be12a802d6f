"""``(a next b) | c`` and ``permute(a, b, c)`` in the language: parsing, lowering, the printer's round
trip, the Python API's equivalents and the errors (with line and column)."""

from __future__ import annotations

import pytest

from workbench.engine import run
from workbench.engine.nfa import Contiguity, SkipStrategy, Stage, alternation, begin, permute
from workbench.engine.nfa.pattern import Alternation, GroupStage, Permute
from workbench.errors import CepError
from workbench.language import compile_pattern, compile_text, format_pattern

ROUND_TRIP = [
    "sequence s begin x followed by (a next b) | c where e.v > 1",
    "sequence s skip past last event begin x next (a: t1 | t2) | b | (c next d times 2)",
    "sequence s begin permute(a, b where e.x > 1, (c next d)) consecutive followed by z",
    "sequence s begin permute(a: t1 | t2, b: t3) allow combinations",
    "sequence s begin ((a next b) | c) | d followed by any z",
    "sequence s begin x followed by (b | c) next (d)",
    "sequence s begin (begin a next b) times 2 | c",
    "sequence s within 5s skip to first b begin x followed by any a | (b next c one or more) | d",
    "sequence s begin x next (a followed by (b | c) next d) | y not followed by n followed by z",
]


@pytest.mark.parametrize("text", ROUND_TRIP)
def test_printer_round_trip(text: str) -> None:
    pattern = compile_pattern(text)
    printed = format_pattern(pattern)
    assert compile_pattern(printed) == pattern
    assert format_pattern(compile_pattern(printed)) == printed


def test_alternation_lowers_to_branches() -> None:
    p = compile_pattern("sequence s begin x next (a next b) | c where e.v > 1 followed by z")
    alt = p.stages[1]
    assert isinstance(alt, Alternation)
    assert alt.contiguity is Contiguity.STRICT
    assert [[s.name for s in b] for b in alt.branches] == [["a", "b"], ["c"]]
    assert alt.branches[0][1].contiguity is Contiguity.STRICT


def test_permute_lowers_with_inner_contiguity() -> None:
    p = compile_pattern("sequence s begin x followed by any permute(a, (b next c)) consecutive")
    perm = p.stages[1]
    assert isinstance(perm, Permute)
    assert (perm.contiguity, perm.inner) == (Contiguity.NONDETERMINISTIC_RELAXED, Contiguity.STRICT)
    assert isinstance(perm.elements[1], GroupStage)
    assert [s.name for s in perm.elements[1].stages] == ["b", "c"]


def test_the_api_builds_the_same_elements() -> None:
    text = compile_pattern(
        "sequence p begin x followed by (a where e.type == 'a' next b) | c "
        "next permute(d, (f next g)) consecutive"
    )
    api = (
        begin("x")
        .followed_by(alternation(begin("a").where("e.type == 'a'").next("b"), "c"))
        .next(permute("d", begin("f").next("g"), inner=Contiguity.STRICT))
        .build("p")
    )
    assert text.stages[1:] == api.stages[1:]
    assert compile_pattern(format_pattern(api)).stages[1:] == api.stages[1:]


def test_the_builder_refuses_clauses_on_a_choice() -> None:
    with pytest.raises(CepError):
        begin("x").followed_by(alternation("a", "b")).where("e.v > 1")
    with pytest.raises(CepError):
        begin("x").followed_by(permute("a", "b")).one_or_more()


def test_detections_list_the_branch_taken() -> None:
    p = compile_pattern(
        """sequence checkout skip past last event
           measures how = first(pay).method, code = first(voucher).code
           begin cart: add
           followed by (pay: payment next ok: approval) | (voucher: redeem)
           followed by ship: shipped"""
    )
    events = ["add", "payment", "approval", "shipped", "add", "redeem", "shipped"]
    feed = [{"type": t, "time": i, "method": "card", "code": "X"} for i, t in enumerate(events)]
    got = [(d.seqs, d.channels, dict(d.measures)) for d in run([p], feed).detections]
    assert got == [
        ((0, 1, 2, 3), ("cart", "pay", "ok", "ship"), {"how": "card", "code": None}),
        ((4, 5, 6), ("cart", "voucher", "ship"), {"how": None, "code": "X"}),
    ]


def test_skip_to_a_stage_of_the_branch_not_taken_finds_nothing() -> None:
    p = compile_pattern("sequence s skip to first b or fail begin x: x followed by (a: a) | (b: b)")
    with pytest.raises(CepError, match="b"):
        run([p], [{"type": "x", "time": 0}, {"type": "a", "time": 1}])
    lenient = compile_pattern("sequence s skip to first b begin x: x followed by (a: a) | (b: b)")
    assert len(run([lenient], [{"type": "x", "time": 0}, {"type": "a", "time": 1}]).detections) == 1
    assert lenient.skip == SkipStrategy("skip_to_first", "b")


BAD = [
    ("sequence s begin x followed by () | c", 1, 33, "unexpected ')'"),
    ("sequence s begin permute(a)", 1, 27, "expected ','"),
    ("sequence s\n  begin x followed by a |", 2, 26, "unexpected end of text"),
    ("sequence s within 5s begin x not followed by n followed by a | b", 1, 46, "negated stage cannot come"),
    ("sequence s begin x followed by (a next b) | a", 1, 45, "defined twice"),
    ("sequence s begin x followed by permute(a, b optional)", 1, 43, "cannot be negated or optional"),
    ("sequence s begin x followed by permute(a, b) times 2", 1, 46, "permute takes only"),
    ("sequence s begin x followed by (begin y next a | b)", 1, 41, "cannot be inside a group"),
    ("sequence s begin x not followed by a | b", 1, 20, "cannot be negated"),
    ("sequence s begin x followed by (a optional) | b", 1, 20, "can match no event"),
    (
        "sequence s within 5s begin x followed by (a not followed by n) | b",
        1,
        61,
        "cannot end an alternation",
    ),
    ("sequence s begin x followed by permute(a, b) where e.v > 1", 1, 52, "takes no 'where'"),
    ("sequence s begin x followed by ((a | b) | c) times 2", 1, 46, "unexpected 'times'"),
    ("sequence s begin x followed by (a next b) followed by c", 1, 32, "is a group"),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), BAD)
def test_bad_alternations_name_line_and_column(text: str, line: int, column: int, message: str) -> None:
    with pytest.raises(CepError) as info:
        compile_pattern(text)
    err = info.value
    assert message in str(err)
    assert (err.span.line, err.span.column) == (line, column)  # type: ignore[attr-defined]


def test_a_permuted_stage_is_one_stage_of_the_pattern() -> None:
    p = compile_pattern("sequence s begin permute(a: a, b: b, c: c) consecutive")
    feed = [{"type": t, "time": i} for i, t in enumerate("cabxbca")]
    got = [(d.seqs, d.channels) for d in run([p], feed).detections]
    assert got == [((0, 1, 2), ("c", "a", "b")), ((4, 5, 6), ("b", "c", "a"))]
    assert isinstance(p.stages[0], Permute)
    assert all(isinstance(e, Stage) for e in p.stages[0].elements)


def test_a_permute_of_more_than_six_elements_is_refused_where_it_is_written() -> None:
    # 7 elements would be 5,040 branches (a minute to compile), 8 would be 40,320
    text = "sequence s\n  begin x followed by permute(" + ", ".join(f"a{i}: t{i}" for i in range(7)) + ")"
    with pytest.raises(CepError, match=r"line 2, .*permute of 7 elements has 5,040 orders; at most 6") as err:
        compile_text(text)
    assert "^" in str(err.value)
    compile_text(text.replace(", a6: t6", ""))  # six are fine
