"""The NFA against the brute-force reference matcher (tests/engine/oracle.py), on random inputs.

Random small streams over the alphabet a/b/c and random patterns covering contiguity x quantifier x
skip strategy, with and without a window. Conditions are type tests, so the event-type index is
exercised too; ``flink_order`` (Java heap order) must give the same multiset of matches.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.oracle import Assignment, Oracle, OStage
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, SkipStrategy, Stage
from workbench.testing import NFATestHarness

TYPES = ("a", "b", "c")
CONTIG = ("strict", "relaxed", "nondeterministic_relaxed")
SHORT = {"strict": "strict", "relaxed": "relaxed", "nondeterministic_relaxed": "any"}


@st.composite
def stage_specs(draw: st.DrawFn, index: int) -> dict[str, Any]:
    accepted = draw(st.sets(st.sampled_from(TYPES), min_size=1, max_size=2))
    lo = draw(st.integers(1, 2))
    hi = draw(st.sampled_from([lo, lo + 1, None]))
    return {
        "name": f"s{index}",
        "types": tuple(sorted(accepted)),
        "contiguity": draw(st.sampled_from(CONTIG)),
        "min": lo,
        "max": hi,
        "optional": draw(st.booleans()),
        "inner": draw(st.sampled_from(CONTIG)),
    }


@st.composite
def scenarios(draw: st.DrawFn) -> dict[str, Any]:
    n = draw(st.integers(1, 3))
    stages = [draw(stage_specs(i)) for i in range(n)]
    if all(s["optional"] for s in stages):
        stages[0]["optional"] = False
    types = draw(st.lists(st.sampled_from(TYPES), min_size=1, max_size=8))
    gaps = draw(st.lists(st.integers(0, 3), min_size=len(types), max_size=len(types)))
    times, t = [], 0
    for g in gaps:
        t += g
        times.append(t)
    within = draw(st.sampled_from([None, None, 3, 6]))
    skip = draw(st.sampled_from(["no_skip", "skip_to_next", "skip_past_last_event", "first", "last"]))
    target = draw(st.sampled_from([s["name"] for s in stages]))
    return {
        "stages": stages,
        "types": types,
        "times": times,
        "within": within,
        "skip": skip,
        "target": target,
    }


def build(sc: dict[str, Any], flink_order: bool = False) -> SequencePattern:
    stages = []
    for i, s in enumerate(sc["stages"]):
        cond = f"e.type in {s['types']!r}"
        stages.append(
            Stage(
                s["name"],
                cond,
                Contiguity.STRICT if i == 0 else Contiguity(s["contiguity"]),
                quantifier=Quantifier(s["min"], s["max"], s["optional"], inner=Contiguity(s["inner"])),
            )
        )
    return SequencePattern(
        "p", tuple(stages), within_ms=sc["within"], skip=skip_of(sc), flink_order=flink_order
    )


def skip_of(sc: dict[str, Any]) -> SkipStrategy:
    kind = sc["skip"]
    if kind in ("first", "last"):
        return SkipStrategy(f"skip_to_{kind}", sc["target"])  # type: ignore[arg-type]
    return SkipStrategy(kind)


def oracle(sc: dict[str, Any]) -> Oracle:
    ostages = [
        OStage(
            s["name"],
            (lambda ts: lambda e: e.type in ts)(s["types"]),
            SHORT[s["contiguity"]],
            s["min"],
            s["max"],
            s["optional"],
            SHORT[s["inner"]],
        )
        for s in sc["stages"]
    ]
    events = [
        Event(t, tm, None, {}, i) for i, (t, tm) in enumerate(zip(sc["types"], sc["times"], strict=True))
    ]
    return Oracle(ostages, events, sc["times"], sc["within"])


def assignment(d: Detection, names: list[str]) -> Assignment:
    return tuple((e.seq, names.index(ch)) for e, ch in zip(d.events, d.channels, strict=True))


def run_engine(sc: dict[str, Any], flink_order: bool = False) -> list[Assignment]:
    harness = NFATestHarness(build(sc, flink_order))
    for i, (t, tm) in enumerate(zip(sc["types"], sc["times"], strict=True)):
        harness.feed(Event(t, tm, None, {}, i))
    names = [s["name"] for s in sc["stages"]]
    return [assignment(d, names) for d in harness.detections if d.kind == "match"]


def canonical(a: Assignment) -> Assignment:
    """Flink lists events stage by stage; the oracle in time order. Compare in time order."""
    return tuple(sorted(a))


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_nfa_agrees_with_the_reference_matcher(sc: dict[str, Any]) -> None:
    ref = oracle(sc)
    skip = skip_of(sc)
    got = [canonical(a) for a in run_engine(sc)]
    if skip.kind == "no_skip":
        want = ref.matches()
        assert sorted(got) == sorted(canonical(a) for a in want)
        flink = [canonical(a) for a in run_engine(sc, flink_order=True)]
        assert sorted(flink) == sorted(got)
    else:
        want = ref.skip_matches(skip.kind, skip.stage)
        assert got == [canonical(a) for a in want]
