"""After-match skip strategies: which partial matches a match discards, and in what order.

Flink's five strategies (``docs/sequences.md``, "After-match skip"):

* ``no_skip``: every match is emitted at once, nothing is discarded;
* ``skip_to_next``: discard the partial matches that start at or before the match's first event;
* ``skip_past_last_event``: ... at or before its last event;
* ``skip_to_first`` / ``skip_to_last`` ``stage``: ... before the first / last event the match took
  for ``stage`` (optionally raising when there is none, or when it is the match's first event).

Under any strategy but ``no_skip``, a completed match is held back until no partial match that
started earlier is alive, then emitted in the order of :func:`completion_key`, pruning as it goes.
The plans apply the rule to their own partial matches; this module decides. A match that completes
but stays held is traced ``held`` (:func:`trace_held`: behind which instance); its ``detected``
record comes when the older partial matches end (they complete, die, or time out when time or the
watermark passes their window, the final one of :meth:`Engine.finish` included). Without a window
an older partial match never ends, and the match is never emitted (as in Flink).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.buffer import EventId
from workbench.engine.nfa.pattern import SkipStrategy
from workbench.engine.nfa.state import NFAState, Run
from workbench.errors import SkipStrategyError

__all__ = [
    "CompletionKey",
    "HeldMatch",
    "SkipRule",
    "Step",
    "completion_key",
    "held_back",
    "held_detail",
    "trace_held",
]

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


def held_detail(strategy: str, behind: int) -> dict[str, object]:
    """Why a completed match was not emitted: an older partial match (instance ``behind``) is alive.

    >>> held_detail("skip_to_next", 3)["reason"]
    'held back by the skip strategy skip_to_next behind instance 3'
    """
    reason = f"held back by the skip strategy {strategy} behind instance {behind}"
    return {"reason": reason, "strategy": strategy, "behind": behind}


def trace_held(ctx: Context, held: Iterable[int], behind: int | None, strategy: str) -> None:
    """Trace the completed matches (instances ``held``) that stay held behind instance ``behind``."""
    if behind is None:
        return
    for inst in held:
        ctx.trace(TraceKind.HELD, inst, None, ctx.cause, held_detail(strategy, behind))


def held_back(
    ctx: Context,
    state: NFAState,
    potential: Sequence[Run],
    match: Run,
    earliest: EventId | None,
    strategy: str,
) -> bool:
    """Whether ``match`` (the first completed match) waits behind an earlier live partial match.

    When it does, the matches of ``potential`` (just completed) that are still held are traced
    ``held`` behind that partial match's instance.
    """
    assert match.start_id is not None
    if earliest is None or earliest >= match.start_id:
        return False
    if ctx.tracing:
        still = {id(r) for r in state.completed}
        behind = next((r.inst for r in state.runs.values() if r.start_id == earliest), None)
        trace_held(ctx, [r.inst for r in potential if id(r) in still], behind, strategy)
    return True
