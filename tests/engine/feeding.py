"""Feeding an engine the two ways a caller can: one ``process()`` call per event, or one ``process_many``."""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence

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


def across_a_snapshot(make: Callable[[], Engine], events: Sequence[EventLike], at: int) -> list[Detection]:
    """Run ``events[:at]`` on one engine, restore its snapshot (through pickle, as a blob is stored)
    into a fresh one, run the rest there; both finish. Every detection of the two engines."""
    first = make()
    first.process_many(events[:at])
    blob = pickle.loads(pickle.dumps(first.snapshot()))
    second = make()
    second.restore(blob)
    second.process_many(events[at:])
    second.finish()
    first.finish()
    return first.detections + second.detections
