"""The ``MATCH_RECOGNIZE`` text of a sequence pattern (no PyFlink needed): what can be written, and how.

:func:`sql_reasons` says why a pattern cannot be written (empty: it can); :func:`match_recognize`
writes the query. Flink compiles ``MATCH_RECOGNIZE`` to its own CEP NFA: adjacent pattern variables
are strict contiguity and quantified variables are ``consecutive()`` loops, so

* ``followed by`` becomes a reluctant gap ``G*?`` of events that do not match the next stage;
* a quantified stage with strict inner contiguity is the variable with the quantifier (``V{2,}?``;
  greedy without the ``?``), a running aggregate in its ``DEFINE`` covers the current row, as the
  engine's ``including current``;
* a quantified stage with relaxed inner contiguity (the default loop: events that do not match are
  skipped) becomes a *region* ``V+?`` of any events that starts with a matching one; the next
  stage's ``DEFINE`` checks that the region ends with a matching event and holds between ``min``
  and ``max`` of them, and the match lists only those (``LISTAGG`` of their ``seq``).

SQL has no ``NO_SKIP``: its nearest strategy, ``SKIP TO NEXT ROW``, keeps one match per start
event, so ``no_skip`` is written only where a start event cannot have two matches (no quantifier).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from workbench.backends.base import BackendError
from workbench.backends.flink.sql_measures import measures_writer
from workbench.engine.expr import ir, parse_expr, print_expr
from workbench.engine.nfa import (
    AggregateSpec,
    AllOf,
    AnyOf,
    Contiguity,
    GroupStage,
    Quantifier,
    SequencePattern,
    Stage,
)
from workbench.errors import ExpressionError

__all__ = ["SqlUnsupported", "match_recognize", "positive_stages", "sql_reasons"]


class SqlUnsupported(BackendError):
    """The pattern cannot be written as ``MATCH_RECOGNIZE``; the message lists why."""


_COMPARE = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*"}
_AGGREGATES = {"count": "COUNT", "sum": "SUM", "avg": "AVG", "min": "MIN", "max": "MAX"}
_SKIPS = {
    "no_skip": "SKIP TO NEXT ROW",
    "skip_to_next": "SKIP TO NEXT ROW",
    "skip_past_last_event": "SKIP PAST LAST ROW",
}


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


class _Expr:
    """Translate one condition (an expression IR tree over ``e``) to SQL over a pattern variable.

    SQL's NULL rules are the expression language's, so a field read, a comparison and and/or/not
    keep their meaning. ``column`` writes a column read (``V.col``, or ``FIRST(V.col)``);
    ``names`` are the aggregates the condition may read, already written as SQL.
    """

    def __init__(
        self, column: Callable[[str], str], fields: Mapping[str, str], names: Mapping[str, str]
    ) -> None:
        self.column = column
        self.fields = fields
        self.names = names

    def __call__(self, node: ir.Node) -> str:
        if isinstance(node, ir.BoolOp):
            op = " AND " if node.op == "and" else " OR "
            return "(" + op.join(self(v) for v in node.items) + ")"
        if isinstance(node, ir.Unary) and node.op == "not":
            return f"(NOT {self(node.operand)})"
        if isinstance(node, ir.Unary) and node.op == "-":
            return f"(-{self(node.operand)})"
        if isinstance(node, ir.Compare):
            sql_op = _COMPARE.get(node.op)
            if sql_op is None:
                msg = f"operator {node.op!r} has no SQL form here"
                raise SqlUnsupported(msg)
            return f"({self(node.left)} {sql_op} {self(node.right)})"
        if isinstance(node, ir.IsNull):
            return f"({self(node.operand)} IS {'NOT ' if node.negated else ''}NULL)"
        if isinstance(node, ir.Binary) and node.op in _ARITH:
            return f"({self(node.left)} {_ARITH[node.op]} {self(node.right)})"
        if isinstance(node, ir.Attr) and node.obj == ir.Name("e"):
            column = self.fields.get(node.name)
            if column is None:
                msg = f"field {node.name!r} is not a column of the events"
                raise SqlUnsupported(msg)
            return self.column(_quote(column))
        if isinstance(node, ir.Name) and node.name in self.names:
            return self.names[node.name]
        if isinstance(node, ir.Literal):
            return _literal(node)
        msg = (
            f"{print_expr(node)!r} has no SQL form here (only fields of e, aggregates, literals, "
            "comparisons, is None, and/or/not, + - *)"
        )
        raise SqlUnsupported(msg)


def _literal(node: ir.Literal) -> str:
    value = node.value
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return "NULL"


def _condition(condition: object, to_sql: _Expr) -> str:
    if isinstance(condition, str | ir.Node):
        tree = parse_expr(condition) if isinstance(condition, str) else condition
        return to_sql(tree)
    if isinstance(condition, AllOf | AnyOf):
        op = " AND " if isinstance(condition, AllOf) else " OR "
        return "(" + op.join(_condition(c, to_sql) for c in condition.parts) + ")"
    msg = "a Python callable condition has no SQL form"
    raise SqlUnsupported(msg)


@dataclass(frozen=True, slots=True)
class _Writer:
    """Writes stage conditions over pattern variables (with the pattern's aggregates as SQL)."""

    fields: Mapping[str, str]
    names: Mapping[str, str]
    aggregates: Sequence[AggregateSpec] = ()

    def stage(self, stage: Stage, var: str, wrap: str = "", *, first: bool = False) -> str | None:
        """``stage``'s condition over ``var`` (each column read wrapped in ``wrap(...)`` if given).

        ``first``: as for the stage's first event, read by a gap before it: the stage's own
        aggregates (including the current event) cover that one event.
        """
        column = (lambda c: f"{wrap}({var}.{c})") if wrap else (lambda c: f"{var}.{c}")
        names = dict(self.names)
        for spec in self.aggregates if first else ():
            if spec.stage == stage.name and spec.name in names:
                field = None if spec.field is None else self.fields.get(spec.field)
                names[spec.name] = "1" if field is None else f"CAST({var}.{_quote(field)} AS DOUBLE)"
        parts = []
        if stage.types:
            # OR of equalities, not IN: Calcite turns IN inside CASE (a region's count) into a subquery.
            kind = column(_quote(self.fields["type"]))
            types = " OR ".join(f"{kind} = '" + t.replace("'", "''") + "'" for t in stage.types)
            parts.append(f"({types})")
        if stage.where is not None:
            parts.append(_condition(stage.where, _Expr(column, self.fields, names)))
        return " AND ".join(parts) if parts else None


def positive_stages(pattern: SequencePattern) -> list[Stage]:
    """The stages that take events (not negated), in pattern order."""
    return [s for s in pattern.stages if isinstance(s, Stage) and not s.negated]


def _region(stage: Stage) -> bool:
    """A quantified stage whose loop skips non-matching events (relaxed inner contiguity)."""
    return not stage.quantifier.single and stage.quantifier.inner == Contiguity.RELAXED


def _quantifier_reasons(stage: Stage, last: bool) -> list[str]:
    q = stage.quantifier
    where = f"stage {stage.name!r}"
    if q.single and not q.optional:
        return []
    reasons = []
    if q.window_ms is not None:
        reasons.append(f"{where}: a window between the loop's events")
    if q.inner == Contiguity.NONDETERMINISTIC_RELAXED:
        reasons.append(f"{where}: 'allow combinations' (non-deterministic inner contiguity)")
    if q.optional and q.min > 1:
        reasons.append(f"{where}: optional with at least {q.min} events (SQL has zero or n..m only)")
    if _region(stage) and (q.optional or q.greedy or last):
        reasons.append(f"{where}: a loop that skips events, optional, greedy or last")
    if last and q.greedy and not q.single:
        reasons.append(f"{where}: a greedy loop as the last stage")
    return reasons


def _aggregate_sql(
    pattern: SequencePattern, vars_of: Mapping[str, str], fields: Mapping[str, str]
) -> tuple[dict[str, str], list[str]]:
    """Each aggregate as a SQL aggregate over its stage's variable, and why some cannot be."""
    names: dict[str, str] = {}
    reasons: list[str] = []
    stages = {s.name: s for s in positive_stages(pattern)}
    for spec in pattern.aggregates:
        stage = stages.get(spec.stage)
        function = _AGGREGATES.get(spec.function)
        if stage is None or function is None or (spec.field is None and spec.function != "count"):
            reasons.append(f"aggregate {spec.name!r}: {spec.function} over {spec.stage!r} has no SQL form")
            continue
        if _region(stage):
            reasons.append(
                f"aggregate {spec.name!r} over stage {spec.stage!r}, a loop that skips events "
                "(which events it takes depends on the aggregate: Flink's iterative condition)"
            )
            continue
        var = vars_of[stage.name]
        if spec.field is None:
            names[spec.name] = f"{function}({var}.seq)"
            continue
        column = fields.get(spec.field)
        if column is None:
            reasons.append(f"aggregate {spec.name!r}: field {spec.field!r} is not a column of the events")
            continue
        names[spec.name] = f"{function}(CAST({var}.{_quote(column)} AS DOUBLE))"
    return names, reasons


def _aggregate_use_reasons(pattern: SequencePattern, names: Mapping[str, str]) -> list[str]:
    """An aggregate read before its stage, or in its own stage without ``including current``."""
    reasons = []
    order = [s.name for s in pattern.stages]
    for spec in pattern.aggregates:
        if spec.name not in names:
            continue
        for stage in pattern.stages:
            if not isinstance(stage, Stage) or not isinstance(stage.where, str | ir.Node):
                continue
            tree = parse_expr(stage.where) if isinstance(stage.where, str) else stage.where
            if not any(isinstance(n, ir.Name) and n.name == spec.name for n in ir.walk(tree)):
                continue
            source = next(s for s in pattern.stages if s.name == spec.stage)
            before = order.index(stage.name) < order.index(spec.stage)
            own = stage.name == spec.stage and not spec.include_current
            empty = stage.name != spec.stage and isinstance(source, Stage) and source.quantifier.optional
            if before or own or empty or stage.negated:
                reasons.append(
                    f"aggregate {spec.name!r} read in stage {stage.name!r} (SQL reads an aggregate "
                    "from its own stage on, including the current event, over a non-optional stage)"
                )
    return reasons


def sql_reasons(
    pattern: SequencePattern, fields: Mapping[str, str] | None = None, strings: Collection[str] = ("type",)
) -> list[str]:
    """Why ``pattern`` cannot be written as ``MATCH_RECOGNIZE`` (empty list: it can).

    ``strings``: the fields known to hold text (a measure that may add text is refused).
    """
    fields = _AnyFields() if fields is None else fields
    reasons = []
    if pattern.within_ms is not None and pattern.emit_timeouts:
        reasons.append("timed-out partial matches (MATCH_RECOGNIZE has no timeout output)")
    if pattern.within_ms is not None and pattern.within_ms % 1000:
        reasons.append(f"within {pattern.within_ms} ms (only whole seconds)")
    stages = pattern.stages
    groups = [s for s in stages if not isinstance(s, Stage)]
    reasons += [
        f"group stage {g.name!r}"
        if isinstance(g, GroupStage)
        else f"alternation or permute {g.name!r} (Flink SQL rejects '|' and PERMUTE)"
        for g in groups
    ]
    if groups:
        return reasons
    positive = positive_stages(pattern)
    vars_of = {s.name: f"V{i}" for i, s in enumerate(positive)}
    names, aggregate_reasons = _aggregate_sql(pattern, vars_of, fields)
    reasons += aggregate_reasons + _aggregate_use_reasons(pattern, names)
    reasons += measures_writer(pattern, vars_of, fields, _region, strings).reasons()
    writer = _Writer(fields, names)
    quantified = any(not s.quantifier.single or s.quantifier.optional for s in positive)
    for i, stage in enumerate(stages):
        assert isinstance(stage, Stage)
        reasons += _stage_reasons(stages, i, writer)
        reasons += _quantifier_reasons(stage, stage is positive[-1])
    if quantified and pattern.skip.kind == "no_skip":
        reasons.append(
            "no_skip with a quantified stage (a start event can have several matches; SQL has no "
            "NO_SKIP and SKIP TO NEXT ROW keeps only the first)"
        )
    elif quantified and pattern.skip.kind != "skip_past_last_event":
        reasons.append(
            f"{pattern.skip.kind} with a quantified stage (when matches of one start end on the "
            "same event, Flink SQL keeps a different one than the engine; skip past last event is exact)"
        )
    for before, after in itertools.pairwise(stages):
        assert isinstance(before, Stage)
        assert isinstance(after, Stage)
        loose = after.negated or after.contiguity != Contiguity.STRICT or after.quantifier.optional
        if before.quantifier.greedy and not before.quantifier.single and loose:
            reasons.append(
                f"stage {before.name!r}: a greedy loop before a 'followed by', optional or negated "
                "stage (Flink: an optional pattern cannot follow a greedy one)"
            )
    if pattern.skip.kind in ("skip_to_first", "skip_to_last"):
        if pattern.skip.throw_on_miss:
            reasons.append("skip strategy that throws when its stage is missing")
        if pattern.skip.stage not in vars_of:
            reasons.append(f"skip to stage {pattern.skip.stage!r}, which takes no events")
    return reasons


def _stage_reasons(stages: Sequence[object], i: int, writer: _Writer) -> list[str]:
    stage = stages[i]
    assert isinstance(stage, Stage)
    reasons = []
    if stage.until is not None or stage.within_ms is not None or stage.within_prev_ms is not None:
        reasons.append(f"stage {stage.name!r}: until or per-stage window")
    if i and stage.contiguity == Contiguity.NONDETERMINISTIC_RELAXED:
        reasons.append(f"stage {stage.name!r}: 'followed by any' (non-deterministic relaxed)")
    if stage.negated:
        reasons += _negation_reasons(stages, i)
    if stage.where is not None and not isinstance(stage.where, str | ir.Node | AllOf | AnyOf):
        reasons.append(f"stage {stage.name!r}: a Python callable condition")
    else:
        try:
            writer.stage(stage, "X")
        except SqlUnsupported as err:
            reasons.append(f"stage {stage.name!r}: {err}")
        except ExpressionError as err:
            reasons.append(f"stage {stage.name!r}: condition does not parse: {err}")
    return reasons


def _negation_reasons(stages: Sequence[object], i: int) -> list[str]:
    stage = stages[i]
    assert isinstance(stage, Stage)
    name = f"stage {stage.name!r}"
    if i == 0 or i == len(stages) - 1:
        return [f"{name}: negation at the start or the end"]
    before, after = stages[i - 1], stages[i + 1]
    assert isinstance(before, Stage)
    assert isinstance(after, Stage)
    if stage.contiguity != Contiguity.RELAXED:
        return [f"{name}: 'not next' (only a relaxed 'not followed by')"]
    if after.contiguity != Contiguity.RELAXED:
        return [f"{name}: negation before a non-relaxed stage"]
    if before.negated:
        return [f"{name}: two negations in a row"]
    if not (before.quantifier.single and after.quantifier.single) or stage.quantifier != Quantifier():
        return [f"{name}: negation next to a quantified stage"]
    return []


class _AnyFields(dict[str, str]):
    """Accept every field name (checking a condition's shape before the columns are known)."""

    def get(self, key: str, default: object = None) -> str:
        return key

    def __getitem__(self, key: str) -> str:
        return key


def _suffix(q: Quantifier, region: bool) -> str:
    """The SQL quantifier of a stage (``""`` for one event)."""
    if region:
        return "+?"
    if q.single:
        return "?" if q.optional else ""
    low = 0 if q.optional else q.min
    if q.max == q.min and not q.optional:
        return f"{{{q.min}}}"
    if q.max is None and low <= 1:
        text = "*" if low == 0 else "+"
    else:
        text = f"{{{low},{'' if q.max is None else q.max}}}"
    return text if q.greedy else text + "?"


def match_recognize(
    pattern: SequencePattern,
    table: str,
    fields: Mapping[str, str],
    keys: Sequence[str] = ("key_id",),
    strings: Collection[str] = ("type",),
    order: str = "rt, seq",
) -> str:
    """The ``MATCH_RECOGNIZE`` query for ``pattern`` over ``table``, rows in ``order`` per key.

    ``fields`` maps the names conditions use (``type``, ``time``, event fields) to the table's
    columns; the table also has the partition columns ``keys`` (``PARTITION BY`` them all: a
    composite key), ``rt`` (the event-time attribute), ``t`` (event time, ms) and ``seq``. The
    query selects the keys, then stage ``i``'s events as column ``s<i>``: its ``seq`` (one event)
    or the comma-separated ``seq`` list (a quantified stage; NULL when an optional stage took
    none), then measure ``i`` as column ``m<i>`` (:mod:`~workbench.backends.flink.sql_measures`;
    ``strings`` names the fields that hold text).

    Raises:
        SqlUnsupported: listing every reason the pattern cannot be written so.
    """
    reasons = sql_reasons(pattern, fields, strings)
    if reasons:
        msg = f"pattern {pattern.name!r} cannot run as MATCH_RECOGNIZE: " + "; ".join(reasons)
        raise SqlUnsupported(msg)
    positive = positive_stages(pattern)
    vars_of = {s.name: f"V{i}" for i, s in enumerate(positive)}
    writer = _Writer(fields, _aggregate_sql(pattern, vars_of, fields)[0], pattern.aggregates)
    terms: list[str] = []
    defines: list[str] = []
    pending: Stage | None = None
    region: Stage | None = None
    for i, stage in enumerate(pattern.stages):
        assert isinstance(stage, Stage)
        if stage.negated:
            pending = stage
            continue
        var = vars_of[stage.name]
        if i and (stage.contiguity == Contiguity.RELAXED or pending is not None):
            # Relaxed contiguity skips the events that do not match the stage (and takes the first
            # that does), so the gap excludes the stage's condition, and a negated stage's too.
            gap = f"G{len(terms)}"
            terms.append(f"{gap}*?")
            excluded = [writer.stage(s, gap, first=True) or "TRUE" for s in (stage, pending) if s]
            defines.append(f"{gap} AS " + " AND ".join(f"NOT ({c})" for c in excluded))
        pending = None
        terms.append(var + _suffix(stage.quantifier, _region(stage)))
        # A region's rows all check its first row; the stage after a region checks its end.
        parts = [writer.stage(stage, var, "FIRST" if _region(stage) else "")]
        if region is not None:
            parts += _region_end(region, vars_of[region.name], writer)
        region = stage if _region(stage) else None
        condition = " AND ".join(p for p in parts if p is not None)
        if condition:
            defines.append(f"{var} AS {condition}")
    measures = [f"{_measure(s, vars_of[s.name], writer)} AS s{i}" for i, s in enumerate(positive)]
    measures += measures_writer(pattern, vars_of, fields, _region).columns()
    skip = _skip_clause(pattern, vars_of)
    return _query(pattern, table, [_quote(k) for k in keys], measures, skip, terms, defines, order)


def _query(
    pattern: SequencePattern,
    table: str,
    keys: Sequence[str],
    measures: Sequence[str],
    skip: str,
    terms: Sequence[str],
    defines: Sequence[str],
    order: str,
) -> str:
    """The ``MATCH_RECOGNIZE`` statement around its parts (``measures``: each ``<sql> AS <column>``)."""
    within = (
        "" if pattern.within_ms is None else f" WITHIN INTERVAL '{int(pattern.within_ms // 1000)}' SECOND"
    )
    define = ("\n  DEFINE " + ",\n    ".join(defines)) if defines else "\n  DEFINE V0 AS TRUE"
    columns = [m.rsplit(" AS ", 1)[1] for m in measures]
    return (
        f"SELECT {', '.join([*keys, *columns])} FROM {table}\n"
        "MATCH_RECOGNIZE (\n"
        f"  PARTITION BY {', '.join(keys)}\n"
        f"  ORDER BY {order}\n"
        f"  MEASURES {', '.join(measures)}\n"
        "  ONE ROW PER MATCH\n"
        f"  AFTER MATCH {skip}\n"
        f"  PATTERN ({' '.join(terms)}){within}"
        f"{define}\n)"
    )


def _region_end(stage: Stage, var: str, writer: _Writer) -> list[str | None]:
    """A region ends with a matching event and holds ``min``..``max`` of them."""
    q = stage.quantifier
    count = f"SUM(CASE WHEN {writer.stage(stage, var) or 'TRUE'} THEN 1 ELSE 0 END)"
    parts = [writer.stage(stage, var, "LAST"), f"{count} >= {q.min}"]
    if q.max is not None:
        parts.append(f"{count} <= {q.max}")
    return parts


def _measure(stage: Stage, var: str, writer: _Writer) -> str:
    if _region(stage):
        condition = writer.stage(stage, var) or "TRUE"
        return f"LISTAGG(CASE WHEN {condition} THEN CAST({var}.seq AS STRING) END)"
    if stage.quantifier.single:
        return f"CAST({var}.seq AS STRING)"
    return f"LISTAGG(CAST({var}.seq AS STRING))"


def _skip_clause(pattern: SequencePattern, vars_of: Mapping[str, str]) -> str:
    """The ``AFTER MATCH`` clause of the pattern's skip strategy."""
    kind = pattern.skip.kind
    if kind in _SKIPS:
        return _SKIPS[kind]
    target = vars_of[str(pattern.skip.stage)]
    return f"SKIP TO {'FIRST' if kind == 'skip_to_first' else 'LAST'} {target}"
