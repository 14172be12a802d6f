"""One event (or timer) delivered to one group instance: the accept/record core of the state machine.

A :class:`Delivery` says where an event lands (the key's state, the root instance, the group and
instance it reached, and their ``path`` of nested group names) and what it may do there: record
and react, run ``@pause``/``@resume``/``@stop(ids)`` control, create the channels declared
``after`` a firing one, and end the instance (succeed, fail) reporting a nested result to its
parent. It is built once per delivery, so no step passes that caravan of parameters.

What an accepted event *means* for the instance is the operator's business: a :class:`Policy`
(:mod:`.policies`: AND and OR) decides; this core never looks at the operator.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from workbench.engine import detection as det
from workbench.engine.detection import Detection, Reaction, TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.reactions.compiled import CChannel, CGroup
from workbench.engine.reactions.patterns import pairs
from workbench.engine.reactions.results import flatten
from workbench.engine.reactions.rules import satisfied
from workbench.engine.reactions.state import (
    ChannelState,
    Entry,
    GroupState,
    HopState,
    InstanceState,
    SubResult,
    Vars,
    unindex,
)
from workbench.errors import CepRuntimeError

__all__ = ["Delivery", "Path", "Plan", "Policy"]

#: The names of the nested groups from the root to an instance (``()``: the root itself).
Path = tuple[str, ...]


class Policy(Protocol):
    """What an operator decides; the AND and OR policies implement it (see :mod:`.policies`)."""

    def event(self, d: Delivery, ch: ChannelState, cc: CChannel, bound: Vars) -> None:
        """A live, unpaused channel accepted ``d.event``."""
        ...

    def settle(self, d: Delivery) -> None:
        """A channel went away without deciding the instance (an ``@not`` proved absent)."""
        ...

    def expired(self, d: Delivery, cc: CChannel, was_satisfied: bool) -> None:
        """A positive channel's member ``@timeout`` fired (the channel is already removed)."""
        ...

    def timeout_succeeds(self, d: Delivery, live_nots: list[str]) -> bool:
        """Whether the group ``@timeout`` ends the instance with a detection."""
        ...

    def child_failed(self, d: Delivery, name: str) -> None:
        """The nested group ``name`` of ``d``'s instance can no longer succeed."""
        ...

    def child_succeeded(self, d: Delivery, successors: tuple[int, ...]) -> None:
        """A nested group succeeded; ``successors`` are the members created after it."""
        ...


@dataclass(frozen=True, slots=True)
class Plan:
    """What every delivery of one matcher shares: the compiled top group and the two policies."""

    top: CGroup
    policies: Mapping[str, Policy]
    #: the pattern name (the top group's), on every reaction and detection
    name: str = ""

    def locate(
        self, state: GroupState, root: InstanceState, path: Path, ctx: Context, event: Event | None
    ) -> Delivery | None:
        """A delivery to the live nested instance ``path`` of ``root``; ``None`` if it is gone."""
        group, inst = self.top, root
        for name in path:
            child = inst.children.get(name)
            if child is None or child.ended:
                return None
            sub = group.members[group.index_of[name]]
            assert isinstance(sub, CGroup)
            group, inst = sub, child
        return Delivery(self, state, root, group, inst, path, ctx, event)


@dataclass(slots=True, eq=False)
class Delivery:
    """``event`` (``None`` for a timer) delivered to ``inst``, an instance of ``group`` under ``root``."""

    plan: Plan
    state: GroupState
    root: InstanceState
    group: CGroup
    inst: InstanceState
    path: Path
    ctx: Context
    event: Event | None

    @property
    def policy(self) -> Policy:
        """What the group's operator decides (looked up when needed: most deliveries need none)."""
        return self.plan.policies[self.group.spec.operator]

    def trace(
        self,
        kind: TraceKind,
        element: str | None = None,
        seq: int | None = None,
        detail: dict[str, object] | None = None,
    ) -> None:
        """Record a state change of the root instance (call it under ``if d.ctx.tracing``)."""
        self.ctx.trace(kind, self.root.id, element, seq, detail)

    # ------------------------------------------------------------------ accept and record
    def env(self, ch: ChannelState, bound: Vars) -> Vars:
        """The variables a channel's expressions see: the instance's, the channel's, the event's."""
        return {**self.inst.vars, **ch.env, **bound} if ch.env or bound else self.inst.vars

    def record(self, cc: CChannel) -> None:
        """Append the event to the instance trace."""
        self.inst.results.append(Entry(cc.id, self.event))

    def react(self, cc: CChannel, status: str) -> None:
        """Output the channel's reaction to the event (``ctx.react``)."""
        event = self.event
        assert event is not None
        ctx = self.ctx
        counter = cc.spec.counts  # every reaction runs the continuation, a paused one's too (prova.md 4.7)
        ctx.react(Reaction(self.plan.name, ctx.key, self.root.id, cc.id, event, ctx.now, status, counter))

    def collect(self, cc: CChannel, env: Vars) -> None:
        """Run the channel's ``collect`` clauses: append values to the instance's list variables."""
        event = self.event
        assert event is not None
        for var, expr in cc.collect:
            target = self.inst.vars.get(var)
            if not isinstance(target, list):
                msg = (
                    f"group {self.plan.name!r}, channel {cc.id!r}: collect needs list variable {var!r} "
                    f"(declare it in the initiator's state), got {type(target).__name__}"
                )
                raise CepRuntimeError(msg)
            target.append(expr(event, env))

    def remove(self, ch: ChannelState) -> None:
        """The channel instance is gone (fired, stopped or expired)."""
        self.inst.channels.pop(ch.cid, None)

    def paused(self, cc: CChannel) -> None:
        """A paused channel's event: it reacts ``paused`` and changes nothing."""
        self.react(cc, "paused")
        if self.ctx.tracing:
            self.trace(TraceKind.IGNORED, cc.id, self._seq(), {"paused": True})

    def _seq(self) -> int | None:
        return None if self.event is None else self.event.seq

    # ------------------------------------------------------------------ control channels
    def control(self, cc: CChannel) -> None:
        """``@pause(ids)`` and ``@resume(ids)``."""
        paused = self.inst.paused
        tracing = self.ctx.tracing
        for target in cc.spec.pause_ids:
            paused.add(target)
            if tracing:
                self.trace(TraceKind.PAUSED, target, self._seq(), {"by": cc.id})
        for target in cc.spec.resume_ids:
            paused.discard(target)
            if tracing:
                self.trace(TraceKind.RESUMED, target, self._seq(), {"by": cc.id})

    def stop_targets(self, cc: CChannel, require_satisfied: bool) -> bool:
        """Remove the live channels named by ``@stop(ids)``; False if an AND target is unsatisfied."""
        group, inst = self.group, self.inst
        targets = set(cc.spec.stop_ids)
        for other in list(inst.channels.values()):
            oc = group.members[other.member]
            assert isinstance(oc, CChannel)
            if oc.id not in targets:
                continue
            if require_satisfied and not satisfied(group, other, oc, at_timeout=True):
                return False
            self.remove(other)
            if self.ctx.tracing:
                self.trace(TraceKind.STOPPED, oc.id, self._seq(), {"by": cc.id})
        for name in targets & set(inst.children):
            if require_satisfied:
                return False
            inst.children.pop(name).ended = True
        return True

    # ------------------------------------------------------------------ creation
    def populate(self) -> None:
        """Arm the group timeout and create the members that exist from the start."""
        group, ctx = self.group, self.ctx
        if group.spec.timeout_ms is not None:
            ctx.schedule(ctx.now + group.spec.timeout_ms, ("gt", self.root.id, self.path))
        for index in group.initial:
            self.create_member(index, {})

    def create_member(self, index: int, env: dict[str, object]) -> None:
        """A new channel instance (or nested group instance) for member ``index``."""
        member = self.group.members[index]
        inst, ctx = self.inst, self.ctx
        if isinstance(member, CGroup):
            child = InstanceState(self.root.id, ctx.now, inst.vars)
            inst.children[member.name] = child
            inst.order.append(member.name)
            path = (*self.path, member.name)
            Delivery(self.plan, self.state, self.root, member, child, path, ctx, self.event).populate()
            return
        state = self.state
        cid = state.next_cid
        state.next_cid += 1
        ch = ChannelState(cid, index, env)
        inst.channels[cid] = ch
        inst.order.append(cid)
        if member.plain:
            return  # no @size, @timer, @timeout or @paused: nothing to set up
        spec = member.spec
        if spec.size is not None:
            ch.target = spec.size.n
        if spec.timer is not None:
            ctx.schedule(ctx.now + spec.timer.delay_ms, ("tick", self.root.id, self.path, cid))
        if spec.hop is not None:  # its timer is armed by its first event
            ch.hop = HopState(ctx.now)
        window = member.window
        if window is not None:
            ch.acc = window.new()
        if spec.timeout_ms is not None:
            ctx.schedule(ctx.now + spec.timeout_ms, ("ct", self.root.id, self.path, cid))
        if spec.paused:
            inst.paused.add(spec.id)

    def extend(self, cc: CChannel, ch: ChannelState, bound: Vars) -> None:
        """Create the channels declared ``after`` ``cc``, with the variables its event binds."""
        if not cc.successors:
            return
        event = self.event
        assert event is not None
        env = dict(ch.env)
        env.update(bound)
        for var, name in pairs(cc.spec.binds):
            env[var] = event.fields.get(name)
        for index in cc.successors:
            self.create_member(index, dict(env))
            if self.ctx.tracing:
                self.trace(TraceKind.EXTENDED, self.group.members[index].id, event.seq, {"after": cc.id})

    # ------------------------------------------------------------------ outcomes
    def emit(self, kind: str, entries: list[Entry], negated: list[str], aggregate: object = None) -> None:
        """Output a detection of this instance (a match, or a timeout on the timeout channel)."""
        group, ctx, rid = self.group, self.ctx, self.root.id
        events, chans, negs, tree = flatten(entries, negated)
        extra: dict[str, object] = {"exit": group.op, "group": group.name, "tree": tuple(tree)}
        if self.path:
            extra["nested"] = True
        if aggregate is not None:
            extra["aggregate"] = aggregate
        if kind == det.MATCH and group.spec.counts is not None:
            extra["counter"] = group.spec.counts  # the exit continuation increments it
        if ctx.tracing:
            trace_kind = TraceKind.DETECTED if kind == det.MATCH else TraceKind.FAILED
            where = group.name if self.path else None
            # why the cause: the event that completed or failed the instance (None: a timer)
            self.trace(trace_kind, where, ctx.cause, {"kind": kind, "events": [e.seq for e in events]})
        name, initiator = self.plan.name, self.root.initiator
        ctx.emit(
            Detection(
                name, ctx.key, rid, kind, ctx.now, tuple(events), tuple(chans), tuple(negs), initiator, extra
            )
        )

    def window(self, entries: list[Entry], aggregate: object) -> None:
        """A recurring window closes: emit it; the exit's ``@count``/``@size`` may end the instance."""
        inst = self.inst
        self.emit(det.MATCH, entries, [], aggregate=aggregate)
        inst.emitted += 1
        ex = self.group.spec.exit
        cap = min(c for c in (ex.count, ex.size, None) if c is not None) if (ex.count or ex.size) else None
        if cap is not None and inst.emitted >= cap:
            self.end()

    def succeed(self, negated: list[str] | None = None) -> None:
        """Emit the instance's unemitted trace as a match and end it (a nested one reports up)."""
        entries = [en for en in self.inst.results if not en.emitted]
        self.emit(det.MATCH, entries, negated or [])
        self.end()
        if self.path:
            group = self.group
            self._child_done(SubResult(group.name, group.op, entries, list(negated or [])))

    def fail(self, cause: str | None, timed_out: bool = False) -> None:
        """End the instance without a match (reported on the timeout channel if it timed out)."""
        if self.ctx.tracing:
            # why the cause: the event that failed it (a @stop, a violated @not); None: a timer
            self.trace(TraceKind.FAILED, cause, self.ctx.cause, {"timed_out": timed_out})
        if timed_out and self.group.spec.timeout_channel:
            self.emit(det.TIMEOUT, [en for en in self.inst.results if not en.emitted], [])
        self.end()
        if self.path:
            self._child_done(None)

    def end(self) -> None:
        """Mark the instance ended, drop its channels and children; a root leaves the key's state."""
        inst = self.inst
        inst.ended = True
        for child in inst.children.values():
            child.ended = True
        inst.children.clear()
        inst.channels.clear()
        if not self.path:
            state, root = self.state, self.root
            state.instances.pop(root.id, None)
            if state.indexed:
                unindex(state, root)
                state.indexed = bool(state.instances)

    def _child_done(self, result: SubResult | None) -> None:
        """This nested instance ended: its result is a positive member event of the parent, or a failure."""
        parent = self.plan.locate(self.state, self.root, self.path[:-1], self.ctx, self.event)
        if parent is None or parent.inst.ended:
            return
        name = self.path[-1]
        parent.inst.children.pop(name, None)
        if result is not None and name in parent.inst.paused:
            # why: prova.md 4.7: a paused member's result is recorded, then removed; the nested
            # group has ended, so the member can no longer succeed: a failure to the parent
            if self.ctx.tracing:
                parent.trace(TraceKind.IGNORED, name, self.ctx.cause, {"paused": True})
            result = None
        if result is None:
            parent.policy.child_failed(parent, name)
            return
        parent.inst.results.append(Entry(name, sub=result))
        successors = parent.group.successors_of.get(name, ())
        for index in successors:  # channels declared ``after`` the nested group (prova.md 5.5)
            parent.create_member(index, {})
            if self.ctx.tracing:
                parent.trace(TraceKind.EXTENDED, parent.group.members[index].id, None, {"after": name})
        parent.policy.child_succeeded(parent, successors)
