"""Keys stay apart: random sequence patterns over an interleaved keyed stream in one engine give
each key what an engine fed only that key's events gives.

The patterns are the Flink NFA oracle's random draws (``tests/conformance/flinkdiff.py``: every
contiguity, negations, quantifiers, ``until``, iterative conditions, the windows, the five skip
strategies), two at a time in one engine, so the engine's per-key states, its timer queue shared
by every key, its fused loop and its one-event step all take part. A ``within`` or a stage's
window is counted in event time, so which partial matches of a key complete or time out, with
which instance ids and at which times, never depends on another key's events (another key's
event only lets the engine notice sooner that a window has passed).
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conformance.flinkdiff import draw
from tests.engine.feeding import feed_all
from workbench.conformance.sequences import build_pattern
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.runtime import Engine
from workbench.errors import CepError

KEYS = ("k1", "k2", 7)


def _patterns(seed: int, engine_order: bool) -> list[SequencePattern]:
    """Two random patterns that compile (a draw Flink would refuse is drawn again).

    ``engine_order``: the engine's own plans and order (no skip strategy), else Flink's order.
    """
    rng = random.Random(seed)
    out: list[SequencePattern] = []
    while len(out) < 2:
        case = draw(rng, len(out), skips=not engine_order).case
        if case["pattern"]["skip_throw_on_miss"]:
            continue  # why: a run that stops at a skip's miss has no per-key result to compare
        pattern = build_pattern(case["pattern"], f"p{len(out)}", flink_order=not engine_order)
        try:
            compile_matcher(pattern)
        except CepError:
            continue
        out.append(pattern)
    return out


@st.composite
def keyed_streams(draw_: st.DrawFn) -> list[Event]:
    """Events of up to three keys, in time order, ties interleaved at random, ids unique."""
    n = draw_(st.integers(1, 14))  # why few: nondeterministic stages may hold 2^n partial matches
    t, events = 0, []
    for i in range(n):
        t += draw_(st.sampled_from((0, 0, 1, 1, 2, 3, 6)))
        name = draw_(st.sampled_from("abcde"))
        price = float(draw_(st.integers(0, 9)))
        key = draw_(st.sampled_from(KEYS))
        events.append(Event(name, t, key, {"id": i, "name": name, "price": price}))
    return events


def _rows(detections: list[Detection]) -> dict[object, list[tuple[object, ...]]]:
    """Each key's detections, in their order: pattern, kind, instance, time, events by id, stages."""
    out: dict[object, list[tuple[object, ...]]] = {}
    for d in detections:
        row = (
            d.pattern,
            d.kind,
            d.instance,
            d.time,
            tuple(e.fields["id"] for e in d.events),
            d.channels,
        )
        out.setdefault(d.key, []).append(row)
    return out


def _run(patterns: list[SequencePattern], events: list[Event], per_event: bool) -> list[Detection]:
    engine = Engine(patterns)
    found = feed_all(engine, events, per_event=per_event)
    assert not engine.errors
    return found


@pytest.mark.parametrize("engine_order", [False, True], ids=["flink-order", "engine-order"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), events=keyed_streams(), per_event=st.booleans())
def test_each_key_gets_what_it_gets_alone(
    engine_order: bool, seed: int, events: list[Event], per_event: bool
) -> None:
    patterns = _patterns(seed, engine_order)
    together = _rows(_run(patterns, events, per_event))
    for key in KEYS:
        alone = _rows(_run(patterns, [e for e in events if e.key == key], per_event))
        assert together.get(key, []) == alone.get(key, []), key
