"""Hypothesis properties of reaction groups: key independence, snapshot/restore, determinism."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.detection import Detection
from workbench.engine.reactions import (
    Channel,
    Count,
    Initiator,
    Instance,
    MapCounter,
    ReactionGroup,
    Size,
    Timer,
    Var,
)
from workbench.engine.runtime import Engine

PATTERNS = [
    ReactionGroup(
        "and_not",
        "and",
        channels=(
            Channel("a", "a", match={"v": Var("V")}, timeout_ms=7),
            Channel("b", "b", negated=True),
            Channel("c", "c", count=Count.of(-1)),
            Channel("s", "s", stop_ids=("c",)),
        ),
        timeout_ms=12,
        timeout_channel=True,
        initiator=Initiator("start", bind={"V": "v"}),
    ),
    ReactionGroup(
        "or_mix",
        "or",
        channels=(
            Channel("a", "a", size=Size(2)),
            Channel("b", "b", negated=True),
            Channel("p", "s", pause_ids=("a",)),
            Channel("r", "c", resume_ids=("a",)),
        ),
        timeout_ms=9,
        timeout_channel=True,
        initiator=Initiator("start", bind={"V": "v"}),
    ),
]

PATTERNS += [
    ReactionGroup(
        "joins",
        "and",
        channels=(
            Channel("x", "a", count=Count.of(-1), vars={"V": "v"}),
            Channel("y", "c", vars={"V": "v", "W": "v"}),
        ),
        timeout_ms=10,
        timeout_channel=True,
        where="W == V",
        initiator=Initiator("start"),
    ),
    ReactionGroup(
        "nested",
        "and",
        channels=(
            Channel("s", "s", binds={"V": "v"}),
            Channel("a", "a", match={"v": Var("V")}, after=("s",)),
            ReactionGroup(
                "inner", "or", channels=(Channel("b", "b"), Channel("c", "c", negated=True)), timeout_ms=5
            ),
        ),
        timeout_ms=15,
        initiator=Initiator("start", mult=False),
    ),
]

#: Time-driven windows depend on how far the whole stream's clock goes, so they are left out of
#: the per-key property but take part in the snapshot and determinism properties.
WINDOWS = ReactionGroup(
    "windows",
    "or",
    channels=(Channel("w", "a", timer=Timer(5, 5, MapCounter("e.v"))),),
    instances=(Instance("k1", 0),),
)

TYPES = ["start", "a", "b", "c", "s"]


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    n = draw(st.integers(0, 40))
    t = 0
    out = []
    for _ in range(n):
        t += draw(st.integers(0, 4))
        out.append(
            {
                "type": draw(st.sampled_from(TYPES)),
                "time": t,
                "key": draw(st.sampled_from(["k1", "k2", "k3"])),
                "fields": {"v": draw(st.integers(0, 2))},
            }
        )
    return out


def signature(ds: list[Detection]) -> list[tuple[Any, ...]]:
    return [
        (d.pattern, d.key, d.instance, d.kind, d.time, tuple(e.seq for e in d.events), d.negated) for d in ds
    ]


def run_all(events: list[dict[str, Any]], patterns: list[ReactionGroup] = PATTERNS) -> list[Detection]:
    engine = Engine(patterns)
    engine.process_many(events)
    engine.finish()
    return engine.detections


def by_key(ds: list[Detection], events: list[dict[str, Any]]) -> dict[Any, list[tuple[Any, ...]]]:
    out: dict[Any, list[tuple[Any, ...]]] = {}
    for d in ds:
        fields = tuple(
            (*tuple(sorted(events[e.seq]["fields"].items())), events[e.seq]["time"]) for e in d.events
        )
        out.setdefault(d.key, []).append((d.pattern, d.kind, d.time, fields, d.negated))
    return out


@settings(max_examples=60, deadline=None)
@given(streams())
def test_interleaving_keys_does_not_change_any_keys_detections(events: list[dict[str, Any]]) -> None:
    together = by_key(run_all(events), events)
    for key in {e["key"] for e in events}:
        alone_events = [e for e in events if e["key"] == key]
        alone = by_key(run_all(alone_events), alone_events)
        assert together.get(key, []) == alone.get(key, [])


@settings(max_examples=60, deadline=None)
@given(streams(), st.integers(0, 30))
def test_snapshot_and_restore_at_any_event_gives_identical_detections(
    events: list[dict[str, Any]], cut: int
) -> None:
    cut = min(cut, len(events))
    patterns = [*PATTERNS, WINDOWS]
    reference = signature(run_all(events, patterns))
    first = Engine(patterns)
    first.process_many(events[:cut])
    blob = first.snapshot()
    second = Engine(patterns)
    second.restore(blob)
    second.process_many(events[cut:])
    second.finish()
    assert signature(first.detections) + signature(second.detections) == reference


@settings(max_examples=30, deadline=None)
@given(streams())
def test_same_input_same_output_in_the_same_order(events: list[dict[str, Any]]) -> None:
    patterns = [*PATTERNS, WINDOWS]
    assert signature(run_all(events, patterns)) == signature(run_all(events, patterns))


def test_a_key_keeps_the_state_of_a_later_pattern_when_an_earlier_one_is_idle() -> None:
    # Regression (runtime): the key used to be dropped after the first idle pattern, orphaning the
    # state that a later pattern stored for the same event.
    engine = Engine(PATTERNS)
    engine.process({"type": "start", "time": 0, "key": "k", "fields": {"v": 0}})
    engine.process({"type": "a", "time": 1, "key": "k", "fields": {"v": 1}})
    assert engine.state_of("or_mix", "k") is not None
    engine.process({"type": "a", "time": 2, "key": "k", "fields": {"v": 1}})
    assert [(d.pattern, d.time) for d in engine.detections] == [("or_mix", 2)]


#: Groups whose channels match on initiator variables: their instances are indexed by those values
#: once a key holds many of them.
KEYED = [
    ReactionGroup(
        "keyed_and",
        "and",
        channels=(
            Channel("a", "a", match={"v": Var("V")}),
            Channel("b", "b", match={"v": Var("V")}, negated=True),
            Channel("c", "c", match={"v": Var("V")}, count=Count.of(1, -1)),
            Channel("s", "s", match={"v": Var("V")}, stop_ids=("c",)),
        ),
        timeout_ms=20,
        timeout_channel=True,
        initiator=Initiator("start", bind={"V": "v"}),
    ),
    ReactionGroup(
        "keyed_or",
        "or",
        channels=(
            Channel("a", "a", match={"v": Var("V")}, size=Size(2)),
            Channel("b", "b", match={"v": Var("V")}, negated=True),
            ReactionGroup(
                "inner", "and", channels=(Channel("c", "c", match={"v": Var("V")}), Channel("s", "s"))
            ),
        ),
        timeout_ms=25,
        initiator=Initiator("start", bind={"V": "v"}),
    ),
]


@settings(max_examples=60, deadline=None)
@given(streams(), st.integers(0, 40))
def test_the_instance_index_does_not_change_detections(events: list[dict[str, Any]], cut: int) -> None:
    from workbench.engine.reactions import matcher

    patterns = [*KEYED, *PATTERNS]
    saved = matcher._INDEX_FROM
    try:
        matcher._INDEX_FROM = 10**9
        plain = signature(run_all(events, patterns))
        matcher._INDEX_FROM = 0
        indexed = Engine(patterns)
        indexed.process_many(events[:cut])
        restored = Engine(patterns)
        restored.restore(indexed.snapshot())
        restored.process_many(events[cut:])
        restored.finish()
    finally:
        matcher._INDEX_FROM = saved
    assert signature(indexed.detections) + signature(restored.detections) == plain
