"""The Flink operator: a ``KeyedProcessFunction`` hosting the engine's matchers in keyed state.

Each Flink key is ``(run, key)``: one job may carry several independent runs (several pattern sets
over several inputs, e.g. a batch of conformance cases), each with its own
:class:`~workbench.backends.keyed.KeyedDriver` around the engine's one per-key host. The key's
:class:`~workbench.backends.keyed.KeyRecord` lives in one Flink ``ValueState`` (pickled), so
checkpoints and savepoints carry it. One Flink event-time timer per key, at its earliest buffered
event or matcher timer (``KeyRecord.wake``), wakes it; the driver then processes all that the
current watermark admits.
"""

from __future__ import annotations

import io
import math
import pickle
import zlib
from collections.abc import Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyflink.common import Types
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, TimerService
from pyflink.datastream.state import ValueState, ValueStateDescriptor

from workbench.backends.flink.pickling import register, register_engine
from workbench.backends.keyed import HostOutput, KeyedDriver, KeyRecord
from workbench.engine.clock import is_late
from workbench.engine.events import Event
from workbench.engine.gcpause import gc_paused
from workbench.engine.sharding import _encode as encode_key  # the canonical key encoding

__all__ = [
    "BatchItem",
    "EventBatch",
    "FlinkRecord",
    "HeldOutputs",
    "KeyStore",
    "MatcherFunction",
    "OutputRecord",
    "RecordTimestamps",
    "Startup",
    "millis",
    "outputs_of",
    "record_key",
]

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1


#: The Flink timestamp of start-up records: before everything, so they never move the watermark.
STARTUP_TIMESTAMP = LONG_MIN + 1


@dataclass(frozen=True, slots=True)
class Startup:
    """A record that makes the operator schedule a key's start-up timers (``initial_timers``)."""

    key: Hashable


#: An event of a batch, as plain data (pickles without Python code): ``(type, time, key, fields,
#: seq, late, position)``.
BatchItem = tuple[str, int | float, Hashable, Mapping[str, Any], int, bool, int]


@dataclass(frozen=True, slots=True)
class EventBatch:
    """Consecutive events of one key in one record (:data:`BatchItem` each), in arrival order.

    Flink's cost per record (each Python operator, the shuffle) exceeds the matching's; a replay
    whose order is known sends a key's events of one stretch of the input together (see
    :func:`~workbench.backends.flink.run.plan_records`). The record's timestamp is the earliest
    on-time event's.

    The items travel pickled once and compressed, as bytes (``blob``; build with :meth:`of`):
    every Python operator on the way (the timestamps, the key step) unpickles and pickles the
    record again, and for a bytes payload that is a copy instead of one object per event field;
    only the matcher operator reads the items. Compressed (zlib, fastest level: a third of the
    size), the collection a job carries in its graph is shipped and read faster.
    """

    key: Hashable
    blob: bytes

    @classmethod
    def of(cls, key: Hashable, items: tuple[BatchItem, ...]) -> EventBatch:
        """The batch of ``items`` (all of ``key``)."""
        return cls(key, zlib.compress(pickle.dumps(items, pickle.HIGHEST_PROTOCOL), 1))

    @property
    def items(self) -> tuple[BatchItem, ...]:
        """The batch's events as :data:`BatchItem` tuples."""
        # why safe to unpickle: the job's own records, which Flink's pickled type unpickles too
        items: tuple[BatchItem, ...] = pickle.loads(zlib.decompress(self.blob))
        return items

    def events(self) -> Iterator[tuple[Event, bool, int]]:
        """``(event, late, position)`` per item."""
        for kind, time, key, fields, seq, late, position in self.items:
            yield Event(kind, time, key, fields, seq), late, position


@dataclass(frozen=True, slots=True)
class HeldOutputs:
    """Outputs the operator held (``hold``): consecutive pickled lists of :class:`HostOutput`."""

    data: bytes

    def outputs(self) -> Iterator[HostOutput]:
        """The held outputs, in the order they were made."""
        stream = io.BytesIO(self.data)
        while stream.tell() < len(self.data):
            outs: list[HostOutput] = pickle.load(stream)  # why safe: the operator's own pickles
            yield from outs


#: What comes out of the operator: ``(run, output)``; grouped (``grouped=True``), a list of the
#: outputs of one call, or with ``hold`` the outputs held (see :func:`outputs_of`).
OutputRecord = tuple[int, HostOutput | list[HostOutput] | HeldOutputs]

#: What flows into the operator: ``(run, event or Startup or EventBatch, late, timestamp,
#: position)``. ``late`` is the replay plan's verdict; ``timestamp`` the Flink timestamp: the
#: event time in whole milliseconds plus the run's offset (runs of one job follow each other on
#: Flink's time axis, see ``run_offsets``); ``position`` the event's arrival position in its run.
FlinkRecord = tuple[int, Event | Startup | EventBatch, bool, int, int]

# Why: records and key states cross Flink's operators pickled; see pickling.py
register_engine()
register([Startup, EventBatch, HeldOutputs])

STATE_NAME = "cep-workbench-key-state"


def millis(t: int | float, offset: int = 0) -> int:
    """Flink's timestamp for an event time: whole milliseconds, rounded down, plus ``offset``.

    Clamped to Flink's range; an infinite time maps to the end of time, which the final watermark
    still reaches.
    """
    if type(t) is not int:
        if t == math.inf:
            return LONG_MAX
        if t == -math.inf:
            return LONG_MIN + 1
        t = math.floor(t)
    return min(max(t + offset, LONG_MIN + 1), LONG_MAX)


def record_key(record: FlinkRecord) -> str:
    """The Flink key of a record: its run and the canonical encoding of its partition key.

    The encoding is the sharding encoder's, so keys equal in Python (``1``, ``1.0``, ``True``) are
    one Flink key, as they are one key of the local engine; pickled bytes would make them three.
    Latin-1 maps each byte to one character, so the string is the bytes, hashed by Java's String.
    """
    return f"{record[0]}:" + encode_key(record[1].key).decode("latin-1")


class RecordTimestamps(TimestampAssigner):  # type: ignore[misc]
    """Event time of a record, in whole milliseconds."""

    def extract_timestamp(self, value: FlinkRecord, record_timestamp: int) -> int:
        return value[3]


class KeyStore:
    """The records of the operator's keys, read and written for the key Flink is at (``at``).

    Every key holding a record has its Flink key in a small Flink ``ValueState`` (text, no
    pickling): a timer finds its key there, so it reads a record only of a key that has one
    (while hunting a divergence at parallelism 2 we stopped relying on ``ctx.get_current_key()``;
    it turned out not to be the cause, see ``docs/flink.md``).

    Durable (``record`` given, the default): the record is in a Flink ``ValueState`` (pickled), so
    checkpoints and savepoints carry it. Otherwise the records live only in this Python object (no
    pickling at all), for a job that takes no checkpoint or savepoint (a finite run whose results
    are collected).
    """

    def __init__(self, handle: ValueState, record: ValueState | None) -> None:
        self.handle = handle
        self.state = record
        self.records: dict[str, KeyRecord] = {}
        self.key = ""

    def at(self, key: str) -> None:
        """Work on ``key`` (the Flink key of the record being processed)."""
        self.key = key

    def at_timer(self) -> str | None:
        """Work on the key whose timer fires; ``None`` when it holds no record."""
        key: str | None = self.handle.value()
        if key is not None:
            self.key = key
        return key

    def value(self) -> KeyRecord | None:
        if self.state is not None:
            record: KeyRecord | None = self.state.value()
            return record
        return self.records.get(self.key)

    def update(self, record: KeyRecord) -> None:
        if self.state is not None:
            self.handle.update(self.key)  # why every time: one text write, cheaper than reading it
            self.state.update(record)
        elif self.key not in self.records:  # why only then: the handle never changes while it lives
            self.handle.update(self.key)
            self.records[self.key] = record

    def clear(self) -> None:
        self.records.pop(self.key, None)
        self.handle.clear()
        if self.state is not None:
            self.state.clear()


class MatcherFunction(KeyedProcessFunction):  # type: ignore[misc]
    """Host the matchers of every run of the job; state per ``(run, key)`` in Flink keyed state.

    Args:
        hosts: one :class:`KeyedDriver` per run, indexed by the run number of the records.
        offsets: per run, what its times are shifted by on Flink's time axis.
        bound: the input's out-of-orderness (the largest of the runs'): an event at ``t`` that
            is on time promises that no event of its key below ``t - bound`` will still come, so
            the operator processes what lies below at once instead of waiting for a Flink timer
            (at ``bound == 0`` the event itself too). ``None``: only timers process (the chain of
            ``emit into`` levels, which must release outputs on watermarks).
        durable: keep the key records in Flink state (see :class:`KeyStore`).
        grouped: emit the outputs of one call as one ``(run, [HostOutput, ...])`` record per run
            instead of one record each (Flink's cost per record; :func:`outputs_of` flattens).
        hold: with ``grouped``, keep outputs in the operator until this many have gathered or
            the input ends (the final watermark fires a timer at the end of time) and emit them
            as one record per run: a collected job's client fetches each record with a round
            trip into the JVM. ``0``: emit at once. Only for a finite job without checkpoints
            (held outputs are in no Flink state).
    """

    _state: KeyStore

    def __init__(
        self,
        hosts: Sequence[KeyedDriver],
        offsets: Sequence[int],
        *,
        bound: int | float | None = None,
        durable: bool = True,
        grouped: bool = False,
        hold: int = 0,
    ) -> None:
        self.hosts = list(hosts)
        self.offsets = list(offsets)
        self.bound = bound
        self.durable = durable
        self.grouped = grouped
        self.hold = hold if grouped else 0
        self._held: dict[int, list[bytes]] = {}
        self._held_count = 0
        self._flush_armed = self._ended = False

    def open(self, runtime_context: RuntimeContext) -> None:
        handle = runtime_context.get_state(ValueStateDescriptor(f"{STATE_NAME}-key", Types.STRING()))
        record = None
        if self.durable:
            record = runtime_context.get_state(ValueStateDescriptor(STATE_NAME, Types.PICKLED_BYTE_ARRAY()))
        self._state = KeyStore(handle, record)

    def process_element(
        self, value: FlinkRecord, ctx: KeyedProcessFunction.Context
    ) -> Iterable[OutputRecord]:
        with gc_paused():  # why: see _collect
            out = self._collect(self._element(value, ctx))
        return self._release(out, ctx.timer_service(), end=False) if self.hold else out

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterable[OutputRecord]:
        with gc_paused():
            out = self._collect(self._timer(timestamp, ctx))
        return self._release(out, ctx.timer_service(), end=timestamp == LONG_MAX) if self.hold else out

    def _release(self, out: list[OutputRecord], timers: TimerService, *, end: bool) -> list[OutputRecord]:
        """``hold``: add a call's grouped outputs to the held ones; emit all once enough or at the end.

        Held pickled (as Flink would pickle them on the way out): bytes, which the garbage
        collector need not walk again and again while they wait.
        """
        for run, outs in out:
            assert isinstance(outs, list)  # grouped
            self._held.setdefault(run, []).append(pickle.dumps(outs, pickle.HIGHEST_PROTOCOL))
            self._held_count += len(outs)
        # why keep releasing after the end: other keys' timers may still fire at the final watermark
        self._ended = self._ended or end
        if self._ended or self._held_count >= self.hold:
            held, self._held, self._held_count = self._held, {}, 0
            return [(run, HeldOutputs(b"".join(blobs))) for run, blobs in held.items()]
        if self._held_count and not self._flush_armed:  # why: the final watermark releases the rest
            timers.register_event_time_timer(LONG_MAX)
            self._flush_armed = True
        return []

    def _collect(self, outputs: Iterator[tuple[int, HostOutput]]) -> list[OutputRecord]:
        """Do the call's work now, while the caller keeps the cyclic garbage collector paused.

        Why: a batch makes thousands of short-lived acyclic objects (events, matcher records,
        outputs), and each burst of allocations starts collections that walk every object of the
        interpreter again (PyFlink's own among them, in thread mode): measured outside Flink, a
        third of the operator's time. Paused per call, the collector still runs between calls.
        """
        if self.grouped:
            return list(_grouped(outputs))
        return list(outputs)

    def _element(
        self, value: FlinkRecord, ctx: KeyedProcessFunction.Context
    ) -> Iterator[tuple[int, HostOutput]]:
        run, event, late, timestamp, position = value
        host = self.hosts[run]
        timers = ctx.timer_service()
        store = self._state
        store.at(record_key(value))  # the key selector's own value, without a call into Java
        if isinstance(event, Startup):
            state = store.value() or KeyRecord(key=event.key)
            host.initial_timers(state, event.key)
            self._wake(state, host.next_due(state), self.offsets[run], timers)
            store.update(state)
        elif isinstance(event, EventBatch):  # why: several events of the key, one Flink record
            yield from self._batch(run, event, timers)
        else:
            yield from self._event(run, event, late, timestamp, position, timers, timers.current_watermark())

    def _batch(self, run: int, batch: EventBatch, timers: TimerService) -> Iterator[tuple[int, HostOutput]]:
        """A key's events in arrival order: the late ones reported, the others processed at once.

        Processing up to the last on-time event in one ``advance`` is processing after each event
        what it admits: the driver takes buffered events and timers in time order either way.
        """
        bound, offset, host = self.bound, self.offsets[run], self.hosts[run]
        watermark = timers.current_watermark()  # why once: it cannot move during this call
        if bound is None or not bound < math.inf:  # why: only the watermark tells what is due
            for event, late, position in batch.events():
                timestamp = millis(event.time, offset)
                yield from self._event(run, event, late, timestamp, position, timers, watermark)
            return
        store = self._state
        state = store.value()
        due: list[tuple[Event, int]] = []
        targets = host.host.targets
        for kind, time, key, fields, seq, late, position in batch.items:
            if late or (watermark is not None and is_late((watermark, True), millis(time, offset))):
                for out in host.late(Event(kind, time, key, fields, seq), position):
                    yield run, out
            elif targets(kind):  # why: an event no matcher uses is never even built
                due.append((Event(kind, time, key, fields, seq), position))
        if not due:
            return
        if state is None:
            state = KeyRecord(key=due[0][0].key)
        if bound == 0:  # why: in order, each event is due at once: no trip through the event heap
            outputs = host.advance_in_order(state, state.key, due)
        else:
            for event, position in due:
                host.accept(state, event, position)
            outputs, _ = host.advance(state, state.key, due[-1][0].time - bound)
        self._settle(state, host, offset, timers)
        for out in outputs:
            yield run, out

    def _event(
        self,
        run: int,
        event: Event,
        late: bool,
        timestamp: int,
        position: int,
        timers: TimerService,
        watermark: int | None,
    ) -> Iterator[tuple[int, HostOutput]]:
        """One event of the current key: late, buffered for a timer, or processed at once."""
        host = self.hosts[run]
        # Why a closed watermark: Flink's promise is that no timestamp <= the watermark still comes
        if late or (watermark is not None and is_late((watermark, True), timestamp)):
            for out in host.late(event, position):
                yield run, out
            return
        if not host.wants(event):
            return
        store = self._state
        state = store.value()
        if state is None:
            state = KeyRecord(key=event.key)
        host.accept(state, event, position)
        bound = self.bound
        if bound is None or not bound < math.inf:  # why: only the watermark tells what is due
            if state.wake is None or timestamp < state.wake:
                timers.register_event_time_timer(timestamp)
                state.wake = timestamp
            store.update(state)
            return
        # Why at once: this key's later events lie at or above event.time - bound (in order at 0)
        outputs, _ = host.advance(state, state.key, event.time - bound, through=bound == 0)
        self._settle(state, host, self.offsets[run], timers)
        for out in outputs:
            yield run, out

    def _timer(
        self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext
    ) -> Iterator[tuple[int, HostOutput]]:
        store = self._state
        key = store.at_timer()
        state: KeyRecord | None = None if key is None else store.value()
        if key is None or state is None:
            return
        run = int(key.partition(":")[0])
        timers = ctx.timer_service()
        watermark = timers.current_watermark()
        offset = self.offsets[run]
        below = (timestamp if watermark is None else max(timestamp, watermark)) + 1 - offset
        if state.wake is not None and state.wake <= timestamp:
            state.wake = None  # this is the wake-up (or an earlier one was)
        host = self.hosts[run]
        outputs, _ = host.advance(state, state.key, below)
        self._settle(state, host, offset, timers)
        for out in outputs:
            yield run, out

    def _settle(self, state: KeyRecord, host: KeyedDriver, offset: int, timers: TimerService) -> None:
        """After processing: wake the key at its next due item; keep its record, or clear it if empty."""
        self._wake(state, host.next_due(state), offset, timers)
        if state.is_empty():
            self._state.clear()
        else:
            self._state.update(state)

    @staticmethod
    def _wake(state: KeyRecord, due: int | float | None, offset: int, timers: TimerService) -> None:
        """Keep one Flink timer per key, at the next due item (earlier ones stay registered)."""
        if due is None:
            return
        at = millis(due, offset)
        if state.wake is None or at < state.wake:
            timers.register_event_time_timer(at)
            state.wake = at


def _grouped(outputs: Iterator[tuple[int, HostOutput]]) -> Iterator[tuple[int, list[HostOutput]]]:
    """The outputs of one call, one list per run (in their order)."""
    runs: dict[int, list[HostOutput]] = {}
    for run, out in outputs:
        runs.setdefault(run, []).append(out)
    yield from runs.items()


def outputs_of(
    records: Iterable[OutputRecord],
) -> Iterator[tuple[int, HostOutput]]:
    """The operator's output records, grouped (``grouped=True``) and held ones flattened."""
    for run, out in records:
        if isinstance(out, list):
            for one in out:
                yield run, one
        elif isinstance(out, HeldOutputs):
            for one in out.outputs():
                yield run, one
        else:
            yield run, out
