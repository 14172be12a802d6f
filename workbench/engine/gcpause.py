"""Pausing Python's cyclic garbage collector while a burst of acyclic records is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["RELAX_FROM", "gc_paused", "gc_relaxed"]

#: allocations between two young-generation collections while a feed runs (Python's default: 700)
RELAXED_GEN0 = 50_000

#: a feed of fewer events than this keeps the collector as it is (one ``process()`` call: the
#: threshold's change and restore would cost more than the collections it saves)
RELAX_FROM = 64


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while a run's records are built or read back.

    Why: a replay makes hundreds of thousands of small acyclic objects (events, tuples, dicts), and
    each allocation burst triggers collections that walk every live object again (measured: a third
    of a vectorised replay's time, 4x the planning on the Flink path). Nothing built here forms a
    cycle, so nothing waits longer to be freed.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


@contextmanager
def gc_relaxed(gen0: int = RELAXED_GEN0) -> Iterator[None]:
    """Collect the young generation every ``gen0`` allocations (not every 700) while events are fed.

    Why: a feed allocates a few acyclic objects per event (detections, their event tuples, the
    partial matches' tuples), and the default threshold collects every few hundred events, each
    collection of an older generation walking every detection kept so far (measured: a quarter of
    a loop pattern's stream time). Unlike :func:`gc_paused` the collector still runs, so a feed
    of unbounded length (a live source) cannot pile up cyclic garbage without limit. The previous
    thresholds come back afterwards, also when the feed raises.
    """
    before = gc.get_threshold()
    if before[0] >= gen0:  # why: already relaxed (a nested feed, or the user's own setting)
        yield
        return
    gc.set_threshold(gen0, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
