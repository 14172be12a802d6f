"""Scalar aggregates with O(1) state: count, sum, avg, var and std."""

from __future__ import annotations

import math
from typing import Self

from workbench.engine.aggregates.base import AggregateBase
from workbench.errors import CepError, PatternError

__all__ = ["Avg", "Count", "Std", "Sum", "Var"]


class Count(AggregateBase):
    """Number of non-null values (SQL ``COUNT(x)``; pass the event itself for ``COUNT(*)``).

    >>> c = Count(); c.update(1); c.update(None); c.get()
    1
    """

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def update(self, x: object) -> None:
        if x is not None:
            self.n += 1

    def revert(self, x: object) -> None:
        if x is not None:
            if self.n == 0:
                msg = "count: revert without a matching update"
                raise CepError(msg)
            self.n -= 1

    def get(self) -> int:
        return self.n

    def get_with(self, x: object) -> int:
        return self.n + (x is not None)

    def copy(self) -> Count:
        c = Count.__new__(Count)
        c.n = self.n
        return c


class Sum(AggregateBase):
    """Sum of the non-null values, in arrival order; ``None`` when there is none.

    >>> s = Sum(); s.update(1.5); s.update(2); s.get()
    3.5
    """

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total: float = 0
        self.n = 0

    def update(self, x: float | None) -> None:
        if x is not None:
            self.total += x
            self.n += 1

    def revert(self, x: float | None) -> None:
        if x is not None:
            if self.n == 0:
                msg = "sum: revert without a matching update"
                raise CepError(msg)
            self.n -= 1
            self.total = self.total - x if self.n else 0

    def get(self) -> float | None:
        return self.total if self.n else 0

    def get_with(self, x: float | None) -> float | None:
        if x is None:
            return self.get()
        return self.total + x

    def copy(self) -> Sum:
        c = Sum.__new__(Sum)
        c.total, c.n = self.total, self.n
        return c


class Avg(Sum):
    """Arithmetic mean of the non-null values (``sum / count``); ``None`` when there is none.

    >>> a = Avg(); a.update(1); a.update(2); a.get()
    1.5
    """

    __slots__ = ()

    def get(self) -> float | None:
        return self.total / self.n if self.n else None

    def get_with(self, x: float | None) -> float | None:
        if x is None:
            return self.get()
        return (self.total + x) / (self.n + 1)

    def copy(self) -> Avg:
        c = Avg.__new__(Avg)
        c.total, c.n = self.total, self.n
        return c


class Var(AggregateBase):
    """Variance of the non-null values by Welford's algorithm (numerically stable), with revert.

    ``ddof=1`` (default) is the sample variance (pandas ``var()``, ``statistics.variance``, SQL
    ``VAR_SAMP``); ``ddof=0`` the population variance. ``None`` while ``count <= ddof``.

    >>> v = Var(); v.update(1.0); v.update(2.0); v.update(3.0); v.get()
    1.0
    """

    __slots__ = ("ddof", "m2", "mean", "n")

    def __init__(self, ddof: int = 1) -> None:
        if ddof not in (0, 1):
            msg = f"var/std: ddof must be 0 or 1, got {ddof!r}"
            raise PatternError(msg, element="var")
        self.ddof = ddof
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, x: float | None) -> None:
        if x is None:
            return
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    def revert(self, x: float | None) -> None:
        if x is None:
            return
        if self.n == 0:
            msg = "var: revert without a matching update"
            raise CepError(msg)
        if self.n == 1:
            self.n, self.mean, self.m2 = 0, 0.0, 0.0
            return
        old_mean = self.mean
        self.n -= 1
        self.mean = (old_mean * (self.n + 1) - x) / self.n
        self.m2 = max(self.m2 - (x - self.mean) * (x - old_mean), 0.0)

    def _result(self, n: int, m2: float) -> float | None:
        if n <= self.ddof:
            return None
        # why: Welford's m2 never falls below 0 but by overflow (1e308 then -1e308: inf * -inf),
        # where the spread of finite values is past the largest float: infinite, as a window says
        return m2 / (n - self.ddof) if m2 >= 0 or m2 != m2 else math.inf

    def get(self) -> float | None:
        return self._result(self.n, self.m2)

    def get_with(self, x: float | None) -> float | None:
        if x is None:
            return self.get()
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        return self._result(n, self.m2 + delta * (x - mean))

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        c.ddof, c.n, c.mean, c.m2 = self.ddof, self.n, self.mean, self.m2
        return c


class Std(Var):
    """Standard deviation: the square root of :class:`Var` (same ``ddof``).

    >>> s = Std(ddof=0); s.update(1.0); s.update(3.0); s.get()
    1.0
    """

    __slots__ = ()

    def _result(self, n: int, m2: float) -> float | None:
        v = super()._result(n, m2)
        return None if v is None else math.sqrt(v)
