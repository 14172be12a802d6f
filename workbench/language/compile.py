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

import ast as pyast
import collections
import difflib
import io
import tokenize
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.aggregates import aggregate_names
from workbench.engine.expr import ir
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import pattern as seq
from workbench.engine.reactions import patterns as grp
from workbench.engine.reactions.accumulators import Accumulator
from workbench.errors import CepError, SourceSpan
from workbench.language import ast
from workbench.language.conditions import Scope, accepts, check_condition, nearest
from workbench.language.errors import CepCompileError
from workbench.language.parser import parse

__all__ = [
    "CHANNEL_ANNOTATIONS",
    "EXIT_ANNOTATIONS",
    "INITIATOR_ANNOTATIONS",
    "Definition",
    "compile_pattern",
    "compile_patterns",
    "compile_script",
    "compile_text",
]

Pattern = seq.SequencePattern | grp.ReactionGroup | grp.Receive

#: annotation -> (min args, max args) for channels, group blocks (the exit) and initiators.
CHANNEL_ANNOTATIONS: dict[str, tuple[int, int]] = {
    "not": (0, 0),
    "stop": (0, 99),
    "id": (1, 1),
    "pause": (1, 99),
    "resume": (1, 99),
    "paused": (0, 0),
    "optional": (0, 0),
    "count": (1, 3),
    "size": (1, 3),
    "timer": (1, 3),
    "timeout": (1, 1),
    "vars": (0, 99),
    "after": (1, 99),
    "collect": (2, 2),
}
EXIT_ANNOTATIONS: dict[str, tuple[int, int]] = {
    "timeout": (1, 1),
    "timeout_channel": (0, 0),
    "count": (1, 1),
    "size": (1, 1),
    "where": (1, 1),
}
INITIATOR_ANNOTATIONS: dict[str, tuple[int, int]] = {"template": (0, 0), "id": (1, 1)}
RECEIVE_ANNOTATIONS: dict[str, tuple[int, int]] = {"count": (1, 1)}

#: the largest count a quantifier may name (``times N``): each occurrence becomes an NFA state.
MAX_COUNT = 1_000

#: aggregate shorthands in sequence conditions (``avg(A.price)``, ``count(A)``): incremental aggregates.
SEQUENCE_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "var", "std"})


@dataclass(frozen=True)
class Definition:
    """One compiled definition: the pattern plus what the text said around it.

    Attributes:
        pattern: the engine pattern object.
        partition: the ``partition by`` field, if any (the key column when loading events).
        schema: the ``event`` declarations in force (type -> fields).
        field_types: declared field types (type -> field -> ``str``/``int``/``float``/``bool``/``number``).
        span: where the definition was written.
        elements: where each stage (sequence) or channel (group) is named, by name.
        source: the text the definition came from, in the caller's line coordinates.
    """

    pattern: Pattern
    partition: str | None
    schema: Mapping[str, tuple[str, ...]]
    span: SourceSpan
    field_types: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    elements: Mapping[str, SourceSpan] = field(default_factory=dict, compare=False)
    source: str = field(default="", compare=False, repr=False)


@dataclass
class _Ctx:
    source: str
    schema: dict[str, tuple[str, ...]]
    functions: Mapping[str, Callable[..., Any]]
    pattern: str | None = None
    field_types: dict[str, dict[str, str]] = field(default_factory=dict)

    def types_of(self, types: Sequence[str]) -> dict[str, str] | None:
        """Field types shared by every one of ``types`` (``None`` when unknown)."""
        if not types or not all(t in self.field_types for t in types):
            return None
        out = dict(self.field_types[types[0]])
        for t in types[1:]:
            out = {k: v for k, v in out.items() if self.field_types[t].get(k) == v}
        return out

    def fail(self, message: str, span: SourceSpan) -> CepCompileError:
        return CepCompileError(message, span, self.source, pattern=self.pattern)

    def check_type(self, name: ast.Name) -> None:
        """Reject an undeclared event type that nearly spells a declared one (``lgin`` for ``login``)."""
        if not self.schema or name.text in self.schema:
            return
        close = difflib.get_close_matches(name.text, sorted(self.schema), n=1, cutoff=0.75)
        if close:
            msg = (
                f"unknown event type {name.text!r} (did you mean {close[0]!r}?); declared: "
                f"{', '.join(sorted(self.schema))}; declare it with 'event {name.text}(...)' if it is meant"
            )
            raise self.fail(msg, name.span)

    def fields_of(self, types: Sequence[str]) -> frozenset[str] | None:
        if not types or not all(t in self.schema for t in types):
            return None  # an untyped stage may see any event type, declared or not
        return frozenset(f for t in types for f in self.schema[t])


# ---- public entry points ---------------------------------------------------------------------------


def compile_script(
    script: ast.Script,
    *,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    schema: Mapping[str, Sequence[str]] | None = None,
    default_name: str | None = None,
    validate: bool = True,
    field_types: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Definition]:
    """Compile every definition of a parsed script, in order.

    With ``validate`` (the default) each pattern is also compiled by its engine family, so that
    everything the engine rejects is reported here, at definition time, with the definition's span.
    """
    source = "\n" * (script.first_line - 1) + script.source
    ctx = _Ctx(source, {k: tuple(v) for k, v in (schema or {}).items()}, dict(functions or {}))
    ctx.field_types = {k: dict(v) for k, v in (field_types or {}).items()}
    out: list[Definition] = []
    names: dict[str, SourceSpan] = {}
    unnamed = 0
    for item in script.items:
        if isinstance(item, ast.EventDecl):
            ctx.schema[item.type.text] = tuple(f.text for f in item.fields)
            typed = zip((f.text for f in item.fields), item.types or (None,) * len(item.fields), strict=True)
            ctx.field_types[item.type.text] = {f: t for f, t in typed if t}
            continue
        if item.name is not None:
            name = item.name.text
        elif default_name is not None and unnamed == 0:
            name = default_name
            unnamed += 1
        else:
            msg = "this definition needs a name (write e.g. 'sequence my_pattern ...')"
            raise ctx.fail(msg, item.span)
        if name in names:
            msg = f"pattern {name!r} is defined twice (first on line {names[name].line})"
            raise ctx.fail(msg, item.name.span if item.name else item.span)
        names[name] = item.span
        ctx.pattern = name
        pattern: Pattern
        spans: dict[str, SourceSpan]
        if isinstance(item, ast.SequenceDef):
            seq_builder = _Sequence(ctx)
            pattern = seq_builder.build(item, name)
            spans = seq_builder.spans
        elif isinstance(item, ast.ReceiveDef):
            pattern = _receive(ctx, item, name)
            spans = {}
        else:
            grp_builder = _Group(ctx)
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
        out.append(
            Definition(
                pattern,
                item.partition.text if item.partition else None,
                dict(ctx.schema),
                item.span,
                {k: dict(v) for k, v in ctx.field_types.items()},
                dict(spans),
                source,
            )
        )
    return out


def compile_text(
    text: str,
    *,
    first_line: int = 1,
    functions: Mapping[str, Callable[..., Any]] | None = None,
    schema: Mapping[str, Sequence[str]] | None = None,
    default_name: str | None = None,
    validate: bool = True,
    field_types: Mapping[str, Mapping[str, str]] | None = None,
) -> list[Definition]:
    """Parse and compile ``text`` (``first_line`` = its first line in the caller's coordinates)."""
    return compile_script(
        parse(text, first_line=first_line),
        functions=functions,
        schema=schema,
        default_name=default_name,
        validate=validate,
        field_types=field_types,
    )


def compile_patterns(text: str, **options: Any) -> list[Pattern]:
    """Every pattern defined in ``text`` (see :func:`compile_text` for the options)."""
    return [d.pattern for d in compile_text(text, **options)]


def compile_pattern(text: str, **options: Any) -> Pattern:
    """The single pattern defined in ``text``; a :class:`CepCompileError` if there are none or several."""
    defs = compile_text(text, **options)
    if len(defs) != 1:
        first_line = int(options.get("first_line", 1))
        source = "\n" * (first_line - 1) + text
        span = defs[1].span if defs else SourceSpan(first_line, 1, first_line, 2)
        msg = f"expected exactly one pattern definition, found {len(defs)}"
        raise CepCompileError(msg, span, source)
    return defs[0].pattern


# ---- helpers ---------------------------------------------------------------------------------------


def _literal(ctx: _Ctx, expr: ast.Expr, what: str) -> Any:
    try:
        return pyast.literal_eval(expr.text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        msg = f"{what} must be a constant (a number, a string, True/False/None), got {expr.text!r}"
        raise ctx.fail(msg, expr.span) from None


def _int(ctx: _Ctx, arg: ast.Expr | ast.Duration, what: str) -> int:
    if isinstance(arg, ast.Expr):
        value = _literal(ctx, arg, what)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    msg = f"{what} must be a whole number"
    raise ctx.fail(msg, arg.span)


def _ms(ctx: _Ctx, arg: ast.Expr | ast.Duration, what: str) -> int | float:
    if isinstance(arg, ast.Duration):
        return arg.ms
    value = _literal(ctx, arg, what)
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return value
    msg = f"{what} must be a duration such as 250ms, 10s, 5min (a bare number means milliseconds)"
    raise ctx.fail(msg, arg.span)


def _call_arguments(text: str) -> list[tuple[str, int]]:
    """The top-level arguments of the call ``text`` (one line): each one's exact text and offset."""
    out: list[tuple[str, int]] = []
    depth = 0
    start = -1
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type != tokenize.OP:
            continue
        col = tok.start[1]
        if tok.string in "([{":
            depth += 1
            if depth == 1:
                start = col + 1
        elif tok.string in ")]}":
            depth -= 1
            if depth == 0:
                piece = text[start:col]
                if piece.strip():
                    out.append((piece.strip(), start + len(piece) - len(piece.lstrip())))
                break
        elif tok.string == "," and depth == 1:
            piece = text[start:col]
            out.append((piece.strip(), start + len(piece) - len(piece.lstrip())))
            start = col + 1
    return out


def _is_none(arg: ast.Expr | ast.Duration) -> bool:
    return isinstance(arg, ast.Expr) and arg.text.strip() == "None"


def _opt_int(ctx: _Ctx, arg: ast.Expr | ast.Duration, what: str) -> int | None:
    return None if _is_none(arg) else _int(ctx, arg, what)


def _opt_ms(ctx: _Ctx, arg: ast.Expr | ast.Duration, what: str) -> int | float | None:
    return None if _is_none(arg) else _ms(ctx, arg, what)


def _ident(ctx: _Ctx, arg: ast.Expr | ast.Duration, what: str) -> str:
    if isinstance(arg, ast.Expr):
        text = arg.text.strip()
        if text.isidentifier():
            return text
        if text[:1] == "`" and text[-1:] == "`":
            return text[1:-1]
        try:
            value = pyast.literal_eval(text)
        except (ValueError, SyntaxError):
            value = None
        if isinstance(value, str):
            return value
    msg = f"{what} must be a name"
    raise ctx.fail(msg, arg.span)


def _check_annotations(
    ctx: _Ctx, annotations: Sequence[ast.Annotation], allowed: Mapping[str, tuple[int, int]], where: str
) -> dict[str, ast.Annotation]:
    seen: dict[str, ast.Annotation] = {}
    for a in annotations:
        name = a.name.text
        if name not in allowed:
            others = [
                k for k in (*CHANNEL_ANNOTATIONS, *EXIT_ANNOTATIONS, *INITIATOR_ANNOTATIONS) if k in allowed
            ]
            hint = nearest(name, others)
            msg = f"unknown annotation '@{name}' on {where}" + (hint.replace(" '", " '@", 1) if hint else "")
            if name in CHANNEL_ANNOTATIONS or name in EXIT_ANNOTATIONS:
                msg = f"'@{name}' does not apply to {where}; allowed: {', '.join('@' + k for k in allowed)}"
            raise ctx.fail(msg, a.name.span)
        repeatable = name == "collect" or (
            name == "stop" and name in seen and not (seen[name].args and a.args)
        )
        if name in seen and not repeatable:
            msg = f"'@{name}' is given twice"
            raise ctx.fail(msg, a.span)
        lo, hi = allowed[name]
        n = len(a.args or ())
        if not lo <= n <= hi:
            want = (
                "no arguments"
                if hi == 0
                else (f"{lo} argument(s)" if lo == hi else f"{lo} to {hi} arguments")
            )
            msg = f"'@{name}' takes {want}, got {n}"
            raise ctx.fail(msg, a.span)
        seen[name] = a
    return seen


# ---- sequences -------------------------------------------------------------------------------------


class _Sequence:
    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.aggregates: list[seq.AggregateSpec] = []
        self.stage_names: set[str] = set()
        self.spans: dict[str, SourceSpan] = {}

    def build(self, node: ast.SequenceDef, name: str) -> seq.SequencePattern:
        ctx = self.ctx
        seen: dict[str, SourceSpan] = {}
        self._collect_names(node.stages, seen)
        self.stage_names = set(seen)
        self.spans = seen
        for decl in node.aggregates:
            self.aggregates.append(self._aggregate_decl(decl))
        stages = tuple(self._stage(s, i == 0) for i, s in enumerate(node.stages))
        skip = seq.SkipStrategy()
        if node.skip is not None:
            target = node.skip.stage.text if node.skip.stage else None
            if node.skip.stage is not None and target not in seen:
                msg = f"unknown stage {target!r} in the skip strategy{nearest(str(target), seen)}"
                raise ctx.fail(msg, node.skip.stage.span)
            skip = seq.SkipStrategy(node.skip.kind, target, node.skip.or_fail)  # type: ignore[arg-type]
        max_partial = (
            seq.SequencePattern.__dataclass_fields__["max_partial_matches"].default
            if node.max_partial == "default"
            else node.max_partial
        )
        return seq.SequencePattern(
            name,
            stages,
            within_ms=node.within.ms if node.within else None,
            skip=skip,
            aggregates=tuple(self.aggregates),
            max_partial_matches=max_partial,  # type: ignore[arg-type]
            emit_timeouts=node.emit_timeouts,
        )

    def _collect_names(
        self, stages: Sequence[ast.Stage], seen: dict[str, SourceSpan], depth: int = 0
    ) -> None:
        for s in stages:
            if s.group is not None:
                self._collect_names(s.group.stages, seen, depth + 1)
                continue
            assert s.name is not None
            if s.name.text in seen:
                msg = f"stage {s.name.text!r} is defined twice (first on line {seen[s.name.text].line})"
                raise self.ctx.fail(msg, s.name.span)
            if s.name.text in ("e", "matched"):
                msg = f"a stage cannot be called {s.name.text!r} (conditions use that name)"
                raise self.ctx.fail(msg, s.name.span)
            seen[s.name.text] = s.name.span

    def _aggregate_decl(self, decl: ast.AggregateDecl) -> seq.AggregateSpec:
        spec = self._aggregate_call(decl.value.text, decl.value.span, decl.name.text, decl.include_current)
        if spec is None:
            msg = (
                "an aggregate is written FUNCTION(STAGE.field) or FUNCTION(STAGE), e.g. avg(A.price); "
                f"functions: {', '.join(aggregate_names())}"
            )
            raise self.ctx.fail(msg, decl.value.span)
        return spec

    def _aggregate_call(
        self, text: str, span: SourceSpan, name: str | None, include_current: bool
    ) -> seq.AggregateSpec | None:
        try:
            node = pyast.parse(text.strip(), mode="eval").body
        except (SyntaxError, RecursionError, MemoryError):
            return None
        if not (isinstance(node, pyast.Call) and isinstance(node.func, pyast.Name) and len(node.args) == 1):
            return None
        fn = node.func.id
        arg = node.args[0]
        if isinstance(arg, pyast.Name):
            stage, fld = arg.id, None
        elif isinstance(arg, pyast.Attribute) and isinstance(arg.value, pyast.Name):
            stage, fld = arg.value.id, arg.attr
        else:
            return None
        if fn not in aggregate_names():
            msg = f"unknown aggregate {fn!r}{nearest(fn, aggregate_names())}"
            raise self.ctx.fail(msg, span)
        if stage not in self.stage_names:
            msg = f"unknown stage {stage!r}{nearest(stage, self.stage_names)}"
            raise self.ctx.fail(msg, span)
        params: dict[str, Any] = {}
        for kw in node.keywords:
            if kw.arg is None:
                return None
            try:
                params[kw.arg] = pyast.literal_eval(kw.value)
            except ValueError:
                return None
        auto = f"{fn}_{stage}" + (f"_{fld}" if fld else "")
        return seq.AggregateSpec(name or auto, fn, stage, fld, params, include_current)

    def _condition(
        self, expr: ast.Expr, types: Sequence[str], what: str, current: str | None = None
    ) -> ir.Node:
        scope = Scope(
            variables=frozenset(a.name for a in self.aggregates),
            stages=frozenset(self.stage_names),
            fields=self.ctx.fields_of(types),
            field_types=self.ctx.types_of(types),
            functions=self.ctx.functions,
            current=current,
        )
        return check_condition(expr, scope, self.ctx.source, what=what, rewrite=self._aggregate_sugar)

    def _aggregate_sugar(self, tree: ir.Node) -> tuple[ir.Node, frozenset[str]]:
        """Replace ``avg(A.price)``-style calls by the name of an incremental aggregate declared for them.

        Returns the new tree and the names of the aggregates it reads.
        """
        stages = set(self.stage_names)
        used: set[str] = set()

        def visit(node: ir.Node) -> ir.Node:
            if isinstance(node, ir.Let) and stages & set(node.params):
                return node  # a stage name rebound by the let: not the stage
            if isinstance(node, ir.Comprehension) and any(
                stages & ir.target_names(c.target) for c in node.clauses
            ):
                return node
            if (
                isinstance(node, ir.Call)
                and node.func in SEQUENCE_AGGREGATES
                and node.func not in self.ctx.functions
                and len(node.args) == 1
            ):
                arg = node.args[0]
                base = arg.obj if isinstance(arg, ir.Attr) else arg
                if isinstance(base, ir.Name) and base.name in stages:
                    fld = arg.name if isinstance(arg, ir.Attr) else None
                    name = self._declare(node.func, base.name, fld)
                    used.add(name)
                    return ir.Name(name, span=node.span)
            return ir.map_children(node, visit)

        return visit(tree), frozenset(used)

    def _declare(self, function: str, stage: str, fld: str | None) -> str:
        """The name of the aggregate ``function(stage.fld)`` (declared now if it is new)."""
        for a in self.aggregates:
            if (a.function, a.stage, a.field, a.include_current) == (function, stage, fld, False):
                return a.name
        name = f"{function}_{stage}" + (f"_{fld}" if fld else "")
        spec = seq.AggregateSpec(name, function, stage, fld, {}, False)
        self.aggregates.append(spec)
        return spec.name

    def _where(self, stage: ast.Stage, types: Sequence[str]) -> seq.Condition | None:
        cond: seq.Condition | None = None
        current = stage.name.text if stage.name else None
        for op, e in stage.where:
            c = self._condition(e, types, "condition", current)
            if cond is None:
                cond = c
            elif op == "and":
                cond = seq.AllOf((*cond.parts, c)) if isinstance(cond, seq.AllOf) else seq.AllOf((cond, c))
            else:
                cond = seq.AnyOf((*cond.parts, c)) if isinstance(cond, seq.AnyOf) else seq.AnyOf((cond, c))
        return cond

    def _quantifier(self, stage: ast.Stage) -> seq.Quantifier:
        ctx = self.ctx
        lo: int = 1
        hi: int | None = 1
        counted: ast.Quantifier | None = None
        optional = greedy = False
        inner = seq.Contiguity.RELAXED
        inner_q: ast.Quantifier | None = None
        window: int | float | None = None
        for q in stage.quantifiers:
            if q.kind in ("times", "range", "or_more", "one_or_more"):
                if counted is not None:
                    msg = (
                        "a stage takes one count ('times 3', 'times 2..4', 'one or more', 'times 2 or more')"
                    )
                    raise ctx.fail(msg, q.span)
                counted = q
                if q.kind == "times":
                    lo = hi = int(q.args[0])
                elif q.kind == "range":
                    lo, hi = int(q.args[0]), int(q.args[1])
                elif q.kind == "or_more":
                    lo, hi = int(q.args[0]), None
                else:
                    lo, hi = 1, None
                if lo < 0 or (hi is not None and (hi < lo or hi < 1)):
                    msg = f"invalid count: need 0 <= n <= m and m >= 1, got {lo}..{hi}"
                    raise ctx.fail(msg, q.span)
                if max(lo, hi or 0) > MAX_COUNT:
                    msg = (
                        f"a count above {MAX_COUNT} is not supported (each occurrence is an automaton state)"
                    )
                    raise ctx.fail(msg, q.span)
            elif q.kind == "optional":
                optional = True
            elif q.kind == "greedy":
                greedy = True
            elif q.kind in ("consecutive", "combinations"):
                if inner_q is not None:
                    msg = "'consecutive' and 'allow combinations' exclude each other"
                    raise ctx.fail(msg, q.span)
                inner_q = q
                inner = (
                    seq.Contiguity.STRICT
                    if q.kind == "consecutive"
                    else seq.Contiguity.NONDETERMINISTIC_RELAXED
                )
            elif q.kind == "window":
                window = q.args[0]
        if (inner_q is not None or greedy or window is not None) and counted is None:
            bad = inner_q or next(q for q in stage.quantifiers if q.kind in ("greedy", "window"))
            word = _QUANT_WORDS[bad.kind]
            msg = f"'{word}' needs a count first (e.g. 'one or more {word}')"
            raise ctx.fail(msg, bad.span)
        if lo == 0:  # times 0..m: Flink turns it into optional times(1, m)
            lo, optional = 1, True
        return seq.Quantifier(lo, hi, optional, greedy, inner, window)

    def _stage(self, stage: ast.Stage, first: bool) -> seq.Stage | seq.GroupStage:
        ctx = self.ctx
        contiguity, negated = _CONTIGUITY[stage.contiguity]
        if negated and stage.quantifiers:
            msg = "a negated stage ('not next' / 'not followed by') takes no quantifier"
            raise ctx.fail(msg, stage.quantifiers[0].span)
        quant = self._quantifier(stage)
        for t in stage.types:
            ctx.check_type(t)
        types = tuple(t.text for t in stage.types)
        current = stage.name.text if stage.name else None
        until = self._condition(stage.until, types, "until condition", current) if stage.until else None
        if stage.group is not None:
            inner = tuple(self._stage(s, i == 0) for i, s in enumerate(stage.group.stages))
            if stage.where:
                msg = "a group of stages has no 'where' (put conditions on its stages)"
                raise ctx.fail(msg, stage.where[0][1].span)
            if negated:
                msg = (
                    "a group of stages cannot be negated ('not next (...)' / 'not followed by (...)'); "
                    "negate a single stage instead"
                )
                raise ctx.fail(msg, stage.span)
            if stage.within_previous is not None:
                msg = (
                    "'within ... of previous' applies to a single stage, not to a group "
                    "(use 'within D' on the group, or put it on the group's first stage)"
                )
                raise ctx.fail(msg, stage.within_previous.span)
            greedy = next((q for q in stage.quantifiers if q.kind == "greedy"), None)
            if greedy is not None:
                msg = "a group of stages cannot be 'greedy' (only a single looping stage can)"
                raise ctx.fail(msg, greedy.span)
            name = _group_name(inner)
            self.spans[name] = stage.group.span  # the engine reports a group's problems by this name
            return seq.GroupStage(
                name,
                inner,
                contiguity,
                quant,
                until,
                stage.within.ms if stage.within else None,
            )
        assert stage.name is not None
        if stage.within_previous is not None and first:
            msg = (
                "the first stage has no previous event: "
                "'within ... of previous' applies from the second stage on"
            )
            raise ctx.fail(msg, stage.within_previous.span)
        return seq.Stage(
            stage.name.text,
            self._where(stage, types),
            contiguity,
            negated,
            quant,
            until,
            types,
            stage.within.ms if stage.within else None,
            stage.within_previous.ms if stage.within_previous else None,
        )


def _unshadowed(tree: pyast.AST, names: set[str]) -> list[pyast.AST]:
    """The nodes of ``tree`` outside any lambda or comprehension that rebinds one of ``names``."""
    out: list[pyast.AST] = []
    todo = collections.deque([tree])
    while todo:
        node = todo.popleft()
        if (
            isinstance(
                node, pyast.Lambda | pyast.ListComp | pyast.SetComp | pyast.GeneratorExp | pyast.DictComp
            )
            and _binds(node) & names
        ):
            continue
        out.append(node)
        todo.extend(pyast.iter_child_nodes(node))
    return out


def _binds(node: pyast.AST) -> set[str]:
    if isinstance(node, pyast.Lambda):
        return {a.arg for a in node.args.args}
    return {
        t.id
        for gen in getattr(node, "generators", [])
        for t in pyast.walk(gen.target)
        if isinstance(t, pyast.Name)
    }


def _group_name(stages: Sequence[seq.Stage | seq.GroupStage]) -> str:
    return "(" + " ".join(s.name for s in stages) + ")"


_CONTIGUITY: dict[str, tuple[seq.Contiguity, bool]] = {
    "begin": (seq.Contiguity.RELAXED, False),
    "strict": (seq.Contiguity.STRICT, False),
    "relaxed": (seq.Contiguity.RELAXED, False),
    "any": (seq.Contiguity.NONDETERMINISTIC_RELAXED, False),
    "not_next": (seq.Contiguity.STRICT, True),
    "not_followed": (seq.Contiguity.RELAXED, True),
}

_QUANT_WORDS = {
    "greedy": "greedy",
    "consecutive": "consecutive",
    "combinations": "allow combinations",
    "window": "gaps within",
}


# ---- plain reactions -------------------------------------------------------------------------------


def _receive(ctx: _Ctx, node: ast.ReceiveDef, name: str) -> grp.Receive:
    annots = _check_annotations(ctx, node.annotations, RECEIVE_ANNOTATIONS, "a receive")
    constants = tuple(
        (a.name.text, _literal(ctx, a.value, f"constant {a.name.text!r}")) for a in node.constants
    )
    builder = _Group(ctx)
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
        count = _int(ctx, annots["count"].args[0], "@count")
    return grp.Receive(name, type_, match, where, count, constants)


# ---- reaction groups -------------------------------------------------------------------------------


@dataclass
class _GroupScope:
    variables: set[str] = field(default_factory=set)
    vars: set[str] = field(default_factory=set)
    channel_ids: dict[str, SourceSpan] = field(default_factory=dict)
    references: list[tuple[str, SourceSpan]] = field(default_factory=list)


class _Group:
    def __init__(self, ctx: _Ctx) -> None:
        self.ctx = ctx
        self.scope = _GroupScope()
        self.nested = 0

    def build(self, node: ast.GroupDef, name: str) -> grp.ReactionGroup:
        ctx = self.ctx
        constants = tuple(
            (a.name.text, _literal(ctx, a.value, f"constant {a.name.text!r}")) for a in node.constants
        )
        state = tuple((a.name.text, _literal(ctx, a.value, f"state {a.name.text!r}")) for a in node.state)
        self.scope.variables.update(n for n, _ in constants)
        self.scope.variables.update(n for n, _ in state)
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
        return group

    def _instance(self, decl: ast.InstanceDecl) -> grp.Instance:
        key = _literal(self.ctx, decl.key, "an instance key")
        at = _literal(self.ctx, decl.at, "an instance time") if decl.at else 0
        if not isinstance(at, int | float) or isinstance(at, bool):
            msg = "an instance time must be a number (milliseconds)"
            raise self.ctx.fail(msg, decl.at.span if decl.at else decl.span)
        vars_ = tuple(
            (a.name.text, _literal(self.ctx, a.value, f"variable {a.name.text!r}")) for a in decl.vars
        )
        return grp.Instance(key, at, vars_)

    def _head(
        self, head: ast.ChannelHead, bound: set[str], binds: list[tuple[str, str]]
    ) -> tuple[tuple[tuple[str, Any], ...], str | None]:
        ctx = self.ctx
        type_ = None if head.type.text in ("_", "any") else head.type.text
        if type_ is not None:
            ctx.check_type(head.type)
        fields = ctx.schema.get(type_) if type_ else None
        match: list[tuple[str, Any]] = []
        for item in head.items:
            f = item.field.text
            if fields is not None and f not in fields and f not in ("type", "key", "time"):
                msg = f"event {type_!r} has no field {f!r}{nearest(f, fields)}; fields: {', '.join(fields)}"
                raise ctx.fail(msg, item.field.span)
            if item.bind:
                assert isinstance(item.value, ast.Name)
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
                value = _literal(ctx, item.value, f"the value of {f!r}")
                declared = ctx.field_types.get(type_ or "", {}).get(f)
                if declared is not None and not accepts(declared, value):
                    msg = f"type clash: field {f!r} of {type_!r} is declared {declared}, got {value!r}"
                    raise ctx.fail(msg, item.value.span)
                match.append((f, value))
        return tuple(match), type_

    def _initiator(self, node: ast.Initiator, constants: tuple[tuple[str, Any], ...]) -> grp.Initiator:
        annots = _check_annotations(
            self.ctx, node.annotations, INITIATOR_ANNOTATIONS, "the initiator ('on ...')"
        )
        binds: list[tuple[str, str]] = []
        match, type_ = self._head(node.head, set(self.scope.variables), binds)
        where = None
        if node.where is not None:
            scope = Scope(
                variables=frozenset(self.scope.variables),
                fields=self.ctx.fields_of([type_] if type_ else []),
                field_types=self.ctx.types_of([type_] if type_ else []),
                functions=self.ctx.functions,
            )
            where = check_condition(node.where, scope, self.ctx.source)
        self.scope.variables.update(v for v, _ in binds)
        ident = "initiator"
        if "id" in annots:
            args = annots["id"].args or ()
            ident = _ident(self.ctx, args[0], "@id")
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
            ident = _ident(self.ctx, ids[0].args[0], "@id")
            if ch.label is not None and ch.label.text != ident:
                msg = f"channel has two names: label {ch.label.text!r} and @id({ident})"
                raise self.ctx.fail(msg, ids[0].span)
            return ident, ids[0].span
        if ch.label is not None:
            return ch.label.text, ch.label.span
        return ch.head.type.text, ch.head.type.span  # unnamed: the channel is called after its type

    def _ids(self, a: ast.Annotation) -> tuple[str, ...]:
        out = []
        for arg in a.args or ():
            ident = _ident(self.ctx, arg, f"an argument of @{a.name.text}")
            self.scope.references.append((ident, arg.span))
            out.append(ident)
        return tuple(out)

    def _accumulator(self, arg: ast.Expr | ast.Duration, types: Sequence[str]) -> Accumulator:
        ctx = self.ctx
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
        scope = Scope(
            variables=frozenset(self.scope.variables),
            fields=ctx.fields_of(types),
            field_types=ctx.types_of(types),
            functions=ctx.functions,
        )

        pieces = _call_arguments(text)

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
                value = pyast.literal_eval(extra[0])
                if not isinstance(value, int):
                    raise ctx.fail(bad, arg.span)
                top = value
            return grp.SortedAccumulator(sub(0), sub(1), top)
        msg = bad + nearest(kind, ["MapCounter", "SortedAccumulator"])
        raise ctx.fail(msg, arg.span)

    def _channel(self, ch: ast.Channel) -> grp.Channel:
        ctx = self.ctx
        annots = _check_annotations(ctx, ch.annotations, CHANNEL_ANNOTATIONS, "a channel")
        ident, _ = self._channel_id(ch)
        binds: list[tuple[str, str]] = []
        match, type_ = self._head(ch.head, set(self.scope.variables), binds)
        types = [type_] if type_ else []
        where = None
        if ch.where is not None:
            scope = Scope(
                variables=frozenset(self.scope.variables),
                fields=ctx.fields_of(types),
                field_types=ctx.types_of(types),
                functions=ctx.functions,
            )
            where = check_condition(ch.where, scope, ctx.source)
        kw: dict[str, Any] = {}
        for name, a in annots.items():
            args = a.args or ()
            if name == "not":
                kw["negated"] = True
            elif name == "stop":
                for each in ch.annotations:  # bare @stop and @stop(ids) may both be given
                    if each.name.text == "stop" and each.args:
                        kw["stop_ids"] = self._ids(each)
                    elif each.name.text == "stop":
                        kw["stop"] = True
            elif name in ("pause", "resume", "after"):
                kw[f"{name}_ids" if name != "after" else "after"] = self._ids(a)
            elif name in ("paused", "optional"):
                kw[name] = True
            elif name == "count":
                n = _int(ctx, args[0], "@count's first argument")
                m = _int(ctx, args[1], "@count's second argument") if len(args) > 1 else None
                mode = _ident(ctx, args[2], "@count's mode") if len(args) > 2 else None
                if mode is not None and mode not in ("ignore", "record", "strict"):
                    hint = nearest(mode, ["ignore", "record", "strict"])
                    msg = f"@count mode must be ignore, record or strict{hint}"
                    raise ctx.fail(msg, args[2].span)
                kw["count"] = grp.Count.of(n, m, mode)
            elif name == "size":
                n = _int(ctx, args[0], "@size's first argument")
                r = _opt_int(ctx, args[1], "@size's second argument") if len(args) > 1 else None
                acc = self._accumulator(args[2], types) if len(args) > 2 else None
                kw["size"] = grp.Size(n, r, acc)
            elif name == "timer":
                d = _ms(ctx, args[0], "@timer's delay")
                p = _opt_ms(ctx, args[1], "@timer's period") if len(args) > 1 else None
                acc = self._accumulator(args[2], types) if len(args) > 2 else None
                kw["timer"] = grp.Timer(d, p, acc)
            elif name == "timeout":
                kw["timeout_ms"] = _ms(ctx, args[0], "@timeout")
            elif name == "vars":
                wanted = {_ident(ctx, x, "an argument of @vars") for x in args}
                known = {v for v, _ in binds}
                for x in args:
                    v = _ident(ctx, x, "an argument of @vars")
                    if v not in known:
                        msg = f"@vars names {v!r}, which this channel does not bind{nearest(v, known)}"
                        raise ctx.fail(msg, x.span)
                chosen = [(v, f) for v, f in binds if not wanted or v in wanted]
                binds = [(v, f) for v, f in binds if wanted and v not in wanted]
                kw["vars"] = tuple(chosen)
                self.scope.vars.update(v for v, _ in chosen)
        collects = []
        for a in ch.annotations:
            if a.name.text == "collect":
                assert a.args is not None
                var = _ident(ctx, a.args[0], "@collect's variable")
                if var not in self.scope.variables:
                    msg = (
                        f"@collect needs a 'state {var} = []' declaration{nearest(var, self.scope.variables)}"
                    )
                    raise ctx.fail(msg, a.args[0].span)
                value = a.args[1]
                if not isinstance(value, ast.Expr):
                    msg_0 = "@collect's value must be an expression"
                    raise ctx.fail(msg_0, value.span)
                scope = Scope(
                    variables=frozenset(self.scope.variables),
                    fields=ctx.fields_of(types),
                    field_types=ctx.types_of(types),
                    functions=ctx.functions,
                )
                collects.append((var, check_condition(value, scope, ctx.source, what="expression")))
        if collects:
            kw["collect"] = tuple(collects)
        return grp.Channel(ident, type_, match, where, binds=tuple(binds), **kw)

    def _block(
        self,
        block: ast.Block,
        name: str,
        constants: tuple[tuple[str, Any], ...] = (),
        initiator: grp.Initiator | None = None,
        instances: tuple[grp.Instance, ...] = (),
        state: tuple[tuple[str, Any], ...] = (),
    ) -> grp.ReactionGroup:
        ctx = self.ctx
        annots = _check_annotations(ctx, block.annotations, EXIT_ANNOTATIONS, f"the @{block.operator} exit")
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
        timeout = (
            _ms(ctx, annots["timeout"].args[0], "@timeout")
            if "timeout" in annots and annots["timeout"].args
            else None
        )
        exit_count = (
            _int(ctx, annots["count"].args[0], "@count")
            if "count" in annots and annots["count"].args
            else None
        )
        exit_size = (
            _int(ctx, annots["size"].args[0], "@size") if "size" in annots and annots["size"].args else None
        )
        where = None
        if "where" in annots and annots["where"].args:
            arg = annots["where"].args[0]
            if not isinstance(arg, ast.Expr):
                msg_0 = "@where takes a condition"
                raise ctx.fail(msg_0, arg.span)
            scope = Scope(
                variables=frozenset(self.scope.variables | self.scope.vars), functions=ctx.functions
            )
            where = check_condition(arg, scope, ctx.source)
        if state:
            if initiator is None:
                msg = "'state' variables need an initiator ('on ...')"
                raise ctx.fail(msg, block.span)
            initiator = grp.Initiator(
                initiator.type,
                initiator.match,
                initiator.where,
                initiator.bind,
                initiator.mult,
                initiator.template,
                state,
                initiator.id,
            )
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
        )
