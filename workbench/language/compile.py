"""Compile the syntax tree of ``%%cep`` text into the engine's pattern objects.

``sequence`` definitions become :class:`~workbench.engine.nfa.pattern.SequencePattern` s and
``group`` definitions :class:`~workbench.engine.reactions.patterns.ReactionGroup` s -- the same
frozen objects the Python API builds, so a pattern written in the language compares equal to one
built by hand. Everything is checked here, at definition time: unknown stages, channels, variables,
annotations and (where an ``event`` declaration gives the schema) fields are reported with their
position, a caret and the nearest known name.

Conditions become expression trees (:mod:`workbench.engine.expr`), stage names resolved:

>>> from workbench.engine.expr import print_expr
>>> p = compile_pattern("sequence s begin a where e.x > 1 followed by b where e.x < last(a).x")
>>> [st.name for st in p.stages], print_expr(p.stages[1].where)
(['a', 'b'], "e.x < last(matched('a')).x")
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict, Unpack

from workbench.engine.families import compile_matcher
from workbench.errors import CepError, SourceSpan
from workbench.language import ast
from workbench.language.absence import compile_absence
from workbench.language.arguments import CHANNEL_ANNOTATIONS, EXIT_ANNOTATIONS, INITIATOR_ANNOTATIONS
from workbench.language.context import Context, Definition, Pattern
from workbench.language.emit import check_emits, declare_emitted, partition_of
from workbench.language.errors import CepCompileError
from workbench.language.groups import GroupCompiler
from workbench.language.parser import parse
from workbench.language.receives import compile_receive
from workbench.language.sequences import SequenceCompiler

__all__ = [
    "CHANNEL_ANNOTATIONS",
    "EXIT_ANNOTATIONS",
    "INITIATOR_ANNOTATIONS",
    "CompileOptions",
    "Definition",
    "TextOptions",
    "compile_pattern",
    "compile_patterns",
    "compile_script",
    "compile_text",
]


# ---- public entry points ---------------------------------------------------------------------------


def _definition_name(
    ctx: Context,
    item: ast.SequenceDef | ast.GroupDef | ast.ReceiveDef,
    names: Mapping[str, SourceSpan],
    default_name: str | None,
) -> str:
    """The definition's name: written, else the default (for the first unnamed one); never twice."""
    if item.name is not None:
        name = item.name.text
    elif default_name is not None:
        name = default_name
    else:
        msg = "this definition needs a name (write e.g. 'sequence my_pattern ...')"
        raise ctx.fail(msg, item.span)
    if name in names:
        msg = f"pattern {name!r} is defined twice (first on line {names[name].line})"
        raise ctx.fail(msg, item.name.span if item.name else item.span)
    return name


def _compile_definition(
    ctx: Context, item: ast.SequenceDef | ast.GroupDef | ast.ReceiveDef, name: str, *, validate: bool
) -> tuple[Pattern, dict[str, SourceSpan]]:
    """One definition's pattern and the spans of its elements (stages or channels, by name).

    With ``validate`` the engine family compiles it too; its errors point at the element's span.
    """
    pattern: Pattern
    spans: dict[str, SourceSpan]
    if isinstance(item, ast.SequenceDef) and item.absence is not None:
        pattern, spans = compile_absence(ctx, item, name)
    elif isinstance(item, ast.SequenceDef):
        seq_builder = SequenceCompiler(ctx)
        pattern = seq_builder.build(item, name)
        spans = seq_builder.spans
    elif isinstance(item, ast.ReceiveDef):
        pattern = compile_receive(ctx, item, name)
        spans = {}
    else:
        grp_builder = GroupCompiler(ctx)
        pattern = grp_builder.build(item, name)
        spans = grp_builder.scope.channel_ids
    if validate:
        try:
            compile_matcher(pattern)
        except CepCompileError:
            raise
        except CepError as err:
            element = getattr(err, "element", None)
            span = spans.get(element, item.span) if isinstance(element, str) else item.span
            raise ctx.fail(str(err), span) from None
    return pattern, spans


class CompileOptions(TypedDict, total=False):
    """What compiling a script takes besides the script (all optional).

    Attributes:
        functions: extra functions conditions may call, by name.
        schema: the fields of each event type (``%%cep`` ``event`` declarations add to it).
        default_name: the name of the first unnamed definition.
        validate: also compile each pattern by its engine family (default true).
        field_types: the declared type of each event type's fields.
    """

    functions: Mapping[str, Callable[..., object]] | None
    schema: Mapping[str, Sequence[str]] | None
    default_name: str | None
    validate: bool
    field_types: Mapping[str, Mapping[str, str]] | None


class TextOptions(CompileOptions, total=False):
    """:class:`CompileOptions` and ``first_line``, the text's first line in the caller's coordinates."""

    first_line: int


def compile_script(script: ast.Script, **options: Unpack[CompileOptions]) -> list[Definition]:
    """Compile every definition of a parsed script, in order.

    With ``validate`` (the default) each pattern is also compiled by its engine family, so that
    everything the engine rejects is reported here, at definition time, with the definition's span.
    """
    schema = options.get("schema") or {}
    default_name = options.get("default_name")
    validate = options.get("validate", True)
    source = "\n" * (script.first_line - 1) + script.source
    ctx = Context(source, {k: tuple(v) for k, v in schema.items()}, dict(options.get("functions") or {}))
    ctx.field_types = {k: dict(v) for k, v in (options.get("field_types") or {}).items()}
    out: list[Definition] = []
    names: dict[str, SourceSpan] = {}
    unnamed = 0
    emitted: dict[str, SourceSpan] = {}  # pattern -> its 'emit into' clause
    for item in script.items:
        if isinstance(item, ast.EventDecl):
            firsts: dict[str, SourceSpan] = {}
            for f in item.fields:
                if f.text in firsts:
                    msg = (
                        f"event {item.type.text!r} declares field {f.text!r} twice "
                        f"(first at column {firsts[f.text].column})"
                    )
                    raise ctx.fail(msg, f.span)
                firsts[f.text] = f.span
            ctx.schema[item.type.text] = tuple(f.text for f in item.fields)
            typed = zip((f.text for f in item.fields), item.types or (None,) * len(item.fields), strict=True)
            ctx.field_types[item.type.text] = {f: t for f, t in typed if t}
            continue
        name = _definition_name(ctx, item, names, default_name if unnamed == 0 else None)
        unnamed += item.name is None
        names[name] = item.span
        ctx.pattern = name
        pattern, spans = _compile_definition(ctx, item, name, validate=validate)
        if isinstance(item, ast.SequenceDef) and item.emit_into is not None:
            declare_emitted(ctx, item, pattern)
            emitted[name] = item.emit_into.span
        out.append(
            Definition(
                pattern,
                partition_of(ctx, item.partition),
                dict(ctx.schema),
                item.span,
                {k: dict(v) for k, v in ctx.field_types.items()},
                dict(spans),
                source,
            )
        )
    if emitted and validate:
        check_emits(ctx, [d.pattern for d in out], emitted)
    return out


def compile_text(text: str, *, first_line: int = 1, **options: Unpack[CompileOptions]) -> list[Definition]:
    """Parse and compile ``text`` (``first_line`` = its first line in the caller's coordinates)."""
    try:
        return compile_script(parse(text, first_line=first_line), **options)
    except RecursionError:  # why: nesting within MAX_NESTING, but called from deep in the stack
        msg = "the pattern text nests too deeply to compile here; write it flatter"
        span = SourceSpan(first_line, 1, first_line, 2)
        raise CepCompileError(msg, span, "\n" * (first_line - 1) + text) from None


def compile_patterns(text: str, **options: Unpack[TextOptions]) -> list[Pattern]:
    """Every pattern defined in ``text`` (see :func:`compile_text` for the options)."""
    return [d.pattern for d in compile_text(text, **options)]


def compile_pattern(text: str, **options: Unpack[TextOptions]) -> Pattern:
    """The single pattern defined in ``text``; a :class:`CepCompileError` if there are none or several."""
    defs = compile_text(text, **options)
    if len(defs) != 1:
        first_line = options.get("first_line", 1)
        source = "\n" * (first_line - 1) + text
        span = defs[1].span if defs else SourceSpan(first_line, 1, first_line, 2)
        msg = f"expected exactly one pattern definition, found {len(defs)}"
        raise CepCompileError(msg, span, source)
    return defs[0].pattern
