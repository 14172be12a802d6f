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

import math
from collections.abc import Hashable, Iterator, Sequence
from dataclasses import dataclass

from pyflink.common import Types
from pyflink.common.watermark_strategy import TimestampAssigner
from pyflink.datastream import KeyedProcessFunction, RuntimeContext, TimerService
from pyflink.datastream.state import ValueState, ValueStateDescriptor

from workbench.backends.keyed import HostOutput, KeyedDriver, KeyRecord
from workbench.engine.clock import is_late
from workbench.engine.events import Event
from workbench.engine.sharding import _encode as encode_key  # the canonical key encoding

__all__ = ["FlinkRecord", "MatcherFunction", "RecordTimestamps", "Startup", "millis", "record_key"]

LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1

#: The Flink timestamp of start-up records: before everything, so they never move the watermark.
STARTUP_TIMESTAMP = LONG_MIN + 1


@dataclass(frozen=True, slots=True)
class Startup:
    """A record that makes the operator schedule a key's start-up timers (``initial_timers``)."""

    key: Hashable


#: What flows into the operator: ``(run, event or Startup, late, timestamp, position)``. ``late`` is
#: the replay plan's verdict; ``timestamp`` the Flink timestamp: the event time in whole
#: milliseconds plus the run's offset (runs of one job follow each other on Flink's time axis, see
#: ``run_offsets``); ``position`` the event's arrival position within its run.
FlinkRecord = tuple[int, Event | Startup, bool, int, int]

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


class MatcherFunction(KeyedProcessFunction):  # type: ignore[misc]
    """Host the matchers of every run of the job; state per ``(run, key)`` in Flink keyed state.

    Args:
        hosts: one :class:`KeyedDriver` per run, indexed by the run number of the records.
        offsets: per run, what its times are shifted by on Flink's time axis.
    """

    _state: ValueState

    def __init__(self, hosts: Sequence[KeyedDriver], offsets: Sequence[int]) -> None:
        self.hosts = list(hosts)
        self.offsets = list(offsets)

    def open(self, runtime_context: RuntimeContext) -> None:
        descriptor = ValueStateDescriptor(STATE_NAME, Types.PICKLED_BYTE_ARRAY())
        self._state = runtime_context.get_state(descriptor)

    def process_element(
        self, value: FlinkRecord, ctx: KeyedProcessFunction.Context
    ) -> Iterator[tuple[int, HostOutput]]:
        run, event, late, timestamp, position = value
        host = self.hosts[run]
        timers = ctx.timer_service()
        state: KeyRecord | None
        if isinstance(event, Startup):
            state = self._state.value() or KeyRecord(key=event.key)
            host.initial_timers(state, event.key)
            self._wake(state, host.next_due(state), self.offsets[run], timers)
            self._state.update(state)
            return
        watermark = timers.current_watermark()
        # Why a closed watermark: Flink's promise is that no timestamp <= the watermark still comes
        if late or (watermark is not None and is_late((watermark, True), timestamp)):
            for out in host.late(event, position):
                yield run, out
            return
        if not host.wants(event):
            return
        state = self._state.value()
        if state is None:
            state = KeyRecord(key=event.key)
        host.accept(state, event, position)
        if state.wake is None or timestamp < state.wake:
            timers.register_event_time_timer(timestamp)
            state.wake = timestamp
        self._state.update(state)

    def on_timer(
        self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext
    ) -> Iterator[tuple[int, HostOutput]]:
        state: KeyRecord | None = self._state.value()
        if state is None:
            return
        run = int(ctx.get_current_key().partition(":")[0])
        key = state.key
        timers = ctx.timer_service()
        watermark = timers.current_watermark()
        offset = self.offsets[run]
        below = (timestamp if watermark is None else max(timestamp, watermark)) + 1 - offset
        if state.wake is not None and state.wake <= timestamp:
            state.wake = None  # this is the wake-up (or an earlier one was)
        host = self.hosts[run]
        outputs, _ = host.advance(state, key, below)
        self._wake(state, host.next_due(state), offset, timers)
        if state.is_empty():
            self._state.clear()
        else:
            self._state.update(state)
        for out in outputs:
            yield run, out

    @staticmethod
    def _wake(state: KeyRecord, due: int | float | None, offset: int, timers: TimerService) -> None:
        """Keep one Flink timer per key, at the next due item (earlier ones stay registered)."""
        if due is None:
            return
        at = millis(due, offset)
        if state.wake is None or at < state.wake:
            timers.register_event_time_timer(at)
            state.wake = at
