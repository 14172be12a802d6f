"""What the timers of a group instance do: ``@timer`` windows, member and group timeouts.

Timer tokens are ``("tick" | "ct", root id, path, channel id)`` and ``("gt", root id, path)``;
a token whose instance or channel is gone is stale and ignored (timers are never cancelled).
"""

from __future__ import annotations

import math

from workbench.engine.detection import TraceKind
from workbench.engine.reactions.compiled import CChannel
from workbench.engine.reactions.delivery import Delivery
from workbench.engine.reactions.policies import close_window
from workbench.engine.reactions.rules import negation_holds, satisfied
from workbench.engine.reactions.state import ChannelState

__all__ = ["CATCH_UP_WINDOWS", "group_timeout", "member_timeout", "tick"]


#: the longest run of empty ``@timer`` windows that closes one by one; past it, the empty windows
#: before the next event are skipped (one warning per pattern and run)
CATCH_UP_WINDOWS = 1_000


def tick(d: Delivery, ch: ChannelState, cc: CChannel) -> None:
    """A ``@timer`` window closes: emit it, and re-arm unless the instance ended or input did.

    Windows close on Prova's grid (``delay``, then every ``period``), empty ones included. After
    :data:`CATCH_UP_WINDOWS` empty windows in a row, the next window that closes is the first one
    that can hold an event: the empty ones in between are skipped (an epoch-millisecond gap would
    otherwise close 10^10 of them), and the pattern warns once.
    """
    timer = cc.spec.timer
    assert timer is not None
    ctx = d.ctx
    empty = not d.inst.results
    if ctx.tracing:
        d.trace(TraceKind.DETECTED, cc.id, None, {"window": True})
    close_window(d, ch, cc.window)
    if d.inst.ended or d.root.ended or ctx.final:
        return
    period = timer.period_ms or timer.delay_ms
    due = ctx.now + period
    ch.empty_windows = ch.empty_windows + 1 if empty else 0
    if ch.empty_windows >= CATCH_UP_WINDOWS:
        horizon = ctx.horizon()
        if due < horizon:  # why: the windows before the next event can only be empty: skip them
            if horizon == math.inf:
                return  # no event can come any more: nothing would ever fill a window
            due += math.ceil((horizon - due) / period) * period
            ctx.warn_once("timer catch-up", _catch_up_warning(d.plan.name, cc.id))
    ctx.schedule(due, ("tick", d.root.id, d.path, ch.cid))


def _catch_up_warning(group: str, channel: str) -> str:
    return (
        f"pattern {group!r}: @timer channel {channel!r} closed {CATCH_UP_WINDOWS} empty windows in a "
        "row; the empty windows before the next event are skipped (given once per run)"
    )


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
