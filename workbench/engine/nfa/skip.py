"""After-match skip strategies: which partial matches a match discards, and in what order.

Flink's five strategies (``docs/sequences.md``, "After-match skip"):

* ``no_skip``: every match is emitted at once, nothing is discarded;
* ``skip_to_next``: discard the partial matches that start at or before the match's first event;
* ``skip_past_last_event``: ... at or before its last event;
* ``skip_to_first`` / ``skip_to_last`` ``stage``: ... before the first / last event the match took
  for ``stage`` (optionally raising when there is none, or when it is the match's first event).

Under any strategy but ``no_skip``, a completed match is held back until no partial match that
started earlier is alive, then emitted in the order of :func:`completion_key`, pruning as it goes.
The plans apply the rule to their own partial matches; this module decides.
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.engine.events import Event
from workbench.engine.nfa.buffer import EventId
from workbench.engine.nfa.pattern import SkipStrategy
from workbench.errors import SkipStrategyError

__all__ = ["CompletionKey", "HeldMatch", "SkipRule", "completion_key"]

#: one taken event of a match: (stage, event id)
Step = tuple[str, EventId]
#: earliest start, earliest last event, then the smallest (event id, stage index) sequence
CompletionKey = tuple[EventId | None, EventId | None, tuple[tuple[EventId, int], ...]]


def completion_key(
    start: EventId | None, last: EventId | None, path: Sequence[Step], stage_index: dict[str, int]
) -> CompletionKey:
    """The emission order of held-back matches: a deterministic, documented rule.

    Earliest start, earliest last event, then the smallest ``(event id, stage index)`` sequence
    (Flink's own order among equal starts is a Java heap artefact, reproduced only by the
    ``flink_order`` plan).
    """
    return (start, last, tuple((eid, stage_index[stage]) for stage, eid in path))


class SkipRule:
    """One pattern's after-match skip strategy, applied to found matches.

    Attributes:
        kind: the strategy's name.
        holds: matches are held back and prune (every strategy but ``no_skip``).
        inclusive: the partial match starting *at* the pruning event is discarded too.
    """

    __slots__ = ("holds", "inclusive", "kind", "pattern", "stage", "throw_on_miss")

    def __init__(self, strategy: SkipStrategy, pattern: str) -> None:
        self.kind: str = strategy.kind
        self.stage = strategy.stage
        self.throw_on_miss = strategy.throw_on_miss
        self.pattern = pattern
        self.holds = strategy.kind != "no_skip"
        self.inclusive = strategy.kind in ("skip_to_next", "skip_past_last_event")

    def prunes(self, start: EventId | None, pruning: EventId) -> bool:
        """Whether a partial match that started at ``start`` is discarded by ``pruning``."""
        return start is not None and (start <= pruning if self.inclusive else start < pruning)

    def pruning_id(self, paths: Sequence[Sequence[Step]]) -> EventId | None:
        """The event the match's paths prune from (``None``: nothing to prune)."""
        pruning: EventId | None = None
        for path in paths:
            if self.kind == "skip_past_last_event":
                last = max(eid for _, eid in path)
                pruning = last if pruning is None else max(pruning, last)
            elif self.kind == "skip_to_next":
                first = min(eid for _, eid in path)
                pruning = first if pruning is None else min(pruning, first)
            else:
                pruning = self._to_stage(path, pruning)
        return pruning

    def _to_stage(self, path: Sequence[Step], pruning: EventId | None) -> EventId | None:
        """``skip_to_first`` / ``skip_to_last``: the first or last event taken for the stage."""
        ids = [eid for stage, eid in path if stage == self.stage]
        if not ids:
            if self.throw_on_miss:
                msg = (
                    f"pattern {self.pattern!r}: could not skip to {self.stage!r}: no such element "
                    f"in the found match {[s for s, _ in path]}"
                )
                raise SkipStrategyError(msg)
        else:
            pick = ids[0] if self.kind == "skip_to_first" else ids[-1]
            pruning = pick if pruning is None else max(pruning, pick)
        if self.throw_on_miss and pruning is not None and path and pruning == min(e for _, e in path):
            msg = (
                f"pattern {self.pattern!r}: could not skip to the first element of a match "
                f"({self.kind} {self.stage!r} would restart at the same event)"
            )
            raise SkipStrategyError(msg)
        return pruning


class HeldMatch:
    """A completed match of a fast plan, held back by the skip strategy."""

    __slots__ = ("events", "inst", "key", "path")

    def __init__(self, key: CompletionKey, inst: int, events: tuple[Event, ...], path: list[Step]) -> None:
        self.key = key
        self.inst = inst
        self.events = events
        self.path = path

    @property
    def start(self) -> EventId:
        """The id of the match's first event."""
        start = self.key[0]
        assert start is not None
        return start
