"""Generated examples (``%cep examples``): every example does what it says, in the engine and, for
small sequence patterns, in the brute-force reference matcher (tests/engine/oracle.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.oracle import Oracle, OStage
from workbench.cli import main
from workbench.demo.examples import EXAMPLES
from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, Stage
from workbench.engine.runtime import run
from workbench.errors import CepError
from workbench.language.compile import compile_pattern
from workbench.session.examples import generate_examples
from workbench.session.session import CepSession

BIG_DROP = """sequence big_drop within 10s
    begin a: trade where e.price > 100
    followed by b: trade where e.price < a.price * 0.9 and e.volume >= 1000"""


def _kinds(pattern: Any, events: Any) -> set[str]:
    return {d.kind for d in run([pattern], list(events), trace=True).detections}


def test_sequence_examples_fire_almost_fire_and_time_out_in_the_engine() -> None:
    pattern = compile_pattern(BIG_DROP)
    found = generate_examples(pattern)
    assert found.fires
    assert found.almost
    assert found.times_out
    for ex in found.fires:
        assert "match" in _kinds(pattern, ex.events)
        assert len(ex.events) == 2, "the shortest firing input of a two-stage sequence has two events"
    for ex in found.almost:
        assert "match" not in _kinds(pattern, ex.events)
        assert "why not:" in ex.why
    for ex in found.times_out:
        assert _kinds(pattern, ex.events) == {"timeout"}
    whys = " | ".join(ex.why for ex in found.almost)
    assert "`e.price > 100` is false" in whys or "`e.volume >= 1000` is false" in whys, whys
    assert any("a.price" in n or "matched('a')" in n for n in found.notes), found.notes


def test_the_frame_lists_every_event_of_every_example() -> None:
    found = generate_examples(compile_pattern(BIG_DROP))
    frame = found.frame()
    assert list(frame.columns[:3]) == ["example", "kind", "step"]
    assert len(frame) == sum(len(ex.events) for ex in found.all)
    assert set(frame["kind"]) == {"fires", "almost fires", "times out"}
    assert {"price", "volume", "why"} <= set(frame.columns)


def test_an_unwindowed_pattern_says_nothing_can_time_out() -> None:
    pattern = compile_pattern("sequence abc begin a where e.type == 'a' next b where e.type == 'b'")
    found = generate_examples(pattern)
    assert [[e["type"] for e in ex.events] for ex in found.fires] == [["a", "b"]]
    assert not found.times_out
    assert any("nothing can time out" in n for n in found.notes)
    assert any("strict contiguity" in ex.why for ex in found.almost) or found.almost


@pytest.mark.parametrize("name", ["and_not", "or_stop", "or_paused", "or_not_count"])
def test_reaction_group_examples_are_checked_by_the_engine(name: str) -> None:
    group = EXAMPLES[name].group
    found = generate_examples(group)
    assert found.fires, found.text()
    for ex in found.fires:
        assert "match" in _kinds(group, ex.events)
    for ex in found.almost:
        assert "match" not in _kinds(group, ex.events)


def test_a_python_callable_is_named_not_guessed() -> None:
    pattern = SequencePattern("odd", (Stage("a", lambda e: e.type == "a"),))
    found = generate_examples(pattern, max_events=2)
    assert any("callable" in n for n in found.notes)


def test_replay_of_an_example_and_a_bad_number() -> None:
    found = generate_examples(compile_pattern(BIG_DROP))
    result = found.replay(1)
    assert any(d.kind == "match" for d in result.detections)
    assert result.trace
    with pytest.raises(CepError, match="no example 99"):
        found.replay(99)


def test_session_function_and_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from workbench.session.examples import examples_of

    session = CepSession()
    session.define(BIG_DROP)
    assert examples_of(session, "big_drop", count=1).fires
    cep = tmp_path / "p.cep"
    cep.write_text(BIG_DROP, encoding="utf-8")
    out = tmp_path / "ex.csv"
    assert main(["examples", str(cep), "-o", str(out), "--count", "1"]) == 0
    assert "#1 fires" in capsys.readouterr().out
    assert out.read_text().startswith("example,kind,step")
    assert main(["examples", str(cep), "--pattern", "nope"]) == 1


# ---------------------------------------------------------------- against the reference matcher

TYPES = ("a", "b", "c")
CONTIG = {
    "strict": Contiguity.STRICT,
    "relaxed": Contiguity.RELAXED,
    "any": Contiguity.NONDETERMINISTIC_RELAXED,
}


@st.composite
def small_patterns(draw: st.DrawFn) -> tuple[SequencePattern, list[OStage]]:
    n = draw(st.integers(1, 3))
    stages, ostages = [], []
    for i in range(n):
        typ = draw(st.sampled_from(TYPES))
        contig = "strict" if i == 0 else draw(st.sampled_from(sorted(CONTIG)))
        times = draw(st.sampled_from([1, 2]))
        q = Quantifier(times, times)
        stages.append(Stage(f"s{i}", f"e.type == {typ!r}", CONTIG[contig], quantifier=q))
        ostages.append(OStage(f"s{i}", (lambda t: lambda e: e.type == t)(typ), contig, times, times))
    return SequencePattern("p", tuple(stages)), ostages


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_patterns())
def test_examples_agree_with_the_reference_matcher(case: tuple[SequencePattern, list[OStage]]) -> None:
    pattern, ostages = case
    found = generate_examples(pattern, count=2)
    assert found.fires, found.text()
    n_events = sum(s.quantifier.min for s in pattern.stages)
    for ex in found.fires:
        assert len(ex.events) == n_events, "the shortest firing input takes one event per needed take"
    for ex in found.all:
        events = [Event(e["type"], e["time"], e["key"], {}, i) for i, e in enumerate(ex.events)]
        matches = Oracle(ostages, events, [e.time for e in events], None).matches()
        assert bool(matches) == (ex.kind == "fires"), (ex, matches)
