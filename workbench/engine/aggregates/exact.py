"""Exact window aggregates: sum, avg, var and std that a sliding window can revert without drift.

A window (:class:`~workbench.engine.aggregates.Rolling`, ``TimeRolling``,
:class:`~workbench.engine.aggregates.session.Session`) removes the values that leave it. The scalar
:class:`~workbench.engine.aggregates.Sum` removes one by subtraction, so rounding stays behind: after
``1e20`` has left ``[1e20, 1.0]`` the sum reads ``0.0``, and an ``inf`` leaves ``inf - inf`` (NaN)
for as long as the window holds any value. These aggregates keep what a recomputation over the
window's values would need instead, in O(1) per update and revert:

* the finite values' sum as an exact integer: every finite float is a multiple of ``2**-1074``, so
  ``x * 2**1074`` is an int and adding or removing it is exact (for var and std, also the squares
  times ``2**2148``). A read rounds once, correctly (as ``math.fsum`` does); a window of ints sums
  to an int;
* the non-finite values as counts: a window holding ``+inf`` sums to ``inf``, ``+inf`` and ``-inf``
  or a NaN to NaN, and once they have left the finite sum is exact again.

>>> from workbench.engine.aggregates import Rolling
>>> r = Rolling(WindowSum(), 2)
>>> for x in [1e20, 1.0, 1.0]: r.update(x)
>>> r.get()
2.0
>>> r = Rolling(WindowAvg(), 2)
>>> for x in [float("inf"), 2.0, 3.0]: r.update(x)
>>> r.get()
2.5
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Literal, Self

from workbench.engine.aggregates.base import Aggregate, AggregateBase
from workbench.errors import CepError, PatternError

__all__ = ["WINDOW_AGGREGATES", "WindowAvg", "WindowStd", "WindowSum", "WindowVar", "window_aggregate"]

#: ``2**-SCALE`` is the smallest positive float: any finite float times ``2**SCALE`` is an integer
SCALE = 1074
#: bits of a square root computed before its one rounding (as ``statistics.stdev``: 2 * 53 + 3)
_SQRT_BITS = 109


def scaled(x: float, power: Literal[1, 2] = 1) -> int:
    """``x ** power * 2 ** (power * SCALE)`` exactly (``x`` finite; ``power`` 1 or 2).

    >>> scaled(0.5) == 2 ** 1073, scaled(3) == 3 << SCALE, scaled(-0.5, 2) == 2 ** 2146
    (True, True, True)
    """
    if isinstance(x, int):
        num, exponent = x, 0
    else:
        num, den = x.as_integer_ratio()  # den is a power of two, at most 2**SCALE
        exponent = den.bit_length() - 1
    if power == 2:
        num *= num
    return num << power * (SCALE - exponent)


def ratio(num: int, den: int) -> float:
    """``num / den`` (``den > 0``) correctly rounded (int division rounds once); too large: signed inf."""
    try:
        return num / den
    except OverflowError:  # why: a float sum would have overflowed to inf too
        return math.inf if num > 0 else -math.inf


def sqrt_ratio(num: int, den: int) -> float:
    """``sqrt(num / den)`` correctly rounded (``num >= 0``, ``den > 0``), as ``statistics.stdev``.

    The root is taken in integers with ``_SQRT_BITS`` bits and rounded to odd, so the final
    division rounds once.

    >>> sqrt_ratio(2, 1) == 2 ** 0.5, sqrt_ratio(9, 4)
    (True, 1.5)
    """
    q = (num.bit_length() - den.bit_length() - _SQRT_BITS) // 2
    if q >= 0:
        root, scale = _isqrt_odd(num, den << 2 * q) << q, 1
    else:
        root, scale = _isqrt_odd(num << -2 * q, den), 1 << -q
    return ratio(root, scale)


def _isqrt_odd(num: int, den: int) -> int:
    """``sqrt(num / den)`` as an integer, rounded to odd (inexact roots get their last bit set)."""
    root = math.isqrt(num // den)
    return root | (root * root * den != num)


class WindowSum(AggregateBase):
    """Exact sum of the non-null numbers (see the module); ``0`` when there is none, as ``sum``.

    >>> s = WindowSum(); s.update(1); s.update(2); s.get()
    3
    >>> s.update(float("-inf")); s.get()
    -inf
    >>> s.revert(1); s.revert(2); s.revert(float("-inf")); s.get()
    0
    """

    __slots__ = ("floats", "n", "nan", "neg_inf", "pos_inf", "total")

    n: int  # non-null values, finite or not
    floats: int  # finite floats among them (none: the sum is an int)
    total: int  # the finite values' sum times 2**SCALE
    pos_inf: int
    neg_inf: int
    nan: int

    def __init__(self) -> None:
        self.n = self.floats = self.total = 0
        self.pos_inf = self.neg_inf = self.nan = 0

    def update(self, x: float | None) -> None:
        if x is not None:
            self._add(x, 1)

    def revert(self, x: float | None) -> None:
        if x is None:
            return
        if self.n == 0:
            msg = f"{type(self).__name__}: revert without a matching update"
            raise CepError(msg)
        self._add(x, -1)

    def _add(self, x: float, sign: int) -> None:
        """Count ``x`` in (``sign`` 1) or out (-1)."""
        self.n += sign
        if isinstance(x, int):
            self.total += sign * scaled(x)
        elif math.isfinite(x):
            self.floats += sign
            self.total += sign * scaled(x)
        elif x > 0:  # why: counted apart from the finite values, so that they can leave again
            self.pos_inf += sign
        elif x < 0:
            self.neg_inf += sign
        else:
            self.nan += sign

    def non_finite(self) -> float | None:
        """What the non-finite values make of the window (``inf``, ``-inf``, NaN), ``None``: none held."""
        if self.nan or (self.pos_inf and self.neg_inf):
            return math.nan
        if self.pos_inf:
            return math.inf
        return -math.inf if self.neg_inf else None

    def get(self) -> float | None:
        special = self.non_finite()
        if special is not None:
            return special
        if not self.floats:  # why: ints only: an int, exactly (the scaled total is a multiple of 2**SCALE)
            return self.total >> SCALE
        return ratio(self.total, 1 << SCALE)

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        for name in WindowSum.__slots__:
            setattr(c, name, getattr(self, name))
        return c


class WindowAvg(WindowSum):
    """Mean of the non-null numbers, correctly rounded; ``None`` when there is none.

    >>> a = WindowAvg(); a.update(1); a.update(2); a.get()
    1.5
    """

    __slots__ = ()

    def get(self) -> float | None:
        if not self.n:
            return None
        special = self.non_finite()
        return special if special is not None else ratio(self.total, self.n << SCALE)


class WindowVar(WindowSum):
    """Variance of the non-null numbers from exact sums, correctly rounded; ``None`` while ``n <= ddof``.

    ``ddof`` as :class:`~workbench.engine.aggregates.Var` (1: sample, 0: population). A window
    holding a non-finite value reads NaN.

    >>> v = WindowVar(); v.update(1.0); v.update(2.0); v.update(3.0); v.get()
    1.0
    """

    __slots__ = ("ddof", "squares")

    ddof: int
    squares: int  # the finite values' sum of squares times 2**(2 * SCALE)

    def __init__(self, ddof: int = 1) -> None:
        if ddof not in (0, 1):
            msg = f"var/std: ddof must be 0 or 1, got {ddof!r}"
            raise PatternError(msg, element="var")
        super().__init__()
        self.ddof = ddof
        self.squares = 0

    def _add(self, x: float, sign: int) -> None:
        super()._add(x, sign)
        if isinstance(x, int) or math.isfinite(x):
            self.squares += sign * scaled(x, 2)

    def _spread(self) -> tuple[int, int] | float | None:
        """``n * sum(x**2) - sum(x)**2`` and ``n * (n - ddof)`` (scaled alike), or the result itself."""
        n = self.n
        if n <= self.ddof:
            return None
        if self.non_finite() is not None:  # why: inf - inf, as a recomputation would find
            return math.nan
        return n * self.squares - self.total * self.total, n * (n - self.ddof) << 2 * SCALE

    def get(self) -> float | None:
        spread = self._spread()
        return ratio(*spread) if isinstance(spread, tuple) else spread

    def copy(self) -> Self:
        c = super().copy()
        c.ddof, c.squares = self.ddof, self.squares
        return c


class WindowStd(WindowVar):
    """Standard deviation: the correctly rounded square root of :class:`WindowVar`'s exact ratio.

    >>> s = WindowStd(ddof=0); s.update(1.0); s.update(3.0); s.get()
    1.0
    """

    __slots__ = ()

    def get(self) -> float | None:
        spread = self._spread()
        return sqrt_ratio(*spread) if isinstance(spread, tuple) else spread


#: the window functions whose scalar aggregate would drift under reverts, by name
WINDOW_AGGREGATES: dict[str, Callable[[], Aggregate]] = {
    "sum": WindowSum,
    "avg": WindowAvg,
    "var": WindowVar,
    "std": WindowStd,
}


def window_aggregate(function: str) -> Aggregate | None:
    """A fresh exact aggregate for the window function ``function``; ``None``: the scalar one is exact.

    ``count``, ``min`` and ``max`` never round, so their usual aggregates serve windows as they are.

    >>> type(window_aggregate("avg")).__name__, window_aggregate("max")
    ('WindowAvg', None)
    """
    factory = WINDOW_AGGREGATES.get(function)
    return None if factory is None else factory()
