"""Prova reaction groups: the pattern objects, their matcher and helpers.

>>> from workbench.engine.reactions import ReactionGroup, Channel, Initiator, Var
"""

from __future__ import annotations

from workbench.engine.reactions.accumulators import MapCounter, SortedAccumulator
from workbench.engine.reactions.patterns import (
    AND,
    OR,
    Channel,
    Condition,
    Count,
    Exit,
    Initiator,
    Instance,
    Member,
    ReactionGroup,
    Receive,
    Size,
    Timer,
    Var,
)

__all__ = [
    "AND",
    "OR",
    "Channel",
    "Condition",
    "Count",
    "Exit",
    "Initiator",
    "Instance",
    "MapCounter",
    "Member",
    "ReactionGroup",
    "Receive",
    "Size",
    "SortedAccumulator",
    "Timer",
    "Var",
]
