"""The outputs queue (:mod:`workbench.engine.outputs`): the bound fast ``emit`` and its overrides."""

from __future__ import annotations

from workbench.engine.detection import Detection
from workbench.engine.nfa import SequencePattern, Stage
from workbench.engine.runtime import Engine

PATTERN = SequencePattern("p", (Stage("a", types=("a",)), Stage("b", types=("b",))))
EVENTS = [{"type": t, "time": i, "key": "k"} for i, t in enumerate("abab")]


def test_detections_are_queued_and_delivered_in_order() -> None:
    engine = Engine([PATTERN])
    assert engine.process_many(EVENTS) == engine.detections
    assert [d.seqs for d in engine.detections] == [(0, 1), (2, 3)]


def test_a_subclass_that_overrides_emit_still_sees_every_detection() -> None:
    class Counting(Engine):
        def __init__(self) -> None:
            self.seen: list[Detection] = []
            super().__init__([PATTERN])

        def emit(self, detection: Detection) -> None:
            self.seen.append(detection)
            super().emit(detection)

    engine = Counting()
    engine.process_many(EVENTS)
    assert [d.seqs for d in engine.seen] == [(0, 1), (2, 3)]
    assert engine.detections == engine.seen
