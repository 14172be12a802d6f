"""Compile a sequence that begins with a silence (``begin [every] not hb for 30s ...``).

The result is an :class:`~workbench.engine.nfa.absence.AbsencePattern`: the silence, and the stages
after it (if any) as its continuation, compiled like any sequence. The continuation's first stage
must say ``followed by`` (it may start at any event after the proof); a standalone silence takes
no sequence option but ``partition by``.

>>> from workbench.language import compile_pattern
>>> p = compile_pattern("sequence quiet begin every not hb: heartbeat for 30s where e.ok")
>>> p.silence.for_ms, p.silence.types, p.silence.every, p.then is None
(30000, ('heartbeat',), True, True)
"""

from __future__ import annotations

from workbench.engine.nfa import pattern as seq
from workbench.engine.nfa.absence import AbsencePattern, Silence
from workbench.errors import PatternError, SourceSpan
from workbench.language import ast
from workbench.language.conditions import Scope, check_condition
from workbench.language.context import Context
from workbench.language.sequences import SequenceCompiler

__all__ = ["compile_absence"]


def compile_absence(
    ctx: Context, node: ast.SequenceDef, name: str
) -> tuple[AbsencePattern, dict[str, SourceSpan]]:
    """The pattern of ``node`` (which has an ``absence``) and the spans of its elements."""
    absence = node.absence
    assert absence is not None
    silence = _silence(ctx, absence)
    spans = {absence.name.text: absence.name.span}
    then: seq.SequencePattern | None = None
    if node.stages:
        first = node.stages[0]
        if first.contiguity != "relaxed":
            msg = (
                "after a leading absence the sequence goes on with 'followed by' (any event after the proof)"
            )
            raise ctx.fail(msg, first.span)
        compiler = SequenceCompiler(ctx)
        then = compiler.build(node, name)
        spans = {**spans, **compiler.spans}
        if absence.name.text in compiler.spans:
            msg = f"stage {absence.name.text!r} is defined twice (first on line {absence.name.span.line})"
            raise ctx.fail(msg, compiler.spans[absence.name.text])
    else:
        _standalone_options(ctx, node)
    into = node.emit_into.text if node.emit_into is not None else None
    try:
        return AbsencePattern(name, silence, then, into), spans
    except PatternError as err:
        raise ctx.fail(str(err), node.span) from None


def _silence(ctx: Context, node: ast.Absence) -> Silence:
    for t in node.types:
        ctx.check_type(t)
    types = tuple(t.text for t in node.types)
    if node.name.text in ("e", "matched"):
        msg = f"a stage cannot be called {node.name.text!r} (conditions use that name)"
        raise ctx.fail(msg, node.name.span)
    if not node.duration.ms > 0:
        msg = f"an absence lasts longer than 0 ms, got {node.duration.text!r}"
        raise ctx.fail(msg, node.duration.span)
    where = None
    if node.where is not None:
        scope = Scope(
            fields=ctx.fields_of(types),
            field_types=ctx.types_of(types),
            functions=ctx.functions,
            current=node.name.text,
        )
        where = check_condition(node.where, scope, ctx.source, what="condition")
    try:
        return Silence(node.name.text, node.duration.ms, types, where, node.every)
    except PatternError as err:
        raise ctx.fail(str(err), node.span) from None


def _standalone_options(ctx: Context, node: ast.SequenceDef) -> None:
    """A standalone silence has no stages to window, skip, aggregate or measure."""
    given = [
        ("within", node.within.span if node.within else None),
        ("skip", node.skip.span if node.skip else None),
        ("aggregate", node.aggregates[0].span if node.aggregates else None),
        ("measures", node.measures[0].span if node.measures else None),
        ("subset", node.subsets[0].span if node.subsets else None),
        ("no timeouts", node.span if not node.emit_timeouts else None),
        ("flink order", node.span if node.flink_order else None),
        ("max partial matches", node.span if node.max_partial != "default" else None),
    ]
    for word, span in given:
        if span is not None:
            msg = (
                f"'{word}' needs stages after the silence; a standalone absence reports "
                "silence_start and silence_end only"
            )
            raise ctx.fail(msg, span)
