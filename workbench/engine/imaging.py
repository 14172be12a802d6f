"""An engine's mutable state as one image: what :meth:`Engine.snapshot` writes and ``restore`` reads.

:class:`Imaging` is the snapshot half of :class:`~workbench.engine.runtime.Engine` (its base class):
the image of keys, timers, buffer, clock and counters, written and read as versioned data by
:mod:`workbench.engine.snapshot` (JSON that cannot run code, with a fingerprint of every pattern).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import NoReturn, cast

from workbench.engine.budget import Budget
from workbench.engine.clock import EventClock, Watermark
from workbench.engine.derived import FIRST_DERIVED_SEQ
from workbench.engine.events import Event
from workbench.engine.fingerprint import fingerprints
from workbench.engine.host import KeyHost, KeyState
from workbench.engine.imagecheck import check_state, check_timer
from workbench.engine.matcher import Matcher
from workbench.engine.outputs import Outputs
from workbench.engine.snapshot import dump, load
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
    #: the seq of the next derived event (``emit into``); a blob written before it had none
    next_derived: int = FIRST_DERIVED_SEQ


class Imaging(Outputs):
    """Snapshots of an engine's mutable state (the engine sets these attributes)."""

    matchers: list[Matcher]
    host: KeyHost
    event_clock: EventClock
    _keys: dict[Hashable, KeyState]
    _timers: list[Timer]
    _timer_seq: Iterator[int]
    _buffer: list[tuple[Time, int, Event]]
    #: the engine's one-event step, which binds the key table, the timers and their counter when
    #: it is made: replacing any of them here drops it (the engine makes another on the next event)
    _step: Callable[..., object] | None

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
            self.derived_seqs.next,
        )
        self._timer_seq = itertools.count(snap.next_timer)  # reading the counter must not move it
        self._step = None
        return snap

    def adopt(self, snap: object) -> None:
        """Take over an :meth:`image` (read back by :func:`~workbench.engine.snapshot.load`)."""
        self.take_over(self.checked(snap))

    def checked(self, snap: object) -> EngineSnapshot:
        """``snap`` if it is an image this engine can take over, else a :class:`CepError` saying why."""
        if not isinstance(snap, EngineSnapshot):
            msg = f"snapshot holds a {type(snap).__name__}, not an engine's state"
            raise CepError(msg)
        self._check_image(snap)
        return snap

    def take_over(self, snap: EngineSnapshot) -> None:
        """Take over an image that :meth:`checked` accepted."""
        clock = self.event_clock
        self._keys = snap.keys
        self._timers = snap.timers
        self._buffer = snap.buffer
        clock.watermark, clock.max_seen, clock.next_seq = snap.watermark, snap.max_seen, snap.next_seq
        self._timer_seq = itertools.count(snap.next_timer)
        self._step = None
        self.late = snap.late
        self.late_count = snap.late_count
        self.counters = dict(snap.counters)
        self.host.context.budget = snap.budget
        self.derived_seqs.next = snap.next_derived

    def _check_image(self, snap: EngineSnapshot) -> None:
        """Refuse an image whose parts are not what this engine writes (a forged or damaged blob)."""
        n = len(self.matchers)
        _expect(snap, "pattern_names", tuple, "a tuple")
        _expect(snap, "keys", dict, "a table of keys")
        for key, ks in snap.keys.items():
            self._check_key(key, ks)
        _expect(snap, "timers", list, "a list")
        for timer in cast("list[object]", snap.timers):
            if not (
                isinstance(timer, tuple) and len(timer) == 5 and _number(timer[0]) and type(timer[1]) is int
            ):
                _bad("a timer")
            if not (type(timer[3]) is int and 0 <= timer[3] < n):
                _bad("a timer's pattern")
            check_timer(
                self.matchers[timer[3]], timer[4], f"the timers of pattern {self.matchers[timer[3]].name!r}"
            )
        self._check_timer_counts(snap)
        _expect(snap, "buffer", list, "a list")
        for item in cast("list[object]", snap.buffer):
            if not (
                isinstance(item, tuple) and len(item) == 3 and _number(item[0]) and isinstance(item[2], Event)
            ):
                _bad("a buffered event")
        wm = getattr(snap, "watermark", None)
        if not (isinstance(wm, tuple) and len(wm) == 2 and _number(wm[0]) and isinstance(wm[1], bool)):
            _bad("the watermark")
        counters = ("next_seq", "next_timer", "late_count", "next_derived")
        if not _number(getattr(snap, "max_seen", None)) or any(
            type(getattr(snap, c, None)) is not int for c in counters
        ):
            _bad("the clock's counters")
        _expect(snap, "late", list, "a list")
        if not all(isinstance(e, Event) for e in snap.late):
            _bad("a late event")
        _expect(snap, "counters", dict, "a table")
        _expect(snap, "budget", Budget, "a budget")
        budget = snap.budget
        kinds = {"dropped": int, "dropped_by_pattern": dict, "released": dict, "warned": set}
        if any(not isinstance(getattr(budget, name, None), kind) for name, kind in kinds.items()):
            _bad("the budget's counts")

    def _check_timer_counts(self, snap: EngineSnapshot) -> None:
        """Each key counts exactly the timers queued for it, per pattern (a timer fires against it)."""
        queued: dict[tuple[Hashable, int], int] = {}
        for _, _, key, pindex, _ in snap.timers:
            queued[key, pindex] = queued.get((key, pindex), 0) + 1
        counted = {(k, i): c for k, ks in snap.keys.items() for i, c in ks.timer_counts.items() if c}
        if queued != counted:
            _bad("the timers and the keys' counts of them")

    def _check_key(self, key: Hashable, ks: object) -> None:
        """One key's state: tables by pattern index, each pattern's state of the class it makes."""
        n = len(self.matchers)
        tables = [getattr(ks, name, None) for name in ("states", "instances", "timer_counts")]
        if not isinstance(ks, KeyState) or not all(
            isinstance(t, dict) and all(type(i) is int and 0 <= i < n for i in t) for t in tables
        ):
            _bad(f"the state of key {key!r}")
        for i, state in ks.states.items():
            if type(state) is not type(self.matchers[i].new_state(key)):
                _bad(f"the state of pattern {self.matchers[i].name!r} for key {key!r}")
            check_state(
                self.matchers[i], state, f"the state of pattern {self.matchers[i].name!r} for key {key!r}"
            )
        if not all(type(v) is int and v >= 0 for v in (*ks.instances.values(), *ks.timer_counts.values())):
            _bad(f"the counters of key {key!r}")

    def _fingerprints(self) -> list[tuple[str, str]]:
        return fingerprints(self.matchers)


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value


def _bad(what: str) -> NoReturn:
    msg = f"snapshot: {what} is not what an engine writes (a damaged or forged blob)"
    raise CepError(msg)


def _expect(snap: EngineSnapshot, name: str, kind: type, described: str) -> None:
    if not isinstance(getattr(snap, name, None), kind):
        _bad(f"the image's {name} (not {described})")
