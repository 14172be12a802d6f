"""The engine's time half: the watermark's entry points, timers, and what comes due.

:class:`Timekeeping` is the base class of :class:`~workbench.engine.runtime.Engine` that moves
time: :meth:`~Timekeeping.advance_time`, :meth:`~Timekeeping.tick`, :meth:`~Timekeeping.finish`
and :meth:`~Timekeeping.catch_up` close the clock to a watermark, then :meth:`_advance` releases
the buffered events and fires the timers it admits, in time order (events first at equal times,
Prova's rule). The events themselves enter through the engine's input half (``process``,
``process_many``), which hands each one, stamped and in order, to :meth:`_dispatch` here.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable, Hashable

from workbench.engine.clock import Rank, Watermark, is_late, pop_ties, release_time, releases, stamp
from workbench.engine.detection import Detection
from workbench.engine.events import Event, time_problem
from workbench.engine.host import KeyState, late_record
from workbench.engine.imaging import Imaging, Time
from workbench.engine.outputs import Fed
from workbench.engine.shedding import Shedder
from workbench.errors import CepError

__all__ = ["Clock", "Timekeeping"]

INF = math.inf
#: below every input position: where derived events rank in the buffer (see ``_after``)
_DERIVED_RANK = -(2**62)
#: a processing-time clock in milliseconds
Clock = Callable[[], float]


class Timekeeping(Imaging):
    """Moving an engine's time: watermarks, timers, released events (the engine sets these attributes)."""

    shedder: Shedder
    clock: Clock
    tracing: bool
    out_of_orderness: int | float
    #: the sort key of equal-time events (``None``: arrival order)
    _order: Callable[[Event], Rank] | None
    _processing: bool
    #: true while :meth:`_after` runs fed events (a fed event's own outputs do not recurse)
    _draining: bool

    def advance_time(self, watermark: int | float) -> list[Detection]:
        """Declare that no event with ``time <= watermark`` will arrive; fire what is due."""
        with self._owner("advance_time") as out:
            self.event_clock.close(watermark)
            self._advance(out, self._timed())
        return out

    def pass_time(self, t: int | float) -> None:
        """The input went on to time ``t`` with events of types no pattern reads, which a pruned
        replay leaves out: the clock moves as such an event would move it (the timers before ``t``
        fire with the next step, as they would have), so the final flush ends where the input does."""
        with self._owner("pass_time"):
            clock = self.event_clock
            if t > clock.max_seen and not is_late(clock.watermark, t):
                clock.accept_in_order(t)

    def tick(self) -> list[Detection]:
        """Processing-time mode: fire the timers the clock has passed."""
        with self._owner("tick") as out:
            self._now()
            self._advance(out, self._timed())
        return out

    def finish(self, until: int | float | None = None) -> list[Detection]:
        """End of input: release everything buffered and fire timers up to ``until`` (default: all).

        With ``until=None`` the flush is *final*: recurring timers (Prova ``@timer`` windows,
        ``every`` silences) do not re-arm past the input's newest event time, so the flush
        terminates. Up to that time everything runs as it would have with the events in order: the
        events still buffered (bounded out-of-orderness) are released, and the timers before them
        fired, before the flush turns final.
        """
        with self._owner("finish") as out:
            ctx = self.host.context
            if until is None:
                # why: out-of-orderness only sorts events into place; it must not end the input early
                self.event_clock.advance((self.event_clock.max_seen, False))
                self._advance(out, self._timed())
            ctx.final = until is None
            try:
                self.event_clock.close(INF if until is None else until, "finish")
                self._advance(out, self._timed())
            finally:
                ctx.final = False
        return out

    def schedule(self, time: Time, key: Hashable, pindex: int, token: Hashable) -> None:
        """Queue a matcher's timer (:class:`~workbench.engine.host.Sink`)."""
        heapq.heappush(self._timers, (time, next(self._timer_seq), key, pindex, token))

    def release_time(self, key: Hashable, now: Time) -> Time:
        """The time of a match a timer releases (:func:`~workbench.engine.clock.release_time`)."""
        return release_time(self.event_clock.watermark, self._buffer, key, now)

    def catch_up(self, watermark: Watermark) -> list[Detection]:
        """Move the watermark to a driver's (a sharded engine's global one); handle what is due."""
        timers, buf = self._timers, self._buffer
        if not (timers and is_late(watermark, timers[0][0])) and not (buf and releases(watermark, buf[0][0])):
            return []  # why: called for every shard on every event: nothing due is the common case
        with self._owner("catch_up") as out:
            self.event_clock.advance(watermark)
            self._advance(out, self._timed())
        return out

    def _now(self) -> Time:
        """Processing time: move the clock to now (never back)."""
        clock = self.event_clock
        now = _reading(self.clock())
        if now < clock.max_seen:  # why: a clock that steps back (NTP) never moves time back
            now = clock.max_seen
        clock.max_seen = now
        clock.advance((now, False))
        return now

    def _advance(self, out: list[Detection], shedder: Shedder | None = None) -> None:
        """Process buffered events and fire timers as far as the watermark admits, in time order.

        The outputs of each event and timer are delivered once its transitions are complete. With
        a ``shedder`` (from the time entry points, whose work no input stride counts) the
        engine-wide budget is counted as the released events and fired timers run.
        """
        clock = self.event_clock
        buf, timers, order = self._buffer, self._timers, self._order
        handled = 0
        while True:
            # why: the events released and the timers fired here start partial matches too
            if shedder is not None and handled >= shedder.countdown:
                self._count(shedder, handled)
                handled = 0
            wm = clock.watermark
            # Why is_late with order_by: more events of one time may come until time passes it
            ev_due = bool(buf) and (is_late if order else releases)(wm, buf[0][0])
            tm_due = bool(timers) and is_late(wm, timers[0][0])
            # Why events first at equal time: Prova's "event first" tie rule
            if ev_due and (not tm_due or buf[0][0] <= timers[0][0]):
                for event in pop_ties(buf, order) if order else (heapq.heappop(buf)[2],):
                    self._dispatch(event, out)
                handled += 1
            elif tm_due:
                time, _, key, pindex, token = heapq.heappop(timers)
                ks = self._key_state(key)
                self.host.fire(ks, key, time, pindex, token)
                if ks.is_empty():
                    del self._keys[key]
                if self._pending:
                    self._after(time, out)
                handled += 1
            else:
                break
        if shedder is not None and handled:
            self._count(shedder, handled)

    def _timed(self) -> Shedder | None:
        """The shedder a time entry point counts with (``None``: no engine-wide limit)."""
        return None if self.shedder.limit is None else self.shedder

    def _count(self, shedder: Shedder, handled: int) -> None:
        """``handled`` events or timers ran since the last count: count the budget if it is due."""
        if shedder.spent(handled):
            self._count_live()

    def _count_live(self) -> None:
        """The budget's count of the live partial matches (and its shed, over the limit)."""
        one_by_one = self.derive is None and not self.out_of_orderness
        self.shedder.check(self._keys, self.matchers, self.host.context, per_event=one_by_one)

    def _after(self, now: Time, out: list[Detection]) -> None:
        """An event or timer at ``now`` is complete: deliver its outputs, then the events fed back
        (as arriving right then: before ``now`` late; newer than the clock: after the input event)."""
        self.deliver(out)
        pending = self._pending
        if not pending or self._draining or self._processing:
            return
        self._draining = True
        try:
            waiting: list[Fed] = []
            while pending:
                fed = pending.pop(0)
                if not isinstance(fed, Fed):
                    continue
                clock, position = self.event_clock, self.event_clock.next_seq
                event = stamp(fed.event, position)
                # why the test: a derived event (emit into, seq < -1) takes no input position
                clock.next_seq, t = max(position + (event.seq >= -1), event.seq + 1), event.time
                if t > clock.max_seen and t > clock.watermark[0]:
                    waiting.append(Fed(event))  # why: newer than anything seen: an input of its own
                elif t < now:
                    self._late(event, out)
                elif self._buffer or clock.out_of_orderness or self._order:
                    # why the rank: derived events of one time in the order they were made (their
                    # seq counts down from -2), ahead of the inputs still buffered at that time
                    rank = event.seq if event.seq >= 0 else _DERIVED_RANK - event.seq
                    heapq.heappush(self._buffer, (t, rank, event))
                else:  # why: within what the clock has passed (or is flushing): in order right here
                    clock.max_seen = max(clock.max_seen, t)
                    self._dispatch(event, out)
                self.deliver(out)
            pending.extend(waiting)
        finally:
            self._draining = False

    def _late(self, event: Event, out: list[Detection]) -> None:
        self._pending.append(event)
        if self.tracing:
            self.record(late_record(event))
        self.deliver(out)

    def _key_state(self, key: Hashable) -> KeyState:
        ks = self._keys.get(key)
        if ks is None:
            ks = self._keys[key] = KeyState()
        return ks

    def _dispatch(self, event: Event, out: list[Detection]) -> None:
        targets = self.host.targets(event.type)
        if targets:
            key = event.key
            ks = self._key_state(key)
            self.host.process(ks, key, event, targets)
            if ks.is_empty():
                del self._keys[key]
            if self._pending:  # why: the event's transitions are complete: its outputs go out now
                self._after(event.time, out)


def _reading(now: object) -> Time:
    """A processing-time clock's reading as a built-in number, checked as an event's time is.

    >>> _reading(5), _reading(2.5)
    (5, 2.5)
    """
    time, problem = time_problem(now)
    if problem is not None:
        msg = f"the processing-time clock returned {now!r}: it must return finite milliseconds ({problem})"
        raise CepError(msg)
    return time
