"""Per-key mutable state of a reaction group: plain, picklable data (no callables, no matcher refs).

One :class:`GroupState` per key holds the live :class:`InstanceState` objects (one per initiator
event or start-up instance) and an index of them by the values their channels require: for an
event type whose every channel matches a field against a variable fixed when the instance starts
(``match={"user": Var("User")}`` with ``User`` bound by the initiator), ``index[(type, value)]``
lists the instances that can accept such an event, and ``loose[type]`` those that cannot be
keyed (the variable was not bound, or its value is not hashable). The index is built only once a
key holds many live instances (``indexed``); with a few, scanning them is cheaper.

An instance holds its live :class:`ChannelState` objects (dynamic channel instances: a channel
created ``after`` another exists once per firing of its predecessor), its nested child instances,
and the recorded trace (:class:`Entry` list).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import TypeAlias, TypeVar

from workbench.engine.aggregates import Aggregate
from workbench.engine.events import Event

__all__ = [
    "ChannelState",
    "Entry",
    "GroupState",
    "HopState",
    "InstanceState",
    "Pane",
    "SubResult",
    "Vars",
    "unindex",
]

#: Bound variables by name, as conditions see them (values are whatever the events carry).
Vars: TypeAlias = Mapping[str, object]
#: An index key: an event type and the values of the fields an instance requires.
IndexKey: TypeAlias = tuple[str, tuple[Hashable, ...]]
K = TypeVar("K", IndexKey, str)


@dataclass(slots=True)
class SubResult:
    """The result of a nested group, recorded as one entry of its parent's trace."""

    group: str
    exit: str
    entries: list[Entry]
    negated: list[str]


@dataclass(slots=True)
class Entry:
    """One recorded result: an event on a channel, or a nested group's result."""

    channel: str
    event: Event | None = None
    sub: SubResult | None = None
    bindings: dict[str, object] | None = None
    emitted: bool = False


@dataclass(slots=True)
class Pane:
    """The events of one pane (``g`` ms of time) and the accumulator over them."""

    index: int
    entries: list[Entry] = field(default_factory=list)
    acc: Aggregate | None = None


@dataclass(slots=True)
class HopState:
    """A hopping channel's windows: the instance start, the kept panes (oldest first), the first
    window not closed yet and the due time of the armed timer (``None``: none armed)."""

    origin: int | float
    panes: deque[Pane] = field(default_factory=deque)
    next_window: int = 0
    armed: int | float | None = None


@dataclass(slots=True)
class ChannelState:
    """One live channel instance.

    ``member`` indexes the compiled group's members; ``env`` holds the variables bound by the
    channels that led to this one (group extension); ``seen`` counts accepted events (``@count``,
    ``@size``); ``target`` is the ``@size`` still needed; ``acc`` the window accumulator's value;
    ``empty_windows`` counts the ``@timer`` windows in a row that closed empty; ``hop`` holds a
    ``@hop`` channel's panes.
    """

    cid: int
    member: int
    env: dict[str, object] = field(default_factory=dict)
    seen: int = 0
    target: int = 0
    acc: Aggregate | None = None
    empty_windows: int = 0
    hop: HopState | None = None


@dataclass(slots=True)
class InstanceState:
    """One group instance (or a nested child instance inside its parent)."""

    id: int
    created: int | float
    vars: dict[str, object]
    initiator: Event | None = None
    channels: dict[int, ChannelState] = field(default_factory=dict)
    children: dict[str, InstanceState] = field(default_factory=dict)
    #: live members in creation order: channel ids (``int``) and nested group names (``str``)
    order: list[int | str] = field(default_factory=list)
    results: list[Entry] = field(default_factory=list)
    pool: list[Entry] = field(default_factory=list)
    paused: set[str] = field(default_factory=set)
    emitted: int = 0
    ended: bool = False
    index_keys: list[IndexKey] = field(default_factory=list)
    loose_types: list[str] = field(default_factory=list)


@dataclass(slots=True)
class GroupState:
    """All instances of one reaction group for one key."""

    instances: dict[int, InstanceState] = field(default_factory=dict)
    initiated: bool = False
    next_cid: int = 0
    index: dict[IndexKey, list[int]] = field(default_factory=dict)
    loose: dict[str, list[int]] = field(default_factory=dict)
    indexed: bool = False


def unindex(state: GroupState, root: InstanceState) -> None:
    """Drop an ended instance from the per-key index."""
    _forget(state.index, root.index_keys, root.id)
    _forget(state.loose, root.loose_types, root.id)


def _forget(table: dict[K, list[int]], keys: list[K], instance: int) -> None:
    """Remove ``instance`` from ``table`` under each of ``keys`` (emptied entries go); clear ``keys``."""
    for key in keys:
        ids = table.get(key)
        if ids is not None:
            ids.remove(instance)
            if not ids:
                del table[key]
    keys.clear()
