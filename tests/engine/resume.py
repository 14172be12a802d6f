"""A run interrupted by a snapshot, for the tests that compare it with an uninterrupted one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from workbench.engine.events import EventLike
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine

__all__ = ["finished", "resumed", "signature"]

E = TypeVar("E", Engine, ShardedEngine)


def signature(*engines: Engine | ShardedEngine) -> list[tuple[object, ...]]:
    """The detections of ``engines`` together, sorted: what they found, whatever the order."""
    return sorted((d.pattern, d.key, d.kind, d.time, d.seqs) for e in engines for d in e.detections)


def finished(make: Callable[[], E], events: Sequence[EventLike]) -> E:
    """A fresh engine fed every event, then finished."""
    engine = make()
    engine.process_many(events)
    engine.finish()
    return engine


def resumed(make: Callable[[], E], events: Sequence[EventLike], cut: int) -> tuple[E, E]:
    """``events[:cut]`` fed to one engine, its snapshot restored in a fresh one that is fed the
    rest and finished: ``(first, second)``."""
    first = make()
    first.process_many(events[:cut])
    second = make()
    second.restore(first.snapshot())
    second.process_many(events[cut:])
    second.finish()
    return first, second
