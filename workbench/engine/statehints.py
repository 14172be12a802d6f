"""Slot hints for the state classes that annotate their slots inside ``__init__``, not on the class.

``typing.get_type_hints`` sees only class-level annotations; the aggregates, the budget and the
shared buffer write theirs on ``self.x: T = ...`` in ``__init__``. The same hints are written out
here, by class, for :mod:`workbench.engine.slotcheck` (which checks every slot a snapshot fills).
A class not listed and without class-level annotations is filled unchecked; what its values mean is
then checked by the owner (:mod:`workbench.engine.imagecheck`).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Hashable
from decimal import Decimal
from functools import cache
from typing import Literal

__all__ = ["declared"]

Number = int | float | Decimal
"""What a sum, mean or spread may hold (the values events carry)."""
Time = int | float
EventId = tuple[Time, int]
Version = tuple[int, ...]


def declared(cls: type) -> dict[str, object]:
    """The hints written here for ``cls`` itself (not its bases); ``{}`` when there are none."""
    return _table().get(f"{cls.__module__}:{cls.__qualname__}", {})


@cache
def _table() -> dict[str, dict[str, object]]:
    from workbench.engine.aggregates.base import Aggregate
    from workbench.engine.expr.stream import WindowAggregate
    from workbench.engine.nfa.streamed import StreamState

    modes = Literal["none", "fifo", "any"]
    agg = "workbench.engine.aggregates."
    return {
        "workbench.engine.budget:Budget": {
            "dropped": int,
            "dropped_by_pattern": dict[str, int],
            "released": dict[int, int],
            "warned": set[tuple[str, str]],
        },
        "workbench.engine.nfa.buffer:SharedBuffer": {
            "events": dict[EventId, list[object]],
            "nodes": dict[tuple[EventId, str], list[object]],
        },
        "workbench.engine.nfa.skip:HeldMatch": {
            "key": tuple[EventId | None, EventId | None, tuple[tuple[EventId, int], ...]],
            "inst": int,
            "events": tuple[_event(), ...],  # type: ignore[misc]
            "path": list[tuple[str, EventId]],
        },
        agg + "scalar:Count": {"n": int},
        agg + "scalar:Sum": {"n": int, "total": Number},
        agg + "scalar:Avg": {"n": int, "total": Number},
        agg + "scalar:Var": {"n": int, "mean": Number, "m2": Number, "ddof": int},
        agg + "holistic:Collect": {"keep_nulls": bool, "values": list[object]},
        agg + "holistic:CountBy": {"counts": dict[Hashable, int], "total": int},
        agg + "holistic:TopN": {"n": int, "largest": bool, "counts": dict[Hashable, int]},
        agg + "registry:GroupBy": {
            "name": str,
            "params": dict[str, object],
            "groups": dict[Hashable, Aggregate],
        },
        agg + "ordered:_Extreme": {
            "mode": modes,
            "_best": object,
            "_n": int,
            "_window": deque[tuple[int, object]] | None,
            "_pushed": int,
            "_popped": int,
            "_counts": dict[Hashable, int] | None,
        },
        agg + "ordered:_Navigation": {
            "mode": modes,
            "_first": object,
            "_last": object,
            "_n": int,
            "_window": deque[object] | None,
        },
        agg + "rolling:Rolling": {"agg": Aggregate, "window_size": int, "values": deque[object]},
        agg + "rolling:TimeRolling": {
            "agg": Aggregate,
            "period": Time,
            "values": deque[tuple[Time, object]],
            "now": Time,
        },
        "workbench.engine.nfa.absence:AbsenceState": {
            "seen": bool,
            "start": Time | None,
            "pending": Time | None,
            "gates": int,
            "gate": int,
            "opened": tuple[Time, Time],
            "inner": StreamState | None,
        },
        "workbench.engine.expr.stream:KeyStream": {
            "history": deque[_event()],  # type: ignore[misc]
            "windows": dict[str, dict[str, WindowAggregate]],
        },
        agg + "session:Session": {
            "agg": Aggregate,
            "fresh": Aggregate,
            "gap": Time,
            "start": Time,
            "last": Time,
        },
    }


def _event() -> type:
    from workbench.engine.events import Event

    return Event
