"""Compile ``group`` definitions into Prova-style reaction groups (``receive``: :mod:`.receives`)."""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from workbench.engine.expr import ir
from workbench.engine.reactions import patterns as grp
from workbench.engine.reactions.accumulators import Accumulator
from workbench.errors import PatternError, SourceSpan
from workbench.language import ast
from workbench.language.accumulators import accumulator_of
from workbench.language.arguments import (
    CHANNEL_ANNOTATIONS,
    EXIT_ANNOTATIONS,
    INITIATOR_ANNOTATIONS,
    check_annotations,
    count_arg,
    hop_args,
    ident_arg,
    is_none,
    literal,
    never_open,
    timeout_arg,
    timer_args,
)
from workbench.language.conditions import Scope, accepts, check_condition, nearest
from workbench.language.context import Context

__all__ = ["GroupCompiler", "GroupScope"]

Constants = tuple[tuple[str, object], ...]
"""Name -> value pairs a group fixes: its constants, its state, a channel's match."""


# ---- reaction groups -------------------------------------------------------------------------------


@dataclass
class GroupScope:
    variables: set[str] = field(default_factory=set)
    vars: set[str] = field(default_factory=set)
    channel_ids: dict[str, SourceSpan] = field(default_factory=dict)
    references: list[tuple[str, SourceSpan]] = field(default_factory=list)


class GroupCompiler:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.scope = GroupScope()
        self.nested = 0
        self.after: dict[str, tuple[tuple[str, ...], ast.Annotation]] = {}  # channel -> its @after
        #: variables no channel may bind again (an ``as`` would shadow them): name -> who set them
        self.fixed: dict[str, str] = {}

    def build(self, node: ast.GroupDef, name: str) -> grp.ReactionGroup:
        ctx = self.ctx
        constants = tuple(
            (a.name.text, literal(ctx, a.value, f"constant {a.name.text!r}")) for a in node.constants
        )
        state = tuple((a.name.text, literal(ctx, a.value, f"state {a.name.text!r}")) for a in node.state)
        self.scope.variables.update(n for n, _ in constants)
        self.scope.variables.update(n for n, _ in state)
        self.fixed.update({n: "a constant" for n, _ in constants} | {n: "a state variable" for n, _ in state})
        instances = tuple(self._instance(i) for i in node.instances)
        for inst in instances:
            self.scope.variables.update(n for n, _ in grp.pairs(inst.vars))
        initiator = self._initiator(node.initiator, constants) if node.initiator else None
        # every variable bound anywhere in the group is known to every condition (binds, @vars)
        self._collect_bindings(node.block)
        self._collect_ids(node.block)
        group = self._block(node.block, name, constants, initiator, instances, state)
        for ref, span in self.scope.references:
            if ref not in self.scope.channel_ids:
                msg = f"unknown channel {ref!r}{nearest(ref, self.scope.channel_ids)}"
                raise ctx.fail(msg, span)
        closed = never_open({c: ids for c, (ids, _) in self.after.items()})
        if closed:
            msg = (
                f"@after: {', '.join(map(repr, closed))} only wait for each other, so they can never open "
                "(a channel of such a cycle needs a link from a channel outside it)"
            )
            raise ctx.fail(msg, self.after[closed[0]][1].span)
        return group

    def _instance(self, decl: ast.InstanceDecl) -> grp.Instance:
        key = literal(self.ctx, decl.key, "an instance key")
        at = literal(self.ctx, decl.at, "an instance time") if decl.at else 0
        if not isinstance(at, int | float) or isinstance(at, bool):
            msg = "an instance time must be a number (milliseconds)"
            raise self.ctx.fail(msg, decl.at.span if decl.at else decl.span)
        vars_ = tuple(
            (a.name.text, literal(self.ctx, a.value, f"variable {a.name.text!r}")) for a in decl.vars
        )
        try:
            return grp.Instance(key, at, vars_)
        except PatternError as err:  # why: the key cannot name a partition (a list literal)
            raise self.ctx.fail(str(err), decl.key.span) from None

    def _head(
        self, head: ast.ChannelHead, bound: set[str], binds: list[tuple[str, str]]
    ) -> tuple[Constants, str | None]:
        ctx = self.ctx
        type_ = None if head.type.text in ("_", "any") else head.type.text
        if type_ is not None:
            ctx.check_type(head.type)
        fields = ctx.schema.get(type_) if type_ else None
        match: list[tuple[str, object]] = []
        for item in head.items:
            f = item.field.text
            if fields is not None and f not in fields and f not in ("type", "key", "time"):
                msg = f"event {type_!r} has no field {f!r}{nearest(f, fields)}; fields: {', '.join(fields)}"
                raise ctx.fail(msg, item.field.span)
            if item.bind:
                assert isinstance(item.value, ast.Name)
                self._check_bind(item.value, f, binds)
                binds.append((item.value.text, f))
                continue
            assert isinstance(item.value, ast.Expr)
            text = item.value.text.strip()
            if text.isidentifier() and text not in ("True", "False", "None"):
                if text not in bound:
                    pool = sorted(bound)
                    msg = (
                        f"unknown variable {text!r}{nearest(text, pool)}; "
                        f"to bind a new variable write '{f} as {text}'"
                    )
                    raise ctx.fail(msg, item.value.span)
                match.append((f, grp.Var(text)))
            else:
                value = literal(ctx, item.value, f"the value of {f!r}")
                declared = ctx.field_types.get(type_ or "", {}).get(f)
                if declared is not None and not accepts(declared, value):
                    msg = f"type clash: field {f!r} of {type_!r} is declared {declared}, got {value!r}"
                    raise ctx.fail(msg, item.value.span)
                match.append((f, value))
        return tuple(match), type_

    def _check_bind(self, var: ast.Name, field: str, binds: list[tuple[str, str]]) -> None:
        """Refuse an ``as`` that binds a name twice in one head, or shadows a fixed variable."""
        name = var.text
        first = next((f for v, f in binds if v == name), None)
        if first is not None:
            msg = (
                f"variable {name!r} is bound twice here (by {first!r} and {field!r}); bind another "
                f"name and compare them in the where clause (where e.{first} == e.{field})"
            )
            raise self.ctx.fail(msg, var.span)
        if name in self.fixed:
            msg = (
                f"variable {name!r} is already bound by {self.fixed[name]}; write '{field} = {name}' "
                f"to compare with it, or '{field} as' a new name"
            )
            raise self.ctx.fail(msg, var.span)

    def _initiator(self, node: ast.Initiator, constants: Constants) -> grp.Initiator:
        annots = check_annotations(
            self.ctx, node.annotations, INITIATOR_ANNOTATIONS, "the initiator ('on ...')"
        )
        binds: list[tuple[str, str]] = []
        match, type_ = self._head(node.head, set(self.scope.variables), binds)
        where = None
        if node.where is not None:
            where = check_condition(node.where, self._scope([type_] if type_ else []), self.ctx.source)
        self.scope.variables.update(v for v, _ in binds)
        self.fixed.update({v: "the initiator ('on ...')" for v, _ in binds})
        ident = "initiator"
        if "id" in annots:
            args = annots["id"].args or ()
            ident = ident_arg(self.ctx, args[0], "@id")
        return grp.Initiator(
            type_, match, where, tuple(binds), not node.once, "template" in annots, (), ident
        )

    def _collect_bindings(self, block: ast.Block) -> None:
        for m in block.members:
            if isinstance(m, ast.Block):
                self._collect_bindings(m)
                continue
            for item in m.head.items:
                if item.bind:
                    assert isinstance(item.value, ast.Name)
                    self.scope.variables.add(item.value.text)

    def _collect_ids(self, block: ast.Block) -> None:
        for m in block.members:
            if isinstance(m, ast.Block):
                self._collect_ids(m)
                if m.id is None:
                    continue
                ident, span = m.id.text, m.id.span  # a nested group is a member other channels can name
            else:
                ident, span = self._channel_id(m)
            if ident in self.scope.channel_ids:
                first = self.scope.channel_ids[ident].line
                msg = (
                    f"channel {ident!r} is defined twice (first on line {first}); "
                    "name channels with 'NAME: type(...)' or @id(NAME)"
                )
                raise self.ctx.fail(msg, span)
            self.scope.channel_ids[ident] = span

    def _channel_id(self, ch: ast.Channel) -> tuple[str, SourceSpan]:
        ids = [a for a in ch.annotations if a.name.text == "id" and a.args]
        if ids:
            assert ids[0].args is not None
            ident = ident_arg(self.ctx, ids[0].args[0], "@id")
            if ch.label is not None and ch.label.text != ident:
                msg = f"channel has two names: label {ch.label.text!r} and @id({ident})"
                raise self.ctx.fail(msg, ids[0].span)
            return ident, ids[0].span
        if ch.label is not None:
            return ch.label.text, ch.label.span
        return ch.head.type.text, ch.head.type.span  # unnamed: the channel is called after its type

    def _ids(self, a: ast.Annotation, own: str | None = None) -> tuple[str, ...]:
        out = []
        for arg in a.args or ():
            ident = ident_arg(self.ctx, arg, f"an argument of @{a.name.text}")
            if ident == own:  # why: @stop(x) on x itself can only mean the bare @stop
                msg = (
                    f"channel {own!r} names itself in @{a.name.text}; a bare @stop ends the group on "
                    "its event"
                )
                raise self.ctx.fail(msg, arg.span)
            self.scope.references.append((ident, arg.span))
            out.append(ident)
        return tuple(out)

    def _scope(self, types: Sequence[str]) -> Scope:
        """The names a condition on events of ``types`` may read: group variables and their fields."""
        return Scope(
            variables=frozenset(self.scope.variables),
            fields=self.ctx.fields_of(types),
            field_types=self.ctx.types_of(types),
            functions=self.ctx.functions,
        )

    def _channel(self, ch: ast.Channel) -> grp.Channel:
        ctx = self.ctx
        annots = check_annotations(ctx, ch.annotations, CHANNEL_ANNOTATIONS, "a channel")
        ident, _ = self._channel_id(ch)
        binds: list[tuple[str, str]] = []
        match, type_ = self._head(ch.head, set(self.scope.variables), binds)
        types = [type_] if type_ else []
        where = None
        if ch.where is not None:
            where = check_condition(ch.where, self._scope(types), ctx.source)
        opts = grp.ChannelOptions()
        for name, a in annots.items():
            args = a.args or ()
            if name == "not":
                opts["negated"] = True
            elif name == "stop":
                for each in ch.annotations:  # bare @stop and @stop(ids) may both be given
                    if each.name.text == "stop" and each.args:
                        opts["stop_ids"] = self._ids(each, ident)
                    elif each.name.text == "stop":
                        opts["stop"] = True
            elif name == "pause":
                opts["pause_ids"] = self._ids(a)
            elif name == "resume":
                opts["resume_ids"] = self._ids(a)
            elif name == "after":
                opts["after"] = self._ids(a)
                self.after[ident] = (opts["after"], a)
            elif name == "paused":
                opts["paused"] = True
            elif name == "optional":
                opts["optional"] = True
            elif name == "count":
                opts["count"] = self._count(args)
            elif name in ("size", "timer", "hop"):
                self._window(opts, name, args, types)
            elif name == "timeout":
                opts["timeout_ms"] = timeout_arg(ctx, args[0], "@timeout")
            elif name == "vars":
                opts["vars"], binds = self._vars(args, binds)
            elif name == "counts":
                opts["counts"] = self._counter(a)
        collects = self._collects(ch, types)
        if collects:
            opts["collect"] = collects
        return grp.Channel(ident, type_, match, where, binds=tuple(binds), **opts)

    def _window(
        self,
        opts: grp.ChannelOptions,
        name: str,
        args: Sequence[ast.Expr | ast.Duration],
        types: Sequence[str],
    ) -> None:
        """``@size(N[, R][, ACC])``, ``@timer(D[, P][, ACC])`` or ``@hop(S, H[, ACC])``."""
        ctx = self.ctx
        if name == "size":
            n = count_arg(ctx, args[0], "@size's first argument", least=0)
            r = (
                None
                if len(args) < 2 or is_none(args[1])
                else count_arg(ctx, args[1], "@size's second argument", least=1)
            )
            opts["size"] = grp.Size(n, r, self._acc(args, types))
        elif name == "timer":
            d, p = timer_args(ctx, args)
            opts["timer"] = grp.Timer(d, p, self._acc(args, types))
        else:
            size, hop = hop_args(ctx, args)
            opts["hop"] = grp.Hop(size, hop, self._acc(args, types))

    def _acc(self, args: Sequence[ast.Expr | ast.Duration], types: Sequence[str]) -> Accumulator | None:
        return accumulator_of(self.ctx, args[2], self._scope(types)) if len(args) > 2 else None

    def _counter(self, a: ast.Annotation) -> str:
        """``@counts`` (Prova's ``Count``) or ``@counts(Name)``: the counter a continuation increments."""
        if not a.args:
            return grp.DEFAULT_COUNTER
        name = ident_arg(self.ctx, a.args[0], "@counts's counter")
        if not name.isidentifier():
            msg = f"@counts names a counter (an identifier such as Count), got {name!r}"
            raise self.ctx.fail(msg, a.args[0].span)
        return name

    def _count(self, args: tuple[ast.Expr | ast.Duration, ...]) -> grp.Count:
        ctx = self.ctx
        n = count_arg(ctx, args[0], "@count's first argument", least=0, unlimited=True)
        m = (
            count_arg(ctx, args[1], "@count's second argument", least=0, unlimited=True)
            if len(args) > 1
            else None
        )
        mode = ident_arg(ctx, args[2], "@count's mode") if len(args) > 2 else None
        if mode is not None and mode not in ("ignore", "record", "strict"):
            hint = nearest(mode, ["ignore", "record", "strict"])
            msg = f"@count mode must be ignore, record or strict{hint}"
            raise ctx.fail(msg, args[2].span)
        return grp.Count.of(n, m, mode)

    def _vars(
        self, args: tuple[ast.Expr | ast.Duration, ...], binds: list[tuple[str, str]]
    ) -> tuple[tuple[tuple[str, str], ...], list[tuple[str, str]]]:
        """``@vars``: the chosen (variable, field) pairs, and the binds left to the channel."""
        ctx = self.ctx
        wanted = {ident_arg(ctx, x, "an argument of @vars") for x in args}
        known = {v for v, _ in binds}
        for x in args:
            v = ident_arg(ctx, x, "an argument of @vars")
            if v not in known:
                msg = f"@vars names {v!r}, which this channel does not bind{nearest(v, known)}"
                raise ctx.fail(msg, x.span)
        chosen = [(v, f) for v, f in binds if not wanted or v in wanted]
        rest = [(v, f) for v, f in binds if wanted and v not in wanted]
        self.scope.vars.update(v for v, _ in chosen)
        return tuple(chosen), rest

    def _collects(self, ch: ast.Channel, types: Sequence[str]) -> tuple[tuple[str, ir.Node], ...]:
        """``@collect(var, expr)`` pairs of a channel: the list variable and the value appended."""
        ctx = self.ctx
        collects = []
        for a in ch.annotations:
            if a.name.text == "collect":
                assert a.args is not None
                var = ident_arg(ctx, a.args[0], "@collect's variable")
                if var not in self.scope.variables:
                    msg = (
                        f"@collect needs a 'state {var} = []' declaration{nearest(var, self.scope.variables)}"
                    )
                    raise ctx.fail(msg, a.args[0].span)
                value = a.args[1]
                if not isinstance(value, ast.Expr):
                    msg_0 = "@collect's value must be an expression"
                    raise ctx.fail(msg_0, value.span)
                node = check_condition(value, self._scope(types), ctx.source, what="expression")
                collects.append((var, node))
        return tuple(collects)

    def _missing_colon(self, block: ast.Block) -> None:
        """``tries failed(user = U)``: a bare undeclared name with a channel after it on the same line
        is a channel label that lost its ``:`` (read as is, it would listen to events of type ``tries``).
        """
        schema = self.ctx.schema
        if not schema:
            return  # without declarations, ``a b`` may be two channels of types a and b
        members = block.members
        for m, nxt in itertools.pairwise(members):
            if not isinstance(m, ast.Channel) or not isinstance(nxt, ast.Channel):
                continue
            bare = m.label is None and not m.head.items and m.where is None
            name = m.head.type.text
            same_line = nxt.span.line == m.head.span.end_line and not nxt.annotations and nxt.label is None
            if bare and same_line and name not in schema and nxt.head.type.text in schema:
                msg = (
                    f"expected ':' after the channel name {name!r} "
                    f"(write '{name}: {nxt.head.type.text}(...)'); "
                    f"{name!r} is not a declared event type"
                )
                raise self.ctx.fail(msg, m.head.type.span)

    def _block(
        self,
        block: ast.Block,
        name: str,
        constants: Constants = (),
        initiator: grp.Initiator | None = None,
        instances: tuple[grp.Instance, ...] = (),
        state: Constants = (),
    ) -> grp.ReactionGroup:
        ctx = self.ctx
        annots = check_annotations(ctx, block.annotations, EXIT_ANNOTATIONS, f"the @{block.operator} exit")
        self._missing_colon(block)
        members: list[grp.Member] = []
        for m in block.members:
            if isinstance(m, ast.Block):
                self.nested += 1
                inner_name = m.id.text if m.id else f"{name}.{self.nested}"
                members.append(self._block(m, inner_name))
            else:
                members.append(self._channel(m))
        if not members:
            msg = f"an @{block.operator} group needs at least one channel"
            raise ctx.fail(msg, block.span)
        timeout, exit_count, exit_size = self._exit_args(annots)
        where = self._exit_where(annots)
        if state:
            if initiator is None:
                msg = "'state' variables need an initiator ('on ...')"
                raise ctx.fail(msg, block.span)
            initiator = dataclasses.replace(initiator, state=state)
        return grp.ReactionGroup(
            name,
            block.operator,  # type: ignore[arg-type]
            tuple(members),
            timeout_ms=timeout,
            timeout_channel="timeout_channel" in annots,
            initiator=initiator,
            instances=instances,
            exit=grp.Exit(exit_count, exit_size),
            where=where,
            constants=constants,
            counts=self._counter(annots["counts"]) if "counts" in annots else None,
        )

    def _exit_args(self, annots: Mapping[str, ast.Annotation]) -> tuple[float | None, int | None, int | None]:
        """A group's ``@timeout``, ``@count`` and ``@size`` exit arguments (``None`` where absent)."""
        ctx = self.ctx
        timeout = (
            timeout_arg(ctx, annots["timeout"].args[0], "@timeout")
            if "timeout" in annots and annots["timeout"].args
            else None
        )
        exit_count = (
            count_arg(ctx, annots["count"].args[0], "@count", least=1)
            if "count" in annots and annots["count"].args
            else None
        )
        exit_size = (
            count_arg(ctx, annots["size"].args[0], "@size", least=1)
            if "size" in annots and annots["size"].args
            else None
        )
        return timeout, exit_count, exit_size

    def _exit_where(self, annots: Mapping[str, ast.Annotation]) -> ir.Node | None:
        """A group's ``@where`` exit condition, over the group's variables (no event fields)."""
        if "where" not in annots or not annots["where"].args:
            return None
        arg = annots["where"].args[0]
        if not isinstance(arg, ast.Expr):
            msg_0 = "@where takes a condition"
            raise self.ctx.fail(msg_0, arg.span)
        scope = Scope(
            variables=frozenset(self.scope.variables | self.scope.vars), functions=self.ctx.functions
        )
        return check_condition(arg, scope, self.ctx.source)
