"""Sliding windows over any revertible aggregate: the last n values, or the last period of event time.

A window reverts every value that leaves it. The scalar ``sum``, ``avg``, ``var`` and ``std`` revert
by subtraction, which leaves rounding (and ``inf - inf``) behind; the windows of conditions wrap
the exact aggregates of :mod:`workbench.engine.aggregates.exact` instead.
"""

from __future__ import annotations

import math
from collections import deque

from workbench.engine.aggregates.base import Aggregate, AggregateBase, positive
from workbench.errors import CepError, PatternError

__all__ = ["Rolling", "TimeRolling"]


def _require_revert(agg: Aggregate, wrapper: str) -> None:
    if not getattr(agg, "revertible", True):
        msg = f"{wrapper} needs an aggregate that can revert; got {agg!r} (use revert='fifo')"
        raise PatternError(msg, element=wrapper)


class Rolling(AggregateBase):
    """Any revertible aggregate over the last ``window_size`` values (count-based sliding window).

    >>> from workbench.engine.aggregates import Sum
    >>> r = Rolling(Sum(), 2)
    >>> for x in [1, 2, 3]: r.update(x)
    >>> r.get()
    5
    """

    __slots__ = ("agg", "values", "window_size")

    def __init__(self, agg: Aggregate, window_size: int) -> None:
        positive(window_size, "window_size", "rolling", integer=True)
        _require_revert(agg, "rolling")
        self.agg = agg
        self.window_size = window_size
        self.values: deque[object] = deque()

    def update(self, x: object) -> None:
        if len(self.values) == self.window_size:
            self.agg.revert(self.values.popleft())
        self.values.append(x)
        self.agg.update(x)

    def revert(self, x: object) -> None:
        """Remove the oldest value (which must equal ``x``) before the window would."""
        if not self.values or self.values[0] != x:
            msg = f"rolling: can only revert the oldest value, got {x!r}"
            raise CepError(msg)
        self.agg.revert(self.values.popleft())

    def get(self) -> object:
        return self.agg.get()

    def copy(self) -> Rolling:
        c = Rolling.__new__(Rolling)
        c.agg, c.window_size, c.values = self.agg.copy(), self.window_size, deque(self.values)
        return c


class TimeRolling(AggregateBase):
    """Any revertible aggregate over the values of the last ``period`` (ms) of event time.

    ``update(x, t)`` adds ``x`` at time ``t`` (non-decreasing) and drops values with
    ``t - t_i >= period`` (strict window, like Flink's ``within``); :meth:`expire` drops them when time
    advances without a value (a timer).

    >>> from workbench.engine.aggregates import Count
    >>> r = TimeRolling(Count(), period=10)
    >>> r.update("a", t=0); r.update("b", t=5); r.update("c", t=10); r.get()
    2
    """

    __slots__ = ("agg", "now", "period", "values")

    def __init__(self, agg: Aggregate, period: int | float) -> None:
        positive(period, "period (ms)", "time_rolling", integer=False)
        _require_revert(agg, "time_rolling")
        self.agg = agg
        self.period = period
        self.values: deque[tuple[int | float, object]] = deque()
        self.now: int | float = -math.inf

    def update(self, x: object, t: int | float | None = None) -> None:
        if t is None:
            msg = "time_rolling: update needs the value's time: update(x, t=...)"
            raise CepError(msg)
        self.expire(t)
        self.values.append((t, x))
        self.agg.update(x)

    def expire(self, now: int | float) -> None:
        """Advance the clock to ``now`` and drop the values that left the window."""
        if now < self.now:
            msg = f"time_rolling: time went backwards ({now!r} < {self.now!r})"
            raise CepError(msg)
        self.now = now
        values, horizon = self.values, now - self.period
        while values and values[0][0] <= horizon:
            self.agg.revert(values.popleft()[1])

    def revert(self, x: object) -> None:
        """Remove the oldest value (which must equal ``x``) before the window would."""
        if not self.values or self.values[0][1] != x:
            msg = f"time_rolling: can only revert the oldest value, got {x!r}"
            raise CepError(msg)
        self.agg.revert(self.values.popleft()[1])

    def get(self) -> object:
        return self.agg.get()

    def copy(self) -> TimeRolling:
        c = TimeRolling.__new__(TimeRolling)
        c.agg, c.period, c.now, c.values = self.agg.copy(), self.period, self.now, deque(self.values)
        return c
