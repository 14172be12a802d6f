"""Per-key NFA state: partial matches (runs), their indexes, the shared buffer. Plain picklable data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from workbench.engine.nfa.buffer import EventId, SharedBuffer, Version

__all__ = ["NFAState", "Run"]


@dataclass(slots=True)
class Run:
    """One partial match (Flink's ``ComputationState``).

    Attributes:
        rid: unique id within the key (a run that changes gets a new id).
        state: internal name of the NFA state it waits in.
        node: the buffer node of the last taken event (``None`` before the first take); when the
            matcher keeps paths per partial match, the tuple of ``(stage, event id, event)`` taken.
        version: Dewey version.
        start_ts / start_id: time and id of the first taken event (``None`` for the start run).
        prev_ts: time of the last taken event.
        inst: detection instance id (shared by every run that grew from the same first event).
        aggs: aggregate states, parallel to the pattern's ``aggregates`` (``()`` when none).
    """

    rid: int
    state: str
    node: Any  # NodeId | tuple[tuple[str, EventId, Event], ...] | None
    version: Version
    start_ts: Any
    start_id: EventId | None
    prev_ts: Any
    inst: int
    aggs: tuple[Any, ...] = ()

    def order(self) -> tuple[Any, ...]:
        """Flink's partial-match order: start event id, then creation."""
        if self.start_id is None:
            return (1, 0, 0, self.rid)
        return (0, *self.start_id, self.rid)


@dataclass(slots=True, init=False)
class NFAState:
    """Everything one key holds for one sequence pattern.

    Attributes:
        runs: live partial matches by id (the start run is implicit: ``start_version``).
        by_state: NFA state name -> ids of the runs waiting there (the event-type index).
        start_version: Dewey version of the start run.
        completed: completed matches held back by a skip strategy (sorted on emission).
        buffer: the shared buffer.
        starts: heap of ``(start id, run id)`` (lazy deletion): earliest start, skip pruning.
        first_deadlines / prev_deadlines: heaps of ``(deadline, run id)`` for the windows.
        next_rid: run id counter.
        dropped: partial matches dropped because of ``max_partial_matches``.
        time: the latest time the state was advanced to.
        scheduled: the latest window deadline a timer was requested for.
        pq: with ``flink_order``: every run (start run included) in Java heap-array order.
        linear: partial matches of a linear pattern run by the fast path
            (:mod:`workbench.engine.nfa.linear`; then ``runs`` and ``buffer`` stay empty).
        linear_done: the fast path's completed matches held back by a skip strategy.
        loop_hot / loop_last: with the loop fast path (:mod:`workbench.engine.nfa.loop`), the partial
            matches that just took a loop event / wait for the last stage (``linear`` holds the
            ones waiting for a loop event).
    """

    runs: dict[int, Run]
    by_state: dict[str, set[int]]
    start_version: Version
    completed: list[Run]
    buffer: SharedBuffer
    starts: list[tuple[EventId, int]]
    first_deadlines: list[tuple[Any, int]]
    prev_deadlines: list[tuple[Any, int]]
    next_rid: int
    dropped: int
    time: Any
    scheduled: Any
    pq: list[Run]
    linear: list[list[Any]]
    linear_done: list[tuple[Any, ...]]
    loop_hot: list[list[Any]]
    loop_last: list[list[Any]]

    def __init__(self) -> None:
        # Written out (not dataclass default factories): the runtime creates a state whenever an
        # event reaches a key that holds none, so this is on the per-event path.
        self.runs = {}
        self.by_state = {}
        self.start_version = (1,)
        self.completed = []
        self.buffer = SharedBuffer()
        self.starts = []
        self.first_deadlines = []
        self.prev_deadlines = []
        self.next_rid = 0
        self.dropped = 0
        self.time = None
        self.scheduled = None
        self.pq = []
        self.linear = []
        self.linear_done = []
        self.loop_hot = []
        self.loop_last = []

    @property
    def partial_matches(self) -> int:
        """Number of live partial matches (excluding the start run)."""
        return len(self.runs) + len(self.linear) + len(self.loop_hot) + len(self.loop_last)
