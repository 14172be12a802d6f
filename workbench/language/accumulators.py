"""The accumulator argument of ``@size``, ``@timer`` and ``@hop`` (``MapCounter``, ``SortedAccumulator``)."""

from __future__ import annotations

import ast as pyast

from workbench.engine.expr import ir
from workbench.engine.reactions import patterns as grp
from workbench.engine.reactions.accumulators import Accumulator
from workbench.errors import SourceSpan
from workbench.language import ast
from workbench.language.arguments import call_arguments
from workbench.language.conditions import Scope, check_condition, nearest
from workbench.language.context import Context

__all__ = ["accumulator_of"]


def accumulator_of(ctx: Context, arg: ast.Expr | ast.Duration, scope: Scope) -> Accumulator:
    """``MapCounter(KEY)`` or ``SortedAccumulator(KEY, VALUE[, top=N])``: an annotation's accumulator,
    its expressions checked in ``scope`` (errors at their line and column)."""
    bad = "an accumulator is MapCounter(KEY_EXPR) or SortedAccumulator(KEY_EXPR, VALUE_EXPR[, top=N])"
    if not isinstance(arg, ast.Expr):
        raise ctx.fail(bad, arg.span)
    text = arg.text.strip()
    try:
        node = pyast.parse(text, mode="eval").body
    except (SyntaxError, RecursionError, MemoryError):
        raise ctx.fail(bad, arg.span) from None
    if not (isinstance(node, pyast.Call) and isinstance(node.func, pyast.Name)):
        raise ctx.fail(bad, arg.span)
    kind = node.func.id

    pieces = call_arguments(text)

    def sub(i: int) -> ir.Node:
        seg, offset = pieces[i]
        col = arg.span.column + offset
        span = SourceSpan(arg.span.line, col, arg.span.line, col + len(seg))
        return check_condition(ast.Expr(seg, span), scope, ctx.source, what="accumulator expression")

    if kind == "MapCounter" and len(node.args) == 1 and not node.keywords:
        return grp.MapCounter(sub(0))
    if kind == "SortedAccumulator" and len(node.args) in (2, 3):
        top: int | None = None
        extra = list(node.args[2:]) + [k.value for k in node.keywords if k.arg == "top"]
        if extra:
            try:
                value = pyast.literal_eval(extra[0])
            except (ValueError, TypeError, SyntaxError, RecursionError, MemoryError):
                value = None  # why: top=N.x, top=f(x): not a constant
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                msg = f"SortedAccumulator's top must be a whole number >= 1, got {pyast.unparse(extra[0])}"
                raise ctx.fail(msg, arg.span)
            top = value
        return grp.SortedAccumulator(sub(0), sub(1), top)
    msg = bad + nearest(kind, ["MapCounter", "SortedAccumulator"])
    raise ctx.fail(msg, arg.span)
