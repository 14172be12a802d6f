"""A condition over a whole DataFrame at once: the expression IR evaluated on columns.

A replay holds its events as columns. A condition that reads only the current event (``e.price >
110.0 and e.ip != 'x'``) can then be decided for every row in a few vectorised operations instead of
once per event. :func:`event_mask` does that, with exactly the scalar evaluator's values
(:mod:`workbench.engine.expr.evaluate`): a missing field, ``None`` and NaN are NULL, comparisons and
arithmetic with NULL are NULL, ``and``/``or``/``not`` are three-valued, and a row matches only where
the value is true.

Where the scalar evaluator could raise on some row (a string ordered against a number, a division by
zero, an integer too large for a float), or a node has no columnar form (functions, methods,
comprehensions, other stages, variables), :func:`event_mask` returns ``None`` and the caller
evaluates that condition event by event, so errors are still recorded exactly as in a stream. The
decision may depend on the data (a divisor column with a zero in it), never the values it computes.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal as L

import numpy as np
import numpy.typing as npt
import pandas as pd

from workbench.engine.expr.ir import Attr, Binary, BoolOp, Compare, IsNull, ListOf, Literal, Name, Node, Unary

__all__ = ["ColumnSource", "event_mask"]

Kind = L["num", "str", "bool", "null"]
Mask = npt.NDArray[np.bool_]
Values = npt.NDArray[np.generic]

#: beyond this, an integer may not survive the trip through a float (compare or arithmetic)
EXACT = 2**53

_ORDER = frozenset({"<", "<=", ">", ">="})

#: ``field name -> column as the events would hold it`` (``None``: no such column, so NULL)
ColumnSource = Callable[[str], "pd.Series | None"]


class Unsupported(Exception):
    """This node has no exact columnar form here: evaluate the condition event by event."""


@dataclass(frozen=True, slots=True)
class Vec:
    """A value for every row: ``values`` where ``null`` is false (``values`` there is filler).

    ``bound`` is an upper bound of the absolute integer values while ``integral`` (``math.inf`` once
    floats are involved, where numpy's IEEE arithmetic is what Python does too).
    """

    kind: Kind
    values: Values
    null: Mask
    bound: float = math.inf
    integral: bool = False
    constant: bool = False


def event_mask(tree: Node, column: ColumnSource, rows: int) -> Mask | None:
    """The rows where ``tree`` is true for the event of that row, or ``None`` (not vectorisable).

    ``column(name)`` gives ``e.name`` for every row (``"type"``, ``"time"``, ``"key"``, ``"seq"`` and
    fields), in the values the events carry (datetimes already milliseconds), or ``None`` when no
    row has it.

    >>> from workbench.engine.expr.parse import parse_expr
    >>> df = pd.DataFrame({"price": [100.0, 120.0, None], "ip": ["a", "b", "a"]})
    >>> event_mask(parse_expr("e.price > 110 or e.ip == 'a'"), df.get, 3).tolist()
    [True, True, True]
    >>> event_mask(parse_expr("e.ip > 1"), df.get, 3) is None  # str > int raises in Python
    True
    """
    try:
        value = _Vectoriser(column, rows).build(tree)
    except Unsupported:
        return None
    if value.constant:
        return None  # a condition that reads no event: the scalar path folds it once per event
    truth = _truth(value)
    return truth.values.astype(bool) & ~truth.null


# ---------------------------------------------------------------------------- building values


def _filled(kind: Kind, values: Values, null: Mask, bound: float = math.inf, integral: bool = False) -> Vec:
    """A value with harmless filler under the nulls, so operators never see a missing value."""
    if null.any():
        values = np.where(null, np.asarray(_FILLER[kind], dtype=values.dtype), values)
    return Vec(kind, values, null, bound, integral)


_FILLER: dict[Kind, object] = {"num": 1, "str": "", "bool": False, "null": 0}


def _constant(value: object, rows: int) -> Vec:
    if value is None:
        return Vec("null", np.zeros(rows, dtype=np.int8), np.ones(rows, dtype=bool), constant=True)
    if isinstance(value, bool):
        kind: Kind = "bool"
        bound, integral = math.inf, False
    elif isinstance(value, int):
        if abs(value) > EXACT:
            raise Unsupported
        kind, bound, integral = "num", float(abs(value)), True
    elif isinstance(value, float):
        kind, bound, integral = "num", math.inf, False
    elif isinstance(value, str):
        kind, bound, integral = "str", math.inf, False
    else:
        raise Unsupported
    values = np.full(rows, value, dtype=object if kind == "str" else None)
    return Vec(kind, values, np.zeros(rows, dtype=bool), bound, integral, constant=True)


def _column(s: pd.Series, rows: int) -> Vec:
    """A column as values of one kind plus a null mask, or :class:`Unsupported` (mixed or odd)."""
    null = np.asarray(pd.isna(s), dtype=bool)
    dtype = s.dtype
    if pd.api.types.is_bool_dtype(dtype):
        return _filled("bool", s.to_numpy(dtype=bool, na_value=False), null)
    if pd.api.types.is_integer_dtype(dtype):
        if pd.api.types.is_unsigned_integer_dtype(dtype) and len(s) and not null.all() and s.max() > EXACT:
            raise Unsupported  # why: as int64, an unsigned value of 2**63 or more would wrap negative
        values = s.to_numpy(dtype=np.int64, na_value=0)
        return _filled("num", values, null, _int_bound(values), True)
    if pd.api.types.is_float_dtype(dtype):
        return _filled("num", s.to_numpy(dtype=np.float64, na_value=np.nan), null)
    if not (pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype)):
        raise Unsupported
    inferred = pd.api.types.infer_dtype(s, skipna=True)
    present = s.to_numpy(dtype=object)
    if inferred == "empty":
        return Vec("null", np.zeros(rows, dtype=np.int8), np.ones(rows, dtype=bool))
    if inferred == "string":
        return _filled("str", present, null)
    if inferred == "boolean":
        return _filled("bool", np.where(null, False, present).astype(bool), null)
    if inferred == "integer":
        if any(abs(v) > EXACT for v in present[~null].tolist()):
            raise Unsupported
        values = np.where(null, 0, present).astype(np.int64)
        return _filled("num", values, null, _int_bound(values), True)
    if inferred in ("floating", "mixed-integer-float"):
        if any(isinstance(v, int) and abs(v) > EXACT for v in present[~null].tolist()):
            raise Unsupported
        return _filled("num", np.where(null, 1.0, present).astype(np.float64), null)
    raise Unsupported


def _int_bound(values: Values) -> float:
    # why Python ints: np.abs of the smallest int64 overflows to itself, a negative bound
    bound = float(max(-int(values.min()), int(values.max()))) if len(values) else 0.0
    if bound > EXACT:
        raise Unsupported
    return bound


class _Vectoriser:
    def __init__(self, column: ColumnSource, rows: int) -> None:
        self.column = column
        self.rows = rows
        self.cache: dict[str, Vec] = {}

    def build(self, node: Node) -> Vec:
        method: Callable[[Node], Vec] | None = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            raise Unsupported  # functions, methods, stages, variables, comprehensions: per event
        return method(node)

    def _Literal(self, node: Literal) -> Vec:
        return _constant(node.value, self.rows)

    def _field(self, node: Node) -> str | None:
        if isinstance(node, Attr) and node.obj == Name("e") and node.name != "fields":
            return "time" if node.name == "t" else node.name
        return None

    def _Attr(self, node: Attr) -> Vec:
        name = self._field(node)
        if name is None:
            raise Unsupported
        if name not in self.cache:
            s = self.column(name)
            self.cache[name] = (
                Vec("null", np.zeros(self.rows, dtype=np.int8), np.ones(self.rows, dtype=bool))
                if s is None
                else _column(s, self.rows)
            )
        return self.cache[name]

    def _IsNull(self, node: IsNull) -> Vec:
        name = self._field(node.operand)
        s = self.column(name) if name is not None else None
        # Why the raw column: presence needs no single kind (a mixed column is fine here)
        null = np.asarray(pd.isna(s), dtype=bool) if s is not None else self.build(node.operand).null
        out = ~null if node.negated else null
        constant = s is None and self.build(node.operand).constant
        return Vec("bool", out, np.zeros(self.rows, dtype=bool), constant=constant)

    def _Unary(self, node: Unary) -> Vec:
        v = self.build(node.operand)
        if node.op == "not":
            t = _truth(v)
            return Vec("bool", ~t.values.astype(bool), t.null, constant=v.constant)
        if v.kind == "null":
            return v
        if v.kind == "bool":  # Python's -True is -1 and +True is 1: an int
            v = Vec("num", v.values.astype(np.int64), v.null, 1.0, True, v.constant)
        if v.kind != "num":
            raise Unsupported  # -'x' raises: the per-event path records it
        if node.op == "+":
            return v
        return Vec("num", np.negative(v.values), v.null, v.bound, v.integral, v.constant)

    def _BoolOp(self, node: BoolOp) -> Vec:
        items = [self.build(i) for i in node.items]
        truths = [_truth(i) for i in items]
        # Three-valued logic: a false item decides an AND, a true one an OR, even after unknowns.
        decisive = node.op != "and"
        decided = np.zeros(self.rows, dtype=bool)
        unknown = np.zeros(self.rows, dtype=bool)
        for t in truths:
            decided |= ~t.null & (t.values.astype(bool) == decisive)
            unknown |= t.null
        null = unknown & ~decided
        values = decided if decisive else ~decided & ~null
        return Vec("bool", values, null, constant=all(i.constant for i in items))

    def _Binary(self, node: Binary) -> Vec:
        a, b = self.build(node.left), self.build(node.right)
        constant = a.constant and b.constant
        if a.kind == "null" or b.kind == "null":
            # NULL in, NULL out: the operator never runs (on a row where the other side is NULL)
            if "null" not in (a.kind, b.kind) or {a.kind, b.kind} - {"num", "null"}:
                raise Unsupported
            return Vec("null", a.values, a.null | b.null, constant=constant)
        if a.kind != "num" or b.kind != "num":
            raise Unsupported  # string concatenation and repetition keep their per-event limits
        return _arith(str(node.op), a, b, constant)

    def _Compare(self, node: Compare) -> Vec:
        a = self.build(node.left)
        if node.op in ("in", "not in"):
            return self._membership(a, node)
        return _compare(str(node.op), a, self.build(node.right))

    def _membership(self, a: Vec, node: Compare) -> Vec:
        if not isinstance(node.right, ListOf):
            raise Unsupported
        items = [self.build(i) for i in node.right.items]
        if not all(i.constant for i in items):
            raise Unsupported  # a list that varies per row
        # Why == per item: Python's `in` is `==` against each element (1 in [1.0] holds); a NULL
        # item never equals a present value.
        found = np.zeros(self.rows, dtype=bool)
        for i in items:
            if i.kind != "null":
                hit = _compare("==", a, i)
                found |= hit.values.astype(bool) & ~hit.null
        out = found if node.op == "in" else ~found
        return Vec("bool", out, a.null.copy(), constant=a.constant)


def _truth(v: Vec) -> Vec:
    """Truthiness as (bool values, null): NULL stays unknown for three-valued logic."""
    if v.kind == "bool":
        return v
    if v.kind == "num":
        return Vec("bool", v.values != 0, v.null, constant=v.constant)
    if v.kind == "str":
        return Vec("bool", np.array([len(x) > 0 for x in v.values.tolist()], dtype=bool), v.null)
    return Vec("bool", np.zeros(len(v.null), dtype=bool), v.null, constant=v.constant)


def _arith(op: str, a: Vec, b: Vec, constant: bool) -> Vec:
    integral = a.integral and b.integral
    if op in ("+", "-"):
        bound = a.bound + b.bound
    elif op == "*":
        bound = a.bound * b.bound
    elif op in ("/", "//", "%"):
        if bool((b.values[~(a.null | b.null)] == 0).any()):
            raise Unsupported  # ZeroDivisionError on some row: the per-event path records it
        if op != "/" and not integral:
            raise Unsupported  # float floor division and modulo: keep Python's own rounding
        bound = a.bound if op == "//" else b.bound if op == "%" else math.inf
    else:
        raise Unsupported  # ** keeps its per-event size limit
    if integral and op != "/" and bound > EXACT:
        raise Unsupported
    x, y = a.values, b.values
    if op in ("/", "//", "%"):
        y = np.where(b.null | a.null, 1, y)  # filler divisors under the nulls
    with np.errstate(all="ignore"):
        out = _OPS[op](x, y)
    if op == "/":
        integral = False
    return Vec("num", out, a.null | b.null, bound if integral else math.inf, integral, constant)


_OPS: dict[str, Callable[[Values, Values], Values]] = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.remainder,
}


def _compare(op: str, a: Vec, b: Vec) -> Vec:
    null = a.null | b.null
    constant = a.constant and b.constant
    if a.kind == "null" or b.kind == "null":
        return Vec("bool", np.zeros(len(null), dtype=bool), null, constant=constant)
    if a.kind != b.kind:
        if op in _ORDER:
            raise Unsupported  # Python raises TypeError: the per-event path records it
        if {a.kind, b.kind} == {"num", "bool"}:
            raise Unsupported  # True == 1 in Python; keep it exact by not vectorising
        # a string never equals a number: False (True for !=) where both are present
        return Vec("bool", np.full(len(null), op == "!="), null, constant=constant)
    if a.kind == "bool" and op in _ORDER:
        raise Unsupported
    return Vec("bool", np.asarray(_CMP[op](a.values, b.values), dtype=bool), null, constant=constant)


_CMP: dict[str, Callable[[Values, Values], Values]] = {
    "==": np.equal,
    "!=": np.not_equal,
    "<": np.less,
    "<=": np.less_equal,
    ">": np.greater,
    ">=": np.greater_equal,
}
