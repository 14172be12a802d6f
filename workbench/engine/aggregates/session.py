"""Session windows: an aggregate over the current session, which a gap longer than ``gap`` closes.

``count(e over session 10min)`` in a condition reads a :class:`Session` (Kafka Streams' session
windows, Flink's ``EventTimeSessionWindows.withGap``): the values added since the last gap of more
than ``gap`` ms between two consecutive values. A gap of exactly ``gap`` keeps the session open (the
same boundary as an absence: a silence of ``D`` needs more than ``D`` without an event). Each update
is O(1): the aggregate is never reverted, only replaced by a fresh one when a session starts. The
sessions of conditions hold the exact aggregates of :mod:`workbench.engine.aggregates.exact` for
``sum``, ``avg``, ``var`` and ``std`` (correctly rounded, whatever the order of the values).

>>> from workbench.engine.aggregates import Count
>>> s = Session(Count(), gap=10)
>>> for t in (0, 5, 15, 26, 30):
...     s.update("x", t=t)
>>> s.get(), s.start, s.last
(2, 26, 30)
"""

from __future__ import annotations

import math

from workbench.engine.aggregates.base import Aggregate, AggregateBase, positive
from workbench.errors import CepError

__all__ = ["Session"]


class Session(AggregateBase):
    """Any aggregate over the values of the current session (see the module).

    Attributes:
        agg: the running session's aggregate.
        gap: the longest gap (ms) within one session.
        start: the time of the session's first value (``-inf``: none yet).
        last: the time of its latest value.
    """

    __slots__ = ("agg", "fresh", "gap", "last", "start")

    def __init__(self, agg: Aggregate, gap: int | float) -> None:
        positive(gap, "gap (ms)", "session", integer=False)
        self.fresh = agg.copy()  # the empty aggregate every session starts from
        self.agg = agg
        self.gap = gap
        self.start: int | float = -math.inf
        self.last: int | float = -math.inf

    def update(self, x: object, t: int | float | None = None) -> None:
        if t is None:
            msg = "session: update needs the value's time: update(x, t=...)"
            raise CepError(msg)
        if t < self.last:
            msg = f"session: time went backwards ({t!r} < {self.last!r})"
            raise CepError(msg)
        if t - self.last > self.gap:  # Why: the gap closed the session; the value opens a new one
            self.agg = self.fresh.copy()
            self.start = t
        self.last = t
        self.agg.update(x)

    def revert(self, x: object) -> None:
        msg = "session: a session window is never reverted (a gap replaces it)"
        raise CepError(msg)

    def get(self) -> object:
        return self.agg.get()

    @property
    def revertible(self) -> bool:
        """Never: a gap replaces the aggregate instead."""
        return False

    def copy(self) -> Session:
        c = Session.__new__(Session)
        c.agg, c.fresh, c.gap, c.start, c.last = self.agg.copy(), self.fresh, self.gap, self.start, self.last
        return c
