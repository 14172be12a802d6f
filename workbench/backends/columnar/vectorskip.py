"""``skip past last event`` for the vectorised replay: when the engine emits each found match, if at all.

Under a skip strategy the linear plan holds a completed match back while an earlier partial match
of its key is alive, emits held matches in start order once nothing earlier is alive, and each
emitted match discards every partial match and held match that started at or before its last
event (:mod:`workbench.engine.nfa.linear`). The vectorised plan knows every start's fate (it
completes at a row, dies at a row, or expires at ``t_start + W``) but not these interactions, so
this module replays them key by key over those fates only: a few moments per start, not every row.

A partial match expires when the key's next row routed to the pattern arrives ``W`` after its
start, or when its window timer fires (before the first row of any key later than the deadline,
or at the final flush): whichever comes first. Matches released then carry that time and go out
where the engine emits them: at that row's dispatch, or with that timer (timers in deadline
order, then in the order they were set: by the start row that set them, then pattern).
"""

from __future__ import annotations

import bisect
import math

import numpy as np
import numpy.typing as npt

from workbench.backends.columnar.vectorrows import Found, Mask, Rows

__all__ = [
    "EXPIRE",
    "ROW",
    "STEP",
    "TIMER",
    "Emission",
    "Time",
    "Times",
    "Where",
    "held_emissions",
    "time_at",
]

Time = int | float
#: where the engine emits a detection: sortable across patterns and keys
Where = tuple[int | float, ...]
#: a detection to build: where it goes out, its match index, its time
Emission = tuple[Where, int, Time]

#: a moment's phase at a row: window timers fire before the row is dispatched
TIMER, ROW = 0, 1
#: within a pattern's dispatch of a row: expiry by the row's time, then the step
EXPIRE, STEP = 0, 1

Times = npt.NDArray[np.float64]


def time_at(times: Times, row: int) -> Time:
    """A row's time as its event carries it (a whole float is an int)."""
    v = float(times[row])
    return int(v) if v.is_integer() else v


class _KeyRun:
    """One key's partial matches and held matches while its moments are replayed."""

    __slots__ = ("alive", "held", "last", "out", "tick")

    def __init__(self, last: list[int], out: list[Emission]) -> None:
        self.alive: dict[int, Time] = {}  # start row -> deadline, in start order
        self.held: list[tuple[int, int]] = []  # (start row, match), in start order
        self.last = last  # per match: its last row
        self.out = out
        self.tick = 0

    def expire(self, now: Time, where: Where) -> None:
        """Time reached ``now``: the partial matches whose window passed are gone."""
        for s in [s for s, d in self.alive.items() if d <= now]:
            del self.alive[s]
        self.release(now, where)

    def release(self, now: Time, where: Where) -> None:
        """Emit the held matches that nothing earlier blocks; each prunes up to its last row."""
        while self.held:
            start, match = self.held[0]
            if self.alive and next(iter(self.alive)) < start:
                return  # why: an earlier partial match may still complete first
            last = self.last[match]
            for s in [s for s in self.alive if s <= last]:
                del self.alive[s]
            self.held = [h for h in self.held if h[0] > last]
            self.out.append(((*where, self.tick), match, now))
            self.tick += 1


def held_emissions(
    found: Found, rows: Rows, window: Time | None, routed: Mask, pindex: int, row_times: Times
) -> list[Emission]:
    """The matches the engine emits under ``skip past last event``, with where and when.

    ``routed``: the rows (key order) the engine hands to the pattern; ``row_times``: row order.
    """
    moments = _moments(found, rows, window, routed, pindex, row_times)
    out: list[Emission] = []
    last = rows.keys.order[found.done].tolist()
    codes = rows.keys.codes[found.all_start]
    bounds = (np.flatnonzero(np.diff(codes)) + 1).tolist()
    for lo, hi in zip([0, *bounds], [*bounds, len(codes)], strict=True):
        state = _KeyRun(last, out)
        steps = sorted((m for j in range(lo, hi) for m in moments[j]), key=_by_place)
        k = 0
        while k < len(steps):
            where, now = steps[k][0], steps[k][1]
            done: list[tuple[int, int]] = []
            while k < len(steps) and steps[k][0] == where:  # one moment: one row or one timer
                _apply(state, steps[k], done)
                k += 1
            if where[1] == TIMER or where[3] == EXPIRE:
                state.expire(now, where)
            else:
                for item in done:
                    bisect.insort(state.held, item)
                state.release(now, where)
    return out


#: one start's change: where, time, what (-2 starts, -1 dies or expires, else completes: the
#: match's index), its start row, its deadline
Moment = tuple[Where, Time, int, int, Time]


def _by_place(m: Moment) -> Where:
    return m[0]


def _apply(state: _KeyRun, step: Moment, done: list[tuple[int, int]]) -> None:
    """One start's change at a row: it starts, dies or completes."""
    _, _, what, start, deadline = step
    if what == -2:
        state.alive[start] = deadline
    elif start in state.alive:  # why the test: a partial match that a match discarded is gone
        del state.alive[start]
        if what >= 0:
            done.append((start, what))


def _moments(
    found: Found, rows: Rows, window: Time | None, routed: Mask, pindex: int, row_times: Times
) -> list[list[Moment]]:
    """Per start: its moments."""
    order, n = rows.keys.order, len(rows.keys.order)
    expiry = _expiries(found, rows, window, routed, pindex, row_times)
    ends = found.died.copy()
    completes = found.match >= 0
    ends[completes] = found.done[found.match[completes]]
    out = []
    for j, s in enumerate(order[found.all_start].tolist()):
        t_s = time_at(row_times, s)
        d: Time = math.inf if window is None else t_s + window
        mine: list[Moment] = [((s, ROW, pindex, STEP), t_s, -2, s, d)]
        end = int(ends[j])
        if end < n:
            r = int(order[end])
            mine.append(((r, ROW, pindex, STEP), time_at(row_times, r), int(found.match[j]), s, d))
        place = expiry[j]
        if place is not None:
            mine.append((place, time_at(row_times, int(place[0])) if place[1] == ROW else d, -1, s, d))
        out.append(mine)
    return out


def _expiries(
    found: Found, rows: Rows, window: Time | None, routed: Mask, pindex: int, row_times: Times
) -> list[Where | None]:
    """Per start: where its window expiry happens (``None``: no window)."""
    start_pos = found.all_start
    if window is None:
        return [None] * len(start_pos)
    order, codes, times = rows.keys.order, rows.keys.codes, rows.times
    deadline = times[start_pos] + window
    hits = np.flatnonzero(routed)
    on_row = np.zeros(len(start_pos), dtype=bool)
    pos = np.zeros(len(start_pos), dtype=np.int64)
    if len(hits):
        query = np.empty(len(start_pos), dtype=np.complex128)
        query.real, query.imag = codes[start_pos], deadline
        at = np.searchsorted(rows.keyed[hits], query)
        pos = hits[at.clip(max=len(hits) - 1)]
        on_row = (at < len(hits)) & (codes[pos] == codes[start_pos]) & (times[pos] == deadline)
    later = np.searchsorted(row_times, deadline, side="right").tolist()
    # a timer's place among the timers of one deadline: set by the key's first start of that time
    same = np.ones(len(start_pos), dtype=bool)
    t = times[start_pos]
    same[1:] = (codes[start_pos][1:] != codes[start_pos][:-1]) | (t[1:] != t[:-1])
    setter = order[start_pos][np.maximum.accumulate(np.where(same, np.arange(len(same)), 0))].tolist()
    out: list[Where | None] = []
    for j, s in enumerate(order[start_pos].tolist()):
        if on_row[j]:
            out.append((int(order[pos[j]]), ROW, pindex, EXPIRE))
        else:
            out.append((later[j], TIMER, time_at(row_times, s) + window, setter[j], pindex))
    return out
