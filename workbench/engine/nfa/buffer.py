"""The shared buffer: every taken event stored once, partial matches as Dewey-versioned edges.

A node is ``(event id, stage)``; each node has a list of edges to the node taken before it (or to
``None``, the start of a match), each edge labelled with the Dewey version of the partial match that
created it. Many partial matches share prefixes, so the buffer is a DAG; a partial match finds its
own path again by following only the edges whose version is compatible with its own
(:func:`compatible`). Nodes, edges and events carry reference counts and are removed as soon as no
partial match needs them (see ``docs/sequences.md``, "Shared buffer").

Everything here is plain data (dicts, lists, tuples), so an :class:`SharedBuffer` pickles with the
per-key state.
"""

from __future__ import annotations

from typing import Any

from workbench.engine.events import Event

__all__ = ["EventId", "NodeId", "SharedBuffer", "Time", "Version", "compatible"]

#: an event time (ms)
Time = int | float
#: (time, arrival seq): orders events like Flink's EventId (timestamp, per-timestamp counter).
EventId = tuple[Time, int]
#: (event id, stage name)
NodeId = tuple[EventId, str]
#: Dewey number
Version = tuple[int, ...]


def compatible(reader: Version, edge: Version) -> bool:
    """True if a partial match with version ``reader`` may follow an edge labelled ``edge``.

    Either ``edge`` is a proper prefix of ``reader``, or both have the same length, agree on all but
    the last digit, and ``reader``'s last digit is >= ``edge``'s.
    """
    n, m = len(reader), len(edge)
    if n > m:
        return reader[:m] == edge
    if n == m:
        return reader[:-1] == edge[:-1] and reader[-1] >= edge[-1]
    return False


def increase(v: Version, by: int) -> Version:
    """The version with its last digit increased by ``by``."""
    return (*v[:-1], v[-1] + by) if by else v


def add_stage(v: Version) -> Version:
    """The version with a new ``0`` digit appended."""
    return (*v, 0)


class SharedBuffer:
    """Events, nodes and versioned edges of one key, with reference counts.

    ``events[id] = [event, refs]``; ``nodes[node] = [refs, edges]`` with each edge
    ``[target node or None, version, refs]``. Mutable lists on purpose: reference counts change
    in place on every lock and release (the buffer's own hot path); nothing outside reads them.
    """

    __slots__ = ("events", "nodes")

    def __init__(self) -> None:
        self.events: dict[EventId, list[Any]] = {}
        self.nodes: dict[NodeId, list[Any]] = {}

    def __getstate__(self) -> tuple[dict[EventId, list[Any]], dict[NodeId, list[Any]]]:
        return self.events, self.nodes

    def __setstate__(self, state: tuple[dict[EventId, list[Any]], dict[NodeId, list[Any]]]) -> None:
        self.events, self.nodes = state

    def __len__(self) -> int:
        return len(self.events)

    def put(self, stage: str, event: Event, eid: EventId, prev: NodeId | None, version: Version) -> NodeId:
        """Record that a partial match with ``version`` took ``event`` for ``stage`` after ``prev``."""
        if prev is not None:
            self.lock(prev, version)
        node_id: NodeId = (eid, stage)
        node = self.nodes.get(node_id)
        if node is None:
            node = self.nodes[node_id] = [0, []]
            ev = self.events.get(eid)
            if ev is None:
                self.events[eid] = [event, 1]
            else:
                ev[1] += 1
        node[1].append([prev, version, 0])
        return node_id

    def lock(self, node_id: NodeId, version: Version) -> None:
        """One more partial match with ``version`` holds ``node_id``."""
        node = self.nodes.get(node_id)
        if node is None:
            return
        node[0] += 1
        n = len(version)
        for edge in node[1]:
            ev = edge[1]
            if ev == version:  # the common case (compatible, inlined for speed)
                edge[2] += 1
                continue
            m = len(ev)
            if (n > m and version[:m] == ev) or (
                n == m and version[-1] >= ev[-1] and version[:-1] == ev[:-1]
            ):
                edge[2] += 1

    def release(self, node_id: NodeId | None, version: Version) -> None:
        """A partial match with ``version`` no longer holds ``node_id``; cascade removals backwards."""
        if node_id is None:
            return
        stack: list[tuple[NodeId, Version]] = [(node_id, version)]
        nodes = self.nodes
        while stack:
            nid, ver = stack.pop()
            node = nodes.get(nid)
            if node is None:
                continue
            kept = []
            n = len(ver)
            for edge in node[1]:
                ev = edge[1]
                m = len(ev)
                if (
                    ev == ver
                    or (n > m and ver[:m] == ev)
                    or (n == m and ver[-1] >= ev[-1] and ver[:-1] == ev[:-1])
                ):
                    if edge[2] <= 1:
                        edge[2] = 0
                        if edge[0] is not None:
                            stack.append((edge[0], edge[1]))
                        continue
                    edge[2] -= 1
                kept.append(edge)
            node[1] = kept
            if node[0] <= 1:
                del nodes[nid]
                self._release_event(nid[0])
            else:
                node[0] -= 1

    def _release_event(self, eid: EventId) -> None:
        ev = self.events.get(eid)
        if ev is None:
            return
        if ev[1] <= 1:
            del self.events[eid]
        else:
            ev[1] -= 1

    def extract(self, node_id: NodeId | None, version: Version) -> list[list[tuple[str, EventId]]]:
        """Every path ending at ``node_id`` compatible with ``version``, each in chronological order."""
        if node_id is None or node_id not in self.nodes:
            return []
        out: list[list[tuple[str, EventId]]] = []
        stack: list[tuple[NodeId | None, Version, list[NodeId]]] = [(node_id, version, [])]
        while stack:
            nid, ver, path = stack.pop()
            if nid is None:
                out.append([(n[1], n[0]) for n in reversed(path)])
                continue
            path = [*path, nid]
            node = self.nodes.get(nid)
            if node is None:
                continue
            for edge in node[1]:
                if compatible(ver, edge[1]):
                    stack.append((edge[0], edge[1], path))
        return out

    def event(self, eid: EventId) -> Event:
        """The stored event."""
        ev: Event = self.events[eid][0]
        return ev
