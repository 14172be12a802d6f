"""What the vectorised replay plans share: the rows regrouped by key, and the matches found."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from workbench.backends.columnar.chain import edge_bounds
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.prune import KeyOrder
from workbench.backends.columnar.vector import ColumnSource
from workbench.engine.nfa.conditions import Cond

__all__ = ["Found", "Index", "Mask", "Matches", "Rows", "since", "within"]

Mask = npt.NDArray[np.bool_]
Index = npt.NDArray[np.int64]


@dataclass(slots=True)
class Rows:
    """The replay's rows regrouped by key, with what every pattern's lookups share."""

    keys: KeyOrder
    times: npt.NDArray[np.float64]  # key order
    key_end: Index  # per position: the first position of the next key
    keyed: npt.NDArray[np.complex128]  # (key code, time) per position, lexicographically sorted
    column: ColumnSource  # over row order
    type_codes: Index  # row order
    type_uniques: list[object]

    @classmethod
    def of(cls, cols: EventColumns) -> Rows:
        keys = KeyOrder(cols.key_codes())
        type_codes, type_uniques = cols.type_codes()
        times = keys.sort(cols.attrs["time"].to_numpy(dtype=np.float64))
        n = len(times)
        firsts = np.flatnonzero(keys.first)
        ends = np.append(firsts[1:], n).astype(np.int64)
        key_end = ends[np.cumsum(keys.first) - 1] if n else np.zeros(0, dtype=np.int64)
        keyed = np.empty(n, dtype=np.complex128)
        keyed.real = keys.codes
        keyed.imag = times
        return cls(keys, times, key_end, keyed, cols.column, type_codes, type_uniques)

    def types_mask(self, types: frozenset[str]) -> Mask:
        """The rows (row order) of the given types."""
        table = np.fromiter((u in types for u in self.type_uniques), dtype=bool, count=len(self.type_uniques))
        return table[self.type_codes]

    def next_true(self, mask: Mask) -> Index:
        """Per position ``p``: the first later position of the same key where ``mask`` holds (else n)."""
        n = len(mask)
        idx = np.where(mask, np.arange(n, dtype=np.int64), n)
        first_from = np.minimum.accumulate(idx[::-1])[::-1]
        out = np.full(n, n, dtype=np.int64)
        out[:-1] = first_from[1:]
        out[out >= self.key_end] = n
        return out

    def exact(self, cond: Cond, types: dict[frozenset[str], Mask]) -> Mask | None:
        """A condition on every row, key order (``None``: not exactly vectorisable)."""
        b = edge_bounds(cond, types, self.types_mask, self.column, len(self.times))
        return self.keys.sort(b.low) if b.exact else None

    def instances(self, start: Mask) -> Index:
        """The instance id of each start row (key order ``start``): its rank among its key's starts."""
        n = len(start)
        before: Index = np.cumsum(start, dtype=np.int64) - start
        key_first = np.maximum.accumulate(np.where(self.keys.first, np.arange(n), 0))
        return (before - before[key_first])[np.flatnonzero(start)] + 1

    def window_end(self, pos: Index, window: float | None) -> Index:
        """Per start: its key's first position with ``t >= t_start + window`` (or the key's end)."""
        if window is None:
            return self.key_end[pos]
        query = np.empty(len(pos), dtype=np.complex128)
        query.real = self.keys.codes[pos]
        query.imag = self.times[pos] + window
        return np.searchsorted(self.keyed, query, side="left").astype(np.int64)


def within(counts: Index) -> Index:
    """``0, 1, ..., c - 1`` for each count ``c``, one after another (the offsets of ``np.repeat``)."""
    return np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)


def since(total: Index, gone: Index) -> Index:
    """``total[i] - total[gone[i] - 1]`` (``total`` a running sum; nothing gone: ``total[i]``)."""
    return total - np.where(gone > 0, total[np.maximum(gone - 1, 0)], 0)


@dataclass(slots=True)
class Found:
    """One pattern's matches: per match its completion position, start position and stage positions."""

    done: Index
    start: Index
    stages: list[Index]
    inst: Index
    #: every start's position (not only the completed ones')
    all_start: Index


@dataclass(slots=True)
class Matches:
    """One pattern's matches in a common form: per match its completion and start positions, its
    instance id, tie-breaks among one start's matches completed on one row (least significant
    first, as ``np.lexsort`` reads them) and its rows (``flat[bounds[i]:bounds[i + 1]]``, key order
    positions), with ``channels(len)`` naming them. ``all_start``: every start's position;
    ``weights``: per start, a bound of the partial matches it holds at once (``None``: one)."""

    done: Index
    start: Index
    inst: Index
    ties: list[Index]
    flat: Index
    bounds: Index
    channels: Callable[[int], tuple[str, ...]]
    all_start: Index
    weights: Index | None = None
