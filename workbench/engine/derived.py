"""Detections as events: a sequence that says ``emit into TYPE`` feeds the other patterns of its engine.

Each detection of such a pattern (a match, or a timeout when the pattern emits timeouts) becomes
an :class:`~workbench.engine.events.Event` of type ``TYPE``:

* its fields are the detection's measures, by name (a timeout's measure that could not be
  computed is ``None``);
* its ``key`` is the detection's key, so a consumer partitioned the same way sees it under the
  same key;
* its ``time`` is the detection's time: the time of its last event for a match, the release time
  (when the clock proved the window over) for a timeout;
* it is an event of the key's stream: a pattern that reads that stream (``prev(e, n)``) sees it
  after the event that completed the detection, even when no stage of it reads the type;
* its ``seq`` is negative (-2, -3, ... in the order the engine derives them; a snapshot keeps the
  count, and the shards of a :class:`~workbench.engine.sharding.ShardedEngine` share it (with an
  ``out_of_orderness``, each shard releases its buffered events at its own moments, so the
  numbers can be taken in another order than one engine takes them), while
  the shards of :func:`~workbench.engine.sharding.run_sharded` count each on their own, apart:
  shard ``i`` of ``n`` takes ``-2 - i``, ``-2 - i - n``, ..., so the numbers stay unique but are not
  a single engine's): it is no input row and takes no input position. A consumer's detection
  lists it among its events like any other (``types`` names the derived type, the
  detection-events frame shows its fields).

The engine processes a derived event right after the event (or timer) whose transitions produced
the detection, through the same path as events fed back from a callback
(:class:`~workbench.engine.outputs.Fed`), so consumers see derived events in time order, after
the input event that completed them. Patterns that feed each other in a cycle (``a`` emits into a
type ``b`` reads and ``b`` into one ``a`` reads, or a pattern that reads its own type) are refused
when they are added (:func:`emitter_of` raises a :class:`~workbench.errors.PatternError` naming
the cycle).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from workbench.engine.events import Event
from workbench.engine.expr.values import EVENT_ATTRIBUTES
from workbench.errors import PatternError

if TYPE_CHECKING:
    from workbench.engine.detection import Detection
    from workbench.engine.matcher import Matcher

__all__ = [
    "FIRST_DERIVED_SEQ",
    "RESERVED_FIELDS",
    "DerivedSeq",
    "Emitter",
    "derived_fields",
    "emits_of",
    "emitter_of",
    "find_cycle",
    "matched_types",
]

#: the ``seq`` of the first derived event (then -3, -4, ...; -1 means "not stamped yet")
FIRST_DERIVED_SEQ = -2

#: names a measure of an emitting pattern cannot have: the derived event's own attributes (``c.fields``
#: is the whole mapping) and its ``get`` method, which ``c.NAME`` would read instead of the field
RESERVED_FIELDS = EVENT_ATTRIBUTES | {"get"}


def derived_fields(pattern: object) -> tuple[str, ...]:
    """The fields of the events a pattern's detections become: its measures by name (a silence's
    ``silence_start`` and ``silence_end`` first: its ``own_measures``)."""
    own: tuple[str, ...] = getattr(pattern, "own_measures", ())
    return (*own, *(m.name for m in getattr(pattern, "measures", ())))


def emits_of(matcher: object) -> str | None:
    """The type a compiled matcher's pattern emits its detections into (``None``: it does not)."""
    value = getattr(getattr(matcher, "pattern", None), "emit_into", None)
    return value if isinstance(value, str) else None


def matched_types(matcher: Matcher) -> frozenset[str] | None:
    """The types that can start or change a matcher's partial matches (``None``: every type).

    A matcher that keeps the key's stream for ``prev(e, n)`` and windows sees every type, but only
    these can lead to a detection: a derived event of another type only enters its stream.
    """
    relevant = getattr(matcher, "relevant", False)
    return matcher.event_types() if relevant is False else relevant  # type: ignore[return-value]


def find_cycle(reads: Mapping[str, frozenset[str] | None], emits: Mapping[str, str]) -> list[str] | None:
    """A cycle of patterns feeding each other (names, the first repeated at the end), or ``None``.

    ``reads``: pattern -> the event types it reads (``None``: every type); ``emits``: pattern ->
    the type it emits into. ``a`` feeds ``b`` when ``b`` reads the type ``a`` emits into.

    >>> find_cycle({"a": frozenset({"x"}), "b": frozenset({"y"})}, {"a": "y", "b": "x"})
    ['a', 'b', 'a']
    >>> find_cycle({"a": frozenset({"x"}), "b": frozenset({"y"})}, {"a": "y"}) is None
    True
    """
    feeds = {p: [q for q, types in reads.items() if types is None or emits[p] in types] for p in emits}
    done: set[str] = set()
    for root in emits:
        path: list[str] = []
        on_path: set[str] = set()
        stack: list[tuple[str, int]] = [(root, 0)]
        while stack:  # iterative depth-first search: patterns are many in a generated script
            node, i = stack.pop()
            if i == 0:
                if node in on_path:
                    return [*path[path.index(node) :], node]
                if node in done:
                    continue
                path.append(node)
                on_path.add(node)
            nxt = feeds.get(node, [])
            if i < len(nxt):
                stack.append((node, i + 1))
                stack.append((nxt[i], 0))
            else:
                done.add(node)
                on_path.discard(node)
                path.pop()
    return None


def cycle_message(cycle: list[str], emits: Mapping[str, str]) -> str:
    """A sentence naming a cycle: ``a emits into y, which b reads; b emits into x, which a reads``."""
    steps = [
        f"{a!r} emits into {emits[a]!r}, which {b!r} reads"
        if a != b
        else f"{a!r} reads {emits[a]!r}, its own"
        for a, b in itertools.pairwise(cycle)
    ]
    return (
        "patterns feed each other in a cycle (" + "; ".join(steps) + "): "
        "a detection would become an input of itself; emit into a type none of them reads"
    )


class DerivedSeq:
    """The ``seq`` the next derived event takes: part of an engine's state (its snapshots keep it),
    shared by the shards of a sharded engine so that one run numbers its derived events once.

    ``step``: how far apart one counter's numbers are. The shards of
    :func:`~workbench.engine.sharding.run_sharded` count on their own, in worker processes; shard
    ``i`` of ``n`` starts at ``-2 - i`` with step ``n``, so no two derived events of one run share
    a number.

    >>> seqs = DerivedSeq(-3, 2)
    >>> seqs.take(), seqs.take()
    (-3, -5)
    """

    __slots__ = ("next", "step")

    def __init__(self, next_seq: int = FIRST_DERIVED_SEQ, step: int = 1) -> None:
        self.next = next_seq
        self.step = step

    def take(self) -> int:
        seq = self.next
        self.next = seq - self.step
        return seq


class Emitter:
    """Turns the detections of emitting patterns into events (see the module doc)."""

    __slots__ = ("into", "seqs")

    def __init__(self, into: Mapping[str, str], seqs: DerivedSeq | None = None) -> None:
        #: pattern name -> the type its detections become
        self.into = dict(into)
        #: where the derived events' positions come from (the engine's own)
        self.seqs = seqs if seqs is not None else DerivedSeq()

    def derive(self, detection: Detection) -> Event | None:
        """The event a detection becomes (``None`` when its pattern emits into no type)."""
        into = self.into.get(detection.pattern)
        if into is None or detection.kind != "match":
            return None  # why not a timeout: an unfinished match is no instance of what the type means
        return Event(into, detection.time, detection.key, dict(detection.measures), self.seqs.take())


def emitter_of(matchers: Iterable[Matcher]) -> Emitter | None:
    """The emitter of an engine's matchers (``None`` when none emits); refuses a cycle.

    Raises :class:`~workbench.errors.PatternError` for a cycle (naming its patterns) and for a
    measure named like an event attribute (``time``, ``key``, ...).
    """
    listed = list(matchers)
    emits = {m.name: t for m in listed if (t := emits_of(m)) is not None}
    if not emits:
        return None
    for m in listed:
        if m.name in emits:
            _check_measures(m)
    cycle = find_cycle({m.name: matched_types(m) for m in listed}, emits)
    if cycle is not None:
        raise PatternError(cycle_message(cycle, emits), pattern=cycle[0])
    return Emitter(emits)


def _check_measures(matcher: Matcher) -> None:
    for measure in getattr(getattr(matcher, "pattern", None), "measures", ()):
        if measure.name in RESERVED_FIELDS:
            msg = (
                f"measure {measure.name!r} would be a field of the events this pattern emits into, "
                f"where {measure.name!r} is the event's own; rename it"
            )
            raise PatternError(msg, pattern=matcher.name)
