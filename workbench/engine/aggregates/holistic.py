"""Holistic aggregates that keep the values themselves: collect, count by key, top n."""

from __future__ import annotations

import heapq
from collections.abc import Hashable
from typing import TypeVar

from workbench.engine.aggregates.base import AggregateBase, Ordered, positive
from workbench.errors import CepError

K = TypeVar("K")  # a counted value (the key of the counts)

__all__ = ["Collect", "CountBy", "TopN"]


class Collect(AggregateBase):
    """All non-null values in arrival order (holistic: O(n) memory and copy). Revert removes the oldest
    equal value. With ``keep_nulls`` the ``None`` values are kept too (Prova's ``SortedAccumulator``).

    >>> c = Collect(); c.update(2); c.update(None); c.update(1); c.get()
    [2, 1]
    >>> c = Collect(keep_nulls=True); c.update(None); c.get()
    [None]
    """

    __slots__ = ("keep_nulls", "values")

    def __init__(self, keep_nulls: bool = False) -> None:
        self.keep_nulls = keep_nulls
        self.values: list[object] = []

    def update(self, x: object) -> None:
        if x is not None or self.keep_nulls:
            self.values.append(x)

    def revert(self, x: object) -> None:
        if x is None and not self.keep_nulls:
            return
        try:
            self.values.remove(x)
        except ValueError:
            msg = f"collect: {x!r} was never added (or already reverted)"
            raise CepError(msg) from None

    def get(self) -> list[object]:
        return list(self.values)

    def copy(self) -> Collect:
        c = Collect.__new__(Collect)
        c.keep_nulls, c.values = self.keep_nulls, list(self.values)
        return c


class CountBy(AggregateBase):
    """Occurrences per key (Prova's ``MapCounter``): ``update(k)`` counts ``k``.

    ``get()`` is a ``{key: count}`` dict in first-seen order (keys whose count fell to 0 are gone);
    :attr:`total` is the number of counted keys.

    >>> c = CountBy()
    >>> for k in "abcab": c.update(k)
    >>> c.get(), c.total
    ({'a': 2, 'b': 2, 'c': 1}, 5)
    """

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts: dict[Hashable, int] = {}
        self.total = 0

    def update(self, x: Hashable) -> None:
        self.counts[x] = self.counts.get(x, 0) + 1
        self.total += 1

    def revert(self, x: Hashable) -> None:
        _discount(self.counts, x, "count_by: key {!r} was never counted (or already reverted)")
        self.total -= 1

    def get(self) -> dict[Hashable, int]:
        return dict(self.counts)

    def get_with(self, x: Hashable) -> dict[Hashable, int]:
        out = dict(self.counts)
        out[x] = out.get(x, 0) + 1
        return out

    def copy(self) -> CountBy:
        c = CountBy.__new__(CountBy)
        c.counts, c.total = dict(self.counts), self.total
        return c


class TopN(AggregateBase):
    """The ``n`` largest non-null values, largest first (``largest=False``: the ``n`` smallest).

    Keeps a counted multiset of every value in the window, so any value can be reverted.

    >>> t = TopN(2)
    >>> for x in [5, 1, 9, 7]: t.update(x)
    >>> t.get()
    [9, 7]
    """

    __slots__ = ("counts", "largest", "n")

    def __init__(self, n: int, largest: bool = True) -> None:
        positive(n, "n", "top_n", integer=True)
        self.n = n
        self.largest = largest
        self.counts: dict[Ordered, int] = {}

    def update(self, x: Ordered | None) -> None:
        if x is not None:
            self.counts[x] = self.counts.get(x, 0) + 1

    def revert(self, x: Ordered | None) -> None:
        if x is not None:
            _discount(self.counts, x, "top_n: {!r} was never added (or already reverted)")

    def get(self) -> list[Ordered]:
        pick = heapq.nlargest if self.largest else heapq.nsmallest
        out: list[Ordered] = []
        for value in pick(self.n, self.counts):
            out.extend([value] * min(self.counts[value], self.n - len(out)))
            if len(out) >= self.n:
                break
        return out

    def copy(self) -> TopN:
        c = TopN.__new__(TopN)
        c.n, c.largest, c.counts = self.n, self.largest, dict(self.counts)
        return c


def _discount(counts: dict[K, int], x: K, missing: str) -> None:
    """Count ``x`` once less (forget it at zero); ``missing`` formats the error when it was not counted."""
    have = counts.get(x, 0)
    if have == 0:
        raise CepError(missing.format(x))
    if have == 1:
        del counts[x]
    else:
        counts[x] = have - 1
