"""A brute-force reference matcher for sequence patterns, written from the semantics, not the NFA.

It enumerates every assignment of input events to stages (increasing positions, each stage taking
``min..max`` events or none when optional) and checks the rules of ``docs/sequences.md`` directly:

* each event satisfies its stage's condition;
* between two consecutive taken events at positions ``p < q`` where ``q`` belongs to stage ``W``
  (``W``'s own contiguity when ``q`` is ``W``'s first event, its inner contiguity otherwise):
  strict -> ``q == p + 1``; relaxed -> no event strictly between satisfies ``W``'s condition;
  non-deterministic relaxed -> anything;
* first-and-last window: ``t_last - t_first < within``.

Every complete assignment is a match (emitted when its last event arrives). For skip strategies the
reference replays time: a partial match is *alive* after event ``i`` if some stage it can still
wait for accepts the gap since its last event; completed matches queue up and are emitted earliest
start first (ties: earliest last event, then smallest event positions) once no alive partial match
started earlier; each emission discards everything that started at or before (``skip_to_next``,
``skip_past_last_event``) or strictly before (``skip_to_first``/``skip_to_last``) its pruning event.

Supported fragment: non-negated stages, no ``greedy``, no ``until``, conditions on the event only,
non-decreasing times. Conditions are plain Python predicates.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from workbench.engine.detection import Detection
from workbench.engine.nfa import SequencePattern
from workbench.testing import NFATestHarness

__all__ = ["Assignment", "OStage", "Oracle"]

#: a match / partial match: tuple of (position, stage index), positions increasing
Assignment = tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class OStage:
    """One stage for the oracle."""

    name: str
    cond: Callable[[object], bool]
    contiguity: str = "relaxed"  # strict | relaxed | any
    min: int = 1
    max: int | None = 1
    optional: bool = False
    inner: str = "relaxed"


class Oracle:
    """Reference semantics over one (single-key) stream of events with ``.time``."""

    def __init__(
        self,
        stages: Sequence[OStage],
        events: Sequence[object],
        times: Sequence[int | float],
        within: int | float | None = None,
    ) -> None:
        self.stages = list(stages)
        self.events = list(events)
        self.times = list(times)
        self.within = within
        self.ok = [[bool(s.cond(e)) for e in self.events] for s in self.stages]

    # ------------------------------------------------------------------ rules
    def _gap_ok(self, contiguity: str, stage: int, p: int, q: int) -> bool:
        """Events strictly between p and q (q may be len+... for 'alive' checks) are acceptable."""
        if contiguity == "strict":
            return q == p + 1
        if contiguity == "relaxed":
            return not any(self.ok[stage][k] for k in range(p + 1, q))
        return True

    def _in_window(self, start: int, pos: int) -> bool:
        return self.within is None or self.times[pos] - self.times[start] < self.within

    def _next_stages(self, stage: int, count: int) -> Iterator[tuple[int, str]]:
        """Stages the next taken event may belong to, with the contiguity that applies."""
        st = self.stages[stage]
        if st.max is None or count < st.max:
            yield stage, st.inner
        if count >= st.min:
            k = stage + 1
            while k < len(self.stages):
                yield k, self.stages[k].contiguity
                if not self.stages[k].optional:
                    break
                k += 1

    def _complete(self, stage: int, count: int) -> bool:
        if count < self.stages[stage].min:
            return False
        return all(s.optional for s in self.stages[stage + 1 :])

    def _first_stages(self) -> Iterator[int]:
        for k, s in enumerate(self.stages):
            yield k
            if not s.optional:
                break

    # ------------------------------------------------------------------ enumeration
    def prefixes(self) -> Iterator[tuple[Assignment, int, int]]:
        """Every valid non-empty prefix as (assignment, current stage, count in that stage)."""
        n = len(self.events)

        def extend(assign: Assignment, stage: int, count: int) -> Iterator[tuple[Assignment, int, int]]:
            yield assign, stage, count
            p = assign[-1][0]
            start = assign[0][0]
            for nxt, contiguity in self._next_stages(stage, count):
                for q in range(p + 1, n):
                    if not self._in_window(start, q):
                        break
                    if not self._gap_ok(contiguity, nxt, p, q):
                        break
                    if self.ok[nxt][q]:
                        c = count + 1 if nxt == stage else 1
                        yield from extend((*assign, (q, nxt)), nxt, c)

        for first in self._first_stages():
            for q in range(n):
                if self.ok[first][q]:
                    yield from extend(((q, first),), first, 1)

    def matches(self) -> list[Assignment]:
        """All matches without skipping (a multiset; each assignment once)."""
        return [a for a, stage, count in self.prefixes() if self._complete(stage, count)]

    def _alive(self, assign: Assignment, stage: int, count: int, seen: int, now: int) -> bool:
        """Whether the partial match exists after event ``seen`` once time is at event ``now``."""
        p = assign[-1][0]
        if p > seen or not self._in_window(assign[0][0], now):
            return False
        return any(self._gap_ok(c, nxt, p, seen + 1) for nxt, c in self._next_stages(stage, count))

    def skip_matches(self, kind: str, target: str | None = None) -> list[Assignment]:
        """Matches emitted under a skip strategy, in emission order."""
        if kind == "no_skip":
            return sorted(self.matches(), key=lambda a: (a[-1][0], a[0][0], a))
        entries = [
            Entry(
                a,
                self._complete(s, c),
                functools.partial(self._alive, a, s, c),
            )
            for a, s, c in self.prefixes()
        ]
        names = [st.name for st in self.stages]
        return replay(len(self.events), entries, kind, target, lambda a: a, lambda i: names[i])


@dataclass(frozen=True)
class Entry:
    """One valid prefix for the skip replay: its assignment, whether it is a match, when it lives."""

    assignment: Assignment
    complete: bool
    alive: Callable[[int, int], bool]


def replay(
    n: int, entries: Sequence[Entry], kind: str, target: str | None,
    tie: Callable[[Assignment], object], name: Callable[[int], str],
) -> list[Assignment]:  # fmt: skip
    """The skip-strategy replay over ``n`` events (see the module docstring); ``tie`` orders matches
    with the same first and last event, ``name`` gives a stage index's name."""
    inclusive = kind in ("skip_to_next", "skip_past_last_event")
    killed: int | None = None  # starts <= killed (inclusive) or < killed are gone

    def dead(start: int) -> bool:
        if killed is None:
            return False
        return start <= killed if inclusive else start < killed

    queue: list[Assignment] = []
    out: list[Assignment] = []

    def drain(seen: int, now: int) -> None:
        nonlocal killed, queue
        while queue:
            queue.sort(key=lambda a: (a[0][0], a[-1][0], tie(a)))
            m = queue[0]
            alive = [
                e.assignment[0][0] for e in entries if not dead(e.assignment[0][0]) and e.alive(seen, now)
            ]
            if alive and min(alive) < m[0][0]:
                return
            queue.pop(0)
            out.append(m)
            pruning = _pruning(m, kind, target, name)
            if pruning is not None:
                killed = pruning if killed is None else max(killed, pruning)
                queue = [a for a in queue if not dead(a[0][0])]

    for i in range(n):
        if i > 0:
            drain(i - 1, i)  # time advances to event i: windows expire first
        queue.extend(
            e.assignment
            for e in entries
            if e.complete and e.assignment[-1][0] == i and not dead(e.assignment[0][0])
        )
        drain(i, i)
    return out


def _pruning(m: Assignment, kind: str, target: str | None, name: Callable[[int], str]) -> int | None:
    if kind == "skip_to_next":
        return m[0][0]
    if kind == "skip_past_last_event":
        return m[-1][0]
    positions = [p for p, s in m if name(s) == target]
    if not positions:
        return None
    return positions[0] if kind == "skip_to_first" else positions[-1]


class ChoiceOracle:
    """Reference semantics of a pattern with alternations: the union of its linear expansions.

    ``expansions`` are the stage lists of every way through the alternations (each a plain
    :class:`Oracle` pattern), most preferred first (SQL's lexicographic order: the left branch,
    permutations in lexicographic order). A match is one expansion's match; its stages are
    numbered by ``names`` (every stage name of the pattern, in pattern order). Matches with the
    same first and last event are ordered by their (position, stage number) sequences, so at equal
    positions the left branch (the lexicographically first order) comes first.
    """

    def __init__(
        self, expansions: Sequence[Sequence[OStage]], names: Sequence[str], events: Sequence[object],
        times: Sequence[int | float], within: int | float | None = None,
    ) -> None:  # fmt: skip
        self.names = list(names)
        self.oracles = [Oracle(stages, events, times, within) for stages in expansions]
        self.n = len(events)

    def _global(self, k: int, a: Assignment) -> Assignment:
        stages = self.oracles[k].stages
        return tuple((p, self.names.index(stages[s].name)) for p, s in a)

    def matches(self) -> list[Assignment]:
        """All matches without skipping (stage numbers index ``names``)."""
        return [self._global(k, a) for k, o in enumerate(self.oracles) for a in o.matches()]

    def skip_matches(self, kind: str, target: str | None = None) -> list[Assignment]:
        """Matches emitted under a skip strategy, in emission order."""
        if kind == "no_skip":
            return sorted(self.matches(), key=lambda a: (a[-1][0], a[0][0], a))
        entries: list[Entry] = []
        for k, o in enumerate(self.oracles):
            for a, s, c in o.prefixes():
                alive = functools.partial(o._alive, a, s, c)
                entries.append(Entry(self._global(k, a), o._complete(s, c), alive))
        return replay(self.n, entries, kind, target, lambda a: a, lambda i: self.names[i])


# ---------------------------------------------------------------------- helpers for the NFA tests


def feed(pattern: SequencePattern, types: str | Sequence[str], times: Sequence[int] | None = None,
         **fields: Sequence[Any]) -> list[Detection]:  # fmt: skip
    """Run ``pattern`` in the NFA harness over events of the given types (time = index by default)."""
    harness = NFATestHarness(pattern)
    for i, t in enumerate(types):
        extra = {k: v[i] for k, v in fields.items()}
        harness.feed({"type": t, "time": i if times is None else times[i], **extra})
    return harness.detections


def seqs(detections: list[Detection], kind: str = "match") -> list[tuple[int, ...]]:
    """Event positions of each detection of ``kind``, in emission order."""
    return [d.seqs for d in detections if d.kind == kind]


def is_type(*types: str) -> str:
    """A condition string accepting these event types."""
    return f"e.type in {tuple(types)!r}"
