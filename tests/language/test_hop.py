"""``@hop(size, hop[, acc])`` in the language: parsing, the printer's round trip, errors with a place."""

from __future__ import annotations

import pytest

from workbench.engine.reactions import Hop, MapCounter, SortedAccumulator
from workbench.engine.runtime import run
from workbench.language import compile_pattern, format_pattern
from workbench.language.errors import CepCompileError

TEXT = """group rate
    instance 'k' at 0
    @or {
        @hop(10s, 5s, MapCounter(e.i % 2)) c_a: a
    }
"""


def with_hop(annotation: str, exit: str = "@or") -> str:
    return TEXT.replace("@hop(10s, 5s, MapCounter(e.i % 2))", annotation).replace("@or", exit)


def test_parses_to_the_api_object_and_prints_back() -> None:
    p = compile_pattern(TEXT)
    (channel,) = p.channels
    assert channel.hop == Hop(10_000, 5_000, MapCounter("e.i % 2"))
    assert format_pattern(p) == TEXT.rstrip("\n")
    assert compile_pattern(format_pattern(p)) == p


@pytest.mark.parametrize(
    "annotation",
    [
        "@hop(1min, 1min)",
        "@hop(90s, 250ms, SortedAccumulator(e.k, e.v, top=3))",
        "@hop(3ms, 2ms)",
        "@hop(10, 5)",
    ],
)
def test_round_trips(annotation: str) -> None:
    p = compile_pattern(with_hop(annotation))
    assert compile_pattern(format_pattern(p)) == p


def test_bare_numbers_are_milliseconds_and_accumulators_are_the_timer_ones() -> None:
    hop = compile_pattern(with_hop("@hop(10, 5, SortedAccumulator(e.k, e.v))")).channels[0].hop
    assert hop == Hop(10, 5, SortedAccumulator("e.k", "e.v"))


def test_runs_like_the_api() -> None:
    events = [{"type": "a", "time": t, "key": "k", "fields": {"i": t}} for t in (1000, 6000, 12_000)]
    res = run(compile_pattern(TEXT), events)
    assert [(d.time, [e.seq for e in d.events], d.extra["aggregate"]) for d in res.detections] == [
        (10_000, [0, 1], {0: 2}),
        (15_000, [1, 2], {0: 2}),
        (20_000, [2], {0: 1}),
    ]


@pytest.mark.parametrize(
    ("annotation", "column", "message"),
    [
        ("@hop(0ms, 5s)", 14, "@hop's size must be a whole number of milliseconds of at least 1, got 0 ms"),
        ("@hop(10s, -5)", 19, "@hop's hop must be a duration"),
        ("@hop(10s, 20s)", 19, "@hop's hop (20000 ms) must not exceed its size (10000 ms)"),
        ("@hop(10s, 'soon')", 19, "@hop's hop must be a duration"),
        ("@hop(10s, 0.5)", 19, "@hop's hop must be a whole number of milliseconds of at least 1"),
        ("@hop(10s, 1.5ms)", 19, "@hop's hop must be a whole number of milliseconds"),
        ("@hop(inf, 1s)", 14, "@hop's size must be"),
        ("@hop(10s, 5s, Counter(e.i))", 23, "an accumulator is MapCounter"),
        ("@hop(10s)", 9, "'@hop' takes 2 to 3 arguments, got 1"),
    ],
)
def test_bad_arguments_fail_at_their_place(annotation: str, column: int, message: str) -> None:
    with pytest.raises(CepCompileError) as err:
        compile_pattern(with_hop(annotation))
    span = err.value.span
    assert span is not None
    assert (span.line, span.column) == (4, column)
    assert message in str(err.value)


def test_an_and_channel_cannot_hop() -> None:
    with pytest.raises(CepCompileError, match="@hop is defined for OR groups") as err:
        compile_pattern(with_hop("@hop(10s, 5s)", "@and"))
    assert err.value.span is not None
    assert err.value.span.line == 4
