"""A pattern's ``measures`` as ``MATCH_RECOGNIZE`` ``MEASURES`` (no PyFlink needed): what translates.

Each measure (:class:`~workbench.engine.nfa.measures.Measure`) becomes one SQL expression over the
stages' pattern variables, written as ``m<i>`` (the user's name is never pasted into the query; the
results are renamed back in declared order). What translates, with the engine's semantics:

* navigation ``first(matched('a')).x`` / ``last(matched('a'), n).x`` as ``FIRST(V.x)`` /
  ``LAST(V.x, n - 1)`` (NULL when the stage has fewer events, as locally);
* aggregates over a stage's field, ``sum avg min max count`` (NULLs skipped; ``sum`` of nothing is
  0 as locally, ``avg`` is always a float), and ``count(matched('a'))`` (the stage's events);
* the universal variable ``matched('*')`` (SQL's unprefixed column), only where every row of the
  SQL match is an event of the detection: no ``followed by`` gaps and no loop that skips events;
* field reads ``time``/``t``, ``seq``, ``type`` and event fields; literals; ``+ - *``; ``/`` (a
  float, NULL for a zero divisor: the engine's value after its division error); comparisons,
  ``is None``, ``and or not``; ``x if c else y`` (``CASE``; a NULL test takes the else branch).

Everything else (user functions, ``prev``, windows, ``//``, ``%``, ``**``, reads of ``e`` or of a
negated stage, stages of a loop that skips events, named subsets (Flink SQL has no ``SUBSET``),
non-finite floats) is refused with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from workbench.engine.expr import ir, print_expr
from workbench.engine.nfa import Contiguity, SequencePattern, Stage
from workbench.engine.nfa.measures import UNIVERSAL, Measure

__all__ = ["MeasuresSql", "measures_writer"]

_NAVIGATION = {"first": "FIRST", "last": "LAST"}
_AGGREGATE = {"min": "MIN", "max": "MAX", "count": "COUNT"}
_COMPARE = {"==": "=", "!=": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">="}
#: whether a stage is a loop that skips events (its SQL variable also holds the skipped rows)
_Region = Callable[[Stage], bool]
_BOOLEAN = (ir.Compare, ir.IsNull, ir.BoolOp, ir.Unary)
#: the event's own attributes a measure may read, as table columns (``key`` has none).
_OWN = {"time": "t", "t": "t", "seq": "seq", "type": "type"}


class _Unsupported(Exception):
    """One measure has no SQL form (the message says why)."""


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def _literal(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return repr(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"the literal {value!r} (SQL has no non-finite DOUBLE literal)"
            raise _Unsupported(msg)
        # why CAST: a bare 1.5 is a DECIMAL in Flink SQL, and would come back as a Decimal
        return f"CAST({value!r} AS DOUBLE)"
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    if value is None:
        return "NULL"
    msg = f"the literal {value!r}"
    raise _Unsupported(msg)


class _MeasureSql:
    """Writes one measure's IR tree as SQL over the pattern variables ``vars_of``."""

    def __init__(
        self,
        vars_of: Mapping[str, str],
        fields: Mapping[str, str],
        universal: bool,
        strings: Collection[str],
        subsets: Collection[str] = (),
    ) -> None:
        self.subsets = subsets
        self.vars_of = vars_of
        self.fields = fields
        self.universal = universal
        self.strings = strings

    def column(self, stage: ir.Node, name: str) -> str:
        """``V.col`` (or the bare column for the universal variable) of stage ``stage``."""
        if not isinstance(stage, ir.Stage):
            msg = f"{print_expr(stage)!r} is not matched('<stage>')"
            raise _Unsupported(msg)
        if stage.stage in self.subsets:
            msg = f"subset {stage.stage!r} (Flink SQL has no SUBSET)"
            raise _Unsupported(msg)
        column = _OWN.get(name) or self.fields.get(name)
        if column is None:
            msg = f"field {name!r} is not a column of the events"
            raise _Unsupported(msg)
        if stage.stage == UNIVERSAL:
            if not self.universal:
                msg = (
                    "matched('*') in a pattern with 'followed by' gaps or a loop that skips "
                    "events (SQL's universal variable would also read the skipped rows)"
                )
                raise _Unsupported(msg)
            return _quote(column)
        var = self.vars_of.get(stage.stage)
        if var is None:
            msg = f"stage {stage.stage!r} takes no events in SQL (negated, or a loop that skips events)"
            raise _Unsupported(msg)
        return f"{var}.{_quote(column)}"

    def __call__(self, node: ir.Node) -> str:
        if isinstance(node, ir.Attr) and isinstance(node.obj, ir.Call | ir.Index):
            return self.navigation(node.obj, node.name)
        if isinstance(node, ir.Call):
            return self.aggregate(node)
        if isinstance(node, ir.Literal):
            return _literal(node.value)
        if isinstance(node, ir.Binary) and node.op == "+" and self.text(node):
            msg = f"{print_expr(node)!r} may add text (which SQL's + cannot; the engine concatenates)"
            raise _Unsupported(msg)
        if isinstance(node, ir.Binary) and node.op in ("+", "-", "*"):
            return f"({self(node.left)} {node.op} {self(node.right)})"
        if isinstance(node, ir.Binary) and node.op == "/":
            left, right = self(node.left), self(node.right)
            return f"(CAST({left} AS DOUBLE) / NULLIF(CAST({right} AS DOUBLE), 0))"
        if isinstance(node, ir.Unary) and node.op in ("-", "not"):
            return f"({'NOT ' if node.op == 'not' else '-'}{self(node.operand)})"
        if isinstance(node, ir.Compare) and node.op in _COMPARE:
            return f"({self(node.left)} {_COMPARE[node.op]} {self(node.right)})"
        if isinstance(node, ir.IsNull):
            return f"({self(node.operand)} IS {'NOT ' if node.negated else ''}NULL)"
        if isinstance(node, ir.BoolOp):
            op = " AND " if node.op == "and" else " OR "
            return "(" + op.join(self(v) for v in node.items) + ")"
        if isinstance(node, ir.IfElse) and isinstance(node.test, _BOOLEAN):
            return f"(CASE WHEN {self(node.test)} THEN {self(node.then)} ELSE {self(node.orelse)} END)"
        msg = f"{print_expr(node)!r} has no SQL form here"
        raise _Unsupported(msg)

    def text(self, node: ir.Node) -> bool:
        """Whether ``node`` reads a text literal or a field that holds text (conservatively)."""
        return any(
            (isinstance(n, ir.Literal) and isinstance(n.value, str))
            or (isinstance(n, ir.Attr) and n.name in self.strings)
            for n in ir.walk(node)
        )

    def navigation(self, obj: ir.Node, name: str) -> str:
        """``first(matched('a'), n).x`` and ``matched('a')[i].x``: ``FIRST(V.x, n - 1)`` / ``LAST``."""
        if isinstance(obj, ir.Index) and isinstance(obj.index, ir.Literal):
            i = obj.index.value
            if isinstance(i, int) and not isinstance(i, bool):
                return self.nth(obj.obj, name, "FIRST" if i >= 0 else "LAST", i if i >= 0 else -i - 1)
        if isinstance(obj, ir.Call) and obj.func in _NAVIGATION and obj.args:
            return self.nth(obj.args[0], name, _NAVIGATION[obj.func], _position(obj))
        msg = f"{print_expr(obj)}.{name} (only first/last(matched(..), n).field and matched(..)[i].field)"
        raise _Unsupported(msg)

    def nth(self, stage: ir.Node, name: str, function: str, offset: int) -> str:
        """``FIRST(V.x, offset)`` or ``LAST(V.x, offset)``: NULL when the stage has fewer events."""
        return f"{function}({self.column(stage, name)}{f', {offset}' if offset else ''})"

    def aggregate(self, call: ir.Call) -> str:
        """``sum(matched('a').x)`` and the others, with the engine's empty and type rules."""
        arg = call.args[0] if len(call.args) == 1 else None
        if call.func == "count" and isinstance(arg, ir.Stage):
            return f"COUNT({self.column(arg, 'seq')})"
        if call.func in _NAVIGATION and call.args and isinstance(call.args[0], ir.Attr):
            # first(matched('*').price): navigation over the values, NULLs included, as locally
            attr = call.args[0]
            return self.nth(attr.obj, attr.name, _NAVIGATION[call.func], _position(call))
        if not isinstance(arg, ir.Attr) or call.func not in ("sum", "avg", *_AGGREGATE):
            msg = (
                f"{print_expr(call)!r} (only sum avg min max count of matched(..).field, count(matched(..)))"
            )
            raise _Unsupported(msg)
        column = self.column(arg.obj, arg.name)
        if call.func == "sum":
            return f"COALESCE(SUM({column}), 0)"  # why: the engine's sum of nothing is 0
        if call.func == "avg":
            return f"AVG(CAST({column} AS DOUBLE))"  # why: AVG of a BIGINT column is a BIGINT
        return f"{_AGGREGATE[call.func]}({column})"


def _position(call: ir.Call) -> int:
    """The offset from the end given by ``first(x, n)`` / ``last(x, n)``: ``n - 1`` (a literal)."""
    if len(call.args) == 1:
        return 0
    n = call.args[1].value if len(call.args) == 2 and isinstance(call.args[1], ir.Literal) else None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        msg = f"{print_expr(call)}: the position n must be a whole-number literal from 1"
        raise _Unsupported(msg)
    return n - 1


def measures_writer(
    pattern: SequencePattern,
    vars_of: Mapping[str, str],
    fields: Mapping[str, str],
    region: _Region,
    strings: Collection[str] = ("type",),
) -> MeasuresSql:
    """The writer of ``pattern``'s measures over its variables ``vars_of`` (``region``: whether a
    stage is a loop that skips events; ``strings``: the fields that hold text)."""
    stages = [s for s in pattern.stages if isinstance(s, Stage)]
    # The SQL match holds only the detection's events when no stage after the first has a gap
    # (relaxed contiguity, a negation) and no loop skips events.
    gapless = all(
        not s.negated and (i == 0 or s.contiguity == Contiguity.STRICT) and not region(s)
        for i, s in enumerate(stages)
    )
    readable = {name: var for name, var in vars_of.items() if not region(_stage(stages, name))}
    universal = gapless and len(stages) == len(pattern.stages)
    writer = _MeasureSql(readable, fields, universal, strings, pattern.subsets)
    return MeasuresSql(pattern.measures, writer)


def _stage(stages: Sequence[Stage], name: str) -> Stage:
    return next(s for s in stages if s.name == name)


@dataclass(frozen=True, slots=True)
class MeasuresSql:
    """A pattern's measures and their writer: why some cannot be written, and the SQL of all."""

    measures: Sequence[Measure]
    writer: _MeasureSql

    def reasons(self) -> list[str]:
        """Why some measures cannot be written as SQL ``MEASURES`` (empty: all can)."""
        reasons = []
        for m in self.measures:
            try:
                self.writer(m.expr)
            except _Unsupported as err:
                reasons.append(f"measure {m.name!r}: {err}")
        return reasons

    def columns(self) -> list[str]:
        """The measures as ``<sql> AS m<i>``, in declared order (check :meth:`reasons` first)."""
        return [f"{self.writer(m.expr)} AS m{i}" for i, m in enumerate(self.measures)]
