"""Hopping windows of an ``@hop(size, hop[, acc])`` channel, kept as panes.

Time from the channel's creation ``c`` (the instance's start, or the firing that created an
``after`` channel) is cut into *panes* of ``g = gcd(size, hop)`` ms. Window ``k``
is ``[c + k*hop, c + k*hop + size)``: the ``size/g`` panes from pane ``k*hop/g`` on. An event goes
into one pane (its events and the accumulator over them: O(1) per event); a window that closes
combines its panes (O(size/g)). Only panes that hold events are kept, and only while a window
still to close covers them, so a run of empty windows costs nothing: the next window to close is
the first one that covers the oldest kept pane, and one timer is armed at a time, for it.

>>> from workbench.engine.reactions.patterns import Hop
>>> spans(Hop(10, 4))
(2, 2, 5)
"""

from __future__ import annotations

import math
from collections import deque

from workbench.engine.aggregates import Aggregate, CountBy, GroupBy
from workbench.engine.aggregates.holistic import Collect, TopN
from workbench.engine.detection import TraceKind
from workbench.engine.reactions.accumulators import Window, accumulate
from workbench.engine.reactions.compiled import CChannel
from workbench.engine.reactions.delivery import Delivery
from workbench.engine.reactions.patterns import Hop
from workbench.engine.reactions.state import ChannelState, Entry, HopState, Pane, Vars

__all__ = ["combine", "hop_event", "hop_tick", "spans"]


def spans(hop: Hop) -> tuple[int, int, int]:
    """``(g, hop/g, size/g)``: the pane length and a window's step and length in panes."""
    g = math.gcd(hop.size_ms, hop.hop_ms)
    return g, hop.hop_ms // g, hop.size_ms // g


def hop_event(d: Delivery, ch: ChannelState, cc: CChannel, env: Vars) -> None:
    """An event of a hopping channel: into its pane; arm the close of its first window if none is."""
    hop = cc.spec.hop
    state, event = ch.hop, d.event
    assert hop is not None
    assert state is not None
    assert event is not None
    g, step, length = spans(hop)
    index = math.floor((d.ctx.now - state.origin) / g)
    panes = state.panes
    if panes and panes[-1].index == index:
        pane = panes[-1]
    else:  # why: events come in time order, so a new pane is always the newest
        pane = Pane(index, [], None if cc.window is None else cc.window.new())
        panes.append(pane)
    pane.entries.append(Entry(cc.id, event))
    if pane.acc is not None and cc.window is not None:
        accumulate(pane.acc, cc.window, event, env, cc.id)
    d.react(cc, "accepted")
    if d.ctx.tracing:
        d.trace(TraceKind.ACCEPTED, cc.id, event.seq)
    if state.armed is None:
        _arm(d, ch, state, hop, step, length)


def _first_window(state: HopState, step: int, length: int) -> int:
    """The first window still to close that covers the oldest kept pane."""
    oldest = state.panes[0].index
    return max(state.next_window, (oldest - length) // step + 1)


def _arm(d: Delivery, ch: ChannelState, state: HopState, hop: Hop, step: int, length: int) -> None:
    """Schedule the close of the next window that holds events (the only timer of the channel)."""
    k = _first_window(state, step, length)
    due = state.origin + k * hop.hop_ms + hop.size_ms
    state.armed = due
    d.ctx.schedule(due, ("hop", d.root.id, d.path, ch.cid))


def hop_tick(d: Delivery, ch: ChannelState, cc: CChannel) -> None:
    """The armed timer: close every window that ended by now and holds events, then re-arm."""
    hop = cc.spec.hop
    state = ch.hop
    assert hop is not None
    assert state is not None
    _, step, length = spans(hop)
    state.armed = None
    now = d.ctx.now
    panes = state.panes
    while panes:
        k = _first_window(state, step, length)
        while panes and panes[0].index < k * step:  # why: a pane before window k is in no window to come
            panes.popleft()
        if not panes:
            state.next_window = k
            return  # nothing left: the next event arms again
        # why again: a later oldest pane skips the empty windows between (never a pane before it)
        k = _first_window(state, step, length)
        end = state.origin + k * hop.hop_ms + hop.size_ms
        if end > now:
            break
        state.next_window = k + 1
        _close(d, cc, state, (state.origin + k * hop.hop_ms, end), k * step + length)
        if d.inst.ended:
            return
    if panes:
        _arm(d, ch, state, hop, step, length)


def _close(d: Delivery, cc: CChannel, state: HopState, span: tuple[float, float], stop: int) -> None:
    """Emit the window ``span`` (its kept panes end before pane ``stop``): its events and accumulator."""
    inside = _covered(state.panes, stop)
    entries = [en for p in inside for en in p.entries]
    aggregate = None
    if cc.window is not None:
        aggregate = combine(cc.window, [p.acc for p in inside if p.acc is not None]).get()
    if d.ctx.tracing:
        d.trace(TraceKind.DETECTED, cc.id, None, {"window": True, "start": span[0], "end": span[1]})
    d.window(entries, aggregate)


def _covered(panes: deque[Pane], stop: int) -> list[Pane]:
    """The kept panes before pane ``stop`` (the oldest ones are the window's first)."""
    out = []
    for pane in panes:
        if pane.index >= stop:
            break
        out.append(pane)
    return out


def combine(window: Window, parts: list[Aggregate]) -> Aggregate:
    """One accumulator over the events of ``parts`` (pane accumulators, oldest first)."""
    out = window.new()
    for part in parts:
        _merge(out, part)
    return out


def _merge(into: Aggregate, part: Aggregate) -> None:
    """Add the events ``part`` counted to ``into`` (same kind), in their arrival order."""
    if isinstance(into, CountBy) and isinstance(part, CountBy):
        counts = into.counts
        for key, n in part.counts.items():
            counts[key] = counts.get(key, 0) + n
        into.total += part.total
    elif isinstance(into, GroupBy) and isinstance(part, GroupBy):
        for key, agg in part.groups.items():
            mine = into.groups.get(key)
            if mine is None:
                into.groups[key] = agg.copy()
            else:
                _merge(mine, agg)
    elif isinstance(into, Collect) and isinstance(part, Collect):
        into.values.extend(part.values)
    elif isinstance(into, TopN) and isinstance(part, TopN):
        ranked = into.counts
        for value, n in part.counts.items():
            ranked[value] = ranked.get(value, 0) + n
    else:  # pragma: no cover - accumulators.compile_window builds only the kinds above
        msg = f"cannot combine {type(part).__name__} window parts"
        raise TypeError(msg)
