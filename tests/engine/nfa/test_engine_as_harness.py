"""The engine's own path gives what Flink's NFA harness gives, on the Flink oracle's random draws.

The conformance cases run sequence patterns through :class:`~workbench.testing.NFATestHarness`,
which moves a key's time only at its events, as Flink's NFA tests do; the Flink NFA oracle
(``tests/conformance/flinkdiff.py``) checks that path against Flink CEP itself. A user's run goes
through :class:`~workbench.engine.runtime.Engine` instead: its fused loop or one-event step, and
window timers that fire at each deadline. Both must find the same matches and time out the same
partial matches; only when a pending match or a timeout is noticed may differ (the harness sees
time pass at the next event), so times and the order of emission are not compared. The
oracle's draws seldom take the engine's loop plan (``a, b{n,}, c``), so that shape is drawn too.

Skip strategies are left out on purpose: a timer that releases a pending match at its deadline
prunes what a later advance of the harness times out first (both are runs Flink can make,
depending on how often its watermark moves).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conformance.flinkdiff import END_OF_INPUT, draw, draw_events
from tests.conformance.flinkdiff import _condition as condition
from tests.engine.feeding import feed_all
from workbench.conformance.case import PatternSpec
from workbench.conformance.sequences import build_pattern
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.runtime import Engine
from workbench.errors import CepError
from workbench.testing import NFATestHarness


def _ids(events: Sequence[Event]) -> tuple[object, ...]:
    return tuple(e.fields["id"] for e in events)


def _found(detections: list[Detection]) -> Counter[tuple[object, ...]]:
    """Each detection as kind, events by id, and the events of each stage by id (a multiset)."""
    return Counter(
        (d.kind, _ids(d.events), tuple((s, _ids(es)) for s, es in sorted(d.by_stage().items())))
        for d in detections
    )


def _compare(spec: PatternSpec, raw: list[dict[str, Any]], per_event: bool, flink_order: bool) -> None:
    pattern = build_pattern(spec, "p", flink_order=flink_order)
    try:
        compile_matcher(pattern)
    except CepError:
        return  # why: a pattern Flink refuses too (the oracle checks that we refuse it)
    events = [Event(e["type"], e["t"], None, e["fields"]) for e in raw]
    harness = NFATestHarness(pattern)
    for e in events:
        harness.feed(e)
    harness.advance(END_OF_INPUT)
    engine = Engine([pattern])
    found = feed_all(engine, events, per_event=per_event)
    assert not engine.errors
    assert _found(found) == _found(harness.detections)


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), per_event=st.booleans(), flink_order=st.booleans())
def test_the_engine_finds_what_the_harness_finds(seed: int, per_event: bool, flink_order: bool) -> None:
    case = draw(random.Random(seed), 0, skips=False).case
    # why 12: a draw with nondeterministic stages may hold 2^n partial matches after n events
    _compare(case["pattern"], case["events"][:12], per_event, flink_order)


def _loop_shape(rng: random.Random) -> PatternSpec:
    """``a, b{n,}, c`` with relaxed contiguity (the engine's loop plan), random conditions."""
    stages = []
    for i, (contiguity, least) in enumerate((("strict", 1), ("relaxed", rng.randint(1, 3)), ("relaxed", 1))):
        where = condition(rng, i)[1]
        quantifier = {
            "min": least,
            "max": None if i == 1 else 1,
            "greedy": False,
            "optional": False,
            "inner_contiguity": "relaxed",
        }
        stage = {"name": f"s{i}", "where": where, "contiguity": contiguity, "negated": False}
        stages.append({**stage, "quantifier": quantifier, "until": None})
    within = rng.choice((None, 3, 5, 10, 20))
    return cast(PatternSpec, {"kind": "sequence", "stages": stages, "within_ms": within, "skip": "no_skip"})


@settings(max_examples=200, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), per_event=st.booleans())
def test_the_loop_plan_finds_what_the_harness_finds(seed: int, per_event: bool) -> None:
    rng = random.Random(seed)
    spec = _loop_shape(rng)
    _compare(spec, draw_events(rng, rng.randint(3, 16)), per_event, flink_order=False)
