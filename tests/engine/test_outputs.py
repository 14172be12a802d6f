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


def test_an_engine_that_collects_nothing_still_returns_every_detection() -> None:
    from benchmarks.patterns import api_patterns

    trades = [
        {"type": t, "time": 10 * i, "key": k, "price": p}
        for i, (t, k, p) in enumerate(
            [("login", "u", 0.0), ("trade", "u", 120.0), ("login", "v", 0.0), ("trade", "u", 90.0),
             ("trade", "v", 130.0), ("logout", "u", 0.0), ("logout", "v", 0.0), ("login", "u", 0.0),
             ("trade", "u", 111.0), ("view", "u", 0.0)]
        )
    ]  # fmt: skip
    for pattern in (api_patterns()["P1"], api_patterns()["P5"], PATTERN):
        events = trades if pattern is not PATTERN else EVENTS
        kept = Engine([pattern])
        want = [d.seqs for d in kept.process_many(events)]
        assert want  # each pattern finds something here
        quiet = Engine([pattern], collect=False)
        # the native loop (P5), the generated loop (P1) and one event at a time: the same detections
        assert [d.seqs for d in quiet.process_many(events)] == want
        one = Engine([pattern], collect=False)
        assert [d.seqs for e in events for d in one.process(e)] == want
        assert quiet.detections == []
        assert one.detections == []
