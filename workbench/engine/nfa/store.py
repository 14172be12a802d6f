"""Where the general plan keeps the events its partial matches took.

* :class:`BufferStore`: Flink's shared buffer with Dewey versions (many partial matches share
  prefixes; :mod:`workbench.engine.nfa.buffer`). Used by the ``flink_order`` plan and when fast
  plans are switched off, so that Flink's exact behaviour stays reproducible.
* :class:`PathStore`: each partial match keeps its own path, a tuple of ``(stage, event id, event)``
  (no sharing, no versions to resolve); the default.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, cast

from workbench.engine.events import Event
from workbench.engine.nfa.buffer import EventId, NodeId, Version
from workbench.engine.nfa.state import NFAState, Node, Path

__all__ = ["BufferStore", "PathStore", "Step", "Store"]

#: one taken event of a path: (stage, event id)
Step = tuple[str, EventId]


class Store(Protocol):
    """How a plan records, shares and reads back the events of its partial matches.

    ``shared``: partial matches share stored events (then ``lock`` counts references).
    """

    shared: bool

    def put(
        self, state: NFAState, stage: str, event: Event, eid: EventId, prev: Node, version: Version
    ) -> Node:
        """Record that a partial match with ``version`` took ``event`` for ``stage`` after ``prev``."""
        ...

    def lock(self, state: NFAState, node: Node, version: Version) -> None:
        """One more partial match holds ``node``."""
        ...

    def release(self, state: NFAState, node: Node, version: Version) -> None:
        """A partial match no longer holds ``node``."""
        ...

    def extract(self, state: NFAState, node: Node, version: Version) -> list[list[Step]]:
        """Every path of the partial match, each in chronological order."""
        ...

    def events(self, state: NFAState, node: Node, version: Version) -> dict[str, list[Event]]:
        """The partial match's events by stage (its first path)."""
        ...

    def event_of(self, state: NFAState, node: Node) -> Callable[[EventId], Event]:
        """Read a taken event back by id."""
        ...

    def last_id(self, node: Node) -> EventId | None:
        """The id of the last taken event."""
        ...


class _Unshared:
    """A store whose nodes no two partial matches share: no reference counts."""

    __slots__ = ()
    shared = False

    def lock(self, state: NFAState, node: Node, version: Version) -> None:
        """Paths are not shared: nothing to count."""

    def release(self, state: NFAState, node: Node, version: Version) -> None:
        """Paths are not shared: nothing to count."""


class PathStore(_Unshared):
    """Each partial match keeps its own path (the default)."""

    __slots__ = ()

    def put(
        self, state: NFAState, stage: str, event: Event, eid: EventId, prev: Node, version: Version
    ) -> Node:
        if prev is None:
            return ((stage, eid, event),)
        return (*cast(Path, prev), (stage, eid, event))

    def extract(self, state: NFAState, node: Node, version: Version) -> list[list[Step]]:
        return [[(stage, eid) for stage, eid, _ in cast(Path, node)]] if node else []

    def events(self, state: NFAState, node: Node, version: Version) -> dict[str, list[Event]]:
        out: dict[str, list[Event]] = {}
        for stage, _, ev in cast(Path, node or ()):
            out.setdefault(stage, []).append(ev)
        return out

    def event_of(self, state: NFAState, node: Node) -> Callable[[EventId], Event]:
        return {i: ev for _, i, ev in cast(Path, node or ())}.__getitem__

    def last_id(self, node: Node) -> EventId | None:
        return None if node is None else cast(Path, node)[-1][1]


class BufferStore:
    """The per-key shared buffer with Dewey versions (Flink's ``SharedBuffer``)."""

    __slots__ = ()
    shared = True

    def put(
        self, state: NFAState, stage: str, event: Event, eid: EventId, prev: Node, version: Version
    ) -> Node:
        return state.buffer.put(stage, event, eid, cast(NodeId | None, prev), version)

    def lock(self, state: NFAState, node: Node, version: Version) -> None:
        if node is not None:
            state.buffer.lock(cast(NodeId, node), version)

    def release(self, state: NFAState, node: Node, version: Version) -> None:
        state.buffer.release(cast(NodeId | None, node), version)

    def extract(self, state: NFAState, node: Node, version: Version) -> list[list[Step]]:
        return state.buffer.extract(cast(NodeId | None, node), version)

    def events(self, state: NFAState, node: Node, version: Version) -> dict[str, list[Event]]:
        out: dict[str, list[Event]] = {}
        paths = self.extract(state, node, version)
        if paths:
            for stage, eid in paths[0]:
                out.setdefault(stage, []).append(state.buffer.event(eid))
        return out

    def event_of(self, state: NFAState, node: Node) -> Callable[[EventId], Event]:
        return state.buffer.event

    def last_id(self, node: Node) -> EventId | None:
        return None if node is None else cast(NodeId, node)[0]
