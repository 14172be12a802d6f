"""The keyed runtime: splitter, event-time clock, watermarks, timers, late events.

:class:`Engine` runs many patterns over one stream. It is the clock
(:class:`~workbench.engine.clock.EventClock`: watermark, lateness, ``seq`` stamping) plus a table
of per-key states, driving the one per-key host (:class:`~workbench.engine.host.KeyHost`). Each
event is validated, stamped with its arrival position (``seq``), routed by key (the splitter:
Prova's conversation id, Flink's ``keyBy``, the patent's stream splitter) and by event type to the
matchers that can use it, and handed to the host together with that key's state.

Time and ordering rules (event-time mode, the default):

* The watermark follows Flink: ``advance_time(w)`` declares that no event with ``time <= w`` will
  arrive any more. Every buffered event with ``time <= w`` is processed and every timer with
  ``time <= w`` fires.
* With ``out_of_orderness=B`` the engine derives a watermark from the events themselves: after an
  event, events with ``time <= max_seen - B`` are released (in ``(time, arrival)`` order), while
  timers fire only for ``time < max_seen - B`` -- an event may still arrive at exactly
  ``max_seen - B``. With ``B = 0`` an in-order stream is processed immediately.
* **Ties**: at one timestamp, events come first, then timers (Prova's documented "event first"
  resolution, ``prova.md`` 9.15); equal-time events keep arrival order (``order_by``: the order of
  a field or key, as Flink's ``EventComparator``; the events of one time are then held until time
  passes it and sorted); equal-time timers fire in the order they were scheduled. A matcher that
  must act *before* an event at a boundary (Flink's ``within`` prunes at ``t - t_first >= window``)
  checks that in ``process`` itself.
* An event older than the watermark (``time < max_seen - B``, or ``time <= w`` after
  ``advance_time(w)``) is **late**: it is not matched, it is appended to :attr:`Engine.late`, counted
  in ``late_count``, passed to ``on_late`` callbacks and traced. Nothing is dropped silently.

Processing-time mode (``time_mode="processing"``) stamps each event with the clock at arrival and processes
it at once; :meth:`Engine.tick` fires the timers the clock has passed (a live feed calls it periodically).
"""

from __future__ import annotations

import heapq
import itertools
import time as _time
from collections.abc import Callable, Hashable, Iterable, Mapping
from typing import Any, Literal, Unpack

from workbench.engine.clock import EventClock, OrderBy, stamp, tie_order
from workbench.engine.derived import emitter_of
from workbench.engine.detection import Detection
from workbench.engine.events import Event, EventLike
from workbench.engine.families import compile_matcher
from workbench.engine.fused import Loop, Step, build_loop, build_step
from workbench.engine.gcpause import RELAX_FROM, gc_relaxed
from workbench.engine.host import KeyHost, KeyState
from workbench.engine.imaging import EngineSnapshot, Time, Timer
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.outputs import Fed, OutputOptions
from workbench.engine.result import RunResult, run
from workbench.engine.shedding import DEFAULT_MAX_LIVE, Shedder
from workbench.engine.timekeeping import Clock, Timekeeping
from workbench.errors import CepError, PatternError

__all__ = ["Engine", "EngineSnapshot", "KeyState", "RunResult", "run"]


def wall_clock_ms() -> float:
    """Milliseconds since the epoch, the default processing-time clock."""
    return _time.time() * 1000.0


class Engine(Timekeeping):
    """Run several patterns over one keyed stream.

    Args:
        patterns: pattern objects (anything with ``name`` and ``compile()``) or compiled matchers.
        out_of_orderness: how far (ms) behind the newest event an event may arrive and still be
            sorted into place instead of being late.
        time_mode: ``"event"`` (default) or ``"processing"`` (events stamped with ``clock()``).
        clock: the processing-time clock in ms (default: wall clock).
        forget_idle_keys: drop a key's instance counters with its idle states (see ``HostContext``).
        max_live: the most partial matches and group instances live at once across all keys and
            patterns (``None``: no limit); past it the oldest are dropped (see
            :mod:`~workbench.engine.shedding`), alongside each pattern's per-key cap.
        trace: record state changes (see :class:`~workbench.engine.detection.TraceRecord`).
        on_detection / on_reaction / on_late / on_trace: callbacks, called synchronously.
        collect: keep detections, reactions and trace records in lists on the engine (default).
        strict: stop at the first runtime error of a condition (:class:`CepRuntimeError`) instead
            of recording it in :attr:`errors` and treating the event as not matching.
        order_by: order equal-time events by a field, a list of fields or a key function (stable;
            see :func:`~workbench.engine.clock.tie_order`) instead of by arrival.

    >>> from workbench.engine.runtime import Engine
    >>> Engine([]).process({"type": "a", "time": 1})
    []
    """

    def __init__(
        self,
        patterns: Iterable[Pattern | Matcher] = (),
        *,
        out_of_orderness: int | float = 0,
        time_mode: Literal["event", "processing"] = "event",
        clock: Clock | None = None,
        trace: bool = False,
        forget_idle_keys: bool = False,
        max_live: int | None = DEFAULT_MAX_LIVE,
        order_by: OrderBy | None = None,
        **outputs: Unpack[OutputOptions],
    ) -> None:
        if time_mode not in ("event", "processing") or (order_by is not None and time_mode != "event"):
            msg = f"time_mode must be 'event' (or 'processing' without order_by), got {time_mode!r}"
            raise CepError(msg)
        #: the engine-wide budget of partial matches and group instances (checked between events)
        self.shedder = Shedder(max_live)
        self.order_by = order_by
        #: the sort key of equal-time events (``None``: arrival order)
        self._order = tie_order(order_by)
        #: the watermark, the newest event time and the next arrival position
        self.event_clock = EventClock(out_of_orderness)
        self.out_of_orderness = out_of_orderness
        self.time_mode = time_mode
        self.clock: Clock = clock or wall_clock_ms
        self.tracing = trace
        super().__init__(**outputs)
        self.host = KeyHost((), self, tracing=trace, forget=forget_idle_keys)
        self.matchers: list[Matcher] = self.host.matchers
        self._keys: dict[Hashable, KeyState] = {}
        self._timers: list[Timer] = []
        self._timer_seq = itertools.count()
        self._buffer: list[tuple[Time, int, Event]] = []
        self._processing = time_mode == "processing"
        #: the fused loop of in-order events (built on first use, again after :meth:`add`)
        self._loop: Loop | None = None
        #: the loop's work for one event, bound to this engine's parts (see ``process``), and its
        #: maker (the source is compiled once; a snapshot or restore binds a new step)
        self._step: Step | None = None
        self._make_step: Callable[[Engine], Step] | None = None
        self._draining = False
        for p in patterns:
            self.add(p)

    # ------------------------------------------------------------------ set-up
    def add(self, pattern: Pattern | Matcher) -> Matcher:
        """Add a pattern (compiling it) and return its matcher. Names must be unique."""
        matcher: Matcher = compile_matcher(pattern)
        with self._owner("add"):
            return self._add(matcher)

    def _add(self, matcher: Matcher) -> Matcher:
        if any(m.name == matcher.name for m in self.matchers):
            msg = "a pattern with this name is already in the engine"
            raise PatternError(msg, pattern=matcher.name)
        derive = emitter_of([*self.matchers, matcher])  # why first: a cycle leaves the engine as it was
        index = self.host.add(matcher)
        if derive is not None:  # why the engine's counter: a new emitter must not count from -2 again
            derive.seqs = self.derived_seqs
        self.derive = derive.derive if derive is not None else None
        self._loop = self._step = self._make_step = None
        self._adopt_faults(matcher)
        # Optional hook: a matcher may ask for timers before any event (Prova groups created at
        # start-up). ``initial_timers()`` yields ``(time, key, token)``.
        for pindex, time, key, token in self.host.initial_timers():
            if pindex == index and self.owns(key):
                self.host.schedule_initial(self._key_state(key), key, pindex, time, token)
        return matcher

    def owns(self, key: Hashable) -> bool:
        """Whether this engine keeps ``key``'s state: every key, but in one shard of a
        :class:`~workbench.engine.sharding.ShardedEngine` (which starts the declared instances
        of a group only where their key lives)."""
        return True

    @property
    def watermark(self) -> float:
        """The current watermark (``-inf`` before any time has passed)."""
        return self.event_clock.watermark[0]

    @property
    def keys(self) -> Mapping[Hashable, KeyState]:
        """The keys that hold matcher states (a read-only view for inspection)."""
        return {key: ks for key, ks in self._keys.items() if ks.states}

    @property
    def stats(self) -> dict[str, int]:
        """Run totals: ``dropped`` partial matches (caps), ``late`` events, ``keys`` holding state."""
        budget = self.host.context.budget
        return {"dropped": budget.dropped, "late": self.late_count, "keys": len(self._keys)}

    def horizon(self) -> Time:
        """How far timers fire before the next event: the watermark, or an earlier buffered event."""
        wm, buf = self.event_clock.watermark[0], self._buffer
        return min(wm, buf[0][0]) if buf else wm

    def state_of(self, pattern: str, key: Hashable) -> Any:
        """The per-key state of one pattern (``None`` if the key holds none)."""
        try:
            hash(key)
        except TypeError:  # why: the annotation is what a caller should pass; nothing checks it
            msg = f"state_of(): a key is hashable (a string, number, tuple or None), got {type(key).__name__}"
            raise CepError(msg) from None
        ks = self._keys.get(key)
        if ks is None:
            return None
        for i, m in enumerate(self.matchers):
            if m.name == pattern:
                return ks.states.get(i)
        msg = f"no pattern named {pattern!r}; patterns: {[m.name for m in self.matchers]}"
        raise CepError(msg)

    # ------------------------------------------------------------------ input
    def process(self, raw: EventLike) -> list[Detection]:
        """Feed one event; return the detections emitted as a consequence (possibly by timers).

        ``raw`` is an :class:`~workbench.engine.events.Event` or a mapping (see
        :func:`~workbench.engine.events.make_event`). An event without ``seq`` is stamped with its
        input position; an event that already carries one (``seq >= 0``) keeps it, so a host that
        splits one stream over several engines keeps global ids.
        """
        lock = self._lock
        lock.acquire()  # why not ``with``: a call per event pays for every statement
        try:
            step = self._step  # why under the lock: a restore in another thread drops it
            if step is None or self._busy or self._buffer:
                # why: no step yet (or none for this engine), a callback feeding an event back
                # (queued behind the current one), or held events that go first: the general call
                return self._process_general(raw)
            # Why not process_many: this is its one-run path with the loop's work for one event
            # (same results, same budget count)
            out: list[Detection] = []
            self._busy = True
            try:
                clock = self.event_clock
                start = clock.next_seq
                if (unusual := step(raw, out)) is not None:
                    self._accept(*unusual, out)
                shedder = self.shedder
                if shedder.limit is not None:  # why: Shedder.spent inline (the event took a position)
                    spent = clock.next_seq - start
                    shedder.since += spent
                    shedder.countdown -= spent
                    if shedder.countdown <= 0:
                        self._count_live()
                if self._pending:
                    self._settle(out)
            finally:
                self._busy = False
                if self._pending:  # why: an error left outputs undelivered: drop them, as process_many
                    self._pending.clear()
            return out
        finally:
            lock.release()

    def _process_general(self, raw: EventLike) -> list[Detection]:
        """``process`` through ``process_many``; then, outside a callback, make the one-event step
        if this engine has none and can use one."""
        out = self.process_many((raw,))
        # why not with processing time, out-of-orderness or an order of equal times: the fused loop
        # does not take their events either
        usable = not (self._busy or self._processing or self.out_of_orderness or self._order)
        if self._step is None and usable:
            if self._make_step is None:
                self._make_step = build_step(self.matchers, tracing=self.tracing)
            self._step = self._make_step(self)
        return out

    def process_many(self, events: Iterable[EventLike]) -> list[Detection]:
        """Feed events in order; return all detections they caused.

        Same results as calling :meth:`process` per event. In-order events of an event-time engine
        without out-of-orderness go through the engine's fused loop (:mod:`~workbench.engine.fused`),
        which hands anything unusual back to the general path.

        Called from inside one of this engine's callbacks, the events are queued and processed
        after the current input event, in order; the call returns ``[]`` and their detections go
        to the callbacks and to the result of the call under way.
        """
        with self._lock:
            if self._busy:  # why: a callback feeds events back: queue them behind the current one
                self._pending.extend(Fed(raw) for raw in events)
                return []
            # Why not self._owner(): the lock and the busy test are done; process() per event pays
            # for every statement here
            out: list[Detection] = []
            self._busy = True
            try:
                if isinstance(events, tuple | list) and len(events) < RELAX_FROM:
                    self._feed(events, out)  # why: a few events: the collector's settings cost more
                else:
                    with gc_relaxed():
                        self._feed(events, out)
                self._settle(out)
            finally:
                self._busy = False
                self._pending.clear()
            return out

    def _feed(self, events: Iterable[EventLike], out: list[Detection]) -> None:
        """Feed the events in runs of at most ``shedder.countdown``, counting the budget in between."""
        shedder, clock = self.shedder, self.event_clock
        if shedder.limit is None:  # why: no engine-wide limit: nothing to count
            self._feed_run(events, out)
            return
        if isinstance(events, list | tuple):  # why: slices of a list keep the loop's fast list iteration
            if 0 < len(events) <= shedder.countdown:  # why: the usual call (a process()): one run, one count
                start = clock.next_seq
                self._feed_run(events, out)
                if shedder.spent(clock.next_seq - start):
                    self._count_live()
                return
            done, n = 0, len(events)
            while done < n:
                start, stop = clock.next_seq, done + shedder.countdown
                self._feed_run(events if not done and stop >= n else events[done:stop], out)
                done = stop
                self._count(shedder, clock.next_seq - start)
            return
        it = iter(events)
        for first in it:
            start = clock.next_seq
            self._feed_run(itertools.chain((first,), itertools.islice(it, shedder.countdown - 1)), out)
            self._count(shedder, clock.next_seq - start)

    def _feed_run(self, events: Iterable[EventLike], out: list[Detection]) -> None:
        if self._processing or self.out_of_orderness or self._buffer or self._order:
            for raw in events:
                self._take(raw, out)
                if self._pending:  # why: events fed back by a callback of this event
                    self._settle(out)
            return
        loop = self._loop
        if loop is None:
            loop = self._loop = build_loop(self.matchers, tracing=self.tracing)
        it = iter(events)
        while (unusual := loop(self, it, out)) is not None:
            self._accept(*unusual, out)
            if self._pending:
                self._settle(out)

    def _settle(self, out: list[Detection]) -> bool:
        """Deliver what is pending, then process the events callbacks fed back (FIFO); True if any."""
        self.deliver(out)
        pending = self._pending
        fed_any = bool(pending)
        while pending:  # deliver() leaves only fed events here; each may feed more behind it
            if isinstance(fed := pending.pop(0), Fed):
                self._take(fed.event, out)
            self.deliver(out)
        return fed_any

    # ------------------------------------------------------------------ internals
    def _take(self, raw: EventLike, out: list[Detection]) -> None:
        clock = self.event_clock
        position = clock.next_seq
        clock.next_seq = position + 1  # a rejected event still occupies its input position
        if self._processing and isinstance(raw, Mapping) and "time" not in raw and "t" not in raw:
            raw = {**raw, "time": 0}  # why: processing time stamps it with the clock (_accept)
        event = stamp(raw, position)
        if event.seq < -1:  # why: a derived event (emit into) takes no input position
            clock.next_seq = position
        self._accept(event, position, out)

    def _accept(self, event: Event, position: int, out: list[Detection]) -> None:
        """Handle one stamped event: late, processed at once, or buffered until the watermark."""
        clock = self.event_clock
        if self._processing:
            event = event.with_time(self._now())
            self._advance(out)
            self._dispatch(event, out)
            return
        t = event.time
        # Why before accept(): in-order input with nothing buffered needs no trip through the heap
        in_order = not self._buffer and not clock.out_of_orderness and t >= clock.max_seen and not self._order
        if not clock.accept(t):
            self._late(event, out)
        elif in_order:
            if self._timers and self._timers[0][0] < t:
                self._advance(out)
            self._dispatch(event, out)
        else:
            heapq.heappush(self._buffer, (t, position, event))
            self._advance(out)
