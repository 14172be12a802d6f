"""Print pattern objects as ``%%cep`` text.

:func:`format_pattern` is the inverse of :func:`~workbench.language.compile.compile_pattern` for
every pattern whose conditions are strings: ``compile_pattern(format_pattern(p)) == p``. Callable
conditions have no text, so printing a pattern that holds one raises
:class:`~workbench.errors.PatternError`.

>>> from workbench.engine.nfa.pattern import SequencePattern, Stage, Quantifier
>>> print(format_pattern(SequencePattern("p", (Stage("a", "e.x > 1", quantifier=Quantifier.one_or_more()),))))
sequence p
    begin a where e.x > 1 one or more
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from workbench.engine.expr import ir, print_expr
from workbench.engine.nfa import pattern as seq
from workbench.engine.nfa.absence import AbsencePattern
from workbench.engine.nfa.measures import UNIVERSAL
from workbench.engine.reactions import patterns as grp
from workbench.engine.reactions.accumulators import Accumulator
from workbench.errors import PatternError
from workbench.language.alternation import choice_lines
from workbench.language.grammar import keywords
from workbench.language.sequences import MATCH_WIDE
from workbench.language.texts import (
    INDENT,
    cond_text,
    condition_text,
    expr_name,
    format_duration,
    format_name,
    ident_arg,
    literal,
)

__all__ = ["condition_text", "follow_words", "format_duration", "format_name", "format_pattern"]

_DEFAULT_MAX_PARTIAL = seq.SequencePattern.__dataclass_fields__["max_partial_matches"].default


# ---- sequences -------------------------------------------------------------------------------------


def _where_clauses(cond: seq.Condition | None, stage: str) -> list[str]:
    if cond is None:
        return []
    if isinstance(cond, seq.AllOf | seq.AnyOf):
        if not cond.parts:
            msg = f"stage {stage!r}: an empty {type(cond).__name__} cannot be written"
            raise PatternError(msg)
        out = _where_clauses(cond.parts[0], stage)
        word = "where" if isinstance(cond, seq.AllOf) else "or where"
        for part in cond.parts[1:]:
            if isinstance(part, seq.AllOf | seq.AnyOf):
                msg = (
                    f"stage {stage!r}: only Flink's where/or chains can be written as text "
                    f"(a {type(part).__name__} after the first part of a {type(cond).__name__})"
                )
                raise PatternError(msg)
            out.append(f"{word} {cond_text(part, f'stage {stage!r}')}")
        return out
    return [f"where {cond_text(cond, f'stage {stage!r}')}"]


def _quantifier(q: seq.Quantifier) -> list[str]:
    out = []
    if q.max is None:
        out.append("one or more" if q.min == 1 else f"times {q.min} or more")
    elif (q.min, q.max) != (1, 1):
        out.append(f"times {q.min}" if q.min == q.max else f"times {q.min}..{q.max}")
    if q.optional:
        out.append("optional")
    if q.greedy:
        out.append("greedy")
    if q.inner == seq.Contiguity.STRICT:
        out.append("consecutive")
    elif q.inner == seq.Contiguity.NONDETERMINISTIC_RELAXED:
        out.append("allow combinations")
    if q.window_ms is not None:
        out.append(f"gaps within {format_duration(q.window_ms)}")
    return out


_CONTIGUITY_WORDS = {
    (seq.Contiguity.STRICT, False): "next",
    (seq.Contiguity.RELAXED, False): "followed by",
    (seq.Contiguity.NONDETERMINISTIC_RELAXED, False): "followed by any",
    (seq.Contiguity.STRICT, True): "not next",
    (seq.Contiguity.RELAXED, True): "not followed by",
}


def follow_words(stage: seq.Element) -> str:
    """How ``stage`` follows the stage before it: ``next``, ``followed by``, ``not followed by``, ..."""
    key = (seq.Contiguity(stage.contiguity), stage.negated)
    if key not in _CONTIGUITY_WORDS:
        msg = f"stage {stage.name!r}: {stage.contiguity} cannot be negated"
        raise PatternError(msg)
    return _CONTIGUITY_WORDS[key]


def _stage_lines(stage: seq.Element, first: bool, indent: str) -> list[str]:
    lead = "begin" if first else follow_words(stage)
    if isinstance(stage, seq.Alternation | seq.Permute):
        return choice_lines(stage, lead, indent, INDENT, _stage_lines)
    parts: list[str] = []
    lines: list[str] = []
    if isinstance(stage, seq.GroupStage):
        lines.append(f"{indent}{lead} (")
        for i, inner in enumerate(stage.stages):
            lines.extend(_stage_lines(inner, i == 0, indent + INDENT))
        head = f"{indent})"
    else:
        head = f"{indent}{lead} {format_name(stage.name)}"
        if stage.types:
            head += ": " + " | ".join(format_name(t) for t in stage.types)
        parts.extend(_where_clauses(stage.where, stage.name))
    parts.extend(_quantifier(stage.quantifier))
    if stage.until is not None:
        parts.append(f"until {cond_text(stage.until, f'stage {stage.name!r}')}")
    if stage.within_ms is not None:
        parts.append(f"within {format_duration(stage.within_ms)}")
    if isinstance(stage, seq.Stage) and stage.within_prev_ms is not None:
        parts.append(f"within {format_duration(stage.within_prev_ms)} of previous")
    lines.append(" ".join([head, *parts]))
    return lines


def _aggregate(a: seq.AggregateSpec) -> str:
    target = a.stage + (f".{a.field}" if a.field else "")
    if not expr_name(a.stage) or (a.field is not None and not expr_name(a.field)):
        msg = f"aggregate {a.name!r}: stage and field must be plain names to be written as text"
        raise PatternError(msg)
    params = "".join(f", {k}={literal(v)}" for k, v in a.params.items())
    tail = " including current" if a.include_current else ""
    return f"aggregate {a.name} = {a.function}({target}{params}){tail}"


def _measures(p: seq.SequencePattern) -> list[str]:
    """The ``subset`` lines, then the ``measures`` clause, one measure a line."""
    subsets = [f"{INDENT}subset {_subset(n, m)}" for n, m in p.subsets.items()]
    stages = {*seq.stage_names(p.stages), *p.subsets}  # a field named like a subset is not bare
    texts = [f"{m.name} = {print_expr(_match_wide(m.expr, stages), stages='names')}" for m in p.measures]
    heads = [f"{INDENT}measures "] + [INDENT + " " * len("measures ")] * (len(texts) - 1)
    return subsets + (
        [f"{h}{t}," for h, t in zip(heads[:-1], texts, strict=False)] + [heads[-1] + texts[-1]]
        if texts
        else []
    )


def _subset(name: str, members: tuple[str, ...]) -> str:
    if not expr_name(name) or name in keywords():
        msg = f"subset {name!r}: its name must be a plain name to be written as text"
        raise PatternError(msg)
    return f"{name} = ({', '.join(format_name(m) for m in members)})"


def _match_wide(node: ir.Node, stages: set[str]) -> ir.Node:
    """``avg(matched('*').price)`` written as the language does: ``avg(price)``."""
    if isinstance(node, ir.Let | ir.Comprehension):
        return node
    if isinstance(node, ir.Call) and node.func in MATCH_WIDE:
        args = tuple(
            ir.Name(a.name)
            if isinstance(a, ir.Attr)
            and a.obj == ir.Stage(UNIVERSAL)
            and expr_name(a.name)
            and a.name not in stages
            and a.name not in ("e", "True", "False", "None")
            else _match_wide(a, stages)
            for a in node.args
        )
        return replace(node, args=args)
    return ir.map_children(node, lambda child: _match_wide(child, stages))


def _format_sequence(p: seq.SequencePattern) -> str:
    lines = [f"sequence {format_name(p.name)}"]
    if p.within_ms is not None:
        lines.append(f"{INDENT}within {format_duration(p.within_ms)}")
    skip = p.skip
    if skip.kind != "no_skip" or skip.throw_on_miss:
        words = {
            "no_skip": "no skip",
            "skip_to_next": "skip to next",
            "skip_past_last_event": "skip past last event",
            "skip_to_first": "skip to first",
            "skip_to_last": "skip to last",
        }[skip.kind]
        if skip.stage is not None:
            words += f" {format_name(skip.stage)}"
            if skip.throw_on_miss:
                words += " or fail"
        lines.append(f"{INDENT}{words}")
    lines.extend(f"{INDENT}{_aggregate(a)}" for a in p.aggregates)
    lines.extend(_measures(p))
    if p.emit_into is not None:
        lines.append(f"{INDENT}emit into {format_name(p.emit_into)}")
    if not p.emit_timeouts:
        lines.append(f"{INDENT}no timeouts")
    if p.flink_order:
        lines.append(f"{INDENT}flink order")
    if p.max_partial_matches != _DEFAULT_MAX_PARTIAL:
        n = "none" if p.max_partial_matches is None else str(p.max_partial_matches)
        lines.append(f"{INDENT}max partial matches {n}")
    for i, stage in enumerate(p.stages):
        lines.extend(_stage_lines(stage, i == 0, INDENT))
    return "\n".join(lines)


def _format_absence(p: AbsencePattern) -> str:
    """``begin [every] not NAME for D [where ...]``, then the continuation's stages (``followed by``)."""
    s = p.silence
    head = f"{INDENT}begin {'every ' if s.every else ''}not {format_name(s.name)}"
    if s.types:
        head += ": " + " | ".join(format_name(t) for t in s.types)
    head += f" for {format_duration(s.for_ms)}"
    if s.where is not None:
        head += f" where {cond_text(s.where, f'absence {s.name!r}')}"
    if p.then is None:  # Why: a standalone silence's one option; the continuation prints its own
        into = [] if p.emit_into is None else [f"{INDENT}emit into {format_name(p.emit_into)}"]
        return "\n".join([f"sequence {format_name(p.name)}", *into, head])
    first = p.then.stages[0]
    if first.contiguity != seq.Contiguity.RELAXED or first.negated:
        msg = f"pattern {p.name!r}: the stage after a leading absence follows by 'followed by'"
        raise PatternError(msg)
    lines = _format_sequence(p.then).split("\n")
    at = next(i for i, line in enumerate(lines) if line.startswith(f"{INDENT}begin "))
    lines[at] = f"{INDENT}followed by " + lines[at][len(INDENT) + len("begin ") :]
    return "\n".join([*lines[:at], head, *lines[at:]])


# ---- reaction groups -------------------------------------------------------------------------------


def _ids(name: str, ids: Iterable[str]) -> str:
    return f"@{name}({', '.join(ident_arg(i) for i in ids)})"


def _opt(value: object) -> str:
    return "None" if value is None else str(value)


def _accumulator(acc: Accumulator | None) -> list[str]:
    if acc is None:
        return []
    if isinstance(acc, grp.MapCounter):
        return [f"MapCounter({cond_text(acc.key, 'MapCounter')})"]
    top = "" if acc.top is None else f", top={acc.top}"
    return [
        f"SortedAccumulator({cond_text(acc.key, 'accumulator')}, {cond_text(acc.value, 'accumulator')}{top})"
    ]


def _count(c: grp.Count) -> str:
    if (c.min, c.max, c.mode) == (0, 0, "record"):
        return "@count(-1)"
    if c.min == c.max and c.mode == "ignore":
        return f"@count({c.min})"
    if c.min == c.max and c.mode == "record":
        return f"@count({c.min}, -1)"
    return f"@count({c.min}, {c.max}, {c.mode})"


def _head(type_: str | None, match: Iterable[tuple[str, object]], binds: Iterable[tuple[str, str]]) -> str:
    items = []
    for f, v in match:
        value = v.name if isinstance(v, grp.Var) else literal(v)
        items.append(f"{format_name(f)} = {value}")
    items.extend(f"{format_name(f)} as {v}" for v, f in binds)
    head = "_" if type_ is None else format_name(type_)
    return f"{head}({', '.join(items)})" if items else head


def _channel(ch: grp.Channel) -> str:
    a: list[str] = []
    if ch.negated:
        a.append("@not")
    if ch.stop:
        a.append("@stop")
    if ch.stop_ids:
        a.append(_ids("stop", ch.stop_ids))
    if ch.pause_ids:
        a.append(_ids("pause", ch.pause_ids))
    if ch.resume_ids:
        a.append(_ids("resume", ch.resume_ids))
    if ch.paused:
        a.append("@paused")
    if ch.optional:
        a.append("@optional")
    if ch.count is not None:
        a.append(_count(ch.count))
    if ch.size is not None:
        s = ch.size
        args = [str(s.n)]
        if s.reset is not None or s.accumulator is not None:
            args.append(_opt(s.reset))
        args += _accumulator(s.accumulator)
        a.append(f"@size({', '.join(args)})")
    if ch.timer is not None:
        t = ch.timer
        args = [format_duration(t.delay_ms)]
        if t.period_ms is not None or t.accumulator is not None:
            args.append("None" if t.period_ms is None else format_duration(t.period_ms))
        args += _accumulator(t.accumulator)
        a.append(f"@timer({', '.join(args)})")
    if ch.hop is not None:
        h = ch.hop
        args = [format_duration(h.size_ms), format_duration(h.hop_ms), *_accumulator(h.accumulator)]
        a.append(f"@hop({', '.join(args)})")
    if ch.timeout_ms is not None:
        a.append(f"@timeout({format_duration(ch.timeout_ms)})")
    if ch.vars:
        a.append("@vars" if not ch.binds else f"@vars({', '.join(v for v, _ in grp.pairs(ch.vars))})")
    if ch.after:
        a.append(_ids("after", ch.after))
    a.extend(f"@collect({v}, {cond_text(expr, f'channel {ch.id!r}')})" for v, expr in grp.pairs(ch.collect))
    a.extend(_counts(ch.counts))
    bound = (*grp.pairs(ch.binds), *grp.pairs(ch.vars))
    text = f"{format_name(ch.id)}: {_head(ch.type, grp.pairs(ch.match), bound)}"
    if ch.where is not None:
        text += f" where {cond_text(ch.where, f'channel {ch.id!r}')}"
    return " ".join([*a, text])


def _counts(counter: str | None) -> list[str]:
    """``@counts`` / ``@counts(Name)`` (none when nothing is counted)."""
    if counter is None:
        return []
    return ["@counts" if counter == grp.DEFAULT_COUNTER else f"@counts({ident_arg(counter)})"]


def _block(g: grp.ReactionGroup, indent: str, nested: bool) -> list[str]:
    op = f"@{g.operator}"
    if nested:
        op += f"({format_name(g.name)})"
        if g.initiator is not None or g.instances or g.constants:
            msg = f"nested group {g.name!r}: an initiator, instances or constants belong to the outer group"
            raise PatternError(msg)
    a = [op]
    if g.timeout_ms is not None:
        a.append(f"@timeout({format_duration(g.timeout_ms)})")
    if g.timeout_channel:
        a.append("@timeout_channel")
    if g.exit.count is not None:
        a.append(f"@count({g.exit.count})")
    if g.exit.size is not None:
        a.append(f"@size({g.exit.size})")
    if g.where is not None:
        a.append(f"@where({cond_text(g.where, f'group {g.name!r}')})")
    a.extend(_counts(g.counts))
    lines = [f"{indent}{' '.join(a)} {{"]
    for m in g.channels:
        if isinstance(m, grp.ReactionGroup):
            lines.extend(_block(m, indent + INDENT, True))
        else:
            lines.append(f"{indent}{INDENT}{_channel(m)}")
    lines.append(f"{indent}}}")
    return lines


def _format_group(g: grp.ReactionGroup) -> str:
    lines = [f"group {format_name(g.name)}"]
    lines.extend(f"{INDENT}const {n} = {literal(v)}" for n, v in grp.pairs(g.constants))
    for inst in g.instances:
        text = f"{INDENT}instance {literal(inst.key)} at {literal(inst.created_t)}"
        if inst.vars:
            text += " with " + ", ".join(f"{n} = {literal(v)}" for n, v in grp.pairs(inst.vars))
        lines.append(text)
    ini = g.initiator
    if ini is not None:
        lines.extend(f"{INDENT}state {n} = {literal(v)}" for n, v in grp.pairs(ini.state))
        a = []
        if ini.template:
            a.append("@template")
        if ini.id != "initiator":
            a.append(f"@id({ident_arg(ini.id)})")
        text = " ".join([*a, "on"]) + (" once" if not ini.mult else "")
        text += f" {_head(ini.type, grp.pairs(ini.match), grp.pairs(ini.bind))}"
        if ini.where is not None:
            text += f" where {cond_text(ini.where, 'initiator')}"
        lines.append(f"{INDENT}{text}")
    lines.extend(_block(g, INDENT, False))
    return "\n".join(lines)


def _format_receive(r: grp.Receive) -> str:
    lines = [f"receive {format_name(r.name)}"]
    lines.extend(f"{INDENT}const {n} = {literal(v)}" for n, v in grp.pairs(r.constants))
    text = "" if r.count is None else f"@count({r.count}) "
    text += _head(r.type, grp.pairs(r.match), ())
    if r.where is not None:
        text += f" where {cond_text(r.where, f'receive {r.name!r}')}"
    lines.append(f"{INDENT}{text}")
    return "\n".join(lines)


def format_pattern(pattern: object, *, partition: str | tuple[str, ...] | None = None) -> str:
    """``pattern`` (a sequence pattern, a reaction group or a receive) as ``%%cep`` text.

    ``partition`` is the ``partition by`` field of its definition (a property of the definition,
    not of the pattern object; a tuple of fields for a composite key), written back so that the
    text compiles to the same definition.

    >>> from workbench.language import compile_text
    >>> (d,) = compile_text("sequence s partition by user begin a next b")
    >>> print(format_pattern(d.pattern, partition=d.partition))
    sequence s
        partition by user
        begin a
        next b
    """
    if isinstance(pattern, seq.SequencePattern):
        text = _format_sequence(pattern)
    elif isinstance(pattern, AbsencePattern):
        text = _format_absence(pattern)
    elif isinstance(pattern, grp.ReactionGroup):
        text = _format_group(pattern)
    elif isinstance(pattern, grp.Receive):
        if partition is not None:
            msg = f"receive {pattern.name!r}: 'partition by' cannot be written for a receive"
            raise PatternError(msg)
        return _format_receive(pattern)
    else:
        msg = f"cannot print a {type(pattern).__name__} as pattern text (sequences, groups and receives only)"
        raise PatternError(msg)
    if partition is None:
        return text
    head, _, rest = text.partition("\n")
    fields = ", ".join(format_name(f) for f in ((partition,) if isinstance(partition, str) else partition))
    return f"{head}\n{INDENT}partition by {fields}" + (f"\n{rest}" if rest else "")
