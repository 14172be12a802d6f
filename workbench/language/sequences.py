"""Compile a ``sequence`` definition into a :class:`~workbench.engine.nfa.pattern.SequencePattern`."""

from __future__ import annotations

import ast as pyast
from collections.abc import Sequence
from dataclasses import replace

from workbench.engine.aggregates import aggregate_names
from workbench.engine.expr import ir
from workbench.engine.nfa import pattern as seq
from workbench.engine.nfa.measures import UNIVERSAL
from workbench.errors import PatternError, SourceSpan
from workbench.language import ast
from workbench.language.alternation import choice_names, lower_choice
from workbench.language.arguments import MAX_COUNT, MAX_STAGES, window_ms
from workbench.language.conditions import EVENT_ATTRIBUTES, Scope, check_condition, nearest
from workbench.language.context import Context

__all__ = ["MATCH_WIDE", "SEQUENCE_AGGREGATES", "SequenceCompiler"]

#: aggregate shorthands in sequence conditions (``avg(A.price)``, ``count(A)``): incremental aggregates.
SEQUENCE_AGGREGATES = frozenset({"count", "sum", "avg", "min", "max", "var", "std"})

#: functions whose bare-field argument reads every event of the match (``avg(price)``: SQL's
#: universal pattern variable) in a measure.
MATCH_WIDE = SEQUENCE_AGGREGATES | {"first", "last"}


# ---- sequences -------------------------------------------------------------------------------------


class SequenceCompiler:
    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.aggregates: list[seq.AggregateSpec] = []
        self.stage_names: set[str] = set()
        self.stage_order: tuple[str, ...] = ()
        self.spans: dict[str, SourceSpan] = {}
        self.subsets: dict[str, tuple[str, ...]] = {}

    def build(self, node: ast.SequenceDef, name: str) -> seq.SequencePattern:
        ctx = self.ctx
        seen: dict[str, SourceSpan] = {}
        self._collect_names(node.stages, seen)
        if len(seen) > MAX_STAGES:
            msg = f"a sequence has at most {MAX_STAGES:,} stages; this one has {len(seen):,}"
            raise ctx.fail(msg, seen[list(seen)[MAX_STAGES]])
        self.stage_names = set(seen)
        self.stage_order = tuple(seen)
        self.spans = seen
        for decl in node.aggregates:
            self.aggregates.append(self._aggregate_decl(decl))
        self.subsets = self._subsets(node.subsets)
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
            within_ms=window_ms(ctx, node.within),
            skip=skip,
            aggregates=tuple(self.aggregates),
            max_partial_matches=max_partial,  # type: ignore[arg-type]
            emit_timeouts=node.emit_timeouts,
            flink_order=node.flink_order,
            measures=self._measures(node.measures),
            emit_into=node.emit_into.text if node.emit_into is not None else None,
            subsets=self.subsets,
        )

    def _subsets(self, decls: Sequence[ast.SubsetDecl]) -> dict[str, tuple[str, ...]]:
        """``subset ab = (a, b)``: names for the events of several stages, checked where written."""
        out: dict[str, tuple[str, ...]] = {}
        spans: dict[str, SourceSpan] = {}
        for decl in decls:
            name = self._once("subset", decl.name, spans)
            if name in self.stage_names or name in ("e", "matched"):
                what = "a stage" if name in self.stage_names else "a name conditions use"
                msg = f"a subset cannot be called {name!r} ({what})"
                raise self.ctx.fail(msg, decl.name.span)
            for i, m in enumerate(decl.members):
                if m.text not in self.stage_names:
                    msg = f"unknown stage {m.text!r} in subset {name!r}{nearest(m.text, self.stage_names)}"
                    raise self.ctx.fail(msg, m.span)
                if m.text in (n.text for n in decl.members[:i]):
                    msg = f"stage {m.text!r} is listed twice in subset {name!r}"
                    raise self.ctx.fail(msg, m.span)
            out[name] = tuple(m.text for m in decl.members)
        return out

    def _once(self, what: str, name: ast.Name, spans: dict[str, SourceSpan]) -> str:
        """``name``'s text, recorded in ``spans``; a name seen before is an error where written."""
        if name.text in spans:
            msg = f"{what} {name.text!r} is defined twice (first on line {spans[name.text].line})"
            raise self.ctx.fail(msg, name.span)
        spans[name.text] = name.span
        return name.text

    def _measures(self, decls: Sequence[ast.Assignment]) -> tuple[seq.Measure, ...]:
        out: dict[str, seq.Measure] = {}
        spans: dict[str, SourceSpan] = {}
        for decl in decls:
            name = self._once("measure", decl.name, spans)
            readable = frozenset({*self.stage_names, *self.subsets, UNIVERSAL})
            scope = Scope(stages=readable, functions=self.ctx.functions)
            tree = check_condition(
                decl.value, scope, self.ctx.source, what="measure", rewrite=self._match_wide
            )
            if "e" in ir.free_names(tree):
                where = next(n for n in ir.walk(tree) if n == ir.Name("e"))
                msg = "a measure has no current event 'e': read a stage, e.g. last(a).price or count(b)"
                raise self.ctx.fail(msg, where.span or decl.value.span)
            try:
                out[name] = seq.Measure(name, tree)
            except PatternError as err:
                raise self.ctx.fail(str(err), decl.name.span) from None
        return tuple(out.values())

    def _match_wide(self, tree: ir.Node, *, condition: bool = False) -> tuple[ir.Node, frozenset[str]]:
        """``avg(price)``: a bare name given to an aggregate reads that field of every event of the match.

        In a measure that is the finished match (``matched('*')``); in a condition, the events the
        partial match took, stage after stage, and the event being tested (SQL's running
        semantics), for the aggregates whose value does not depend on order.
        """
        known = self.stage_names | {"e"} | (set() if condition else set(self.subsets))
        functions = SEQUENCE_AGGREGATES if condition else MATCH_WIDE

        def visit(node: ir.Node) -> ir.Node:
            if isinstance(node, ir.Let | ir.Comprehension):
                return node  # names bound there are not fields
            if isinstance(node, ir.Call) and node.func in functions and node.func not in self.ctx.functions:
                args = tuple(
                    self._field_of_match(a, condition)
                    if isinstance(a, ir.Name) and a.name not in known
                    else visit(a)
                    for a in node.args
                )
                return replace(node, args=args)
            return ir.map_children(node, visit)

        return visit(tree), frozenset()

    def _field_of_match(self, name: ir.Name, condition: bool) -> ir.Node:
        """``price`` in ``avg(price)``: that field of every event (checked against ``event`` declarations)."""
        fields = {f for declared in self.ctx.schema.values() for f in declared}
        span = name.span
        if condition and name.name in self.subsets:  # why: not silently a field of that name
            msg = f"subset {name.name!r} can be read only in measures"
            raise self.ctx.fail(msg, span or SourceSpan(1, 1, 1, 2))
        if self.ctx.schema and name.name not in fields | EVENT_ATTRIBUTES:
            pool = fields | self.stage_names
            msg = f"unknown stage or field {name.name!r}{nearest(name.name, pool)}"
            raise self.ctx.fail(msg, span or SourceSpan(1, 1, 1, 2))
        if not condition:
            return ir.Attr(ir.Stage(UNIVERSAL, span=span), name.name, span=span)
        events: ir.Node | None = None
        for stage in self.stage_order:  # a + b + [e]: left to right, as the text reads
            read = ir.Stage(stage, span=span)
            events = read if events is None else ir.Binary("+", events, read, span=span)
        current = ir.ListOf((ir.Name("e", span=span),), span=span)
        both = current if events is None else ir.Binary("+", events, current, span=span)
        return ir.Attr(both, name.name, span=span)

    def _condition_rewrite(self, tree: ir.Node) -> tuple[ir.Node, frozenset[str]]:
        """The incremental-aggregate sugar, then match-wide aggregates."""
        tree, used = self._aggregate_sugar(tree)
        return self._match_wide(tree, condition=True)[0], used

    def _collect_names(
        self, stages: Sequence[ast.Stage], seen: dict[str, SourceSpan], depth: int = 0
    ) -> None:
        for s in stages:
            if s.group is not None:
                self._collect_names(s.group.stages, seen, depth + 1)
                continue
            if s.choice is not None:
                self._collect_names(choice_names(s), seen, depth + 1)
                continue
            assert s.name is not None
            if s.name.text in seen:
                msg = f"stage {s.name.text!r} is defined twice (first on line {seen[s.name.text].line})"
                raise self.ctx.fail(msg, s.name.span)
            if s.name.text in ("e", "matched", UNIVERSAL):
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
        params: dict[str, object] = {}
        for kw in node.keywords:
            if kw.arg is None:
                return None
            try:
                params[kw.arg] = pyast.literal_eval(kw.value)
            except (ValueError, TypeError, MemoryError, RecursionError):
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
        return check_condition(expr, scope, self.ctx.source, what=what, rewrite=self._condition_rewrite)

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

    def _check_group(self, stage: ast.Stage, negated: bool) -> None:
        """A group of stages takes no 'where', negation, 'within ... of previous' or 'greedy'."""
        if stage.where:
            msg = "a group of stages has no 'where' (put conditions on its stages)"
            raise self.ctx.fail(msg, stage.where[0][1].span)
        if negated:
            msg = (
                "a group of stages cannot be negated ('not next (...)' / 'not followed by (...)'); "
                "negate a single stage instead"
            )
            raise self.ctx.fail(msg, stage.span)
        if stage.within_previous is not None:
            msg = (
                "'within ... of previous' applies to a single stage, not to a group "
                "(use 'within D' on the group, or put it on the group's first stage)"
            )
            raise self.ctx.fail(msg, stage.within_previous.span)
        greedy = next((q for q in stage.quantifiers if q.kind == "greedy"), None)
        if greedy is not None:
            msg = "a group of stages cannot be 'greedy' (only a single looping stage can)"
            raise self.ctx.fail(msg, greedy.span)

    def _stage(self, stage: ast.Stage, first: bool) -> seq.Element:
        ctx = self.ctx
        contiguity, negated = _CONTIGUITY[stage.contiguity]
        if stage.choice is not None:
            return lower_choice(ctx, stage, contiguity, negated, self._stage, self.spans)
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
            # why 'first and': a group's first stage has a previous event unless the group begins the pattern
            inner = tuple(self._stage(s, first and i == 0) for i, s in enumerate(stage.group.stages))
            self._check_group(stage, negated)
            name = _group_name(inner)
            self.spans[name] = stage.group.span  # the engine reports a group's problems by this name
            return seq.GroupStage(
                name,
                inner,
                contiguity,
                quant,
                until,
                window_ms(self.ctx, stage.within),
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
            window_ms(ctx, stage.within),
            window_ms(ctx, stage.within_previous),
        )


def _group_name(stages: Sequence[seq.Element]) -> str:
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
