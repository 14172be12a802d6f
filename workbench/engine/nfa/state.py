"""Per-key state of the general plan: its partial matches (runs), their indexes, the shared buffer.

Plain picklable data. The fast plans keep their own, smaller states (:class:`~.linear.LinearState`,
:class:`~.loop.LoopState`); :class:`FlinkState` adds the Java heap of the ``flink_order`` plan.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Union

from workbench.engine.aggregates import Aggregate
from workbench.engine.events import Event
from workbench.engine.nfa.buffer import EventId, NodeId, SharedBuffer, Time, Version

__all__ = ["FlinkState", "NFAState", "Node", "Path", "Run"]

#: a partial match's own path (the path store): ``(stage, event id, event)`` per taken event
Path = tuple[tuple[str, EventId, Event], ...]
#: where a run's taken events are: a shared-buffer node, its own path, or nothing yet
Node = Union[NodeId, Path, None]  # noqa: UP007 - runtime alias


@dataclass(slots=True)
class Run:
    """One partial match (Flink's ``ComputationState``).

    Attributes:
        rid: unique id within the key (a run that changes gets a new id).
        state: internal name of the NFA state it waits in.
        node: the buffer node of the last taken event (``None`` before the first take); with the
            path store, the tuple of ``(stage, event id, event)`` taken.
        version: Dewey version.
        start_ts / start_id: time and id of the first taken event (``None`` for the start run).
        prev_ts: time of the last taken event.
        inst: detection instance id (shared by every run that grew from the same first event).
        aggs: aggregate states, parallel to the pattern's ``aggregates`` (``()`` when none).
    """

    rid: int
    state: str
    node: Node
    version: Version
    start_ts: Time | None
    start_id: EventId | None
    prev_ts: Time | None
    inst: int
    aggs: tuple[Aggregate, ...] = ()

    def order(self) -> tuple[int, Time, int, int]:
        """Flink's partial-match order: start event id, then creation."""
        if self.start_id is None:
            return (1, 0, 0, self.rid)
        return (0, *self.start_id, self.rid)


@dataclass(slots=True, init=False)
class NFAState:
    """Everything one key holds for one sequence pattern run by the general plan.

    Attributes:
        runs: live partial matches by id (the start run is implicit: ``start_version``).
        by_state: NFA state name -> ids of the runs waiting there (the event-type index).
        start_version: Dewey version of the start run.
        completed: completed matches held back by a skip strategy (sorted on emission).
        buffer: the shared buffer (empty with the path store).
        starts: heap of ``(start id, run id)`` (lazy deletion): earliest start, for skip pruning
            and the cap (kept only under a skip strategy or a cap).
        first_deadlines / prev_deadlines: heaps of ``(deadline, run id)`` for the windows.
        next_rid: run id counter.
        dropped: partial matches dropped because of ``max_partial_matches``.
        time: the latest time the state was advanced to.
        scheduled: the latest window deadline a timer was requested for.
    """

    runs: dict[int, Run]
    by_state: dict[str, set[int]]
    start_version: Version
    completed: list[Run]
    buffer: SharedBuffer
    starts: list[tuple[EventId, int]]
    first_deadlines: list[tuple[Time, int]]
    prev_deadlines: list[tuple[Time, int]]
    next_rid: int
    dropped: int
    time: Time | None
    scheduled: Time | None

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

    @property
    def partial_matches(self) -> int:
        """Number of live partial matches (excluding the start run)."""
        return len(self.runs)

    def remove(self, run: Run) -> None:
        """Forget a live run (and its index entry)."""
        del self.runs[run.rid]
        ids = self.by_state[run.state]
        ids.discard(run.rid)
        if not ids:
            del self.by_state[run.state]

    def earliest_start(self) -> EventId | None:
        """The start of the earliest live partial match (drops stale heap entries)."""
        heap, runs = self.starts, self.runs
        while heap and heap[0][1] not in runs:
            heapq.heappop(heap)
        return heap[0][0] if heap else None


@dataclass(slots=True, init=False)
class FlinkState(NFAState):
    """The state of the ``flink_order`` plan: also every run (start run included) in Java heap order."""

    pq: list[Run]

    def __init__(self) -> None:
        NFAState.__init__(self)
        self.pq = []
