"""What :func:`~workbench.engine.runtime.run` and every backend return for one finished run."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.engine.detection import Detection, Reaction, TraceRecord
from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault
from workbench.engine.outputs import tally_counters

__all__ = ["RunResult"]


@dataclass(slots=True)
class RunResult:
    """What :func:`~workbench.engine.runtime.run` returns."""

    detections: Sequence[Detection]
    reactions: list[Reaction]
    late: list[Event]
    trace: list[TraceRecord]
    errors: list[ConditionFault] = field(default_factory=list)
    dropped: int = 0  # partial matches dropped by caps (``Engine.stats["dropped"]``)

    @property
    def counters(self) -> dict[str, int]:
        """The Prova counters the run's continuations incremented (``counts``), from its records."""
        return tally_counters(self.reactions, self.detections)
