"""Completed matches held back by a skip strategy (FLINK-15873): traced, released, explained."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.engine.detection import TraceKind
from workbench.engine.runtime import Engine
from workbench.language import compile_text
from workbench.session.explain import explain

SOURCE = """
sequence s {within} skip past last event
    begin a: a
    followed by b: b where e.v == a[0].v
"""
EVENTS = [(1, "a", 1), (2, "a", 2), (3, "b", 2)]


def run(within: str, flink_order: bool = False, until: float | None = None) -> Engine:
    pattern: Any = compile_text(SOURCE.format(within=within))[0].pattern
    if flink_order:
        import dataclasses

        pattern = dataclasses.replace(pattern, flink_order=True)
    engine = Engine([pattern], trace=True)
    for t, typ, v in EVENTS:
        engine.process({"type": typ, "time": t, "fields": {"v": v}})
    engine.finish(until)
    return engine


@pytest.mark.parametrize("flink_order", [False, True])
def test_a_held_match_is_traced_and_released_when_the_older_partial_match_times_out(
    flink_order: bool,
) -> None:
    engine = run("within 10ms", flink_order)
    assert [(d.kind, d.time, d.seqs) for d in engine.detections] == [
        ("match", 11, (1, 2)),
        ("timeout", 11, (0,)),
    ]
    held = [r for r in engine.trace_records if r.kind is TraceKind.HELD]
    assert [(r.time, r.instance, r.detail["behind"]) for r in held] == [(3, 2, 1)]
    assert "behind instance 1" in str(held[0].detail["reason"])
    text = explain(None, engine.trace_records, engine.detections, {})
    assert "instance 2: fired at t=11 (1 detection(s)); held back by the skip strategy" in text
    assert "behind instance 1 from t=3 until t=11" in text


def test_a_held_match_waits_while_the_older_partial_match_is_inside_its_window() -> None:
    engine = run("within 10ms", until=5)
    assert engine.detections == []
    assert [r.kind for r in engine.trace_records].count(TraceKind.HELD) == 1


def test_without_a_window_the_older_partial_match_never_ends_and_nothing_is_emitted() -> None:
    engine = run("")
    assert engine.detections == []  # as Flink: the final watermark ends no partial match
    text = explain(None, engine.trace_records, engine.detections, {})
    assert "instance 2: completed at t=3 but held back by the skip strategy skip_past_last_event" in text
    assert "never released: instance 1 was still open at the end of the input" in text


def test_no_skip_holds_nothing() -> None:
    pattern = compile_text(SOURCE.format(within="").replace("skip past last event", "no skip"))[0].pattern
    engine = Engine([pattern], trace=True)
    for t, typ, v in EVENTS:
        engine.process({"type": typ, "time": t, "fields": {"v": v}})
    assert [d.seqs for d in engine.detections] == [(1, 2)]
    assert not any(r.kind is TraceKind.HELD for r in engine.trace_records)
