"""A restricted evaluator for condition expressions written in Python syntax.

Conformance cases and the Python API may give conditions as strings such as
``"e.price > matched('DOWN')[-1].price"``. :func:`compile_expr` parses the string with :mod:`ast`,
checks every node against an allow-list (literals, names, comparisons, boolean and arithmetic
operators, subscripts, comprehensions, lambdas, calls of *registered* functions and of a few
side-effect-free ``str`` methods; no dunder attributes, no imports, no assignment) and only then
compiles it. Names resolve to the variables supplied at evaluation time and to the registered
functions (``len``, ``sum``, ``min``, ``max``, ``abs``, ...). Pattern text never runs arbitrary Python.

More functions are made callable by name with :func:`register_function` (and removed with
:func:`unregister_function`); :func:`registered_functions` lists what conditions may call. A
condition compiled before a registration change keeps the functions it was compiled with.

>>> f = compile_expr("e.price > limit and e.name.startswith('a')")
>>> from workbench.engine.events import Event
>>> f({"e": Event("x", 1, None, {"price": 5, "name": "ab"}), "limit": 3})
True
"""

from __future__ import annotations

import ast
import difflib
import keyword
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import ExpressionError, SourceSpan

__all__ = [
    "BUILTINS",
    "CompiledExpr",
    "compile_expr",
    "register_function",
    "registered_functions",
    "unregister_function",
]

BUILTINS: dict[str, Callable[..., Any]] = {
    "len": len,
    "sum": sum,
    "min": min,
    "max": max,
    "abs": abs,
    "round": round,
    "any": any,
    "all": all,
    "sorted": sorted,
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "list": list,
    "tuple": tuple,
    "set": set,
    "range": range,
    "sqrt": math.sqrt,
    "log": math.log,
    "exp": math.exp,
    "isnan": math.isnan,
}

#: the names :data:`BUILTINS` starts with (a registration may replace them, never remove them).
BUILTIN_NAMES = frozenset(BUILTINS)

#: names a registered function cannot take: condition variables every pattern family binds.
RESERVED_NAMES = frozenset({"e", "matched", "True", "False", "None"})


def register_function(name: str, fn: Callable[..., Any], *, replace: bool = False) -> None:
    """Make ``fn`` callable as ``name(...)`` in every condition compiled from now on.

    >>> register_function("spread", lambda hi, lo: hi - lo, replace=True)
    >>> compile_expr("spread(3, 1) == 2")({})
    True
    >>> unregister_function("spread")

    Args:
        name: a Python identifier, not a keyword, not starting with ``_``, not ``e``/``matched``.
        fn: any callable; it runs on every evaluation, so it should be fast and side-effect free.
        replace: allow replacing a function registered under ``name`` (or a built-in one).

    Raises:
        ExpressionError: for an invalid or reserved name, a non-callable ``fn``, or a name that is
            taken (without ``replace``).
    """
    given: object = name  # checked at run time: callers may pass anything
    if not isinstance(given, str) or not name.isidentifier() or keyword.iskeyword(name):
        msg = f"cannot register a condition function named {name!r}: the name must be a Python identifier"
        raise ExpressionError(msg)
    if name.startswith("_") or name in RESERVED_NAMES:
        msg = f"cannot register a condition function named {name!r}: the name is reserved"
        raise ExpressionError(msg)
    target: object = fn
    if not callable(target):
        msg = f"register_function({name!r}, ...) needs a callable, got {type(target).__name__}"
        raise ExpressionError(msg)
    if name in BUILTINS and BUILTINS[name] is not fn and not replace:
        what = "a built-in" if name in BUILTIN_NAMES else "a"
        msg = f"{what} condition function named {name!r} exists already; pass replace=True to replace it"
        raise ExpressionError(msg)
    BUILTINS[name] = fn


def unregister_function(name: str) -> None:
    """Remove a function registered with :func:`register_function` (built-in ones stay).

    Raises:
        ExpressionError: when no function called ``name`` was registered (with the nearest name).
    """
    registered = sorted(set(BUILTINS) - BUILTIN_NAMES)
    if name in BUILTIN_NAMES:
        msg = f"{name!r} is a built-in condition function and cannot be unregistered"
        raise ExpressionError(msg)
    if name not in BUILTINS:
        close = difflib.get_close_matches(name, registered, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        msg = f"no condition function named {name!r} is registered{hint}"
        raise ExpressionError(msg)
    del BUILTINS[name]


def registered_functions() -> dict[str, Callable[..., Any]]:
    """A copy of the table of functions conditions may call (built-in and registered)."""
    return dict(BUILTINS)


SAFE_METHODS = frozenset(
    {
        "startswith", "endswith", "lower", "upper", "strip", "lstrip", "rstrip", "split", "find",
        "count", "replace", "isdigit", "isalpha", "get", "keys", "values", "items", "index",
    }
)  # fmt: skip

_ALLOWED_NODES: tuple[type[ast.AST], ...] = (
    ast.Expression, ast.BoolOp, ast.And, ast.Or, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Div,
    ast.FloorDiv, ast.Mod, ast.Pow, ast.UnaryOp, ast.Not, ast.USub, ast.UAdd, ast.Compare, ast.Eq,
    ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE, ast.In, ast.NotIn, ast.Is, ast.IsNot, ast.IfExp,
    ast.Call, ast.Name, ast.Load, ast.Store, ast.Constant, ast.Attribute, ast.Subscript, ast.Slice,
    ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.GeneratorExp,
    ast.DictComp, ast.comprehension, ast.Lambda, ast.arguments, ast.arg, ast.keyword, ast.Starred,
)  # fmt: skip


@dataclass(frozen=True)
class CompiledExpr:
    """A checked, compiled expression; call it with a mapping of variables."""

    source: str
    names: frozenset[str]
    functions: Mapping[str, Callable[..., Any]] = field(default_factory=dict, repr=False)
    _code: Any = field(default=None, repr=False, compare=False)

    def __call__(self, variables: Mapping[str, Any]) -> Any:
        env: dict[str, Any] = {"__builtins__": {}}
        env.update(self.functions)
        env.update(variables)
        return eval(self._code, env)


def _span(node: ast.AST) -> SourceSpan:
    line = getattr(node, "lineno", 1)
    col = getattr(node, "col_offset", 0) + 1
    return SourceSpan(line, col, getattr(node, "end_lineno", line), getattr(node, "end_col_offset", col) + 1)


def compile_expr(source: str, functions: Mapping[str, Callable[..., Any]] | None = None) -> CompiledExpr:
    """Check ``source`` against the allow-list and compile it.

    ``functions`` extends (or overrides) :data:`BUILTINS`. Free names other than functions are the
    variables the caller must supply (``CompiledExpr.names``).

    Raises :class:`~workbench.errors.ExpressionError` with a caret for a syntax error or a
    construct outside the subset.
    """
    funcs = dict(BUILTINS)
    if functions:
        funcs.update(functions)
    try:
        tree = ast.parse(source.strip(), mode="eval")
    except SyntaxError as err:
        span = SourceSpan(err.lineno or 1, err.offset or 1, err.lineno or 1, (err.offset or 1) + 1)
        msg = f"invalid condition: {err.msg}"
        raise ExpressionError(msg, source=source.strip(), span=span) from None
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Lambda | ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            bound.update(_bound_names(node))
    names: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, _ALLOWED_NODES):
            msg = f"{type(node).__name__} is not allowed in a condition"
            raise ExpressionError(msg, source=source.strip(), span=_span(node))
        if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
            msg = f"attribute {node.attr!r} is not allowed in a condition"
            raise ExpressionError(msg, source=source.strip(), span=_span(node))
        if isinstance(node, ast.Name) and node.id.startswith("__"):
            msg = f"name {node.id!r} is not allowed in a condition"
            raise ExpressionError(msg, source=source.strip(), span=_span(node))
        if isinstance(node, ast.Call):
            fn = node.func
            if isinstance(fn, ast.Attribute):
                if fn.attr not in SAFE_METHODS:
                    msg = f"method {fn.attr!r} is not allowed; allowed: {', '.join(sorted(SAFE_METHODS))}"
                    raise ExpressionError(msg, source=source.strip(), span=_span(fn))
            elif isinstance(fn, ast.Name):
                if fn.id not in funcs and fn.id not in bound:
                    # may be a variable bound to a callable at evaluation time (e.g. ``matched``)
                    names.add(fn.id)
            elif not isinstance(fn, ast.Lambda):
                msg = "only named functions, lambdas and string methods can be called"
                raise ExpressionError(msg, source=source.strip(), span=_span(fn))
        if (
            isinstance(node, ast.Name)
            and isinstance(node.ctx, ast.Load)
            and node.id not in funcs
            and node.id not in bound
        ):
            names.add(node.id)
    code = compile(tree, "<condition>", "eval")
    return CompiledExpr(source, frozenset(names), funcs, code)


def _bound_names(node: ast.AST) -> set[str]:
    out: set[str] = set()
    if isinstance(node, ast.Lambda):
        out.update(a.arg for a in node.args.args)
    else:
        for gen in getattr(node, "generators", []):
            for t in ast.walk(gen.target):
                if isinstance(t, ast.Name):
                    out.add(t.id)
    return out
