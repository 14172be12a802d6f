"""Definition-time checks of ``emit into TYPE`` (:mod:`workbench.engine.derived`) and ``partition by a, b``.

A pattern that emits into a type makes that type an event type of the script: where ``event``
declarations are in force it is declared with the pattern's measures as fields, so that the
conditions of its consumers are checked against them. Patterns that feed each other in a cycle are
refused with the position of the ``emit into`` clause that closes it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.engine.derived import (
    RESERVED_FIELDS,
    cycle_message,
    derived_fields,
    emits_of,
    find_cycle,
    matched_types,
)
from workbench.engine.families import compile_matcher
from workbench.errors import CepError, SourceSpan
from workbench.language import ast
from workbench.language.context import Context, Definition, Pattern

__all__ = ["check_emits", "declare_emitted", "emitted_cycle", "partition_of"]


def partition_of(ctx: Context, names: Sequence[ast.Name]) -> str | tuple[str, ...] | None:
    """The key a ``partition by`` clause gives: ``None``, one field, or a tuple of fields."""
    seen: dict[str, SourceSpan] = {}
    for name in names:
        if name.text in seen:
            msg = f"the key field {name.text!r} is named twice in 'partition by'"
            raise ctx.fail(msg, name.span)
        seen[name.text] = name.span
    if not names:
        return None
    return names[0].text if len(names) == 1 else tuple(seen)


def declare_emitted(ctx: Context, node: ast.SequenceDef, pattern: Pattern) -> None:
    """Check an emitting pattern's measures; declare its type where declarations are in force."""
    if node.emit_into is None:
        return
    for decl in node.measures:
        if decl.name.text in RESERVED_FIELDS:
            msg = (
                f"measure {decl.name.text!r} would be a field of the {node.emit_into.text!r} events "
                f"this pattern emits, where {decl.name.text!r} is the event's own; rename it"
            )
            raise ctx.fail(msg, decl.name.span)
    fields = derived_fields(pattern)
    declared = ctx.schema.get(node.emit_into.text)
    if declared is not None and set(declared) != set(fields):
        msg = (
            f"{node.emit_into.text!r} is declared with fields {', '.join(declared) or 'none'}, but this "
            f"pattern's measures are {', '.join(fields) or 'none'}: the derived events have those"
        )
        raise ctx.fail(msg, node.emit_into.span)
    if ctx.schema and declared is None:
        ctx.schema[node.emit_into.text] = fields


def emitted_cycle(patterns: Sequence[Pattern]) -> tuple[list[str], str] | None:
    """A cycle among ``patterns`` fed by ``emit into`` (its names and a message), or ``None``."""
    matchers = [compile_matcher(p) for p in patterns]
    emits = {m.name: t for m in matchers if (t := emits_of(m)) is not None}
    if not emits:
        return None
    cycle = find_cycle({m.name: matched_types(m) for m in matchers}, emits)
    return None if cycle is None else (cycle, cycle_message(cycle, emits))


def check_emits(ctx: Context, patterns: Sequence[Pattern], where: Mapping[str, SourceSpan]) -> None:
    """Refuse a cycle among a script's patterns, at the ``emit into`` of its first pattern."""
    if not any(getattr(p, "emit_into", None) for p in patterns):
        return
    found = emitted_cycle(patterns)
    if found is not None:
        cycle, msg = found
        raise ctx.fail(msg, where[cycle[0]])


def session_cycle(defined: Mapping[str, Definition], new: Sequence[Definition]) -> None:
    """Refuse a cycle among a session's patterns once ``new`` replace theirs (across cells)."""
    patterns = {name: d.pattern for name, d in defined.items()} | {d.pattern.name: d.pattern for d in new}
    if not any(getattr(p, "emit_into", None) for p in patterns.values()):
        return
    found = emitted_cycle(list(patterns.values()))
    if found is not None:
        raise CepError(found[1])
