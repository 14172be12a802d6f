"""An engine's mutable state as one image: what :meth:`Engine.snapshot` writes and ``restore`` reads.

:class:`Imaging` is the snapshot half of :class:`~workbench.engine.runtime.Engine` (its base class):
the image of keys, timers, buffer, clock and counters, written and read as versioned data by
:mod:`workbench.engine.snapshot` (JSON that cannot run code, with a fingerprint of every pattern).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field

from workbench.engine.budget import Budget
from workbench.engine.clock import EventClock, Watermark
from workbench.engine.events import Event
from workbench.engine.host import KeyHost, KeyState
from workbench.engine.matcher import Matcher
from workbench.engine.outputs import Outputs
from workbench.engine.snapshot import dump, fingerprints, load
from workbench.errors import CepError

__all__ = ["EngineSnapshot", "Imaging", "Time", "Timer"]

Time = int | float
Timer = tuple[Time, int, Hashable, int, Hashable]
"""A queued timer: ``(time, scheduling number, key, pattern index, token)``."""


@dataclass(slots=True)
class EngineSnapshot:
    """An image of the engine's mutable state (not its patterns; see :mod:`~workbench.engine.snapshot`)."""

    pattern_names: tuple[str, ...]
    keys: dict[Hashable, KeyState]
    timers: list[Timer]
    buffer: list[tuple[Time, int, Event]]
    watermark: Watermark
    max_seen: float
    next_seq: int
    next_timer: int
    late: list[Event]
    late_count: int
    counters: dict[str, int] = field(default_factory=dict)
    budget: Budget = field(default_factory=Budget)


class Imaging(Outputs):
    """Snapshots of an engine's mutable state (the engine sets these attributes)."""

    matchers: list[Matcher]
    host: KeyHost
    event_clock: EventClock
    _keys: dict[Hashable, KeyState]
    _timers: list[Timer]
    _timer_seq: Iterator[int]
    _buffer: list[tuple[Time, int, Event]]

    def snapshot(self) -> bytes:
        """The mutable state (keys, timers, buffer, clock, counters) as versioned data.

        The blob holds a fingerprint of every pattern; :meth:`restore` refuses it in an engine whose
        patterns differ (see :mod:`workbench.engine.snapshot`: JSON that cannot run code).
        """
        with self._lock:
            return dump(self.image(), self._fingerprints())

    def restore(self, blob: bytes) -> None:
        """Replace the mutable state with a snapshot taken from an engine with the same patterns.

        Raises :class:`~workbench.errors.CepError` for a blob from other patterns (or other
        definitions under the same names), a damaged, truncated or foreign blob, or another version.
        """
        image = load(blob, self._fingerprints())
        with self._owner("restore"):
            self.adopt(image)

    def image(self) -> EngineSnapshot:
        """The mutable state as objects (shared, not copied; :meth:`snapshot` writes it out)."""
        clock = self.event_clock
        snap = EngineSnapshot(
            tuple(m.name for m in self.matchers),
            self._keys,
            self._timers,
            self._buffer,
            clock.watermark,
            clock.max_seen,
            clock.next_seq,
            next(self._timer_seq),
            self.late,
            self.late_count,
            dict(self.counters),
            self.host.context.budget,
        )
        self._timer_seq = itertools.count(snap.next_timer)  # reading the counter must not move it
        return snap

    def adopt(self, snap: object) -> None:
        """Take over an :meth:`image` (read back by :func:`~workbench.engine.snapshot.load`)."""
        if not isinstance(snap, EngineSnapshot):
            msg = f"snapshot holds a {type(snap).__name__}, not an engine's state"
            raise CepError(msg)
        clock = self.event_clock
        self._keys = snap.keys
        self._timers = snap.timers
        self._buffer = snap.buffer
        clock.watermark, clock.max_seen, clock.next_seq = snap.watermark, snap.max_seen, snap.next_seq
        self._timer_seq = itertools.count(snap.next_timer)
        self.late = snap.late
        self.late_count = snap.late_count
        self.counters = dict(snap.counters)
        self.host.context.budget = snap.budget

    def _fingerprints(self) -> list[tuple[str, str]]:
        return fingerprints(self.matchers)
