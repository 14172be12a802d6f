"""The two operators of a reaction group as policies over one core (:class:`~.delivery.Delivery`).

* **AND** (:class:`AndPolicy`) completes when every live channel is satisfied (prova.md 3.1): a
  ``@not`` event fails the instance (or extends it, when channels are declared ``after`` it), a
  bare ``@stop`` ends it, ``@stop(ids)`` fails it unless its targets are satisfied, ``@count``
  channels count, and ``@vars`` channels join (:mod:`.joins`).
* **OR** (:class:`OrPolicy`) completes on the first positive event (prova.md 3.2): a ``@not``
  event removes its channel, a bare ``@stop`` ends the instance silently, ``@stop(ids)`` removes
  its targets, ``@size`` channels count (recurring with a reset), ``@timer`` channels collect,
  ``@hop`` channels keep panes (:mod:`.hopping`).

The order of reactions and trace records inside each branch is part of the observable behaviour.
"""

from __future__ import annotations

from typing import cast

from workbench.engine.detection import TraceKind
from workbench.engine.reactions.accumulators import accumulate
from workbench.engine.reactions.compiled import CChannel, CGroup, Window
from workbench.engine.reactions.delivery import Delivery
from workbench.engine.reactions.hopping import hop_event
from workbench.engine.reactions.joins import vars_event
from workbench.engine.reactions.patterns import pairs
from workbench.engine.reactions.rules import and_complete
from workbench.engine.reactions.state import ChannelState, Vars

__all__ = ["AndPolicy", "OrPolicy", "close_window", "event_seq"]


class AndPolicy:
    """``@and``: every channel must be satisfied."""

    __slots__ = ()

    def event(self, d: Delivery, ch: ChannelState, cc: CChannel, bound: Vars) -> None:
        spec = cc.spec
        env = d.env(ch, bound)
        if d.group.vars_mode and pairs(spec.vars):
            vars_event(d, ch, cc, env)
        elif spec.negated:
            self._negated(d, ch, cc, bound, env)
        elif spec.stop:  # bare @stop: end the instance, a success if nothing is missing
            d.record(cc)
            d.collect(cc, env)
            if spec.count is not None and self._counting(d, ch, cc):
                return
            d.react(cc, "stop")
            d.remove(ch)
            if d.ctx.tracing:
                d.trace(TraceKind.STOPPED, cc.id, event_seq(d))
            if and_complete(d.group, d.inst):
                d.succeed()
            else:
                d.fail(cc.id)
        else:
            d.record(cc)
            d.collect(cc, env)
            self._positive(d, ch, cc, bound)

    def _counting(self, d: Delivery, ch: ChannelState, cc: CChannel) -> bool:
        """A ``@count @stop`` channel's event: whether it is only counted (as Prova's AND counts
        before it stops, prova.md 3.1 steps 3 and 5): the channel stops on the event that closes
        its count (``@count(N)``: the N-th; a recording or strict count never closes it), and a
        strict count's event too many fails the instance."""
        count = cc.spec.count
        assert count is not None
        tracing = d.ctx.tracing
        if count.mode == "strict" and ch.seen >= count.max:
            d.react(cc, "violated")
            if tracing:
                d.trace(TraceKind.VIOLATED, cc.id, event_seq(d), {"count": ch.seen + 1, "max": count.max})
            d.fail(cc.id)
            return True
        ch.seen += 1
        if tracing:
            d.trace(TraceKind.COUNTED, cc.id, event_seq(d), {"count": ch.seen, "of": count.min})
        if count.mode == "ignore" and ch.seen >= count.max and ch.seen >= count.min:
            return False
        d.react(cc, "accepted")
        return True

    def _negated(self, d: Delivery, ch: ChannelState, cc: CChannel, bound: Vars, env: Vars) -> None:
        ch.seen += 1
        d.record(cc)
        count = cc.spec.count
        if count is not None and (count.mode == "strict" or ch.seen < count.min):
            # not violated yet: strict counts decide at the timeout, others at their minimum
            d.react(cc, "accepted")
            if d.ctx.tracing:
                d.trace(TraceKind.COUNTED, cc.id, event_seq(d), {"count": ch.seen, "of": count.min})
            return
        d.react(cc, "violated")
        if d.ctx.tracing:
            d.trace(TraceKind.VIOLATED, cc.id, event_seq(d))
        d.collect(cc, env)
        if not cc.successors:
            d.fail(cc.id)
            return
        # A violated @not whose violation starts follow-up channels extends the instance.
        d.remove(ch)
        d.extend(cc, ch, bound)
        self.check(d)

    def _positive(self, d: Delivery, ch: ChannelState, cc: CChannel, bound: Vars) -> None:
        spec = cc.spec
        count = spec.count
        overflow = count is not None and count.mode == "strict" and ch.seen >= count.max
        d.react(cc, "violated" if overflow else "accepted")
        tracing = d.ctx.tracing
        if tracing and not overflow:
            d.trace(TraceKind.ACCEPTED, cc.id, event_seq(d))
        if count is not None:
            if overflow:  # strict @count: one event too many fails the instance
                if tracing:
                    d.trace(TraceKind.VIOLATED, cc.id, event_seq(d), {"count": ch.seen + 1, "max": count.max})
                d.fail(cc.id)
                return
            ch.seen += 1
            if tracing:
                d.trace(TraceKind.COUNTED, cc.id, event_seq(d), {"count": ch.seen, "of": count.min})
            d.extend(cc, ch, bound)
            if not (count.mode == "ignore" and ch.seen >= count.max and ch.seen >= count.min):
                return  # the channel stays open for more events
            d.remove(ch)
        elif spec.is_control:
            d.control(cc)
            if not spec.stop_ids:
                return
        else:
            d.remove(ch)
            d.extend(cc, ch, bound)
        if spec.stop_ids and not d.stop_targets(cc, require_satisfied=True):
            d.fail(cc.id)
            return
        self.check(d)

    def check(self, d: Delivery) -> None:
        """Succeed if the instance is complete (every live channel satisfied)."""
        if not d.inst.ended and and_complete(d.group, d.inst):
            d.succeed()

    def settle(self, d: Delivery) -> None:
        self.check(d)

    def expired(self, d: Delivery, cc: CChannel, was_satisfied: bool) -> None:
        # *Choice* 9.4, as Prova's AND does (prova.md 3.1 step 5): the expired channel is gone;
        # the AND succeeds if everything left is satisfied, else an unsatisfied channel's expiry
        # fails it at once (it "does not contribute a positive detection", User Guide p. 71) and
        # a satisfied one's (optional, count minimum reached) leaves it waiting.
        if not d.inst.ended and and_complete(d.group, d.inst):
            d.succeed()
        elif not was_satisfied:
            d.fail(cc.id, timed_out=True)

    def timeout_succeeds(self, d: Delivery, live_nots: list[str]) -> bool:
        return not d.group.vars_mode and and_complete(d.group, d.inst, at_timeout=True)

    def child_failed(self, d: Delivery, name: str) -> None:
        # *Choice*: a nested group that can no longer succeed fails an AND parent (Prova leaves
        # the parent waiting for its own timeout, prova.md 5.2).
        d.fail(name)

    def child_succeeded(self, d: Delivery, successors: tuple[int, ...]) -> None:
        self.check(d)


class OrPolicy:
    """``@or``: the first positive event completes the instance."""

    __slots__ = ()

    def event(self, d: Delivery, ch: ChannelState, cc: CChannel, bound: Vars) -> None:
        spec = cc.spec
        env = d.env(ch, bound)
        if spec.hop is not None:  # a hopping channel keeps its events in its panes, not the trace
            d.collect(cc, env)
            hop_event(d, ch, cc, env)
            return
        d.record(cc)
        d.collect(cc, env)
        status = "violated" if spec.negated else ("stop" if spec.stop else "accepted")
        if spec.size is not None:
            if not self._sized(d, ch, cc, env, status):
                return
        elif spec.timer is not None:  # a window channel collects until its timer closes it
            window, acc, event = cc.window, ch.acc, d.event
            if window is not None and acc is not None and event is not None:
                accumulate(acc, window, event, env, cc.id)
            d.react(cc, "accepted")
            if d.ctx.tracing:
                d.trace(TraceKind.ACCEPTED, cc.id, event_seq(d))
            return
        elif not spec.is_control:
            d.remove(ch)
        d.react(cc, status)
        d.extend(cc, ch, bound)
        self._fired(d, cc)

    def _sized(self, d: Delivery, ch: ChannelState, cc: CChannel, env: Vars, status: str) -> bool:
        """Count a ``@size`` event; True when the channel fires for good (it is then removed)."""
        size = cc.spec.size
        assert size is not None
        ch.seen += 1
        window, acc, event = cc.window, ch.acc, d.event
        if window is not None and acc is not None and event is not None:
            accumulate(acc, window, event, env, cc.id)
        if ch.seen < ch.target or size.n < 0:
            d.react(cc, "accepted")
            if d.ctx.tracing:
                d.trace(TraceKind.COUNTED, cc.id, event_seq(d), {"count": ch.seen, "of": ch.target})
            return False
        if size.reset is not None:  # recurring: emit the window, then count ``reset`` more
            d.react(cc, status)
            close_window(d, ch, cc.window)
            ch.seen = 0
            ch.target = size.reset
            return False
        d.remove(ch)
        return True

    def _fired(self, d: Delivery, cc: CChannel) -> None:
        spec = cc.spec
        tracing = d.ctx.tracing
        if spec.negated:
            if tracing:
                d.trace(TraceKind.VIOLATED, cc.id, event_seq(d))
            self.exhausted(d)
        elif spec.is_control or spec.stop_ids:
            d.control(cc)
            d.stop_targets(cc, require_satisfied=False)
            self.exhausted(d)
        elif spec.stop:
            if tracing:
                d.trace(TraceKind.STOPPED, cc.id, event_seq(d))
            d.fail(cc.id)
        else:
            if tracing:
                d.trace(TraceKind.ACCEPTED, cc.id, event_seq(d))
            if not cc.successors:  # else the instance was extended: it goes on with the new channels
                d.succeed()

    def exhausted(self, d: Delivery) -> None:
        """End an OR instance that has no live channel left and no group timeout to wait for.

        It can never emit (prova.md 3.2: only a positive event or a timeout ends an OR), so it is
        dropped silently, as Prova's instance would stay silent forever. With a group timeout (its
        own or an enclosing group's) it waits for the timeout, which reports it (``timeout_channel``).
        """
        inst = d.inst
        if inst.channels or inst.children or inst.ended:
            return
        chain = d.plan.top
        if chain.spec.timeout_ms is not None:
            return
        for name in d.path:
            chain = cast(CGroup, chain.members[chain.index_of[name]])
            if chain.spec.timeout_ms is not None:
                return
        d.fail(None)

    def settle(self, d: Delivery) -> None:
        self.exhausted(d)

    def expired(self, d: Delivery, cc: CChannel, was_satisfied: bool) -> None:
        if not d.inst.channels and not d.inst.children:
            d.fail(cc.id, timed_out=True)

    def timeout_succeeds(self, d: Delivery, live_nots: list[str]) -> bool:
        return bool(live_nots)  # an OR succeeds at its timeout on a @not channel proved absent

    def child_failed(self, d: Delivery, name: str) -> None:
        # An OR parent goes on with its other members.
        if not d.inst.channels and not d.inst.children:
            d.fail(name, timed_out=True)

    def child_succeeded(self, d: Delivery, successors: tuple[int, ...]) -> None:
        if not successors:
            d.succeed()


def event_seq(d: Delivery) -> int | None:
    """The delivered event's arrival position (trace records name it)."""
    return None if d.event is None else d.event.seq


def close_window(d: Delivery, ch: ChannelState, window: Window | None) -> None:
    """A recurring ``@size``/``@timer`` window closes: emit its events and accumulator, start anew."""
    aggregate = None
    if window is not None and ch.acc is not None:
        aggregate = ch.acc.get()
        ch.acc = window.new()
    inst = d.inst
    entries, inst.results = inst.results, []
    d.window(entries, aggregate)
