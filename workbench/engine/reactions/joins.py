"""``@vars`` joins in AND groups (prova.md 4.10): events of several channels joined on shared variables.

Every accepted ``@vars`` event is recorded in the instance's pool; once every ``@vars`` channel has
at least one event, each new event is joined leg by leg with the pooled events of the other
channels (equal values for shared variable names), and each complete join that passes the group
``@where`` is emitted as one match.
"""

from __future__ import annotations

from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.reactions.compiled import CChannel, CGroup
from workbench.engine.reactions.delivery import Delivery
from workbench.engine.reactions.patterns import pairs
from workbench.engine.reactions.rules import compatible
from workbench.engine.reactions.state import ChannelState, Entry, Vars

__all__ = ["vars_event"]


def vars_event(d: Delivery, ch: ChannelState, cc: CChannel, env: Vars) -> None:
    """A ``@vars`` channel accepted ``d.event``: record it, then emit the joins it completes."""
    event, group, inst = d.event, d.group, d.inst
    assert event is not None
    fields = event.fields
    mine: dict[str, object] = {var: fields[name] for var, name in pairs(cc.spec.vars)}
    others: dict[str, list[Entry]] = {}
    for entry in inst.pool:
        if entry.channel != cc.id:
            others.setdefault(entry.channel, []).append(entry)
    single = cc.spec.count is None
    if single and _disagrees(group, env, mine, others, event):
        if d.ctx.tracing:
            d.trace(TraceKind.IGNORED, cc.id, event.seq, {"join": "disagrees"})
        return
    entry = Entry(cc.id, event, bindings=mine)
    inst.results.append(entry)
    inst.pool.append(entry)
    d.react(cc, "accepted")
    d.collect(cc, env)
    if d.ctx.tracing:
        d.trace(TraceKind.ACCEPTED, cc.id, event.seq, {"vars": mine})
    if single:
        d.remove(ch)
    else:
        ch.seen += 1
    expected_legs = group.vars_channels - 1
    if expected_legs < 1 or len(others) < expected_legs:
        return
    _emit_joins(d, env, mine, others, entry)


def _disagrees(group: CGroup, env: Vars, mine: Vars, others: dict[str, list[Entry]], event: Event) -> bool:
    """A single-shot ``@vars`` channel ignores an event that disagrees with an earlier recorded one.

    The group ``@where`` takes part when one partner is a whole join (two ``@vars`` channels); with
    more channels it needs every leg and is checked on joins.
    """
    pairwise_where = group.vars_channels == 2
    for entries in others.values():
        for entry in entries:
            if not compatible(group, env, mine, [entry], event, with_where=pairwise_where):
                return True
    return False


def _emit_joins(d: Delivery, env: Vars, mine: Vars, others: dict[str, list[Entry]], entry: Entry) -> None:
    """Build the joins leg by leg on the shared variables, then check the group ``@where`` on each
    complete join (a ``@where`` may name variables of several legs)."""
    event, group, inst = entry.event, d.group, d.inst
    assert event is not None
    combos: list[list[Entry]] = [[]]
    for channel in sorted(others, key=lambda c: group.index_of.get(c, 0)):
        combos = [
            [*combo, other]
            for combo in combos
            for other in others[channel]
            if compatible(group, env, mine, [*combo, other], event, with_where=False)
        ]
        if not combos:
            return
    # why the pool's order: a join lists its events as the instance recorded them (Prova's Results,
    # in the order their reactions fired), which is time order, not arrival order
    recorded = {id(en): i for i, en in enumerate(inst.pool)}
    for combo in combos:
        if group.where is not None and not compatible(group, env, mine, combo, event, with_where=True):
            continue
        members = [*sorted(combo, key=lambda en: recorded[id(en)]), entry]
        for en in members:
            en.emitted = True
        d.emit("match", members, [])
        inst.emitted += 1
        if group.spec.exit.count is not None and inst.emitted >= group.spec.exit.count:
            d.end()
            return
