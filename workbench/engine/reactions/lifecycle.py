"""Recording, emitting and ending group instances: the outcome half of the group state machine."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from workbench.engine import detection as det
from workbench.engine.detection import Detection, Reaction, TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.reactions.compiled import CChannel, CGroup
from workbench.engine.reactions.patterns import AND
from workbench.engine.reactions.results import flatten
from workbench.engine.reactions.rules import and_complete
from workbench.engine.reactions.state import ChannelState, Entry, GroupState, InstanceState, SubResult
from workbench.errors import CepRuntimeError

__all__ = ["Lifecycle", "Path"]

Path = tuple[str, ...]


class Lifecycle:
    """Base of :class:`~workbench.engine.reactions.matcher.GroupMatcher`: outcomes of instances.

    A nested instance is addressed by its ``path`` (the names of the nested groups from the root);
    its success is a positive member event of its parent.
    """

    name: str
    group: CGroup

    def _find(self, root: InstanceState, path: Path) -> tuple[CGroup, InstanceState] | None:
        group, inst = self.group, root
        for name in path:
            child = inst.children.get(name)
            if child is None or child.ended:
                return None
            sub = group.members[group.index_of[name]]
            assert isinstance(sub, CGroup)
            group, inst = sub, child
        return group, inst

    def _react(self, root: InstanceState, cc: CChannel, event: Event, status: str, ctx: Context) -> None:
        ctx.react(Reaction(self.name, ctx.key, root.id, cc.id, event, ctx.now, status))

    def _collect(self, inst: InstanceState, cc: CChannel, event: Event, env: Mapping[str, Any]) -> None:
        for var, expr in cc.collect:
            target = inst.vars.get(var)
            if not isinstance(target, list):
                msg = (
                    f"group {self.name!r}, channel {cc.id!r}: collect needs list variable {var!r} "
                    f"(declare it in the initiator's state), got {type(target).__name__}"
                )
                raise CepRuntimeError(msg)
            target.append(expr(event, env))

    def _remove(self, inst: InstanceState, ch: ChannelState) -> None:
        inst.channels.pop(ch.cid, None)

    def _record(self, inst: InstanceState, cc: CChannel, event: Event) -> Entry:
        entry = Entry(cc.id, event)
        inst.results.append(entry)
        return entry

    def _and_check(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ctx: Context,
    ) -> None:
        if not inst.ended and and_complete(group, inst):
            self._succeed(state, root, group, inst, path, ctx)

    def _emit(
        self,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        kind: str,
        entries: list[Entry],
        negated: list[str],
        ctx: Context,
        aggregate: Any = None,
    ) -> None:
        events, chans, negs, tree = flatten(entries, negated)
        extra: dict[str, Any] = {"exit": group.op, "group": group.name, "tree": tuple(tree)}
        if group is not self.group:
            extra["nested"] = True
        if aggregate is not None:
            extra["aggregate"] = aggregate
        if ctx.tracing:
            ctx.trace(
                TraceKind.DETECTED if kind == det.MATCH else TraceKind.FAILED,
                root.id,
                None if group is self.group else group.name,
                None,
                {"kind": kind, "events": [e.seq for e in events]},
            )
        ctx.emit(
            Detection(
                self.name,
                ctx.key,
                root.id,
                kind,
                ctx.now,
                tuple(events),
                tuple(chans),
                tuple(negs),
                root.initiator,
                extra,
            )
        )

    def _succeed(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ctx: Context,
        negated: list[str] | None = None,
    ) -> None:
        entries = [en for en in inst.results if not en.emitted]
        self._emit(root, group, inst, det.MATCH, entries, negated or [], ctx)
        self._end(state, root, group, inst, path)
        if path:
            self._child_done(
                state, root, path, SubResult(group.name, group.op, entries, list(negated or [])), ctx
            )

    def _fail(
        self,
        state: GroupState,
        root: InstanceState,
        group: CGroup,
        inst: InstanceState,
        path: Path,
        ctx: Context,
        cause: str | None,
        timed_out: bool = False,
    ) -> None:
        if ctx.tracing:
            ctx.trace(TraceKind.FAILED, root.id, cause, None, {"timed_out": timed_out})
        if timed_out and group.spec.timeout_channel:
            entries = [en for en in inst.results if not en.emitted]
            self._emit(root, group, inst, det.TIMEOUT, entries, [], ctx)
        self._end(state, root, group, inst, path)
        if path:
            self._child_done(state, root, path, None, ctx)

    def _end(
        self, state: GroupState, root: InstanceState, group: CGroup, inst: InstanceState, path: Path
    ) -> None:
        inst.ended = True
        for child in inst.children.values():
            child.ended = True
        inst.children.clear()
        inst.channels.clear()
        if not path:
            state.instances.pop(root.id, None)
            if state.indexed:
                _unindex(state, root)
                state.indexed = bool(state.instances)

    def _child_done(
        self, state: GroupState, root: InstanceState, path: Path, result: SubResult | None, ctx: Context
    ) -> None:
        """A nested group ended: its result is a positive member event of the parent, or a failure."""
        found = self._find(root, path[:-1])
        if found is None:
            return
        parent_group, parent = found
        if parent.ended:
            return
        parent.children.pop(path[-1], None)
        if result is None:
            # *Choice*: a nested group that can no longer succeed fails an AND parent (Prova leaves
            # the parent waiting for its own timeout, prova.md 5.2); an OR parent goes on.
            if parent_group.op == AND:
                self._fail(state, root, parent_group, parent, path[:-1], ctx, cause=path[-1])
            elif not parent.channels and not parent.children:
                self._fail(state, root, parent_group, parent, path[:-1], ctx, cause=path[-1], timed_out=True)
            return
        parent.results.append(Entry(path[-1], sub=result))
        successors = parent_group.successors_of.get(path[-1], ())
        for index in successors:  # channels declared ``after`` the nested group (prova.md 5.5)
            self._create_member(state, root, parent_group, parent, path[:-1], index, {}, ctx)
            if ctx.tracing:
                member = parent_group.members[index].id
                ctx.trace(TraceKind.EXTENDED, root.id, member, None, {"after": path[-1]})
        if parent_group.op == AND:
            self._and_check(state, root, parent_group, parent, path[:-1], ctx)
        elif not successors:
            self._succeed(state, root, parent_group, parent, path[:-1], ctx)

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
        raise NotImplementedError


def _unindex(state: GroupState, root: InstanceState) -> None:
    """Drop an ended instance from the per-key index (see :mod:`.state`)."""
    for key in root.index_keys:
        ids = state.index.get(key)
        if ids is not None:
            ids.remove(root.id)
            if not ids:
                del state.index[key]
    for type_ in root.loose_types:
        ids = state.loose.get(type_)
        if ids is not None:
            ids.remove(root.id)
            if not ids:
                del state.loose[type_]
    root.index_keys.clear()
    root.loose_types.clear()
