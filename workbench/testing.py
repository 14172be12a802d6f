"""Test sources and sinks over the one :class:`~workbench.engine.runtime.Engine` (like ``bytewax.testing``).

* :class:`TestingSource`: a finite list of events, with :class:`Advance` markers that move the
  watermark (``Engine.advance_time``) between them;
* :class:`TestingSink`: collects the detections (the engine's ``on_detection`` callback);
* :func:`run_main`: run patterns over a source into a sink, then flush;
* :class:`NFATestHarness`: Flink's NFA-level test semantics for one sequence pattern (what Flink's
  own ``NFATestHarness`` does): events are processed in *input* order whatever their timestamps,
  and time passes only with events (and explicit :meth:`NFATestHarness.advance` calls), never with
  timers -- a pending ``notFollowedBy`` match is released with the time of the next event, not at
  its deadline. The conformance cases without an ``operator`` section use it.

Everything runs on the public ``Engine``: the harness hosts its matcher behind
:class:`InputOrder`, a matcher that reads each event from the engine's *carrier* event (stamped with
the harness's own monotone clock, so the engine never sees an event as late) and drops timers.

>>> from workbench.engine.nfa import SequencePattern, Stage
>>> p = SequencePattern("p", (Stage("a", "e.type == 'a'"), Stage("b", "e.type == 'b'")))
>>> sink = TestingSink()
>>> _ = run_main([p], TestingSource([{"type": "a", "time": 1}, {"type": "b", "time": 2}]), sink)
>>> [d.channels for d in sink]
[('a', 'b')]
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from workbench.engine.clock import stamp
from workbench.engine.detection import Detection
from workbench.engine.events import Event, EventLike
from workbench.engine.matcher import Context, Matcher, Pattern
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.plans import PlanState
from workbench.engine.runtime import Engine

__all__ = ["Advance", "InputOrder", "NFATestHarness", "TestingSink", "TestingSource", "run_main"]

#: an input event: a built event or a mapping (see :func:`~workbench.engine.events.make_event`)
RawEvent = EventLike


@dataclass(frozen=True, slots=True)
class Advance:
    """A marker in a :class:`TestingSource`: no event with ``time <= watermark`` follows."""

    watermark: int | float


class TestingSource:
    """A finite, replayable input: events and :class:`Advance` markers, in order."""

    def __init__(self, items: Iterable[RawEvent | Advance]) -> None:
        self.items: list[RawEvent | Advance] = list(items)

    def __iter__(self) -> Iterator[RawEvent | Advance]:
        return iter(self.items)


class TestingSink:
    """Collects detections, in emission order; pass it as ``on_detection`` (it is callable)."""

    def __init__(self) -> None:
        self.detections: list[Detection] = []

    def __call__(self, detection: Detection) -> None:
        self.detections.append(detection)

    def __iter__(self) -> Iterator[Detection]:
        return iter(self.detections)

    def __len__(self) -> int:
        return len(self.detections)

    def matches(self) -> list[Detection]:
        """The detections that are matches (no timeouts)."""
        return [d for d in self.detections if d.kind == "match"]


def run_main(
    patterns: Sequence[Pattern | Matcher],
    source: Iterable[RawEvent | Advance],
    sink: TestingSink | None = None,
    *,
    finish: bool = True,
    out_of_orderness: int | float = 0,
    trace: bool = False,
) -> Engine:
    """Run ``patterns`` over ``source`` into ``sink`` on one :class:`Engine`, flushing at the end.

    Returns the engine (its ``detections``, ``late``, ``errors`` and ``trace_records``).
    """
    engine = Engine(
        patterns,
        out_of_orderness=out_of_orderness,
        trace=trace,
        on_detection=sink,
    )
    for item in source:
        if isinstance(item, Advance):
            engine.advance_time(item.watermark)
        else:
            engine.process(item)
    if finish:
        engine.finish()
    return engine


# ---------------------------------------------------------------------- Flink's NFA-level semantics
_EVENT = "event"  # a carrier's field: the event to process
_ADVANCE = "advance"  # a carrier's field: the time to advance the key to


class InputOrder:
    """A sequence matcher in Flink's NFA-level time, for an :class:`Engine` fed carrier events.

    Every carrier reaches it (``event_types`` is ``None``): the carried event is processed after
    the key's time is advanced to it (as Flink's tests call ``advanceTime`` then ``process``),
    or the key is advanced to the carried time. States are never dropped, as in Flink's tests.
    """

    def __init__(self, matcher: NFAMatcher) -> None:
        self.matcher = matcher
        self.name = matcher.name
        self.faults = matcher.faults  # the engine records the conditions' errors

    def event_types(self) -> frozenset[str] | None:
        return None

    def new_state(self, key: Hashable) -> PlanState:
        return self.matcher.new_state(key)

    def process(self, state: PlanState, event: Event, ctx: Context) -> None:
        carried = event.fields.get(_EVENT)
        if isinstance(carried, Event):
            # why advance first: Flink's tests call advanceTime before every event, equal times
            # too, where its operator (and the engine) checks windows once per timestamp
            self.matcher.advance(state, carried.time, ctx)
            self.matcher.process(state, carried, ctx)
        else:
            self.matcher.advance(state, event[_ADVANCE], ctx)

    def on_timer(self, state: PlanState, time: int | float, token: Hashable, ctx: Context) -> None:
        """Dropped: at the NFA level time passes only with carried events and explicit advances."""

    def is_idle(self, state: PlanState) -> bool:
        return False


class NFATestHarness:
    """Feed events to one sequence pattern in input order, per key, advancing time before each.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> h = NFATestHarness(SequencePattern("p", (Stage("a", "e.type == 'a'"), Stage("b", "e.type == 'b'"))))
    >>> h.feed({"type": "a", "time": 1}), len(h.feed({"type": "b", "time": 2}))
    ([], 1)
    """

    def __init__(self, pattern: SequencePattern | NFAMatcher, *, trace: bool = False) -> None:
        self.matcher = pattern if isinstance(pattern, NFAMatcher) else NFAMatcher(pattern)
        self.engine = Engine([InputOrder(self.matcher)], trace=trace)
        self._seq = 0
        self._clock: int | float = -math.inf
        self._keys: dict[Hashable, None] = {}  # keys in the order of their first event

    @property
    def detections(self) -> list[Detection]:
        """Everything emitted so far."""
        return self.engine.detections

    def state(self, key: Hashable = None) -> PlanState | None:
        """The key's state (``None`` before its first event)."""
        state: PlanState | None = self.engine.state_of(self.matcher.name, key)
        return state

    def feed(self, raw: RawEvent) -> list[Detection]:
        """Advance the event's key to its time, then process it; return what was emitted."""
        event = stamp(raw, self._seq)
        self._seq += 1
        self._keys.setdefault(event.key)
        return self.engine.process(self._carrier(event.type, event.time, event.key, {_EVENT: event}))

    def advance(self, time: int | float) -> list[Detection]:
        """Advance every key to ``time`` (timeouts, pending ``notFollowedBy`` matches)."""
        out: list[Detection] = []
        for key in self._keys:
            out.extend(self.engine.process(self._carrier("", time, key, {_ADVANCE: time})))
        return out

    def _carrier(self, typ: str, time: int | float, key: Hashable, fields: dict[str, object]) -> Event:
        # The engine's clock follows the harness's: never backwards, so no input is ever late.
        self._clock = max(self._clock, time)
        return Event(typ, self._clock, key, fields)
