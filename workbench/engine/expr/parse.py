"""Read expression text into the IR, once, with a span on every node.

The text is the dialect shared by the Python API, conformance cases and (after the language
resolves stage names) ``%%cep`` conditions: Python *syntax*, of which only a closed subset has a
meaning here. Python's own parser only tokenises and builds a syntax tree (nothing is evaluated);
:func:`parse_expr` then converts the allowed nodes into :mod:`workbench.engine.expr.ir` and
rejects everything else, naming the construct, the line and the column.

>>> parse_expr("e.price > matched('a')[-1].price * 1.2")  # doctest: +ELLIPSIS
Compare(op='>', left=Attr(obj=Name(name='e'), name='price'), right=Binary(op='*', ...))
"""

from __future__ import annotations

import ast
import sys

from workbench.engine.expr import ir
from workbench.engine.expr.durations import DurationMarks, duration_marks
from workbench.engine.expr.limits import MAX_DEPTH, MAX_LITERAL, MAX_TEXT
from workbench.engine.expr.stream import (
    MAX_OFFSET,
    MAX_WINDOW_EVENTS,
    WINDOW_FUNCTIONS,
    Marks,
    Unit,
    window_marks,
)
from workbench.errors import ExpressionError, SourceSpan

__all__ = ["STRING_METHODS", "parse_expr"]

#: methods a condition may call, on strings only (``get`` also reads an event's field).
STRING_METHODS = frozenset(
    {
        "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "split", "find",
        "count", "replace", "isdigit", "isalpha", "isnumeric", "get", "title", "casefold",
    }
)  # fmt: skip

_BINARY: dict[type[ast.operator], str] = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
    ast.Pow: "**",
}  # fmt: skip
_COMPARE: dict[type[ast.cmpop], str] = {
    ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=",
    ast.In: "in", ast.NotIn: "not in",
}  # fmt: skip
_REFUSED: dict[type[ast.AST], str] = {
    ast.Lambda: "a lambda is only allowed applied at once, as (lambda a: ...)(value)",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.Starred: "* unpacking is not allowed",
    ast.SetComp: "set comprehensions are not allowed (use a list)",
    ast.DictComp: "dict comprehensions are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
    ast.Slice: "slices are not allowed (index one element, e.g. a[0] or a[-1])",
}


def parse_expr(text: str, *, origin: SourceSpan | None = None) -> ir.Node:
    """Parse ``text`` into an IR tree, or raise :class:`ExpressionError` with line and column.

    ``origin`` is where ``text`` starts in a larger source (a ``%%cep`` cell); spans are then in
    that source's coordinates.
    """
    given: object = text
    if not isinstance(given, str):
        msg = f"an expression must be text, got {type(given).__name__}"
        raise ExpressionError(msg)
    if len(text) > MAX_TEXT:
        msg = f"the expression is {len(text)} characters long; the limit is {MAX_TEXT}"
        raise ExpressionError(msg, span=_place(SourceSpan(1, MAX_TEXT, 1, MAX_TEXT + 1), 0, text, origin))
    stripped = text.strip()
    lead = len(text) - len(text.lstrip())
    if not stripped:
        msg = "empty expression"
        raise ExpressionError(msg, source=text, span=SourceSpan(1, 1, 1, 2))
    body = stripped if "\n" not in stripped else "(" + stripped + ")"
    shift = 0 if body is stripped else -1
    body, marks = window_marks(body)  # ``over last 5min`` is not Python: blanked, and remembered
    body, durations = duration_marks(body)  # ``5min`` alone is no Python either
    try:
        tree = ast.parse(body, mode="eval")
    except SyntaxError as err:
        col = max(1, (err.offset or 1) + shift)
        span = SourceSpan(err.lineno or 1, col, err.lineno or 1, col + 1)
        detail = err.msg
        if "integer string conversion" in detail:  # why: Python's advice (sys, hex) does not apply here
            detail = f"a whole number has more than {sys.get_int_max_str_digits()} digits"
        msg = f"invalid expression: {detail}"
        raise ExpressionError(msg, source=stripped, span=_place(span, lead, text, origin)) from None
    except (RecursionError, MemoryError, ValueError) as err:
        msg = f"the expression cannot be read: {type(err).__name__}" + (
            f" (nested more than {MAX_DEPTH} deep?)" if not isinstance(err, ValueError) else f": {err}"
        )
        span = _place(SourceSpan(1, 1, 1, 2), lead, text, origin)
        raise ExpressionError(msg, source=stripped[:200] if origin is None else None, span=span) from None
    reader = _Reader(body, stripped, lead, shift, text, origin)
    reader.marks = marks
    reader.durations = durations
    out = reader.read(tree.body, 0, frozenset())
    if reader.marks:  # a window clause that is not the one argument of an aggregate call
        line, col = min(reader.marks)
        span = _place(SourceSpan(line, col + 1 + shift, line, col + 10 + shift), lead, text, origin)
        msg = "'over last ...' follows the only argument of an aggregate: avg(e.price over last 5min)"
        raise ExpressionError(msg, source=text if origin is None else None, span=span)
    return out


def _place(span: SourceSpan, lead: int, text: str, origin: SourceSpan | None) -> SourceSpan:
    """Move a span of the stripped text to ``text``'s (or ``origin``'s) coordinates."""
    if span.line == 1:
        prefix = text[:lead]
        line_shift = prefix.count("\n")
        col_shift = lead - (prefix.rfind("\n") + 1)
        span = SourceSpan(
            span.line + line_shift,
            span.column + col_shift,
            span.end_line + line_shift,
            span.end_column + (col_shift if span.end_line == 1 else 0),
        )
    if origin is None:
        return span
    if span.line == 1:
        col = origin.column - 1
        end = span.end_column + (col if span.end_line == 1 else 0)
        return SourceSpan(origin.line, span.column + col, origin.line + span.end_line - 1, end)
    return SourceSpan(
        origin.line + span.line - 1, span.column, origin.line + span.end_line - 1, span.end_column
    )


class _Reader:
    """Converts one parsed Python expression into IR nodes (a closed, explicit mapping)."""

    def __init__(
        self, body: str, stripped: str, lead: int, shift: int, text: str, origin: SourceSpan | None
    ) -> None:
        self.lines = body.splitlines() or [""]
        self.stripped = stripped
        self.lead = lead
        self.shift = shift
        self.text = text
        self.origin = origin
        self.marks: Marks = {}
        self.durations: DurationMarks = {}

    # ------------------------------------------------------------------ positions and errors
    def _col(self, line: int, byte_offset: int) -> int:
        raw = self.lines[line - 1].encode("utf-8") if 0 < line <= len(self.lines) else b""
        return len(raw[:byte_offset].decode("utf-8", "replace")) + 1

    def span(self, node: ast.AST) -> SourceSpan:
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", line) or line
        col = self._col(line, getattr(node, "col_offset", 0))
        end = self._col(end_line, getattr(node, "end_col_offset", 0) or 0)
        shift = self.shift if line == 1 else 0
        end_shift = self.shift if end_line == 1 else 0
        local = SourceSpan(line, max(1, col + shift), end_line, max(col + shift + 1, end + end_shift))
        return _place(local, self.lead, self.text, self.origin)

    def fail(self, message: str, node: ast.AST) -> ExpressionError:
        span = self.span(node)
        source = self.text if self.origin is None else None
        return ExpressionError(message, source=source, span=span)

    # ------------------------------------------------------------------ conversion
    def read(self, node: ast.AST, depth: int, bound: frozenset[str]) -> ir.Node:
        if depth > MAX_DEPTH:
            msg = f"the expression is nested more than {MAX_DEPTH} deep"
            raise self.fail(msg, node)
        refused = _REFUSED.get(type(node))
        if refused is not None:
            raise self.fail(refused, node)
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            msg = f"{type(node).__name__} is not part of the expression language"
            raise self.fail(msg, node)
        out: ir.Node = method(node, depth + 1, bound)
        return out

    def _all(self, nodes: list[ast.expr], depth: int, bound: frozenset[str]) -> tuple[ir.Node, ...]:
        return tuple(self.read(n, depth, bound) for n in nodes)

    def _Constant(self, node: ast.Constant, depth: int, bound: frozenset[str]) -> ir.Node:
        value: object = node.value
        if value is None or isinstance(value, bool | int | float | str):
            if isinstance(value, str) and len(value) > MAX_LITERAL:
                msg = f"a string literal of {len(value)} characters; the limit is {MAX_LITERAL}"
                raise self.fail(msg, node)
            return ir.Literal(value, span=self.span(node))
        msg = f"{type(value).__name__} literals are not allowed"
        raise self.fail(msg, node)

    def _Name(self, node: ast.Name, depth: int, bound: frozenset[str]) -> ir.Node:
        place = (node.lineno, self._col(node.lineno, node.col_offset) - 1)
        if node.id == "_" and place in self.durations:  # why: a duration literal, blanked
            return ir.Literal(self.durations[place], span=self.span(node))
        if node.id.startswith("_"):
            msg = f"name {node.id!r} is not allowed (names cannot start with '_')"
            raise self.fail(msg, node)
        return ir.Name(node.id, span=self.span(node))

    def _Attribute(self, node: ast.Attribute, depth: int, bound: frozenset[str]) -> ir.Node:
        if node.attr.startswith("_"):
            msg = f"attribute {node.attr!r} is not allowed in a condition"
            raise self.fail(msg, node)
        return ir.Attr(self.read(node.value, depth, bound), node.attr, span=self.span(node))

    def _Subscript(self, node: ast.Subscript, depth: int, bound: frozenset[str]) -> ir.Node:
        obj = self.read(node.value, depth, bound)
        return ir.Index(obj, self.read(node.slice, depth, bound), span=self.span(node))

    def _UnaryOp(self, node: ast.UnaryOp, depth: int, bound: frozenset[str]) -> ir.Node:
        ops = {ast.USub: "-", ast.UAdd: "+", ast.Not: "not"}
        op = ops.get(type(node.op))
        if op is None:
            msg = "the ~ operator is not allowed"
            raise self.fail(msg, node)
        operand = self.read(node.operand, depth, bound)
        value = operand.value if isinstance(operand, ir.Literal) else None
        if op == "-" and isinstance(value, int | float) and not isinstance(value, bool):
            return ir.Literal(-value, span=self.span(node))
        return ir.Unary(op, operand, span=self.span(node))  # type: ignore[arg-type]

    def _BinOp(self, node: ast.BinOp, depth: int, bound: frozenset[str]) -> ir.Node:
        op = _BINARY.get(type(node.op))
        if op is None:
            msg = f"the {type(node.op).__name__} operator is not allowed (use and/or/not for logic)"
            raise self.fail(msg, node)
        left, right = self.read(node.left, depth, bound), self.read(node.right, depth, bound)
        return ir.Binary(op, left, right, span=self.span(node))  # type: ignore[arg-type]

    def _BoolOp(self, node: ast.BoolOp, depth: int, bound: frozenset[str]) -> ir.Node:
        items = self._all(node.values, depth, bound)
        if isinstance(node.op, ast.And):
            return ir.BoolOp("and", items, span=self.span(node))
        return ir.BoolOp("or", items, span=self.span(node))

    def _Compare(self, node: ast.Compare, depth: int, bound: frozenset[str]) -> ir.Node:
        operands = [node.left, *node.comparators]
        links: list[ir.Node] = []
        read = [self.read(n, depth, bound) for n in operands]
        for i, op in enumerate(node.ops):
            left, right = read[i], read[i + 1]
            if isinstance(op, ast.Is | ast.IsNot):
                if not (isinstance(right, ir.Literal) and right.value is None):
                    msg = "'is' only compares with None (x is None, x is not None)"
                    raise self.fail(msg, node)
                links.append(ir.IsNull(left, isinstance(op, ast.IsNot), span=self.span(node)))
                continue
            name = _COMPARE[type(op)]
            links.append(ir.Compare(name, left, right, span=self.span(node)))  # type: ignore[arg-type]
        if len(links) == 1:
            return links[0]
        return ir.BoolOp("and", tuple(links), span=self.span(node))

    def _IfExp(self, node: ast.IfExp, depth: int, bound: frozenset[str]) -> ir.Node:
        return ir.IfElse(
            self.read(node.test, depth, bound),
            self.read(node.body, depth, bound),
            self.read(node.orelse, depth, bound),
            span=self.span(node),
        )

    def _List(self, node: ast.List, depth: int, bound: frozenset[str]) -> ir.Node:
        return ir.ListOf(self._all(node.elts, depth, bound), span=self.span(node))

    def _Tuple(self, node: ast.Tuple, depth: int, bound: frozenset[str]) -> ir.Node:
        return ir.ListOf(self._all(node.elts, depth, bound), tuple_=True, span=self.span(node))

    def _Set(self, node: ast.Set, depth: int, bound: frozenset[str]) -> ir.Node:
        return ir.ListOf(self._all(node.elts, depth, bound), span=self.span(node))

    def _Dict(self, node: ast.Dict, depth: int, bound: frozenset[str]) -> ir.Node:
        if any(k is None for k in node.keys):
            msg = "** unpacking is not allowed"
            raise self.fail(msg, node)
        keys = tuple(self.read(k, depth, bound) for k in node.keys if k is not None)
        return ir.Dict(keys, self._all(node.values, depth, bound), span=self.span(node))

    def _target(self, node: ast.expr) -> ir.Target:
        if isinstance(node, ast.Name) and not node.id.startswith("_"):
            return node.id
        if isinstance(node, ast.Tuple | ast.List):
            return tuple(self._target(t) for t in node.elts)
        msg = "a comprehension binds names only (for x in ..., for i, x in ...)"
        raise self.fail(msg, node)

    def _comprehension(
        self, node: ast.ListComp | ast.GeneratorExp, depth: int, bound: frozenset[str], generator: bool
    ) -> ir.Node:
        clauses: list[ir.For] = []
        inner = bound
        for gen in node.generators:
            if gen.is_async:
                msg = "async comprehensions are not allowed"
                raise self.fail(msg, node)
            target = self._target(gen.target)
            source = self.read(gen.iter, depth, inner)
            inner = inner | ir.target_names(target)
            conds = self._all(gen.ifs, depth, inner)
            clauses.append(ir.For(target, source, conds, span=self.span(gen.target)))
        element = self.read(node.elt, depth, inner)
        return ir.Comprehension(element, tuple(clauses), generator, span=self.span(node))

    def _ListComp(self, node: ast.ListComp, depth: int, bound: frozenset[str]) -> ir.Node:
        return self._comprehension(node, depth, bound, False)

    def _GeneratorExp(self, node: ast.GeneratorExp, depth: int, bound: frozenset[str]) -> ir.Node:
        return self._comprehension(node, depth, bound, True)

    def _Call(self, node: ast.Call, depth: int, bound: frozenset[str]) -> ir.Node:
        if node.keywords:
            msg = "keyword arguments are not allowed"
            raise self.fail(msg, node.keywords[0])
        fn = node.func
        if isinstance(fn, ast.Lambda):
            return self._let(node, fn, depth, bound)
        args = self._all(node.args, depth, bound)
        if isinstance(fn, ast.Attribute):
            if fn.attr not in STRING_METHODS:
                allowed = ", ".join(sorted(STRING_METHODS))
                msg = f"method {fn.attr!r} is not allowed; allowed: {allowed}"
                raise self.fail(msg, fn)
            return ir.Method(self.read(fn.value, depth, bound), fn.attr, args, span=self.span(node))
        if not isinstance(fn, ast.Name):
            msg = "only functions named directly can be called (no calling of values)"
            raise self.fail(msg, fn)
        if fn.id in bound:
            msg = f"{fn.id!r} is a value bound in this expression and cannot be called"
            raise self.fail(msg, fn)
        if fn.id.startswith("_"):
            msg = f"name {fn.id!r} is not allowed (names cannot start with '_')"
            raise self.fail(msg, fn)
        if fn.id == "matched":
            if len(args) != 1 or not (isinstance(args[0], ir.Literal) and isinstance(args[0].value, str)):
                msg = "matched() takes one stage name as a string, e.g. matched('a')"
                raise self.fail(msg, node)
            return ir.Stage(args[0].value, span=self.span(node.args[0]))  # errors point at the name
        window = self._window_mark(node)
        if window is not None:
            return self._window(node, fn.id, args, window)
        if fn.id == "prev" and len(args) == 2 and args[0] == ir.Name("e") and "e" not in bound:
            return ir.Offset(self._offset(node.args[1], args[1]), span=self.span(node))
        return ir.Call(fn.id, args, span=self.span(node))

    # ------------------------------------------------------------------ the key's stream
    def _offset(self, where: ast.AST, n: ir.Node) -> int:
        """The constant ``n`` of ``prev(e, n)`` (the key keeps that many events)."""
        value = n.value if isinstance(n, ir.Literal) else None
        if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= MAX_OFFSET:
            msg = f"prev(e, n) takes a constant whole number n from 1 to {MAX_OFFSET}"
            raise self.fail(msg, where)
        return value

    def _window_mark(self, node: ast.Call) -> tuple[int | float, Unit] | None:
        """The window clause written after the call's last argument, if any (and consume it)."""
        if not self.marks or not node.args:
            return None
        last = node.args[-1]
        end_line = last.end_lineno or last.lineno
        after = (end_line, self._col(end_line, last.end_col_offset or 0) - 1)
        close_line = node.end_lineno or node.lineno
        close = (close_line, self._col(close_line, node.end_col_offset or 0) - 1)
        for place in sorted(self.marks):
            if after <= place < close:
                return self.marks.pop(place)
        return None

    def _window(
        self, node: ast.Call, func: str, args: tuple[ir.Node, ...], size: tuple[int | float, Unit]
    ) -> ir.Node:
        if func not in WINDOW_FUNCTIONS or len(args) != 1:
            msg = (
                f"a window ('over last ...') applies to one argument of {', '.join(sorted(WINDOW_FUNCTIONS))}"
                f", not to {func}() with {len(args)} argument(s)"
            )
            raise self.fail(msg, node)
        value, unit = size
        if value <= 0 or (unit == "events" and value > MAX_WINDOW_EVENTS):
            msg = f"a window's size is positive (at most {MAX_WINDOW_EVENTS} events), got {value}"
            raise self.fail(msg, node)
        wrong = [n for n in ir.walk(args[0]) if isinstance(n, ir.Name) and n.name != "e"]
        if wrong or any(isinstance(n, ir.Stage | ir.Offset | ir.Window) for n in ir.walk(args[0])):
            msg = "a window aggregates a value of the current event only (e.price, e)"
            raise self.fail(msg, node.args[0])
        return ir.Window(func, args[0], value, unit, span=self.span(node))

    def _let(self, node: ast.Call, fn: ast.Lambda, depth: int, bound: frozenset[str]) -> ir.Node:
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs:
            msg = "an applied lambda takes plain parameters only: (lambda a, b: ...)(x, y)"
            raise self.fail(msg, fn)
        params = tuple(p.arg for p in a.args)
        if any(p.startswith("_") for p in params) or len(set(params)) != len(params):
            msg = "lambda parameters must be distinct names that do not start with '_'"
            raise self.fail(msg, fn)
        if len(params) != len(node.args):
            msg = f"the lambda takes {len(params)} value(s) but is given {len(node.args)}"
            raise self.fail(msg, node)
        args = self._all(node.args, depth, bound)
        body = self.read(fn.body, depth, bound | frozenset(params))
        return ir.Let(params, args, body, span=self.span(node))
