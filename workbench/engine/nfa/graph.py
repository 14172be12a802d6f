"""The compiled NFA graph: states, edges and their kinds, shared by every key (what
:mod:`~workbench.engine.nfa.compiler` builds and every matcher plan reads)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from workbench.engine.nfa.conditions import Cond
from workbench.engine.nfa.elements import DELIM

__all__ = ["Action", "CompiledNFA", "Kind", "StateDef", "Transition", "original_name"]


class Action(IntEnum):
    """Edge actions."""

    TAKE = 0
    IGNORE = 1
    PROCEED = 2


class Kind(IntEnum):
    """State kinds."""

    START = 0
    NORMAL = 1
    FINAL = 2
    STOP = 3
    PENDING = 4


@dataclass(frozen=True, slots=True)
class Transition:
    """One edge: ``action`` from ``source`` to ``target`` when ``cond`` holds."""

    action: Action
    source: str
    target: str
    cond: Cond


@dataclass(frozen=True, slots=True)
class StateDef:
    """One NFA state; ``stage`` is the stage name its TAKE edges store events under."""

    name: str
    kind: Kind
    stage: str
    transitions: tuple[Transition, ...]


@dataclass(frozen=True, slots=True)
class CompiledNFA:
    """The immutable NFA graph shared by every key.

    Attributes:
        states: internal state name -> definition.
        start: name of the start state.
        window_ms: first-and-last window (``None``: none).
        window_times: internal state name -> previous-to-current window.
        stage_names: stage names in pattern order.
    """

    states: Mapping[str, StateDef]
    start: str
    window_ms: int | float | None
    window_times: Mapping[str, int | float]
    stage_names: tuple[str, ...]


def original_name(internal: str) -> str:
    """The stage name of an internal state name (text before ``:``)."""
    return internal.split(DELIM, 1)[0]
