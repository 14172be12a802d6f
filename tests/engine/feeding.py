"""Feeding an engine the two ways a caller can: one ``process()`` call per event, or one ``process_many``."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.engine.detection import Detection
from workbench.engine.events import EventLike
from workbench.engine.runtime import Engine


def feed_all(engine: Engine, events: Sequence[EventLike], *, per_event: bool) -> list[Detection]:
    """Feed ``events`` (``per_event``: one ``process()`` call each), finish; the engine's detections."""
    if per_event:
        for event in events:
            engine.process(event)
    else:
        engine.process_many(events)
    engine.finish()
    return engine.detections
