"""Where an engine's outputs go: collected lists and user callbacks.

:class:`Outputs` is shared by :class:`~workbench.engine.runtime.Engine` and
:class:`~workbench.engine.sharding.ShardedEngine`, so both deliver detections, reactions and trace
records the same way: appended to ``detections`` / ``reactions`` / ``trace_records`` when
``collect`` is on, passed to the callbacks, and (detections) to the list the current call returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypedDict

from workbench.engine.detection import Detection, Reaction, TraceRecord
from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault, FaultLog, FaultSink

__all__ = ["OutputOptions", "Outputs", "counter_of", "tally_counters"]


def counter_of(record: Detection | Reaction) -> str | None:
    """The Prova counter a reaction's channel continuation or a match's exit continuation increments."""
    if isinstance(record, Reaction):
        return record.counter
    counter = record.extra.get("counter")
    return counter if isinstance(counter, str) else None


def tally_counters(reactions: Iterable[Reaction], detections: Iterable[Detection]) -> dict[str, int]:
    """Counter name -> how many continuations incremented it (see ``Channel.counts``)."""
    out: dict[str, int] = {}
    records: list[Detection | Reaction] = [*reactions, *detections]
    for record in records:
        if (name := counter_of(record)) is not None:
            out[name] = out.get(name, 0) + 1
    return out


class OutputOptions(TypedDict, total=False):
    """The keywords of :class:`Outputs` (for an engine that passes them on unchanged)."""

    on_detection: Callable[[Detection], None] | None
    on_reaction: Callable[[Reaction], None] | None
    on_late: Callable[[Event], None] | None
    on_trace: Callable[[TraceRecord], None] | None
    collect: bool
    strict: bool


class Outputs:
    """Collected outputs and callbacks of an engine."""

    def __init__(
        self,
        *,
        on_detection: Callable[[Detection], None] | None = None,
        on_reaction: Callable[[Reaction], None] | None = None,
        on_late: Callable[[Event], None] | None = None,
        on_trace: Callable[[TraceRecord], None] | None = None,
        collect: bool = True,
        strict: bool = False,
    ) -> None:
        self.collect = collect
        #: the distinct runtime errors of conditions (``strict``: the first one raises instead)
        self.fault_log = FaultLog(strict=strict)
        self._on_detection = on_detection
        self._on_reaction = on_reaction
        self._on_late = on_late
        self._on_trace = on_trace
        self.detections: list[Detection] = []
        self.reactions: list[Reaction] = []
        self.trace_records: list[TraceRecord] = []
        self.late: list[Event] = []
        self.late_count = 0
        #: Prova counters incremented by channel and exit continuations (``counts``): name -> total
        self.counters: dict[str, int] = {}
        self._out: list[Detection] = []  # what the current process/advance call returns

    @property
    def errors(self) -> list[ConditionFault]:
        """The distinct runtime errors of conditions so far (each with its first event and count)."""
        return self.fault_log.faults

    def _adopt_faults(self, matcher: object) -> None:
        """Point a matcher's fault sink at this engine's log."""
        sink = getattr(matcher, "faults", None)
        if isinstance(sink, FaultSink):
            sink.log = self.fault_log

    def emit(self, detection: Detection) -> None:
        self._out.append(detection)
        if (counter := counter_of(detection)) is not None:
            self.counters[counter] = self.counters.get(counter, 0) + 1
        if self.collect:
            self.detections.append(detection)
        if self._on_detection is not None:
            self._on_detection(detection)

    def react(self, reaction: Reaction) -> None:
        if (counter := reaction.counter) is not None:
            self.counters[counter] = self.counters.get(counter, 0) + 1
        if self.collect:
            self.reactions.append(reaction)
        if self._on_reaction is not None:
            self._on_reaction(reaction)

    def record(self, record: TraceRecord) -> None:
        if self.collect:
            self.trace_records.append(record)
        if self._on_trace is not None:
            self._on_trace(record)
