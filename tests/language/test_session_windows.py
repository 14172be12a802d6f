"""Session windows in conditions (``count(e over session 10min)``): text, API, printer, oracle, errors."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import run
from workbench.engine.expr import ir
from workbench.engine.families import compile_matcher
from workbench.engine.nfa.pattern import SequencePattern, Stage
from workbench.engine.reactions.patterns import Receive
from workbench.errors import CepError
from workbench.language import compile_pattern, format_pattern

TEXT = """\
sequence burst
    begin a where count(e over session 10s) >= 3 and avg(e.v over session 1min) > 1
    followed by b where max(e.v over session 250ms) < 1 and count(e over last 2 events) == 2"""


def test_text_api_and_printer_agree() -> None:
    pattern = compile_pattern(TEXT)
    assert isinstance(pattern, SequencePattern)
    assert format_pattern(pattern) == TEXT
    windows = [n for s in pattern.stages for n in ir.walk(s.where) if isinstance(n, ir.Window)]  # type: ignore[union-attr, arg-type]
    assert [(w.func, w.size, w.unit) for w in windows] == [
        ("count", 10_000, "session"),
        ("avg", 60_000, "session"),
        ("max", 250, "session"),
        ("count", 2, "events"),
    ]
    api = SequencePattern(
        "burst",
        (
            Stage("a", "count(e over session 10s) >= 3 and avg(e.v over session 1min) > 1"),
            Stage("b", "max(e.v over session 250ms) < 1 and count(e over last 2 events) == 2"),
        ),
    )
    assert format_pattern(api) == TEXT
    assert compile_pattern(format_pattern(api)) == api


def _oracle(events: list[dict[str, int | str]], gap: int, n: int) -> list[int]:
    """Positions of the events whose session (of their type, per key) has at least n events."""
    out = []
    for i, e in enumerate(events):
        same = [x for x in events[: i + 1] if x["type"] == e["type"] and x["key"] == e["key"]]
        start = 0
        for j in range(1, len(same)):
            if int(same[j]["time"]) - int(same[j - 1]["time"]) > gap:
                start = j
        if len(same) - start >= n:
            out.append(i)
    return out


@settings(max_examples=120, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("xy"), st.integers(0, 8), st.sampled_from("kl")), max_size=30),
    st.integers(1, 8),
    st.integers(1, 4),
)
def test_a_session_count_matches_the_oracle(rows: list[tuple[str, int, str]], gap: int, n: int) -> None:
    events: list[dict[str, int | str]] = []
    t = 0
    for typ, step, key in rows:
        t += step
        events.append({"type": typ, "time": t, "key": key})
    pattern = compile_pattern(f"sequence s begin a where count(e over session {gap}ms) >= {n}")
    got = sorted(d.events[0].seq for d in run([pattern], events).detections)
    assert got == _oracle(events, gap, n)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("count(e over session 0s) > 1", "positive"),
        ("count(e over session 10 events) > 1", "expected a duration"),
        ("count(e over session -1s) > 1", "expected a duration"),
        ("count(e over session) > 1", "expected a duration"),
        ("first(e.v over session 1s) > 1", "applies to one argument of"),
        ("count(last(a).v over session 1s) > 1", "value of the current event only"),
    ],
)
def test_bad_session_windows_are_refused_with_a_position(text: str, message: str) -> None:
    with pytest.raises(CepError, match=message) as info:
        compile_pattern(f"sequence s begin a where e.v > 0 next b where {text}")
    assert str(info.value).startswith("line 1, column ")


def test_a_session_window_is_refused_outside_sequences() -> None:
    with pytest.raises(CepError, match="work in sequence patterns"):
        compile_matcher(Receive("r", "x", where="count(e over session 1s) > 1"))


def test_session_stays_a_name_elsewhere() -> None:
    p = compile_pattern("sequence s begin session where e.session > 1 and count(e over last 1s) > 0")
    assert isinstance(p, SequencePattern)
    assert p.stages[0].name == "session"
