"""``emit into`` on Flink: a chain of keyed operators, one per level of derived events.

Level 0 runs the patterns that receive no derived type (see
:mod:`~workbench.backends.flink.levels`); each level passes every input event on to the next one
(a side output, with the record's event time) and adds the events its own emitting patterns
derive. Derived events keep the detection's key, so the next operator is keyed the same way; they
leave on the watermark that releases the detection, before the operator forwards it, so they are
never late downstream. Detections of every level go to the results.

The local engine processes a derived event right after the item (event or timer) that completed
its detection, breadth first when derived events derive more. The chain keeps that order with
*positions*: every event carries ``(*item, depth, *path)``, where ``item`` is the engine's order
key of the input item the chain started from (``(time, 0, p, 0, 0, p)`` for the input event at
position ``p``), ``depth`` how many derivations lie between, ``path`` the output numbers along
them. Each operator buffers by ``(time, position)``, and outputs are ordered by the position of
the item that produced them plus the output number, so the results sort into the engine's order.

Derived events get provisional ``seq`` numbers per key (unique per run and key); the results
renumber them -2, -3, ... in the order the engine derives them (the order of the emitting
detections), see :func:`renumber`. A derived event earlier than the item that derived it (a
match released after its last event) is late, as in the engine.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from pyflink.common import Types
from pyflink.datastream import DataStream, KeyedProcessFunction, OutputTag, RuntimeContext
from pyflink.datastream.state import ValueState, ValueStateDescriptor

from workbench.backends.flink.function import FlinkRecord, MatcherFunction, Startup, millis, record_key
from workbench.backends.flink.pipeline import watermark_strategy
from workbench.backends.keyed import HostOutput, KeyedDriver, Order, OutputKind
from workbench.engine.derived import FIRST_DERIVED_SEQ, DerivedSeq, Emitter
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.host import late_record

__all__ = ["ChainFunction", "chain_records", "detect_chain", "renumber"]

#: The side output that carries a level's events to the next level.
FORWARD = OutputTag("cep-forward")

#: The kind of the output that records a derived event (for :func:`renumber`, not a result).
DERIVED = "derived"


def chain_records(records: Iterable[FlinkRecord]) -> list[FlinkRecord]:
    """The job's records with chain positions: position ``p`` at time ``t`` -> ``(t, 0, p, 0, 0, p, 0)``."""
    return [
        r if isinstance(r[1], Startup) else (r[0], r[1], r[2], r[3], (r[1].time, 0, r[4], 0, 0, r[4], 0))  # type: ignore[misc,union-attr]
        for r in records
    ]


def canonical(order: Order) -> Order:
    """A driver's output order in chain form: ``(*item, depth, *path, n)`` for every kind of item."""
    if order[1] == 0:  # why: an event item: its position already is ``(*item, depth, *path)``
        return (*order[2], order[-1])  # type: ignore[misc]
    time, kind, ptime, pkind, pseq, root, n = order
    # why tuples: a start-up timer's parent fields are -1, an event's are chain positions
    return (time, kind, ptime, pkind, _boxed(pseq), _boxed(root), 0, n)  # type: ignore[return-value]


def _boxed(value: object) -> tuple[object, ...]:
    return value if isinstance(value, tuple) else (value,)


class ChainFunction(MatcherFunction):
    """One level of the chain: the level's matchers, forwarding events and deriving new ones.

    Args:
        hosts: per run, the driver of this level's matchers.
        offsets: per run, its shift on Flink's time axis.
        emits: per run, pattern name -> the type its detections become.
        level, levels: this level's number and how many there are (``levels`` keeps provisional
            ``seq`` numbers of different levels apart).
    """

    _derived: ValueState

    def __init__(
        self,
        hosts: Sequence[KeyedDriver],
        offsets: Sequence[int],
        emits: Sequence[dict[str, str]],
        level: int,
        levels: int,
    ) -> None:
        super().__init__(hosts, offsets)
        self.emits = list(emits)
        self.level, self.levels = level, levels
        self.forward = level + 1 < levels

    def open(self, runtime_context: RuntimeContext) -> None:
        super().open(runtime_context)
        descriptor = ValueStateDescriptor(f"cep-workbench-derived-{self.level}", Types.LONG())
        self._derived = runtime_context.get_state(descriptor)

    def process_element(
        self, value: FlinkRecord, ctx: KeyedProcessFunction.Context
    ) -> Iterator[tuple[Any, Any]]:
        outs = list(self._element(value, ctx))  # why not grouped: this operator never groups
        for run, out in outs:  # only a late event and its trace record
            yield run, out._replace(order=canonical(out.order))
        if self.forward and not outs:  # why not a late one: every level would list it as late again
            yield FORWARD, value

    def on_timer(self, timestamp: int, ctx: KeyedProcessFunction.OnTimerContext) -> Iterator[tuple[Any, Any]]:
        for run, out in self._timer(timestamp, ctx):
            order = canonical(out.order)
            yield run, out._replace(order=order)
            payload = out.payload
            if isinstance(payload, Detection) and payload.pattern in self.emits[run]:
                yield from self._derive(run, payload, order)

    def _derive(self, run: int, detection: Detection, order: Order) -> Iterator[tuple[Any, Any]]:
        """The event a detection becomes: to the results (for numbering) and to the next level."""
        count = self._derived.value() or 0
        emitter = Emitter(self.emits[run], DerivedSeq(FIRST_DERIVED_SEQ - (count * self.levels + self.level)))
        event = emitter.derive(detection)
        if event is None:  # why: a timeout becomes no event
            return
        self._derived.update(count + 1)
        position = (*order[:6], order[6] + 1, *order[7:])
        yield run, HostOutput(order, DERIVED, event)
        if event.time < order[0]:  # why: released after its last event: late, as in the engine
            yield run, HostOutput(position, OutputKind.LATE, event)
            if self.hosts[run].host.context.tracing:
                yield run, HostOutput(position, OutputKind.TRACE, late_record(event))
        elif self.forward:
            yield FORWARD, (run, event, False, millis(event.time, self.offsets[run]), position)


def detect_chain(
    records: DataStream,
    levels: Sequence[Sequence[KeyedDriver]],
    offsets: Sequence[int],
    emits: Sequence[dict[str, str]],
    *,
    out_of_orderness: int | float = 0,
    name: str = "cep",
) -> DataStream:
    """Run ``levels`` (per level, one driver per run) as a chain of keyed operators.

    ``records`` carry chain positions (:func:`chain_records`). Returns the union of every level's
    ``(run, HostOutput)`` records.
    """
    stream = records.assign_timestamps_and_watermarks(watermark_strategy(out_of_orderness))
    stream = stream.name(f"{name}-watermarks").uid(f"{name}-watermarks").set_parallelism(1)
    results: list[DataStream] = []
    for n, hosts in enumerate(levels):
        function = ChainFunction(hosts, offsets, emits, n, len(levels))
        keyed = stream.key_by(record_key, key_type=Types.STRING())
        out = keyed.process(function, output_type=Types.PICKLED_BYTE_ARRAY())
        out = out.name(f"{name}-level-{n}").uid(f"{name}-level-{n}")
        results.append(out)
        stream = out.get_side_output(FORWARD)
    return results[0].union(*results[1:]) if len(results) > 1 else results[0]


def renumber(outputs: Sequence[HostOutput]) -> list[HostOutput]:
    """One run's outputs with derived events numbered as the engine numbers them (-2, -3, ...).

    The engine numbers a derived event when its detection is delivered, so in the order of the
    emitting detections; the provisional numbers are unique per key.
    """
    derived = sorted((o for o in outputs if o.kind == DERIVED), key=lambda o: o.order)
    if not derived:
        return list(outputs)
    seqs: dict[tuple[Hashable, int], int] = {}
    for i, out in enumerate(derived):
        event = out.payload
        assert isinstance(event, Event)
        seqs[(event.key, event.seq)] = FIRST_DERIVED_SEQ - i

    def fix(event: Event) -> Event:
        new = seqs.get((event.key, event.seq)) if event.seq < -1 else None
        return event if new is None else event.with_seq(new)

    fixed = []
    for out in outputs:
        payload = out.payload
        if out.kind == DERIVED:
            continue
        if isinstance(payload, Detection):
            initiator = None if payload.initiator is None else fix(payload.initiator)
            payload = replace(payload, events=tuple(map(fix, payload.events)), initiator=initiator)
        elif isinstance(payload, Event):
            payload = fix(payload)
        fixed.append(out._replace(payload=payload))
    return fixed
