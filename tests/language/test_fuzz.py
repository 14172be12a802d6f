"""Fuzzing: mutated pattern text never raises anything but a CepError (with a sane position)."""

from __future__ import annotations

import contextlib
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.errors import CepError
from workbench.language import compile_text

DATA = Path(__file__).parent.parent / "data" / "language"
SEEDS = [
    (DATA / "prova_blog.cep").read_text(encoding="utf-8"),
    (DATA / "w_shape.cep").read_text(encoding="utf-8"),
    """
    sequence s within 10s skip to first b or fail
        aggregate total = sum(a.price) including current
        begin a: login | logout where e.x > 1 where e.y or where e.z one or more greedy consecutive
        followed by any b where len(a) > 2 and last(a).price < avg(a.price) times 2..4 until e.stop
        not next c within 5ms of previous
        followed by (begin d next f) times 2
    """,
    """
    group g
        const Limit = 1.2
        state Basket = []
        @template on once login(user as U, protocol = 'async') where e.ip != 'x'
        @and @timeout(1s) @timeout_channel @count(3) @where(U != Limit) {
            @count(1, 2, strict) @vars a: login(user = U, ip as I)
            @stop(a) @collect(Basket, e.id) b: logout
            @or(inner) @timeout(500ms) { @size(2, 2, MapCounter(e.k)) @timer(25ms) c: tick }
        }
    receive r const K = 2 @count(3) x(n = 2) where e.m > K
    """,
]
TOKENS = [
    "sequence",
    "group",
    "receive",
    "begin",
    "next",
    "followed by",
    "followed by any",
    "not next",
    "not followed by",
    "where",
    "or where",
    "within",
    "of previous",
    "times",
    "..",
    "or more",
    "one or more",
    "optional",
    "greedy",
    "consecutive",
    "allow combinations",
    "until",
    "skip to first",
    "skip past last event",
    "@and",
    "@or",
    "@not",
    "@stop",
    "@count",
    "@size",
    "@timer",
    "@vars",
    "@where",
    "@",
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ",",
    ":",
    "=",
    "==",
    "as",
    "on",
    "once",
    "const",
    "state",
    "instance",
    "event",
    "e.x",
    "matched('a')",
    "last(a)",
    "avg(a.p)",
    "count(a)",
    "lambda x:",
    "for x in",
    "if",
    "else",
    "'",
    '"',
    "`",
    "#",
    "\n",
    "10s",
    "250ms",
    "-1",
    "0",
    "1e999",
    "None",
    "True",
    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "é",
    "\\",
    "$",
    "%%cep",
    "\t",
    ";",
]


@st.composite
def mutated(draw: st.DrawFn) -> str:
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(text)))
        j = draw(st.integers(i, min(len(text), i + 12)))
        op = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if op == "delete":
            text = text[:i] + text[j:]
        elif op == "insert":
            text = text[:i] + " " + draw(st.sampled_from(TOKENS)) + " " + text[i:]
        elif op == "replace":
            text = text[:i] + draw(st.sampled_from(TOKENS)) + text[j:]
        else:
            text = text[:j] + text[i:j] + text[j:]
    return text


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated(), st.integers(1, 3))
def test_only_cep_errors_escape(text: str, first_line: int) -> None:
    error: CepError | None = None
    try:
        compile_text(text, first_line=first_line)
    except CepError as err:
        error = err
    span = getattr(error, "span", None)
    if span is not None:
        last = first_line + text.count("\n")
        assert first_line <= span.line <= last + 1, str(error)
        assert span.column >= 1


@settings(max_examples=200, deadline=None)
@given(st.text(st.sampled_from("sequencgroupbt @{}()=:,.'`#\n0123456789abwxyz<>!-+*/%[]"), max_size=80))
def test_random_text(text: str) -> None:
    with contextlib.suppress(CepError):
        compile_text(text)
