"""Outputs after transitions: raising, re-entrant and failing callbacks leave other detections unchanged."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from workbench.engine import Detection, Engine
from workbench.engine.nfa import Contiguity, SequencePattern, Stage
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.sharding import ShardedEngine
from workbench.errors import CepRuntimeError


def _patterns() -> list[Any]:
    seq = SequencePattern(
        "seq",
        (Stage("a", types=("a",)), Stage("b", "e.v > 2", Contiguity.RELAXED, types=("b",))),
        within_ms=20,
    )
    grp = ReactionGroup(
        "grp",
        "and",
        channels=(Channel("a", "a"), Channel("c", "c")),
        timeout_ms=15,
        timeout_channel=True,
        initiator=Initiator("b"),
    )
    echo = SequencePattern("echo", (Stage("f", types=("fb",)),))
    return [seq, grp, echo]


def _events(n: int = 400) -> list[dict[str, Any]]:
    kinds = "abcabbca"
    return [
        {"type": kinds[i % 8], "time": i * 2, "key": f"k{(i // 3) % 5}", "v": i % 7, "n": i} for i in range(n)
    ]


def _sig(detections: list[Detection], *, without: str = "echo") -> Counter[tuple[object, ...]]:
    return Counter(
        (d.pattern, d.key, d.kind, d.time, tuple(e.fields.get("n") for e in d.events))
        for d in detections
        if d.pattern != without
    )


def _run(engine: Engine | ShardedEngine, events: list[dict[str, Any]]) -> list[Detection]:
    returned = [d for e in events for d in engine.process(e)]
    returned += engine.finish()
    return returned


ENGINES = [
    pytest.param(lambda **kw: Engine(_patterns(), **kw), id="fused"),
    pytest.param(lambda **kw: Engine(_patterns(), out_of_orderness=3, **kw), id="buffered"),
    pytest.param(lambda **kw: ShardedEngine(_patterns(), 3, **kw), id="sharded"),
]


@pytest.mark.parametrize("make", ENGINES)
def test_a_raising_callback_is_recorded_and_the_run_goes_on(make: Any) -> None:
    baseline = make()
    _run(baseline, _events())

    def explode(d: Detection) -> None:
        raise ValueError(f"no {d.pattern}")

    engine = make(on_detection=explode, on_reaction=explode)
    returned = _run(engine, _events())
    assert _sig(engine.detections) == _sig(baseline.detections)
    assert _sig(returned) == _sig(baseline.detections)
    assert engine.reactions == baseline.reactions
    faults = {(f.pattern, f.where.split(" '")[0], f.kind): f.count for f in engine.errors}
    per_pattern = Counter(d.pattern for d in baseline.detections)
    # counted once per event, as condition errors are (detections ending at one event count once)
    assert 0 < faults[("seq", "on_detection callback", "ValueError")] <= per_pattern["seq"]
    assert ("grp", "on_reaction callback", "ValueError") in faults
    assert any("explode" in f.where for f in engine.errors)


@pytest.mark.parametrize("make", ENGINES)
def test_events_fed_back_from_a_callback_run_after_the_current_one(make: Any) -> None:
    baseline = make()
    _run(baseline, _events())
    holder: dict[str, Any] = {}
    seen: list[tuple[object, ...]] = []

    def feed_back(d: Detection) -> None:
        if d.pattern == "echo":
            seen.append((d.key, d.events[0].fields["n"]))
            return
        # why another key: the host's per-key context must not be overwritten by the fed event
        holder["engine"].process({"type": "fb", "time": d.time, "key": f"x{d.key}", "n": -len(seen) - 1})

    engine = holder["engine"] = make(on_detection=feed_back)
    returned = _run(engine, _events())
    assert _sig(engine.detections) == _sig(baseline.detections)
    assert _sig(returned) == _sig(baseline.detections)
    echoes = [d for d in engine.detections if d.pattern == "echo"]
    assert [d for d in returned if d.pattern == "echo"] == echoes
    assert engine.errors == []
    if isinstance(engine, Engine):
        assert len(echoes) == len(baseline.detections) > 0
        assert engine.late == []
    else:  # a shard's clock may have passed a timer's time that another shard fires: late, not lost
        late = [e for e in engine.late if e.type == "fb"]
        assert len(echoes) + len(late) == len(baseline.detections) > 0
    # in order: every detection's echo comes after it (a sharded run may have called some late)
    order = [(d.pattern, d.key) for d in engine.detections]
    for i, (pattern, key) in enumerate(order):
        if pattern != "echo" and isinstance(engine, Engine):
            assert ("echo", f"x{key}") in order[i + 1 :]


def test_a_feedback_chain_is_processed_first_in_first_out() -> None:
    hops = SequencePattern("hop", (Stage("h", types=("h",)),))
    log: list[int] = []
    holder: dict[str, Engine] = {}

    def again(d: Detection) -> None:
        n = d.events[0].fields["n"]
        log.append(n)
        if n < 20:
            holder["e"].process_many(
                [
                    {"type": "h", "time": d.time, "key": n, "n": 2 * n + 1},
                    {"type": "h", "time": d.time, "key": n, "n": 2 * n + 2},
                ]
            )

    engine = holder["e"] = Engine([hops], on_detection=again)
    assert [d.events[0].fields["n"] for d in engine.process({"type": "h", "time": 1, "n": 0})] == log
    assert log == list(range(41))  # breadth first: the order the events were fed


@pytest.mark.parametrize("make", ENGINES)
def test_other_calls_from_a_callback_are_refused_and_recorded(make: Any) -> None:
    baseline = make()
    _run(baseline, _events())
    holder: dict[str, Any] = {}

    def meddle(d: Detection) -> None:
        holder["engine"].advance_time(10**9)

    engine = holder["engine"] = make(on_detection=meddle)
    _run(engine, _events())
    assert _sig(engine.detections) == _sig(baseline.detections)
    assert {f.kind for f in engine.errors} == {"CepError"}


def test_strict_mode_raises_a_callback_error_after_the_transitions() -> None:
    def explode(d: Detection) -> None:
        raise ValueError("boom")

    engine = Engine(_patterns(), strict=True, on_detection=explode)
    with pytest.raises(CepRuntimeError, match="on_detection callback"):
        _run(engine, _events())
    # the engine is released: a later call is not taken for a call from inside a callback
    assert engine.process({"type": "zzz", "time": 0}) == []
    assert engine.late_count == 1


def test_a_failing_condition_never_hides_the_event_from_other_patterns() -> None:
    bad = SequencePattern("bad", (Stage("a", "e.v > 'x'", types=("a",)), Stage("b", types=("b",))))
    only = Engine(_patterns())
    _run(only, _events())
    both = Engine([bad, *_patterns()])
    _run(both, _events())
    assert _sig(both.detections) == _sig(only.detections)
    assert [f.pattern for f in both.errors] == ["bad"]


def test_callbacks_see_a_consistent_engine() -> None:
    """A callback runs after the event's transitions: a snapshot taken there restores to the same run."""
    blobs: list[bytes] = []
    holder: dict[str, Engine] = {}
    engine = holder["e"] = Engine(_patterns(), on_detection=lambda d: blobs.append(holder["e"].snapshot()))
    events = _events()
    _run(engine, events)
    assert blobs
    restored = Engine(_patterns())
    restored.restore(blobs[len(blobs) // 2])
    assert restored.watermark <= engine.watermark
