"""``backend="flink-sql"``: a sequence pattern as Flink SQL ``MATCH_RECOGNIZE``, run by the JVM.

Flink's ``MATCH_RECOGNIZE`` is executed by ``flink-cep`` itself, so where a pattern can be written in
it, the matching runs at JVM speed instead of in Python. :func:`sql_reasons` says why a pattern
cannot (empty: it can); :func:`match_recognize` writes the query; :func:`run_sql` runs it on a
local mini-cluster and returns the matches as :class:`~workbench.engine.detection.Detection`.

Expressible (everything else is refused, with the reason):

* stages that take exactly one event each (no quantifiers, no ``until``, no per-stage windows, no
  groups), conditions given as event types and/or condition strings over ``e`` using field
  access, literals, comparisons, ``and``/``or``/``not``, ``+``/``-``/``*`` (no ``matched()``, no
  calls, no aggregates);
* strict contiguity (``next``: adjacent pattern variables) and relaxed contiguity (``followed by``:
  ``A G*? B`` where the gap ``G`` takes only events that do not match ``B``, so ``B`` is the first
  match after ``A``, as in Flink CEP); a relaxed ``not followed by`` between two positive stages
  (the gap also excludes the negated condition);
* ``within`` in whole seconds, and only without timeout output (``MATCH_RECOGNIZE`` has none);
* skip strategies ``no_skip`` (for such patterns it equals ``AFTER MATCH SKIP TO NEXT ROW``),
  ``skip_to_next``, ``skip_past_last_event``, ``skip_to_first``/``skip_to_last``.

Not expressible: ``followed by any`` (non-deterministic relaxed contiguity), quantifiers and
``allow combinations``, negation with strict contiguity or at the end, iterative conditions and
aggregates, timeouts. Matches come back with the local engine's events, stages and times; instance
ids are numbered per key in emission order (the engine's numbering counts partial matches, which
SQL does not expose).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping, Sequence

from workbench.backends.base import Backend, BackendError, Input, PatternLike, RunOptions
from workbench.backends.flink import require_pyflink
from workbench.engine.clock import stamp
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.expr import ir, parse_expr, print_expr
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import AllOf, AnyOf, Contiguity, SequencePattern, Stage
from workbench.engine.runtime import RunResult
from workbench.errors import ExpressionError

__all__ = ["FlinkSqlBackend", "SqlUnsupported", "match_recognize", "run_sql", "sql_reasons"]


class SqlUnsupported(BackendError):
    """The pattern cannot be written as ``MATCH_RECOGNIZE``; the message lists why."""


_COMPARE = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
_ARITH = {"+": "+", "-": "-", "*": "*"}
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
    keep their meaning.
    """

    def __init__(self, var: str, fields: Mapping[str, str]) -> None:
        self.var = var
        self.fields = fields

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
            return f"{self.var}.{_quote(column)}"
        if isinstance(node, ir.Literal):
            value = node.value
            if isinstance(value, bool):
                return "TRUE" if value else "FALSE"
            if isinstance(value, int | float):
                return repr(value)
            if isinstance(value, str):
                return "'" + value.replace("'", "''") + "'"
            if value is None:
                return "NULL"
        msg = (
            f"{print_expr(node)!r} has no SQL form here (only fields of e, literals, "
            "comparisons, is None, and/or/not, + - *)"
        )
        raise SqlUnsupported(msg)


def _condition(condition: object, var: str, fields: Mapping[str, str]) -> str:
    if isinstance(condition, str | ir.Node):
        tree = parse_expr(condition) if isinstance(condition, str) else condition
        return _Expr(var, fields)(tree)
    if isinstance(condition, AllOf | AnyOf):
        op = " AND " if isinstance(condition, AllOf) else " OR "
        return "(" + op.join(_condition(c, var, fields) for c in condition.parts) + ")"
    msg = "a Python callable condition has no SQL form"
    raise SqlUnsupported(msg)


def _stage_condition(stage: Stage, var: str, fields: Mapping[str, str]) -> str | None:
    parts = []
    if stage.types:
        types = ", ".join("'" + t.replace("'", "''") + "'" for t in stage.types)
        parts.append(f"{var}.{_quote(fields['type'])} IN ({types})")
    if stage.where is not None:
        parts.append(_condition(stage.where, var, fields))
    return " AND ".join(parts) if parts else None


def sql_reasons(pattern: SequencePattern) -> list[str]:
    """Why ``pattern`` cannot be written as ``MATCH_RECOGNIZE`` (empty list: it can)."""
    reasons = []
    if pattern.aggregates:
        reasons.append("aggregates over matched events")
    if pattern.within_ms is not None and pattern.emit_timeouts:
        reasons.append("timed-out partial matches (MATCH_RECOGNIZE has no timeout output)")
    if pattern.within_ms is not None and pattern.within_ms % 1000:
        reasons.append(f"within {pattern.within_ms} ms (only whole seconds)")
    stages = pattern.stages
    for i, stage in enumerate(stages):
        if not isinstance(stage, Stage):
            reasons.append(f"group stage {stage.name!r}")
            continue
        q = stage.quantifier
        if (q.min, q.max, q.optional) != (1, 1, False):
            reasons.append(f"stage {stage.name!r}: quantifier (only one event per stage)")
        if stage.until is not None or stage.within_ms is not None or stage.within_prev_ms is not None:
            reasons.append(f"stage {stage.name!r}: until or per-stage window")
        if i and stage.contiguity == Contiguity.NONDETERMINISTIC_RELAXED:
            reasons.append(f"stage {stage.name!r}: 'followed by any' (non-deterministic relaxed)")
        if stage.negated:
            if i == 0 or i == len(stages) - 1:
                reasons.append(f"stage {stage.name!r}: negation at the start or the end")
            elif stage.contiguity != Contiguity.RELAXED:
                reasons.append(f"stage {stage.name!r}: 'not next' (only a relaxed 'not followed by')")
            elif isinstance(stages[i + 1], Stage) and stages[i + 1].contiguity != Contiguity.RELAXED:
                reasons.append(f"stage {stage.name!r}: negation before a non-relaxed stage")
            elif stages[i - 1].negated if isinstance(stages[i - 1], Stage) else False:
                reasons.append(f"stage {stage.name!r}: two negations in a row")
        if isinstance(stage.where, str | ir.Node):
            try:
                _condition(stage.where, "X", _AnyFields())
            except SqlUnsupported as err:
                reasons.append(f"stage {stage.name!r}: {err}")
            except ExpressionError as err:
                reasons.append(f"stage {stage.name!r}: condition does not parse: {err}")
        elif stage.where is not None and not isinstance(stage.where, AllOf | AnyOf):
            reasons.append(f"stage {stage.name!r}: a Python callable condition")
    if pattern.skip.kind in ("skip_to_first", "skip_to_last") and pattern.skip.throw_on_miss:
        reasons.append("skip strategy that throws when its stage is missing")
    return reasons


class _AnyFields(dict[str, str]):
    """Accept every field name (checking a condition's shape before the columns are known)."""

    def get(self, key: str, default: object = None) -> str:
        return key


def match_recognize(pattern: SequencePattern, table: str, fields: Mapping[str, str]) -> str:
    """The ``MATCH_RECOGNIZE`` query for ``pattern`` over ``table``.

    ``fields`` maps the names conditions use (``type``, ``time``, event fields) to the table's
    columns; the table also has ``key_id`` (the partition), ``rt`` (the event-time attribute) and
    ``seq``. Each stage's ``seq`` comes out as column ``s<i>``.

    Raises:
        SqlUnsupported: listing every reason the pattern cannot be written so.
    """
    reasons = sql_reasons(pattern)
    if reasons:
        msg = f"pattern {pattern.name!r} cannot run as MATCH_RECOGNIZE: " + "; ".join(reasons)
        raise SqlUnsupported(msg)
    positive = [s for s in pattern.stages if isinstance(s, Stage) and not s.negated]
    names = {id(s): f"V{i}" for i, s in enumerate(positive)}
    terms: list[str] = []
    defines: list[str] = []
    pending_negation: Stage | None = None
    for i, stage in enumerate(pattern.stages):
        assert isinstance(stage, Stage)
        if stage.negated:
            pending_negation = stage
            continue
        var = names[id(stage)]
        if i and (stage.contiguity == Contiguity.RELAXED or pending_negation is not None):
            # Relaxed contiguity skips the events that do not match the stage (and takes the first
            # that does), so the gap excludes the stage's condition, and a negated stage's too.
            gap = f"G{len(terms)}"
            terms.append(f"{gap}*?")
            excluded = [_stage_condition(stage, gap, fields) or "TRUE"]
            if pending_negation is not None:
                excluded.append(_stage_condition(pending_negation, gap, fields) or "TRUE")
            defines.append(f"{gap} AS " + " AND ".join(f"NOT ({c})" for c in excluded))
        pending_negation = None
        terms.append(var)
        condition = _stage_condition(stage, var, fields)
        if condition is not None:
            defines.append(f"{var} AS {condition}")
    measures = ", ".join(f"{names[id(s)]}.seq AS s{i}" for i, s in enumerate(positive))
    within = (
        "" if pattern.within_ms is None else f" WITHIN INTERVAL '{int(pattern.within_ms // 1000)}' SECOND"
    )
    skip = _skip_clause(pattern, names, positive)
    define = ("\n  DEFINE " + ",\n    ".join(defines)) if defines else "\n  DEFINE V0 AS TRUE"
    return (
        f"SELECT key_id, {', '.join(f's{i}' for i in range(len(positive)))} FROM {table}\n"
        "MATCH_RECOGNIZE (\n"
        "  PARTITION BY key_id\n"
        "  ORDER BY rt, seq\n"
        f"  MEASURES {measures}\n"
        "  ONE ROW PER MATCH\n"
        f"  AFTER MATCH {skip}\n"
        f"  PATTERN ({' '.join(terms)}){within}"
        f"{define}\n)"
    )


def _skip_clause(pattern: SequencePattern, names: Mapping[int, str], positive: Sequence[Stage]) -> str:
    """The ``AFTER MATCH`` clause of the pattern's skip strategy."""
    kind = pattern.skip.kind
    if kind in _SKIPS:
        return _SKIPS[kind]
    target = next(names[id(s)] for s in positive if s.name == pattern.skip.stage)
    return f"SKIP TO {'FIRST' if kind == 'skip_to_first' else 'LAST'} {target}"


_SQL_TYPES = {bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE", str: "STRING"}


def _columns(events: Sequence[Event]) -> dict[str, type]:
    columns: dict[str, type] = {}
    for e in events:
        for name, value in e.fields.items():
            kind = type(value) if value is not None else columns.get(name, type(None))
            seen = columns.setdefault(name, kind)
            if seen is type(None):
                columns[name] = kind
            elif kind not in (seen, type(None)) and {seen, kind} != {int, float}:
                msg = f"field {name!r} has values of types {seen.__name__} and {kind.__name__}"
                raise SqlUnsupported(msg)
            elif {seen, kind} == {int, float}:
                columns[name] = float
    for name, kind in columns.items():
        if kind not in _SQL_TYPES:
            msg = f"field {name!r} of type {kind.__name__} has no SQL column type here"
            raise SqlUnsupported(msg)
    return columns


def run_sql(pattern: SequencePattern, inputs: Iterable[Input], *, parallelism: int = 1) -> RunResult:
    """Run ``pattern`` as ``MATCH_RECOGNIZE`` over in-order events on a local mini-cluster."""
    require_pyflink()
    from pyflink.common import Row, Types
    from pyflink.table import Schema, StreamTableEnvironment

    from workbench.backends.flink.env import make_environment

    used = _used_events(pattern, inputs)
    columns = _columns(used)
    fields = {"type": "type", "time": "t", "t": "t", **{name: f"f_{name}" for name in columns}}
    keys: dict[Hashable, int] = {}
    rows = [
        Row(
            keys.setdefault(e.key, len(keys)), e.seq, e.type, int(e.time), *(e.fields.get(n) for n in columns)
        )
        for e in used
    ]
    names = ["key_id", "seq", "type", "t", *(f"f_{n}" for n in columns)]
    flink_types = [Types.LONG(), Types.LONG(), Types.STRING(), Types.LONG()]
    flink_types += [
        {bool: Types.BOOLEAN(), int: Types.LONG(), float: Types.DOUBLE(), str: Types.STRING()}[k]
        for k in columns.values()
    ]
    env = make_environment(parallelism)
    t_env = StreamTableEnvironment.create(env)
    stream = env.from_collection(rows, type_info=Types.ROW_NAMED(names, flink_types))
    schema = (
        Schema.new_builder()
        .column_by_expression("rt", "TO_TIMESTAMP_LTZ(t, 3)")
        .watermark("rt", "rt - INTERVAL '0.001' SECOND")
        .build()
    )
    t_env.create_temporary_view("cep_events", t_env.from_data_stream(stream, schema))
    query = match_recognize(pattern, "cep_events", fields)
    by_seq = {e.seq: e for e in used}
    key_of = {i: k for k, i in keys.items()}
    found = []
    with t_env.sql_query(query).execute().collect() as results:
        for row in results:
            found.append((int(row[0]), tuple(int(x) for x in row[1:])))
    found.sort(key=lambda m: (by_seq[m[1][-1]].time, m[1][-1], m[1]))
    return RunResult(_detections(pattern, found, by_seq, key_of), [], [], [])


def _used_events(pattern: SequencePattern, inputs: Iterable[Input]) -> list[Event]:
    """The stamped input events the pattern reads; refuses marks and events that go back in time."""
    events = []
    for position, item in enumerate(inputs):
        if not isinstance(item, Mapping | Event):
            msg = "flink-sql takes events only (no AdvanceTime marks)"
            raise SqlUnsupported(msg)
        events.append(stamp(item, position))
    types = compile_matcher(pattern).event_types()
    used = [e for e in events if types is None or e.type in types]
    for a, b in itertools.pairwise(used):
        if b.time < a.time:
            msg = f"flink-sql replays in-order events only (event #{b.seq} goes back in time)"
            raise SqlUnsupported(msg)
    return used


def _detections(
    pattern: SequencePattern,
    found: Sequence[tuple[int, tuple[int, ...]]],
    by_seq: Mapping[int, Event],
    key_of: Mapping[int, Hashable],
) -> list[Detection]:
    """The matches as detections, instance ids numbered per key in emission order."""
    stage_names = tuple(s.name for s in pattern.stages if isinstance(s, Stage) and not s.negated)
    detections, counters = [], dict.fromkeys(key_of, 0)
    for key_id, seqs in found:
        counters[key_id] += 1
        matched = tuple(by_seq[s] for s in seqs)
        detections.append(
            Detection(
                pattern.name,
                key_of[key_id],
                counters[key_id],
                "match",
                matched[-1].time,
                matched,
                stage_names,
            )
        )
    return detections


class FlinkSqlBackend(Backend):
    """``backend="flink-sql"``: sequence patterns as ``MATCH_RECOGNIZE`` (see the module docstring).

    Takes in-order events only, without ``AdvanceTime`` marks, ``until``, ``finish=False`` or
    tracing; returns matches (no reactions, no late events: in-order input has none).
    """

    name = "flink-sql"

    def __init__(self, parallelism: int = 1) -> None:
        self.parallelism = parallelism

    def execute(
        self, patterns: Sequence[PatternLike], inputs: Iterable[Input], options: RunOptions
    ) -> RunResult:
        """See :meth:`workbench.backends.base.Backend.run`."""
        if options.until is not None or not options.finish or options.trace:
            msg = "flink-sql runs a whole in-order replay: no until, finish=False or trace"
            raise SqlUnsupported(msg)
        events = list(inputs)
        detections: list[Detection] = []
        for pattern in patterns:
            if not isinstance(pattern, SequencePattern):
                msg = f"flink-sql runs sequence patterns only, got {type(pattern).__name__}"
                raise SqlUnsupported(msg)
            detections.extend(run_sql(pattern, events, parallelism=self.parallelism).detections)
        detections.sort(key=lambda d: (d.time, d.events[-1].seq))
        return RunResult(detections, [], [], [])
