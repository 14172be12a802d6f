"""Compile ``receive`` definitions (a plain reaction: one event type, no group) into patterns.

A receive shares its head (type, ``match`` equalities) with a group's initiator, so it is compiled
with :class:`~workbench.language.groups.GroupCompiler`'s head rules.
"""

from __future__ import annotations

from workbench.engine.reactions import patterns as grp
from workbench.language import ast
from workbench.language.arguments import RECEIVE_ANNOTATIONS, check_annotations, count_arg, literal
from workbench.language.conditions import Scope, check_condition
from workbench.language.context import Context
from workbench.language.groups import GroupCompiler

__all__ = ["compile_receive"]


def compile_receive(ctx: Context, node: ast.ReceiveDef, name: str) -> grp.Receive:
    annots = check_annotations(ctx, node.annotations, RECEIVE_ANNOTATIONS, "a receive")
    constants = tuple(
        (a.name.text, literal(ctx, a.value, f"constant {a.name.text!r}")) for a in node.constants
    )
    builder = GroupCompiler(ctx)
    builder.scope.variables.update(n for n, _ in constants)
    binds: list[tuple[str, str]] = []
    match, type_ = builder._head(node.head, set(builder.scope.variables), binds)
    if binds:
        msg = "a receive binds no variables (use a group with an initiator)"
        raise ctx.fail(msg, node.head.span)
    where = None
    if node.where is not None:
        scope = Scope(
            variables=frozenset(builder.scope.variables),
            fields=ctx.fields_of([type_] if type_ else []),
            field_types=ctx.types_of([type_] if type_ else []),
            functions=ctx.functions,
        )
        where = check_condition(node.where, scope, ctx.source)
    count = None
    if "count" in annots and annots["count"].args:
        count = count_arg(ctx, annots["count"].args[0], "@count", least=1, unlimited=True)
    return grp.Receive(name, type_, match, where, count, constants)
