"""Where an engine's outputs go: collected lists and user callbacks.

:class:`Outputs` is shared by :class:`~workbench.engine.runtime.Engine` and
:class:`~workbench.engine.sharding.ShardedEngine`, so both deliver detections, reactions and trace
records the same way: appended to ``detections`` / ``reactions`` / ``trace_records`` when
``collect`` is on, passed to the callbacks, and (detections) to the list the current call returns --
all once the state transitions that produced them are complete.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypedDict, TypeVar

from workbench.engine.derived import DerivedSeq
from workbench.engine.detection import Detection, Reaction, TraceRecord
from workbench.engine.events import Event, EventLike
from workbench.engine.faults import ConditionFault, FaultLog, FaultSink
from workbench.errors import CepError

__all__ = ["Fed", "OutputOptions", "Outputs", "Pending", "counter_of", "tally_counters"]

#: a published record (a detection or a reaction) and the list and callback that take it
R = TypeVar("R", Detection, Reaction)
#: an item handed to a user's callback
T = TypeVar("T")


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


class Fed:
    """An event fed back into an engine from inside one of its callbacks (queued, processed later)."""

    __slots__ = ("event",)

    def __init__(self, event: EventLike) -> None:
        self.event = event


#: what an engine holds between a state transition and the delivery of its outputs
Pending = Detection | Reaction | TraceRecord | Event | Fed


class Outputs:
    """Collected outputs and callbacks of an engine.

    Matchers hand outputs to :meth:`emit`, :meth:`react` and :meth:`record` in the middle of their
    state transitions; these only queue them. The driver calls :meth:`deliver` once the transitions
    of an event (or a timer) are complete: then the outputs are counted, collected and passed to
    the callbacks, in the order they were produced. A callback that raises is recorded in
    :attr:`errors` (naming the callback and the pattern; ``strict``: raised as
    :class:`~workbench.errors.CepRuntimeError`) and delivery goes on. An event that a callback
    feeds back into the engine is queued (:class:`Fed`) and processed after the current input event.
    """

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
        #: the distinct runtime errors of conditions and callbacks (``strict``: the first one raises)
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
        #: outputs of the transitions under way, and events fed back by callbacks (always empty
        #: between two calls: see :meth:`deliver`)
        self._pending: list[Pending] = []
        #: the event a delivered detection becomes (``emit into``: :mod:`~workbench.engine.derived`)
        self.derive: Callable[[Detection], Event | None] | None = None
        #: the positions of derived events (the emitter's; in snapshots; shared by a run's shards,
        #: whose engines are given the sharded engine's before they are set up)
        self.derived_seqs: DerivedSeq = getattr(self, "derived_seqs", None) or DerivedSeq()
        if type(self).emit is Outputs.emit:  # why: queueing a detection is then one C call
            self.emit = self._pending.append  # type: ignore[method-assign, assignment]
        #: one owner at a time: every public call holds the lock (re-entered only by callbacks)
        self._lock = threading.RLock()
        self._busy = False

    @property
    def errors(self) -> list[ConditionFault]:
        """The distinct runtime errors of conditions and callbacks so far (first event, count)."""
        return self.fault_log.faults

    def _adopt_faults(self, matcher: object) -> None:
        """Point a matcher's fault sink at this engine's log."""
        sink = getattr(matcher, "faults", None)
        if isinstance(sink, FaultSink):
            sink.log = self.fault_log

    def _owner(self, call: str) -> _Call:
        """Hold the engine for one call (not from inside a callback); ``with`` gives the call's
        result list, delivered when the block ends without an error."""
        return _Call(self, call)

    def _settle(self, out: list[Detection]) -> bool:
        """End of a call: deliver what is pending (an engine also runs the events fed back)."""
        self.deliver(out)
        return False

    def emit(self, detection: Detection) -> None:
        """Queue a detection until the current transitions are complete."""
        self._pending.append(detection)

    def react(self, reaction: Reaction) -> None:
        """Queue a channel reaction until the current transitions are complete."""
        self._pending.append(reaction)

    def record(self, record: TraceRecord) -> None:
        """Queue a trace record until the current transitions are complete."""
        self._pending.append(record)

    def deliver(self, out: list[Detection]) -> None:
        """Hand the queued outputs to the lists, ``out`` (detections) and the callbacks, in order.

        Events fed back (:class:`Fed`) stay queued, ahead of any that these callbacks feed.
        """
        pending = self._pending
        if not pending:  # why: the usual end of a call (one process() per event): nothing queued
            return
        batch = pending[:]
        pending.clear()
        pending.extend(item for item in batch if item.__class__ is Fed)
        plain = self._on_detection is None and self.derive is None
        for item in batch:
            cls = item.__class__
            # Why by class: one queue keeps the order of detections, reactions and trace records
            if cls is Detection:
                out.append(item)  # type: ignore[arg-type]
                if item.extra or not plain:  # type: ignore[union-attr]
                    self.publish(item)  # type: ignore[arg-type]
                elif self.collect:  # why: the usual detection (no counter, callback or emit into)
                    self.detections.append(item)  # type: ignore[arg-type]
            elif cls is Reaction:
                self.publish_reaction(item)  # type: ignore[arg-type]
            elif cls is TraceRecord:
                self.publish_trace(item)  # type: ignore[arg-type]
            elif cls is not Fed:
                self.publish_late(item)  # type: ignore[arg-type]

    def publish(self, detection: Detection) -> None:
        """Count, collect and call back one detection whose transitions are complete."""
        self._publish(detection, counter_of(detection), self.detections, self._on_detection, "on_detection")
        if self.derive is not None and (event := self.derive(detection)) is not None:
            self._pending.append(Fed(event))  # why: processed after the current event, in order

    def publish_reaction(self, reaction: Reaction) -> None:
        """Count, collect and call back one reaction whose transitions are complete."""
        self._publish(reaction, reaction.counter, self.reactions, self._on_reaction, "on_reaction")

    def _publish(
        self,
        record: R,
        counter: str | None,
        kept: list[R],
        callback: Callable[[R], None] | None,
        name: str,
    ) -> None:
        if counter is not None:
            self.counters[counter] = self.counters.get(counter, 0) + 1
        if self.collect:
            kept.append(record)
        if callback is not None:
            self._call(callback, record, name, record.pattern)

    def publish_trace(self, record: TraceRecord) -> None:
        """Collect and call back one trace record."""
        if self.collect:
            self.trace_records.append(record)
        if self._on_trace is not None:
            self._call(self._on_trace, record, "on_trace", record.pattern)

    def publish_late(self, event: Event) -> None:
        """Count, keep and call back one late event."""
        self.late_count += 1
        self.late.append(event)
        if self._on_late is not None:
            self._call(self._on_late, event, "on_late", "")

    def _call(self, callback: Callable[[T], None], item: T, name: str, pattern: str) -> None:
        try:
            callback(item)
        except Exception as exc:  # why: a user's callback is recorded, never the end of a run
            where = f"{name} callback {getattr(callback, '__qualname__', type(callback).__name__)!r}"
            self.fault_log.record(pattern, where, exc, _Origin(item))


class _Origin:
    """The event position, time and key a failed callback's item stands for (for the errors table)."""

    __slots__ = ("key", "seq", "time", "type")

    def __init__(self, item: object) -> None:
        event = getattr(item, "event", None)
        events = getattr(item, "events", None)
        if isinstance(item, Event):
            event = item
        elif event is None and events:
            event = events[-1]
        self.seq: int = getattr(event, "seq", getattr(item, "event_seq", None) or -1)
        self.time = getattr(item, "time", None)
        self.key = getattr(item, "key", None)
        self.type = getattr(event, "type", "?")


class _Call:
    """One public call holding an :class:`Outputs` (see ``Outputs._owner``).

    A class, not a generator context manager: ``process()`` takes one per event, and the
    generator's set-up cost more than the event's own processing.
    """

    __slots__ = ("call", "out", "owner")

    def __init__(self, owner: Outputs, call: str) -> None:
        self.owner = owner
        self.call = call
        self.out: list[Detection] = []

    def __enter__(self) -> list[Detection]:
        owner = self.owner
        owner._lock.acquire()
        if owner._busy:
            owner._lock.release()
            msg = f"{self.call}() cannot be called from inside a callback of the same engine"
            raise CepError(msg)
        owner._busy = True
        return self.out

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        owner = self.owner
        try:
            if kind is None:  # why: an error leaves the pending outputs undelivered, as it always did
                owner._settle(self.out)
        finally:
            owner._busy = False
            owner._pending.clear()
            owner._lock.release()
