"""The vectorised plans' matches, merged in the engine's order, as a table and lazy detections.

Every pattern's :class:`~workbench.backends.columnar.vectorrows.Matches` are merged into the order
the engine emits them: by completing row, then pattern, then start row, then the pattern's own
tie-breaks. The result is a :class:`~workbench.engine.matchtable.MatchTable` (the columns a
detections DataFrame needs, from the event columns, with no event built) and the detections
themselves, built from it only when asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.vectorrows import Index, Matches, Rows, within
from workbench.engine.detection import Detection, new_match
from workbench.engine.gcpause import gc_paused
from workbench.engine.matchtable import LazyDetections, MatchTable

__all__ = ["build_detections"]

_NONE = np.zeros(0, dtype=np.int64)


def build_detections(
    names: Sequence[str], rows: Rows, cols: EventColumns, found: list[Matches]
) -> LazyDetections:
    """The detections of every pattern's matches (``names[p]`` is pattern ``p``'s), in the engine's order."""
    order = rows.keys.order
    done = np.concatenate([order[f.done] for f in found] or [_NONE])
    start = np.concatenate([order[f.start] for f in found] or [_NONE])
    pindex = np.concatenate([np.full(len(f.done), p, dtype=np.int64) for p, f in enumerate(found)] or [_NONE])
    most = max((len(f.ties) for f in found), default=0)
    ties = [
        np.concatenate(
            [f.ties[i] if i < len(f.ties) else np.zeros(len(f.done), dtype=np.int64) for f in found]
        )
        for i in range(most)
    ]
    sequence = np.lexsort((*ties, start, pindex, done))
    flat, bounds = _in_order(found, order, sequence)
    done, start, pindex = done[sequence], start[sequence], pindex[sequence]
    lengths = np.diff(bounds)
    inst = np.concatenate([f.inst for f in found] or [_NONE])[sequence]
    with gc_paused():  # why: a few tuples per match, none in a cycle
        table = _table(names, cols, found, flat, bounds, lengths, done, start, pindex, inst)

    def build() -> list[Detection]:
        used, where = np.unique(flat, return_inverse=True)
        events = cols.events_at(used)
        path = list(map(events.__getitem__, where.tolist()))
        cuts = bounds.tolist()
        with gc_paused():
            return [
                new_match(p, k, i, "match", t, tuple(path[a:b]), c)
                for p, k, i, t, a, b, c in zip(
                    table.pattern,
                    table.key,
                    table.instance,
                    table.time,
                    cuts[:-1],
                    cuts[1:],
                    table.channels,
                    strict=True,
                )
            ]

    return LazyDetections(table, build)


def _in_order(found: list[Matches], order: Index, sequence: Index) -> tuple[Index, Index]:
    """Every match's rows (row order), match after match in output order, and where each begins."""
    flats, starts, offset = [], [], 0
    for f in found:
        flats.append(order[f.flat])
        starts.append(f.bounds[:-1] + offset)
        offset += len(f.flat)
    flat_all = np.concatenate(flats or [_NONE])
    begin = np.concatenate(starts or [_NONE])
    lengths = np.concatenate([np.diff(f.bounds) for f in found] or [_NONE])
    begin, lengths = begin[sequence], lengths[sequence]
    bounds = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=bounds[1:])
    return flat_all[np.repeat(begin, lengths) + within(lengths)], bounds


def _table(
    names: Sequence[str], cols: EventColumns, found: list[Matches],
    flat: Index, bounds: Index, lengths: Index, done: Index, start: Index, pindex: Index, inst: Index,
) -> MatchTable:  # fmt: skip
    """The columns of the matches, read from the event columns as the events would carry them."""
    cuts = list(map(slice, bounds[:-1].tolist(), bounds[1:].tolist()))
    type_codes, type_uniques = cols.type_codes()
    type_list = np.asarray(type_uniques, dtype=object)[type_codes[flat]].tolist()
    # why map: one C-level pass per column, no Python code per detection
    seqs = list(map(tuple, map(flat.tolist().__getitem__, cuts)))
    types = list(map(tuple, map(type_list.__getitem__, cuts)))
    # each (pattern, length) names its channels once
    combo = pindex * (int(lengths.max(initial=0)) + 1) + lengths
    kinds, which = np.unique(combo, return_inverse=True)
    first = np.zeros(len(kinds), dtype=np.int64)
    first[which[::-1]] = np.arange(len(which) - 1, -1, -1)
    named = np.empty(len(kinds), dtype=object)
    for i, j in enumerate(first.tolist()):
        named[i] = found[int(pindex[j])].channels(int(lengths[j]))
    return MatchTable(
        pattern=np.asarray(list(names), dtype=object)[pindex].tolist(),
        key=cols.keys_at(start),
        instance=inst.tolist(),
        time=cols.times_at(done),
        seqs=seqs,
        types=types,
        channels=named[which].tolist(),
        times=cols.times_at(flat),
    )
