"""Pausing Python's cyclic garbage collector while a burst of acyclic records is built."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


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
