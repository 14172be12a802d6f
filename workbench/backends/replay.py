"""The event-time clock of a finite input script, computed up front for a distributed host.

The local :class:`~workbench.engine.runtime.Engine` decides lateness from the order in which events
arrive: an event is late when its time is below the watermark that the events before it (and the
:class:`~workbench.backends.base.AdvanceTime` marks) established. A distributed host such as Flink
sees the same events in a different interleaving and emits watermarks periodically, so it cannot
reproduce that decision on its own. For a replay the input order is known, so :func:`plan_replay`
walks the script once, with exactly the engine's rules, and records per event whether it is late,
how far the run processes at all (:attr:`ReplayPlan.horizon`), and from where on the final flush
holds (:attr:`ReplayPlan.final_after`). The host then only needs the per-key order, which event time
fixes.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from workbench.backends.base import AdvanceTime, Input
from workbench.engine.clock import EventClock, Watermark, is_late, releases, stamp
from workbench.engine.events import Event
from workbench.errors import CepError

__all__ = ["Bound", "ReplayPlan", "plan_replay"]


@dataclass(frozen=True, slots=True, order=True)
class Bound:
    """A watermark: events with ``time <= time`` are due; timers at ``time`` only when ``closed``.

    >>> Bound(5, False).admits_event(5), Bound(5, False).admits_timer(5), Bound(5, True).admits_timer(5)
    (True, False, True)
    """

    time: float
    closed: bool

    def admits_event(self, t: int | float) -> bool:
        """Whether an event at ``t`` is processed once the watermark stands here."""
        return releases(self.watermark, t)

    def admits_timer(self, t: int | float) -> bool:
        """Whether a timer at ``t`` fires once the watermark stands here (the lateness rule)."""
        return is_late(self.watermark, t)

    def makes_late(self, t: int | float) -> bool:
        """Whether an event at ``t`` arriving now is late (:func:`~workbench.engine.clock.is_late`)."""
        return is_late(self.watermark, t)

    @property
    def watermark(self) -> Watermark:
        """The :data:`~workbench.engine.clock.Watermark` tuple."""
        return (self.time, self.closed)


@dataclass(frozen=True, slots=True)
class ReplayPlan:
    """The engine's clock decisions for one input script.

    Attributes:
        events: the accepted events in arrival order, stamped with ``seq``, each with its late flag.
        horizon: how far processing goes at all (``Bound(inf, True)`` after a full final flush).
        final_after: with a final flush, the watermark before it; items beyond it run with
            ``ctx.final`` set. ``None`` when there is no final flush.
    """

    events: tuple[tuple[Event, bool], ...]
    horizon: Bound
    final_after: Bound | None


def plan_replay(
    inputs: Iterable[Input],
    *,
    out_of_orderness: int | float = 0,
    until: int | float | None = None,
    finish: bool = True,
) -> ReplayPlan:
    """Walk an input script with the engine's event-time rules (see :mod:`workbench.engine.runtime`).

    Raises :class:`~workbench.errors.EventError` for an invalid event, exactly where the engine
    would.

    >>> plan = plan_replay([{"type": "a", "t": 5}, {"type": "a", "t": 3}, {"type": "a", "t": 6}])
    >>> [late for _, late in plan.events], plan.horizon, plan.final_after
    ([False, True, False], Bound(time=inf, closed=True), Bound(time=6, closed=False))
    """
    if until is not None and not finish:
        msg = f"until={until!r} needs finish=True (until is where the final flush stops)"
        raise CepError(msg)
    clock = EventClock(out_of_orderness)  # the engine's lateness rule, not a copy of it
    position = 0
    events: list[tuple[Event, bool]] = []
    for item in inputs:
        if isinstance(item, AdvanceTime):
            clock.close(item.watermark)
            continue
        event = stamp(item, position)
        position += 1
        events.append((event, not clock.accept(event.time)))
    wm = Bound(*clock.watermark)
    if not finish:
        return ReplayPlan(tuple(events), wm, None)
    if until is not None:
        return ReplayPlan(tuple(events), max(wm, Bound(until, True)), None)
    # why max_seen: the final flush starts after the newest event, however far lateness held the
    # watermark back (the engine's finish() releases what is buffered first)
    return ReplayPlan(tuple(events), Bound(math.inf, True), max(wm, Bound(clock.max_seen, False)))
