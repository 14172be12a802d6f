"""The reaction-group matcher: Prova's group state machine on the keyed runtime.

Semantics (prova.md sections 3-5; the choices for its section 9 ambiguities are marked *Choice*
and listed in ``docs/reaction-groups.md``):

* **Instances.** Each event that matches the :class:`Initiator` starts one instance (``mult``),
  or only the first one per key (single-shot). The initiating event is never seen by the instance
  it creates. Start-up instances (``ReactionGroup.instances``) are created at ``created_t``.
  The group timeout counts from creation; timers fire *after* events with the same timestamp.
* **Per event**, the live instances of the key see it in creation order, and inside an instance
  every live channel in creation order (a nested group's channels at the nested group's place).
  A matching channel records the event in the instance trace, reacts (``ctx.react``), then runs
  the operator's state machine.
* **AND** completes when every live channel is satisfied: optional, bare ``@stop``, ``@pause``/
  ``@resume`` control channels, ``@count`` channels with ``min`` reached, and ``@not`` channels
  only when the group has *no* timeout. With a group timeout a live ``@not`` channel holds
  completion back until the timeout, which then succeeds and lists it in ``Detection.negated``.
  A ``@not`` event fails the instance (unless channels are declared ``after`` it: then it extends
  the instance, as in Prova's restart idiom). A bare ``@stop`` event ends the instance: success if
  everything left is satisfied, else silent failure. ``@stop(ids)`` fails the instance if a target
  is not satisfied yet, and removes the satisfied ones.
* **OR** completes on the first positive event with the whole trace. A ``@not`` event removes
  its channel (the event stays in the trace); a bare ``@stop`` event ends the instance silently;
  ``@stop(ids)`` removes its targets; ``@pause``/``@resume`` events are recorded and (un)pause
  their targets. At the group timeout a still-live ``@not`` channel makes the OR succeed.
* **Timer-driven completions keep the positive events** (*Choice* 9.1, the documented
  semantics), followed by the absent ``@not`` channels.
* An OR completion ends the instance: its other channels are gone (no leaked channels, 8.3).
"""

from __future__ import annotations

import copy
from collections.abc import Hashable
from typing import cast

from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context
from workbench.engine.reactions.compiled import (
    CChannel,
    CGroup,
    compile_group,
    group_initiator,
    instance_keys,
)
from workbench.engine.reactions.delivery import Delivery, Plan
from workbench.engine.reactions.hopping import hop_tick
from workbench.engine.reactions.patterns import AND, OR, ReactionGroup, pairs
from workbench.engine.reactions.policies import AndPolicy, OrPolicy
from workbench.engine.reactions.results import TreeNode
from workbench.engine.reactions.state import Entry, GroupState, InstanceState
from workbench.engine.reactions.timers import group_timeout, member_timeout, tick
from workbench.errors import PatternError

__all__ = ["GroupMatcher", "TreeNode"]

#: A key's instances are indexed (see :mod:`.state`) once it holds more than this many.
_INDEX_FROM = 12


class GroupMatcher:
    """The compiled matcher of a :class:`ReactionGroup` (immutable, shared by every key)."""

    def __init__(self, pattern: ReactionGroup) -> None:
        self.pattern = pattern
        self.name = pattern.name
        #: where this group's conditions report runtime errors (an engine points it at its log)
        self.faults = FaultSink(pattern.name)
        self.group = compile_group(pattern, faults=self.faults)
        self.plan = Plan(self.group, {AND: AndPolicy(), OR: OrPolicy()}, pattern.name)
        self.initiator = group_initiator(pattern, self.faults)
        if self.initiator is None and not pattern.instances:
            msg = "a reaction group needs an initiator or start-up instances"
            raise PatternError(msg, pattern=pattern.name)
        types = self.group.types()
        if types is not None and self.initiator is not None:
            types = None if self.initiator.spec.type is None else types | {self.initiator.spec.type}
        self._types = types
        self._keyed = instance_keys(self.group)

    # ------------------------------------------------------------------ Matcher protocol
    def event_types(self) -> frozenset[str] | None:
        """Types of every channel and of the initiator."""
        return self._types

    def new_state(self, key: Hashable) -> GroupState:
        """An empty per-key state."""
        return GroupState()

    def is_idle(self, state: GroupState) -> bool:
        """No live instance, and no consumed single-shot initiator to remember."""
        return not state.instances and not state.initiated

    def initial_timers(self) -> list[tuple[int | float, Hashable, Hashable]]:
        """Timers creating the start-up instances: ``(created_t, key, token)``."""
        return [(inst.created_t, inst.key, ("start", i)) for i, inst in enumerate(self.pattern.instances)]

    def process(self, state: GroupState, event: Event, ctx: Context) -> None:
        """Deliver the event to the key's live instances, then maybe start a new instance."""
        if state.instances:
            plan, top = self.plan, self.group
            for root in self._candidates(state, event):
                if not root.ended:
                    self._deliver(Delivery(plan, state, root, top, root, (), ctx, event))
        init = self.initiator
        if init is None or (state.initiated and not init.spec.mult):
            return
        env = self.group.constants
        bound = init.accepts(event, env)
        if bound is None:
            return
        if not init.spec.mult:
            state.initiated = True
        variables = dict(env)
        if init.spec.state:  # per-instance mutable state: each instance gets its own copy
            variables.update(copy.deepcopy(dict(pairs(init.spec.state))))
        variables.update(bound)
        root = self._start(state, variables, event, ctx)
        if init.spec.template:
            root.results.append(Entry(init.spec.id, event))

    def on_timer(self, state: GroupState, time: int | float, token: Hashable, ctx: Context) -> None:
        """Start-up instances, group and member timeouts, ``@timer`` and ``@hop`` windows."""
        if not isinstance(token, tuple):
            return
        kind = token[0]
        if kind == "start":
            spec = self.pattern.instances[token[1]]
            variables = dict(self.group.constants)
            variables.update(copy.deepcopy(dict(pairs(spec.vars))))
            self._start(state, variables, None, ctx)
            return
        root = state.instances.get(token[1])
        if root is None or root.ended:
            return  # stale: the instance is gone
        path = token[2]
        if path:
            d = self.plan.locate(state, root, path, ctx, None)
        else:  # most timers belong to the root instance: no walk
            d = Delivery(self.plan, state, root, self.group, root, (), ctx, None)
        if d is None:
            return
        if kind == "gt":
            group_timeout(d)
            return
        ch = d.inst.channels.get(token[3])
        if ch is None:
            return  # stale: the channel already fired or was removed
        cc = d.group.members[ch.member]
        assert isinstance(cc, CChannel)
        if kind == "ct":
            member_timeout(d, ch, cc)
        elif kind == "tick":
            tick(d, ch, cc)
        elif kind == "hop":
            hop_tick(d, ch, cc)

    # ------------------------------------------------------------------ instances
    def _start(
        self, state: GroupState, variables: dict[str, object], initiator: Event | None, ctx: Context
    ) -> InstanceState:
        iid = ctx.new_instance()
        root = InstanceState(iid, ctx.now, variables, initiator)
        state.instances[iid] = root
        if state.indexed:
            self._index(state, root)
        elif self._keyed and len(state.instances) > _INDEX_FROM:
            state.indexed = True
            for inst in state.instances.values():
                self._index(state, inst)
        if ctx.tracing:
            ctx.trace(
                TraceKind.STARTED, iid, None, initiator.seq if initiator else None, {"group": self.name}
            )
        Delivery(self.plan, state, root, self.group, root, (), ctx, None).populate()
        return root

    def _candidates(self, state: GroupState, event: Event) -> list[InstanceState]:
        """The live instances that may accept ``event``, in creation order (see :mod:`.state`)."""
        keyed = self._keyed.get(event.type) if state.indexed else None
        if keyed is None:
            return list(state.instances.values())
        fields = event.fields
        ids: list[int] = []
        if all(name in fields for name, _ in keyed):
            try:
                ids = state.index.get((event.type, tuple(fields[name] for name, _ in keyed)), ids)
            except TypeError:  # an unhashable field value equals no hashable bound value
                ids = []
        loose = state.loose.get(event.type)
        if loose:
            ids = sorted(ids + loose)
        instances = state.instances
        return [instances[i] for i in ids]

    def _index(self, state: GroupState, root: InstanceState) -> None:
        variables = root.vars
        for type_, keyed in self._keyed.items():
            if all(var in variables for _, var in keyed):
                value = tuple(variables[var] for _, var in keyed)
                try:
                    state.index.setdefault((type_, value), []).append(root.id)
                except TypeError:
                    pass
                else:
                    root.index_keys.append((type_, value))
                    continue
            state.loose.setdefault(type_, []).append(root.id)
            root.loose_types.append(type_)

    # ------------------------------------------------------------------ delivery
    def _deliver(self, d: Delivery) -> None:
        """Offer ``d.event`` to every live channel of ``d.inst`` in creation order (nested groups at
        their place); each channel that accepts it goes to the group's policy."""
        inst, root, event = d.inst, d.root, d.event
        assert event is not None
        order = inst.order
        channels = inst.channels
        members = d.group.members
        etype = event.type
        # Channels created while this event is delivered are appended past ``n``: they do not see it.
        n = len(order)
        i = 0
        while i < n:
            ref = order[i]
            i += 1
            if inst.ended or root.ended:
                return
            if isinstance(ref, str):  # a nested group: deliver to its instance, at its place in the order
                child = inst.children.get(ref)
                if child is not None and not child.ended:
                    sub = cast(CGroup, members[d.group.index_of[ref]])
                    self._deliver(Delivery(d.plan, d.state, root, sub, child, (*d.path, ref), d.ctx, event))
                continue
            ch = channels.get(ref)
            if ch is None:
                continue  # removed earlier in this delivery
            cc = cast(CChannel, members[ch.member])
            ctype = cc.spec.type
            if ctype != etype and (ctype is not None or cc.spec.timer is not None):
                continue  # another type; a @timer channel without a type is a pure clock
            bound = cc.accepts(event, {**inst.vars, **ch.env} if ch.env else inst.vars)
            if bound is None:
                continue  # the match or where rejects it
            if cc.spec.id in inst.paused:
                d.paused(cc)  # a paused channel reacts "paused" and changes nothing
            else:
                d.policy.event(d, ch, cc, bound)
        if len(inst.order) > 2 * (len(inst.channels) + len(inst.children)) + 8:
            inst.order = [
                r for r in inst.order if (r in inst.children if isinstance(r, str) else r in inst.channels)
            ]
