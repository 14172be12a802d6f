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
from collections.abc import Hashable, Mapping
from typing import Any, cast

from workbench.engine.detection import TraceKind
from workbench.engine.events import Event
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context
from workbench.engine.reactions import accumulators as accs
from workbench.engine.reactions.compiled import (
    CChannel,
    CGroup,
    compile_group,
    group_initiator,
    instance_keys,
)
from workbench.engine.reactions.lifecycle import Lifecycle, Path
from workbench.engine.reactions.patterns import AND, ReactionGroup, pairs
from workbench.engine.reactions.results import TreeNode
from workbench.engine.reactions.rules import and_complete, compatible, negation_holds, satisfied
from workbench.engine.reactions.state import ChannelState, Entry, GroupState, InstanceState
from workbench.errors import PatternError

__all__ = ["GroupMatcher", "TreeNode"]

#: A key's instances are indexed (see :mod:`.state`) once it holds more than this many.
_INDEX_FROM = 12


class GroupMatcher(Lifecycle):
    """The compiled matcher of a :class:`ReactionGroup` (immutable, shared by every key)."""

    def __init__(self, pattern: ReactionGroup) -> None:
        self.pattern = pattern
        self.name = pattern.name
        #: where this group's conditions report runtime errors (an engine points it at its log)
        self.faults = FaultSink(pattern.name)
        self.group = compile_group(pattern, faults=self.faults)
        self.initiator = group_initiator(pattern, self.faults)
        self._updaters: dict[int, accs.Updater] = {}  # id(accumulator spec) -> compiled updater
        if self.initiator is None and not pattern.instances:
            msg = "a reaction group needs an initiator or start-up instances"
            raise PatternError(msg, pattern=pattern.name)
        types = self.group.types()
        if types is not None and self.initiator is not None:
            types = None if self.initiator.spec.type is None else types | {self.initiator.spec.type}
        self._types = types
        self._keyed = instance_keys(self.group)

    # ------------------------------------------------------------------ Matcher protocol
    def _accumulate(
        self, spec: accs.Accumulator, value: dict[Any, Any], event: Event, env: Mapping[str, Any]
    ) -> None:
        """Add ``event`` to a window accumulator (its expressions compiled once per matcher)."""
        # id() is stable here: the specs belong to ``self.pattern``, which lives as long as we do
        update = self._updaters.get(id(spec))
        if update is None:
            update = self._updaters[id(spec)] = accs.updater(spec, self.faults)
        update(value, event, env)

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
            for root in self._candidates(state, event):
                if not root.ended:
                    self._deliver(state, root, self.group, root, (), event, ctx)
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

    def on_timer(self, state: GroupState, time: int | float, token: Hashable, ctx: Context) -> None:
        """Start-up instances, group and member timeouts, ``@timer`` windows."""
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
        found = self._find(root, token[2])
        if found is None:
            return
        group, inst = found
        if kind == "gt":
            self._group_timeout(state, root, group, inst, token[2], ctx)
            return
        ch = inst.channels.get(token[3])
        if ch is None:
            return  # stale: the channel already fired or was removed
        cc = group.members[ch.member]
        assert isinstance(cc, CChannel)
        if kind == "ct":
            self._member_timeout(state, root, group, inst, token[2], ch, cc, ctx)
        elif kind == "tick":
            self._tick(state, root, group, inst, token[2], ch, cc, ctx)

    # ------------------------------------------------------------------ creation
    def _start(
        self, state: GroupState, variables: dict[str, Any], initiator: Event | None, ctx: Context
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
        self._populate(state, root, self.group, root, (), ctx)
        return root

    def _populate(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ctx: Context,
    ) -> None:
        if group.spec.timeout_ms is not None:
            ctx.schedule(ctx.now + group.spec.timeout_ms, ("gt", root.id, path))
        for index in group.initial:
            self._create_member(state, root, group, inst, path, index, {}, ctx)

    def _create_member(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        index: int,
        env: dict[str, Any],
        ctx: Context,
    ) -> None:
        member = group.members[index]
        if isinstance(member, CGroup):
            child = InstanceState(root.id, ctx.now, inst.vars)
            inst.children[member.name] = child
            inst.order.append(("g", member.name))
            self._populate(state, root, member, child, (*path, member.name), ctx)
            return
        cid = state.next_cid
        state.next_cid += 1
        ch = ChannelState(cid, index, env)
        inst.channels[cid] = ch
        inst.order.append(("c", cid))
        if member.plain:
            return
        spec = member.spec
        if spec.size is not None:
            ch.target = spec.size.n
        acc = spec.size.accumulator if spec.size is not None else None
        if spec.timer is not None:
            acc = spec.timer.accumulator
            ctx.schedule(ctx.now + spec.timer.delay_ms, ("tick", root.id, path, cid))
        if acc is not None:
            ch.acc = accs.new_value(acc)
        if spec.timeout_ms is not None:
            ctx.schedule(ctx.now + spec.timeout_ms, ("ct", root.id, path, cid))
        if spec.paused:
            inst.paused.add(spec.id)

    def _extend(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        cc: CChannel,
        ch: ChannelState,
        event: Event,
        bound: Mapping[str, Any],
        ctx: Context,
    ) -> None:
        if not cc.successors:
            return
        env = dict(ch.env)
        env.update(bound)
        for var, name in pairs(cc.spec.binds):
            env[var] = event.fields.get(name)
        for index in cc.successors:
            self._create_member(state, root, group, inst, path, index, dict(env), ctx)
            if ctx.tracing:
                ctx.trace(TraceKind.EXTENDED, root.id, group.members[index].id, event.seq, {"after": cc.id})

    def _deliver(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        event: Event,
        ctx: Context,
    ) -> None:
        order = inst.order
        channels = inst.channels
        members = group.members
        etype = event.type
        is_and = group.spec.operator == AND
        # Channels created while this event is delivered are appended past ``n``: they do not see it.
        n = len(order)
        i = 0
        while i < n:
            kind, ref = order[i]
            i += 1
            if inst.ended or root.ended:
                return
            if kind == "g":
                child = inst.children.get(ref)
                if child is not None and not child.ended:
                    sub = cast(CGroup, members[group.index_of[ref]])
                    self._deliver(state, root, sub, child, (*path, ref), event, ctx)
                continue
            ch = channels.get(ref)
            if ch is None:
                continue
            cc = cast(CChannel, members[ch.member])
            ctype = cc.spec.type
            if ctype != etype and (ctype is not None or cc.spec.timer is not None):
                continue  # another type; a @timer channel without a type is a pure clock
            bound = cc.accepts(event, {**inst.vars, **ch.env} if ch.env else inst.vars)
            if bound is None:
                continue
            if is_and:
                self._and_event(state, root, group, inst, path, ch, cc, event, bound, ctx)
            else:
                self._or_event(state, root, group, inst, path, ch, cc, event, bound, ctx)
        if len(inst.order) > 2 * (len(inst.channels) + len(inst.children)) + 8:
            inst.order = [
                (k, r) for k, r in inst.order if (r in inst.channels if k == "c" else r in inst.children)
            ]

    def _and_event(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ch: ChannelState,
        cc: CChannel,
        event: Event,
        bound: Mapping[str, Any],
        ctx: Context,
    ) -> None:
        spec = cc.spec
        env = {**inst.vars, **ch.env, **bound} if ch.env or bound else inst.vars
        if spec.id in inst.paused:
            self._paused_event(root, cc, event, ctx)
            return
        if group.vars_mode and pairs(spec.vars):
            self._vars_event(state, root, group, inst, path, ch, cc, event, env, ctx)
            return
        if spec.negated:
            ch.seen += 1
            self._record(inst, cc, event)
            count = spec.count
            violated = count is None or (count.mode != "strict" and ch.seen >= count.min)
            if count is not None and count.mode == "strict":
                self._react(root, cc, event, "accepted", ctx)
                if ctx.tracing:
                    ctx.trace(
                        TraceKind.COUNTED, root.id, cc.id, event.seq, {"count": ch.seen, "of": count.min}
                    )
                return
            if not violated:
                self._react(root, cc, event, "accepted", ctx)
                if ctx.tracing:
                    ctx.trace(
                        TraceKind.COUNTED,
                        root.id,
                        cc.id,
                        event.seq,
                        {"count": ch.seen, "of": count.min if count else 1},
                    )
                return
            self._react(root, cc, event, "violated", ctx)
            if ctx.tracing:
                ctx.trace(TraceKind.VIOLATED, root.id, cc.id, event.seq)
            self._collect(inst, cc, event, env)
            if not cc.successors:
                self._fail(state, root, group, inst, path, ctx, cause=cc.id)
                return
            # A violated @not whose violation starts follow-up channels extends the instance.
            self._remove(inst, ch)
            self._extend(state, root, group, inst, path, cc, ch, event, bound, ctx)
            self._and_check(state, root, group, inst, path, ctx)
            return
        self._record(inst, cc, event)
        self._collect(inst, cc, event, env)
        if spec.stop:
            self._react(root, cc, event, "stop", ctx)
            self._remove(inst, ch)
            if ctx.tracing:
                ctx.trace(TraceKind.STOPPED, root.id, cc.id, event.seq)
            if and_complete(group, inst):
                self._succeed(state, root, group, inst, path, ctx)
            else:
                self._fail(state, root, group, inst, path, ctx, cause=cc.id)
            return
        count = spec.count
        strict_overflow = count is not None and count.mode == "strict" and ch.seen >= count.max
        self._react(root, cc, event, "violated" if strict_overflow else "accepted", ctx)
        if ctx.tracing and not strict_overflow:
            ctx.trace(TraceKind.ACCEPTED, root.id, cc.id, event.seq)
        if count is not None:
            if strict_overflow:
                if ctx.tracing:
                    ctx.trace(
                        TraceKind.VIOLATED,
                        root.id,
                        cc.id,
                        event.seq,
                        {"count": ch.seen + 1, "max": count.max},
                    )
                self._fail(state, root, group, inst, path, ctx, cause=cc.id)
                return
            ch.seen += 1
            if ctx.tracing:
                ctx.trace(TraceKind.COUNTED, root.id, cc.id, event.seq, {"count": ch.seen, "of": count.min})
            self._extend(state, root, group, inst, path, cc, ch, event, bound, ctx)
            closing = count.mode == "ignore" and ch.seen >= count.max and ch.seen >= count.min
            if not closing:
                return
            self._remove(inst, ch)
        elif spec.is_control:
            self._control(root, inst, cc, event, ctx)
            if not spec.stop_ids:
                return
        else:
            self._remove(inst, ch)
            self._extend(state, root, group, inst, path, cc, ch, event, bound, ctx)
        if spec.stop_ids and not self._stop_targets(
            group, inst, root, cc, event, ctx, require_satisfied=True
        ):
            self._fail(state, root, group, inst, path, ctx, cause=cc.id)
            return
        self._and_check(state, root, group, inst, path, ctx)

    def _stop_targets(
        self,
        group: CGroup,
        inst: InstanceState,
        root: InstanceState,
        cc: CChannel,
        event: Event,
        ctx: Context,
        require_satisfied: bool,
    ) -> bool:
        """Remove the live channels named by ``@stop(ids)``; False if an AND target is unsatisfied."""
        targets = set(cc.spec.stop_ids)
        for other in list(inst.channels.values()):
            oc = group.members[other.member]
            assert isinstance(oc, CChannel)
            if oc.id not in targets:
                continue
            if require_satisfied and not satisfied(group, other, oc, at_timeout=True):
                return False
            self._remove(inst, other)
            if ctx.tracing:
                ctx.trace(TraceKind.STOPPED, root.id, oc.id, event.seq, {"by": cc.id})
        for name in targets & set(inst.children):
            if require_satisfied:
                return False
            inst.children.pop(name).ended = True
        return True

    def _control(
        self, root: InstanceState, inst: InstanceState, cc: CChannel, event: Event, ctx: Context
    ) -> None:
        for target in cc.spec.pause_ids:
            inst.paused.add(target)
            if ctx.tracing:
                ctx.trace(TraceKind.PAUSED, root.id, target, event.seq, {"by": cc.id})
        for target in cc.spec.resume_ids:
            inst.paused.discard(target)
            if ctx.tracing:
                ctx.trace(TraceKind.RESUMED, root.id, target, event.seq, {"by": cc.id})

    def _paused_event(self, root: InstanceState, cc: CChannel, event: Event, ctx: Context) -> None:
        self._react(root, cc, event, "paused", ctx)
        if ctx.tracing:
            ctx.trace(TraceKind.IGNORED, root.id, cc.id, event.seq, {"paused": True})

    # ---- @vars joins
    def _vars_event(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ch: ChannelState,
        cc: CChannel,
        event: Event,
        env: Mapping[str, Any],
        ctx: Context,
    ) -> None:
        fields = event.fields
        mine = {var: fields[name] for var, name in pairs(cc.spec.vars)}
        others: dict[str, list[Entry]] = {}
        for entry in inst.pool:
            if entry.channel != cc.id:
                others.setdefault(entry.channel, []).append(entry)
        single = cc.spec.count is None
        if single:
            # A single-shot @vars channel ignores an event that disagrees with an earlier recorded
            # event (prova.md 4.10). The group @where takes part when one partner is a whole join
            # (two @vars channels); with more channels it needs every leg and is checked on joins.
            pairwise_where = group.vars_channels == 2
            for entries in others.values():
                for entry in entries:
                    if not compatible(group, env, mine, [entry], event, with_where=pairwise_where):
                        if ctx.tracing:
                            ctx.trace(TraceKind.IGNORED, root.id, cc.id, event.seq, {"join": "disagrees"})
                        return
        entry = Entry(cc.id, event, bindings=mine)
        inst.results.append(entry)
        inst.pool.append(entry)
        self._react(root, cc, event, "accepted", ctx)
        self._collect(inst, cc, event, env)
        if ctx.tracing:
            ctx.trace(TraceKind.ACCEPTED, root.id, cc.id, event.seq, {"vars": mine})
        if single:
            self._remove(inst, ch)
        else:
            ch.seen += 1
        expected_legs = group.vars_channels - 1
        if expected_legs < 1 or len(others) < expected_legs:
            return
        # Build the joins leg by leg on the shared variables, then check the group @where on each
        # complete join (a @where may name variables of several legs).
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
        for combo in combos:
            if group.where is not None and not compatible(group, env, mine, combo, event, with_where=True):
                continue
            members = sorted([*combo, entry], key=lambda en: en.event.seq if en.event else -1)
            for en in members:
                en.emitted = True
            self._emit(root, group, inst, "match", members, [], ctx)
            inst.emitted += 1
            if group.spec.exit.count is not None and inst.emitted >= group.spec.exit.count:
                self._end(state, root, group, inst, path)
                return

    # ---- OR
    def _or_event(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ch: ChannelState,
        cc: CChannel,
        event: Event,
        bound: Mapping[str, Any],
        ctx: Context,
    ) -> None:
        spec = cc.spec
        env = {**inst.vars, **ch.env, **bound} if ch.env or bound else inst.vars
        if spec.id in inst.paused:
            self._paused_event(root, cc, event, ctx)
            return
        self._record(inst, cc, event)
        self._collect(inst, cc, event, env)
        status = "violated" if spec.negated else ("stop" if spec.stop else "accepted")
        if spec.size is not None:
            ch.seen += 1
            acc_spec = spec.size.accumulator
            if acc_spec is not None and ch.acc is not None:
                self._accumulate(acc_spec, ch.acc, event, env)
            if ch.seen < ch.target or spec.size.n < 0:
                self._react(root, cc, event, "accepted", ctx)
                if ctx.tracing:
                    ctx.trace(
                        TraceKind.COUNTED, root.id, cc.id, event.seq, {"count": ch.seen, "of": ch.target}
                    )
                return
            if spec.size.reset is not None:
                self._react(root, cc, event, status, ctx)
                self._recurring_emit(state, root, group, inst, path, ch, cc, acc_spec, ctx)
                ch.seen = 0
                ch.target = spec.size.reset
                return
            self._remove(inst, ch)
        elif spec.timer is not None:
            if spec.timer.accumulator is not None and ch.acc is not None:
                self._accumulate(spec.timer.accumulator, ch.acc, event, env)
            self._react(root, cc, event, "accepted", ctx)
            if ctx.tracing:
                ctx.trace(TraceKind.ACCEPTED, root.id, cc.id, event.seq)
            return
        elif not spec.is_control:
            self._remove(inst, ch)
        self._react(root, cc, event, status, ctx)
        self._extend(state, root, group, inst, path, cc, ch, event, bound, ctx)
        if spec.negated:
            if ctx.tracing:
                ctx.trace(TraceKind.VIOLATED, root.id, cc.id, event.seq)
            self._or_exhausted(state, root, group, inst, path, ctx)
            return
        if spec.is_control or spec.stop_ids:
            self._control(root, inst, cc, event, ctx)
            self._stop_targets(group, inst, root, cc, event, ctx, require_satisfied=False)
            self._or_exhausted(state, root, group, inst, path, ctx)
            return
        if spec.stop:
            if ctx.tracing:
                ctx.trace(TraceKind.STOPPED, root.id, cc.id, event.seq)
            self._fail(state, root, group, inst, path, ctx, cause=cc.id)
            return
        if ctx.tracing:
            ctx.trace(TraceKind.ACCEPTED, root.id, cc.id, event.seq)
        if cc.successors:
            return  # the instance was extended: it goes on with the new channels
        self._succeed(state, root, group, inst, path, ctx)

    def _or_exhausted(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ctx: Context,
    ) -> None:
        """End an OR instance that has no live channel left and no group timeout to wait for.

        It can never emit (prova.md 3.2: only a positive event or a timeout ends an OR), so it is
        dropped silently, as Prova's instance would stay silent forever. With a group timeout (its
        own or an enclosing group's) it waits for the timeout, which reports it (``timeout_channel``).
        """
        if inst.channels or inst.children or inst.ended:
            return
        chain = self.group
        if chain.spec.timeout_ms is not None:
            return
        for name in path:
            chain = cast(CGroup, chain.members[chain.index_of[name]])
            if chain.spec.timeout_ms is not None:
                return
        self._fail(state, root, group, inst, path, ctx, cause=None)

    def _recurring_emit(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ch: ChannelState,
        cc: CChannel,
        acc_spec: accs.Accumulator | None,
        ctx: Context,
    ) -> None:
        aggregate = None
        if acc_spec is not None and ch.acc is not None:
            aggregate = accs.snapshot(acc_spec, ch.acc)
            ch.acc = accs.new_value(acc_spec)
        entries, inst.results = inst.results, []
        self._emit(root, group, inst, "match", entries, [], ctx, aggregate=aggregate)
        inst.emitted += 1
        ex = group.spec.exit
        cap = min(c for c in (ex.count, ex.size, None) if c is not None) if (ex.count or ex.size) else None
        if cap is not None and inst.emitted >= cap:
            self._end(state, root, group, inst, path)

    # ------------------------------------------------------------------ timers
    def _tick(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ch: ChannelState,
        cc: CChannel,
        ctx: Context,
    ) -> None:
        timer = cc.spec.timer
        assert timer is not None
        if ctx.tracing:
            ctx.trace(TraceKind.DETECTED, root.id, cc.id, None, {"window": True})
        self._recurring_emit(state, root, group, inst, path, ch, cc, timer.accumulator, ctx)
        if not inst.ended and not root.ended and not ctx.final:
            ctx.schedule(ctx.now + (timer.period_ms or timer.delay_ms), ("tick", root.id, path, ch.cid))

    def _member_timeout(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ch: ChannelState,
        cc: CChannel,
        ctx: Context,
    ) -> None:
        if ctx.tracing:
            ctx.trace(TraceKind.TIMED_OUT, root.id, cc.id)
        if cc.spec.negated:
            if not negation_holds(ch, cc):
                self._fail(state, root, group, inst, path, ctx, cause=cc.id, timed_out=True)
                return
            self._remove(inst, ch)
            if ctx.tracing:
                ctx.trace(TraceKind.NEGATED, root.id, cc.id)
            if group.op == AND:
                self._and_check(state, root, group, inst, path, ctx)
            else:
                self._or_exhausted(state, root, group, inst, path, ctx)
            return
        was_satisfied = satisfied(group, ch, cc, at_timeout=True)
        self._remove(inst, ch)
        if group.op == AND:
            # *Choice* 9.4: an expired positive channel that was never satisfied fails the AND at
            # once (it "does not contribute a positive detection", User Guide p. 71); a satisfied
            # one (optional, count minimum reached) just goes away.
            if not was_satisfied:
                self._fail(state, root, group, inst, path, ctx, cause=cc.id, timed_out=True)
            else:
                self._and_check(state, root, group, inst, path, ctx)
            return
        if not inst.channels and not inst.children:
            self._fail(state, root, group, inst, path, ctx, cause=cc.id, timed_out=True)

    def _group_timeout(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ctx: Context,
    ) -> None:
        if ctx.tracing:
            ctx.trace(TraceKind.TIMED_OUT, root.id, group.name if path else None)
        live_nots = []
        for ch in inst.channels.values():
            cc = group.members[ch.member]
            assert isinstance(cc, CChannel)
            if cc.spec.negated and negation_holds(ch, cc):
                live_nots.append(cc.id)
        if group.op == AND:
            ok = not group.vars_mode and and_complete(group, inst, at_timeout=True)
        else:
            ok = bool(live_nots)
        if ok:
            if ctx.tracing:
                for name in live_nots:
                    ctx.trace(TraceKind.NEGATED, root.id, name)
            self._succeed(state, root, group, inst, path, ctx, negated=live_nots)
        else:
            self._fail(state, root, group, inst, path, ctx, cause=None, timed_out=True)
