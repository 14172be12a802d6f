"""Pages of timeline rows: a selection of instances cut into pages of at most ``page_rows`` rows.

At real scale (hundreds or thousands of instances) one panel cannot hold every row readably, so
the timeline shows one page at a time. Instances are ordered by start (then key, pattern and
number), so a page is a slice of time and consecutive pages follow each other; each instance keeps
all its rows (its own and its channels' or stages') on one page. Pages are cut over every instance
the filters select, not only those started by the cursor, so scrubbing never moves rows between
pages and the x range of a page (:func:`page_extent`) stays put while playing.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

from workbench.widgets.rows import Instance

__all__ = ["page_extent", "paginate"]


def paginate(
    instances: Sequence[Instance], keys: Mapping[Hashable, int], page_rows: int
) -> list[list[Instance]]:
    """The instances in start order, cut into pages of at most ``page_rows`` rows (at least one
    instance a page, however many rows it has).

    >>> from workbench.widgets.rows import Instance
    >>> insts = [Instance("p", "k", i, float(i), elements=["a", "b"]) for i in range(5)]
    >>> [[i.instance for i in page] for page in paginate(insts, {"k": 0}, 6)]
    [[0, 1], [2, 3], [4]]
    """
    ordered = sorted(instances, key=lambda i: (i.start, keys.get(i.key, 0), i.pattern, i.instance))
    pages: list[list[Instance]] = []
    rows = 0
    for inst in ordered:
        need = 1 + len(inst.elements)
        if not pages or rows + need > page_rows:
            pages.append([])
            rows = 0
        pages[-1].append(inst)
        rows += need
    return pages


def page_extent(page: Sequence[Instance], horizon: float) -> tuple[float, float]:
    """The times a page's instances span: first start to the last end (open ones: ``horizon``)."""
    if not page:
        return (math.inf, -math.inf)
    first = min(i.start for i in page)
    last = max(max(i.last, i.end if i.end is not None else horizon) for i in page)
    return (first, last)
