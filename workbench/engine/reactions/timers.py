"""What the timers of a group instance do: ``@timer`` windows, member and group timeouts.

Timer tokens are ``("tick" | "ct", root id, path, channel id)`` and ``("gt", root id, path)``;
a token whose instance or channel is gone is stale and ignored (timers are never cancelled).
"""

from __future__ import annotations

from workbench.engine.detection import TraceKind
from workbench.engine.reactions.compiled import CChannel
from workbench.engine.reactions.delivery import Delivery
from workbench.engine.reactions.policies import close_window
from workbench.engine.reactions.rules import negation_holds, satisfied
from workbench.engine.reactions.state import ChannelState

__all__ = ["group_timeout", "member_timeout", "tick"]


def tick(d: Delivery, ch: ChannelState, cc: CChannel) -> None:
    """A ``@timer`` window closes: emit it, and re-arm unless the instance ended or input did."""
    timer = cc.spec.timer
    assert timer is not None
    ctx = d.ctx
    if ctx.tracing:
        d.trace(TraceKind.DETECTED, cc.id, None, {"window": True})
    close_window(d, ch, cc.window)
    if not d.inst.ended and not d.root.ended and not ctx.final:
        ctx.schedule(ctx.now + (timer.period_ms or timer.delay_ms), ("tick", d.root.id, d.path, ch.cid))


def member_timeout(d: Delivery, ch: ChannelState, cc: CChannel) -> None:
    """A channel's own ``@timeout``: an unviolated ``@not`` is proved absent, a positive one expires."""
    if d.ctx.tracing:
        d.trace(TraceKind.TIMED_OUT, cc.id)
    if cc.spec.negated:
        if not negation_holds(ch, cc):
            d.fail(cc.id, timed_out=True)
            return
        d.remove(ch)
        if d.ctx.tracing:
            d.trace(TraceKind.NEGATED, cc.id)
        d.policy.settle(d)
        return
    was_satisfied = satisfied(d.group, ch, cc, at_timeout=True)
    d.remove(ch)
    d.policy.expired(d, cc, was_satisfied)


def group_timeout(d: Delivery) -> None:
    """The group ``@timeout``: success if the policy says so (live ``@not`` channels listed), else failure."""
    group = d.group
    if d.ctx.tracing:
        d.trace(TraceKind.TIMED_OUT, group.name if d.path else None)
    live_nots = []
    for ch in d.inst.channels.values():
        cc = group.members[ch.member]
        assert isinstance(cc, CChannel)
        if cc.spec.negated and negation_holds(ch, cc):
            live_nots.append(cc.id)
    if d.policy.timeout_succeeds(d, live_nots):
        if d.ctx.tracing:
            for name in live_nots:
                d.trace(TraceKind.NEGATED, name)
        d.succeed(negated=live_nots)
    else:
        d.fail(None, timed_out=True)
