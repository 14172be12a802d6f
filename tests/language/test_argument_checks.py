"""Nonsense annotation arguments and windows are errors at the annotation's line and column."""

from __future__ import annotations

import pytest

from workbench.language import compile_text
from workbench.language.arguments import never_open
from workbench.language.errors import CepCompileError


def group(body: str, exit: str = "@and @timeout(1s)") -> str:
    return f"group g\n    on login(user as U)\n    {exit} {{\n{body}\n    }}\n"


def located(text: str) -> tuple[int, int, str]:
    with pytest.raises(CepCompileError) as err:
        compile_text(text)
    span = err.value.span
    assert span is not None
    return span.line, span.column, str(err.value).splitlines()[0]


CASES = [
    (
        group("        @count(-5) a: login(user = U)\n        b: logout"),
        4,
        16,
        "@count's first argument must be a whole number >= 0 or -1 (any number), got -5",
    ),
    (
        group("        @count(1, -3) a: login(user = U)\n        b: logout"),
        4,
        19,
        "@count's second argument must be",
    ),
    (
        group("        @size(-3) a: login(user = U)\n        b: logout", "@or"),
        4,
        15,
        "@size's first argument must be a whole number >= 0, got -3",
    ),
    (
        group("        @size(2, 0) a: login(user = U)\n        b: logout", "@or"),
        4,
        18,
        "@size's second argument must be a whole number >= 1, got 0",
    ),
    (
        group("        a: login(user = U)\n        b: logout", "@or @count(-5)"),
        3,
        16,
        "@count must be a whole number >= 1, got -5",
    ),
    (
        group("        a: login(user = U)\n        b: logout", "@or @size(0)"),
        3,
        15,
        "@size must be a whole number >= 1, got 0",
    ),
    (
        group("        @after(b) a: login(user = U)\n        @after(a) b: logout"),
        4,
        9,
        "@after: 'a', 'b' only wait for each other, so they can never open",
    ),
    (
        group("        @after(a) a: login(user = U)\n        b: logout"),
        4,
        9,
        "@after: 'a' only wait for each other",
    ),
    (
        group("        @stop(a) a: login(user = U)\n        b: logout", "@or"),
        4,
        15,
        "channel 'a' names itself in @stop",
    ),
    ("receive r @count(0) x(n = 2)\n", 1, 18, "@count must be a whole number >= 1 or -1 (any number), got 0"),
    (
        "sequence s within 0ms\n    begin a: a\n    followed by b: b\n",
        1,
        19,
        "a 'within' window must be longer than 0 ms",
    ),
    (
        "sequence s\n    begin a: a\n    followed by b: b within 0s\n",
        3,
        29,
        "a 'within' window must be longer than 0 ms",
    ),
    (
        "sequence s\n    begin a: a\n    next b: b within 0ms of previous\n",
        3,
        22,
        "a 'within' window must be longer than 0 ms",
    ),
    (
        group(
            "        @size(2, 1, SortedAccumulator(e.user, e.ip, top=e.x)) a: login\n        b: logout", "@or"
        ),
        4,
        21,
        "SortedAccumulator's top must be a whole number >= 1, got e.x",
    ),
]


@pytest.mark.parametrize(("text", "line", "column", "message"), CASES)
def test_nonsense_arguments_are_located(text: str, line: int, column: int, message: str) -> None:
    got_line, got_column, got = located(text)
    assert message in got
    assert (got_line, got_column) == (line, column), got


@pytest.mark.parametrize(
    "text",
    [
        group("        @count(-1) a: login(user = U)\n        b: logout"),  # Prova: any number
        group("        @count(1, -1) a: login(user = U)\n        b: logout"),
        group("        @after(b) a: login(user = U)\n        b: logout"),
        group("        a: login(user = U)\n        @after(a) b: logout\n        @after(a, b) c: update"),
        group("        @stop(b) a: login(user = U)\n        b: logout", "@or"),
        "receive r @count(-1) x(n = 2)\n",
        "sequence s within 1ms\n    begin a: a\n    followed by b: b\n",
    ],
)
def test_sensible_arguments_still_compile(text: str) -> None:
    assert compile_text(text)


def test_never_open_finds_channels_that_only_wait_for_each_other() -> None:
    assert never_open({"b": ["a"], "c": ["b"]}) == []
    assert never_open({"a": ["b"], "b": ["a"]}) == ["a", "b"]
    # a restart loop (Prova): low waits for high or for not_high, which waits for low: fine
    assert never_open({"low": ["high", "not_high"], "not_high": ["low"]}) == []
    assert never_open({"x": ["y"], "y": ["x"], "z": ["x", "w"]}) == ["x", "y"]
    chain = {f"n{i}": [f"n{i + 1}"] for i in range(300)}
    assert never_open(chain) == []
    chain["n300"] = ["n0"]
    assert len(never_open(chain)) == 301


def test_a_lone_carriage_return_is_a_line_break_for_conditions_too() -> None:
    (d,) = compile_text("sequence s\r begin a\r next b where\r e.x >\r 1")
    (same,) = compile_text("sequence s\n begin a\n next b where\n e.x >\n 1")
    assert d.pattern == same.pattern


def test_too_many_stages_are_refused_at_the_first_one_too_many() -> None:
    text = " ".join(["sequence s begin a0", *(f"next a{i}" for i in range(1, 1002))])
    with pytest.raises(CepCompileError, match="at most 1,000 stages; this one has 1,002") as info:
        compile_text(text)
    assert info.value.span.column == text.index("a1000 ") + 1  # the 1,001st stage


def test_a_field_declared_twice_is_refused() -> None:
    with pytest.raises(CepCompileError, match="declares field 'x' twice") as info:
        compile_text("event a(x, y, x)\nsequence s begin q: a")
    assert info.value.span.column == 15


def test_a_huge_whole_number_is_refused_in_the_language_s_words() -> None:
    with pytest.raises(CepCompileError, match="a whole number has more than 4300 digits") as info:
        compile_text("sequence s begin a where e.x == " + "1" * 5000)
    assert "sys" not in str(info.value)
