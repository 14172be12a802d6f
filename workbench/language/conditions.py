"""Check and rewrite the condition expressions of ``%%cep`` text.

A condition is a restricted Python expression (what :func:`workbench.engine.expr.compile_expr`
accepts). Within a sequence, a stage's name stands for the events that stage has taken so far
(``DOWN`` is ``matched('DOWN')``); as in SQL's MATCH_RECOGNIZE, ``DOWN.price`` is the price of the
last event ``DOWN`` took, and inside ``DOWN``'s own condition the price of the event being tested.
Navigation helpers read the stages: ``first(DOWN)``, ``last(DOWN)`` (also ``prev(DOWN)``),
``count(DOWN)``; aggregates (``avg(DOWN.price)``) are handled by the compiler. The
result is a plain condition string for the engine, so the pattern compares equal to one built in
Python. Text without any of these shorthands is kept verbatim.

Every name is checked at definition time: unknown variables, stages and (where an ``event``
declaration gives the schema) fields are reported with the position and the nearest known name.
"""

from __future__ import annotations

import ast as pyast
import difflib
import itertools
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.engine.expr import BUILTINS, compile_expr
from workbench.errors import ExpressionError, SourceSpan
from workbench.language import ast
from workbench.language.errors import CepCompileError

__all__ = ["EVENT_ATTRIBUTES", "HELPERS", "Scope", "check_condition", "nearest"]

#: attributes every event has besides its fields.
EVENT_ATTRIBUTES = frozenset({"type", "time", "t", "key", "seq", "fields", "get"})

#: the shorthand functions rewritten by the compiler.
HELPERS = frozenset({"first", "last", "prev", "count", "avg"})

_AVG = "(lambda _v: sum(_v) / len(_v) if _v else None)"


def nearest(word: str, candidates: Collection[str]) -> str:
    """A ``" (did you mean 'x'?)"`` suffix, or ``""`` when nothing is close.

    >>> nearest("wthin", ["within", "where"])
    " (did you mean 'within'?)"
    """
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(frozen=True)
class Scope:
    """What a condition may refer to.

    Attributes:
        variables: bound variables (initiator bindings, ``@vars`` of the group).
        stages: the names of the stages of the sequence (empty for groups).
        fields: the fields ``e`` may have, when a schema is known (``None``: unchecked).
        functions: functions registered by name from Python, callable in conditions.
        event_name: the name of the current event (``e``).
    """

    variables: frozenset[str] = frozenset()
    stages: frozenset[str] = frozenset()
    fields: frozenset[str] | None = None
    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict)
    event_name: str = "e"
    current: str | None = None
    field_types: Mapping[str, str] | None = None


def _bound(node: pyast.AST) -> set[str]:
    out: set[str] = set()
    if isinstance(node, pyast.Lambda):
        out.update(a.arg for a in node.args.args)
    else:
        for gen in getattr(node, "generators", []):
            for t in pyast.walk(gen.target):
                if isinstance(t, pyast.Name):
                    out.add(t.id)
    return out


class _Sugar(pyast.NodeTransformer):
    """Expands stage names and the helper functions; records whether anything changed."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.shadow: list[set[str]] = []
        self.changed = False

    def _is_stage(self, node: pyast.AST) -> bool:
        return (
            isinstance(node, pyast.Name)
            and isinstance(node.ctx, pyast.Load)
            and node.id in self.scope.stages
            and not any(node.id in s for s in self.shadow)
        )

    def _scoped(self, node: pyast.AST) -> pyast.AST:
        self.shadow.append(_bound(node))
        try:
            return self.generic_visit(node)
        finally:
            self.shadow.pop()

    visit_Lambda = _scoped
    visit_ListComp = _scoped
    visit_SetComp = _scoped
    visit_GeneratorExp = _scoped
    visit_DictComp = _scoped

    def visit_Name(self, node: pyast.Name) -> pyast.AST:
        if self._is_stage(node):
            self.changed = True
            return pyast.Call(pyast.Name("matched", pyast.Load()), [pyast.Constant(node.id)], [])
        return node

    def visit_Attribute(self, node: pyast.Attribute) -> pyast.AST:
        if self._is_stage(node.value):
            # MATCH_RECOGNIZE: in B's own condition B.x is the event being tested; A.x elsewhere is
            # the field of the last event A took.
            assert isinstance(node.value, pyast.Name)
            self.changed = True
            if node.value.id == self.scope.current:
                return pyast.Attribute(
                    pyast.Name(self.scope.event_name, pyast.Load()), node.attr, pyast.Load()
                )
            src = pyast.Call(pyast.Name("matched", pyast.Load()), [pyast.Constant(node.value.id)], [])
            last = pyast.Subscript(src, pyast.UnaryOp(pyast.USub(), pyast.Constant(1)), pyast.Load())
            return pyast.Attribute(last, node.attr, pyast.Load())
        return self.generic_visit(node)

    def visit_Call(self, node: pyast.Call) -> pyast.AST:
        if isinstance(node.func, pyast.Name):  # a called name is a function, never a stage
            node.args = [self.visit(a) for a in node.args]
            node.keywords = [self.visit(k) for k in node.keywords]
        else:
            self.generic_visit(node)
        fn = node.func
        if (
            isinstance(fn, pyast.Name)
            and fn.id in HELPERS
            and fn.id not in self.scope.functions
            and len(node.args) == 1
            and not node.keywords
            and not any(fn.id in s for s in self.shadow)
        ):
            self.changed = True
            arg = node.args[0]
            if fn.id == "first":
                return pyast.Subscript(arg, pyast.Constant(0), pyast.Load())
            if fn.id in ("last", "prev"):
                return pyast.Subscript(arg, pyast.UnaryOp(pyast.USub(), pyast.Constant(1)), pyast.Load())
            if fn.id == "count":
                return pyast.Call(pyast.Name("len", pyast.Load()), [arg], [])
            avg = pyast.parse(_AVG, mode="eval").body
            return pyast.Call(avg, [pyast.Call(pyast.Name("list", pyast.Load()), [arg], [])], [])
        return node


def _col_span(expr: ast.Expr, text: str, node: pyast.AST | _FakeNode) -> SourceSpan:
    """The span of a Python-ast node of ``text`` in the caller's coordinates (single-line text)."""
    col = getattr(node, "col_offset", 0)
    end = getattr(node, "end_col_offset", col + 1) or col + 1
    prefix = len(text.encode("utf-8")[:col].decode("utf-8", "replace"))
    width = len(text.encode("utf-8")[col:end].decode("utf-8", "replace"))
    line = expr.span.line
    start = expr.span.column + prefix
    return SourceSpan(line, start, line, start + max(width, 1))


def check_condition(expr: ast.Expr, scope: Scope, source: str, *, what: str = "condition") -> str:
    """Check ``expr`` against ``scope`` and return the engine's condition string.

    ``source`` is the whole text in the caller's coordinates (for the caret excerpt). Raises
    :class:`CepCompileError` (a :class:`~workbench.errors.PatternError`) naming the position.
    """
    text = expr.text if "\n" not in expr.text else " ".join(p.strip() for p in expr.text.split("\n"))
    try:
        tree = pyast.parse(text, mode="eval")
    except SyntaxError as err:
        msg = f"invalid {what}: {err.msg}"
        raise CepCompileError(msg, expr.span, source) from None
    except (RecursionError, MemoryError):
        msg = f"the {what} is nested too deeply"
        raise CepCompileError(msg, expr.span, source) from None
    sugar = _Sugar(scope)
    new_tree = sugar.visit(tree)
    out = text
    if sugar.changed:
        pyast.fix_missing_locations(new_tree)
        out = pyast.unparse(new_tree)
    try:
        compiled = compile_expr(out, scope.functions)
    except (RecursionError, MemoryError):
        msg = f"the {what} is nested too deeply"
        raise CepCompileError(msg, expr.span, source) from None
    except ExpressionError as err:
        span = expr.span
        if err.span is not None and not sugar.changed:
            span = _col_span(expr, text, _FakeNode(err.span.column - 1, err.span.end_column - 1))
        first = getattr(err, "message", str(err).split("\n")[0])
        raise CepCompileError(first, span, source) from None
    known = {"matched", scope.event_name, *scope.variables, *scope.functions, *BUILTINS}
    nodes = list(pyast.walk(tree))
    bound: set[str] = set()
    for node in nodes:
        if isinstance(
            node, pyast.Lambda | pyast.ListComp | pyast.SetComp | pyast.GeneratorExp | pyast.DictComp
        ):
            bound |= _bound(node)
    for name in sorted(compiled.names - known - bound - scope.stages):
        where = next((n for n in nodes if isinstance(n, pyast.Name) and n.id == name), None)
        span = _col_span(expr, text, where) if where is not None else expr.span
        pool = sorted(known | scope.stages - set(BUILTINS) - {"matched"})
        called = any(
            isinstance(n, pyast.Call) and isinstance(n.func, pyast.Name) and n.func.id == name for n in nodes
        )
        if name in HELPERS:
            msg = f"{name}() takes one argument (a stage, e.g. {name}(A))"
        elif called:
            functions = sorted({*BUILTINS, *scope.functions})
            msg = (
                f"unknown function {name!r}{nearest(name, functions)}; a condition calls built-in "
                "functions and those registered from Python with "
                f"workbench.engine.expr.register_function({name!r}, fn)"
            )
        else:
            kinds = "variable or stage" if scope.stages else "variable"
            msg = f"unknown {kinds} {name!r}{nearest(name, pool)}"
        raise CepCompileError(msg, span, source)
    for node in nodes:
        if (
            isinstance(node, pyast.Call)
            and isinstance(node.func, pyast.Name)
            and node.func.id == "matched"
            and node.args
            and isinstance(node.args[0], pyast.Constant)
            and isinstance(node.args[0].value, str)
            and node.args[0].value not in scope.stages
        ):
            stage = node.args[0].value
            msg = f"unknown stage {stage!r}{nearest(stage, scope.stages)}"
            raise CepCompileError(msg, _col_span(expr, text, node.args[0]), source)
        if (
            scope.fields is not None
            and isinstance(node, pyast.Attribute)
            and isinstance(node.value, pyast.Name)
            and node.value.id == scope.event_name
            and node.attr not in scope.fields
            and node.attr not in EVENT_ATTRIBUTES
        ):
            hint = nearest(node.attr, scope.fields)
            msg = f"unknown field {node.attr!r}{hint}; fields: {', '.join(sorted(scope.fields))}"
            span = _col_span(expr, text, node)
            width = len(node.attr)
            span = SourceSpan(span.line, span.end_column - width, span.line, span.end_column)
            raise CepCompileError(msg, span, source)
    if scope.field_types:
        clash = _type_clash(tree, scope)
        if clash is not None:
            node, msg = clash
            raise CepCompileError(msg, _col_span(expr, text, node), source)
    return out


#: the Python types a declared field type accepts.
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "number": (int, float),
    "bool": (bool,),
}


def accepts(field_type: str, value: Any) -> bool:
    """Whether a constant ``value`` fits a declared field type (``None`` always does)."""
    if value is None:
        return True
    allowed = FIELD_TYPES.get(field_type, (object,))
    if isinstance(value, bool) and bool not in allowed:
        return False
    return isinstance(value, allowed)


def _type_clash(tree: pyast.AST, scope: Scope) -> tuple[pyast.AST, str] | None:
    """The first comparison or arithmetic that mixes a typed field with a constant of another type."""
    types = scope.field_types or {}

    def field_of(n: pyast.AST) -> str | None:
        if (
            isinstance(n, pyast.Attribute)
            and isinstance(n.value, pyast.Name)
            and n.value.id == scope.event_name
            and n.attr in types
        ):
            return n.attr
        return None

    def constants(n: pyast.AST) -> list[Any] | None:
        if isinstance(n, pyast.Constant):
            return [n.value]
        if isinstance(n, pyast.List | pyast.Tuple | pyast.Set) and all(
            isinstance(x, pyast.Constant) for x in n.elts
        ):
            return [x.value for x in n.elts if isinstance(x, pyast.Constant)]
        return None

    def clash(f: str, value: Any) -> str:
        return (
            f"type clash: field {f!r} is declared {types[f]}, compared with {type(value).__name__} {value!r}"
        )

    for node in pyast.walk(tree):
        if isinstance(node, pyast.Compare):
            items = [node.left, *node.comparators]
            for (left, right), op in zip(itertools.pairwise(items), node.ops, strict=True):
                for a, b, reverse in ((left, right, False), (right, left, True)):
                    f = field_of(a)
                    if f is None:
                        continue
                    values = constants(b)
                    if values is None:
                        continue
                    if isinstance(op, pyast.In | pyast.NotIn):
                        if not reverse and isinstance(b, pyast.Constant):
                            continue  # e.f in 'abc': substring test on a string constant
                        if reverse:  # 'x' in e.f: needs a string (or container) field
                            if types[f] != "str":
                                declared = types[f]
                                return (
                                    a,
                                    f"type clash: {values[0]!r} in e.{f}, but {f!r} is declared {declared}",
                                )
                            continue
                    for v in values:
                        if not accepts(types[f], v):
                            return a, clash(f, v)
        if isinstance(node, pyast.BinOp):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                f = field_of(a)
                if f is None or not isinstance(b, pyast.Constant) or b.value is None:
                    continue
                numeric = types[f] in ("int", "float", "number")
                if numeric and isinstance(b.value, str):
                    return a, f"type clash: field {f!r} is declared {types[f]}, combined with str {b.value!r}"
                if (
                    types[f] == "str"
                    and isinstance(b.value, int | float)
                    and not isinstance(node.op, pyast.Mult | pyast.Mod)
                ):
                    return a, f"type clash: field {f!r} is declared str, combined with a number"
    return None


@dataclass(frozen=True)
class _FakeNode:
    col_offset: int
    end_col_offset: int
