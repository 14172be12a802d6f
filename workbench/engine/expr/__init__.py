"""The expression language every condition, measure and computed value is written in.

Text is parsed **once** into a closed IR (:mod:`.ir`) by :func:`parse_expr`; the tree is compiled
into closures (:mod:`.evaluate`), printed back (:func:`print_expr`), and read by every other
consumer. Nothing user-written is ever handed to ``eval``/``exec``: an expression can read event
fields, the events of stages, named values and constants, and call the built-in functions, the
allowed string methods and the functions registered by name with :func:`register_function`.
Sizes, powers and nesting are bounded (:mod:`.limits`). NULL follows SQL (see
``docs/language.md``).

>>> f = compile_expr("e.price > limit and e.name.startswith('a')")
>>> from workbench.engine.events import Event
>>> f({"e": Event("x", 1, None, {"price": 5, "name": "ab"}), "limit": 3})
True
>>> f({"e": Event("x", 1, None, {"price": float("nan"), "name": "ab"}), "limit": 3}) is None  # unknown
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TypeVar, overload

from workbench.engine.expr import ir
from workbench.engine.expr.evaluate import EMPTY_FRAME, EVENT_ATTRIBUTES, Frame, MappingFrame, Run, clean
from workbench.engine.expr.evaluate import compile_tree as _compile_tree
from workbench.engine.expr.functions import (
    BUILTIN_NAMES,
    BUILTINS,
    DATA_FUNCTIONS,
    RESERVED_NAMES,
    register_function,
    registered_functions,
    unregister_function,
)
from workbench.engine.expr.limits import MAX_ITERATIONS, MAX_SIZE
from workbench.engine.expr.parse import STRING_METHODS, parse_expr
from workbench.engine.expr.printer import print_expr
from workbench.errors import ExpressionError

_T = TypeVar("_T")

__all__ = [
    "BUILTINS",
    "BUILTIN_NAMES",
    "EMPTY_FRAME",
    "EVENT_ATTRIBUTES",
    "RESERVED_NAMES",
    "STRING_METHODS",
    "CompiledExpr",
    "Frame",
    "MappingFrame",
    "Run",
    "as_tree",
    "clean",
    "compile_expr",
    "compile_tree",
    "ir",
    "parse_expr",
    "print_expr",
    "register_function",
    "registered_functions",
    "stages_of",
    "unregister_function",
]


@dataclass(frozen=True)
class CompiledExpr:
    """A parsed and compiled expression; call it with a mapping of variables (``e``, names...).

    Attributes:
        source: the text it was parsed from (or its printed form when built from a tree).
        tree: the IR.
        names: the free names it reads (``e``, variables, aggregates).
        stages: the stages whose events it reads.
    """

    source: str
    tree: ir.Node
    names: frozenset[str]
    stages: frozenset[str]
    run: Run = field(repr=False, compare=False)
    functions: Mapping[str, Callable[..., object]] = field(default_factory=dict, repr=False, compare=False)

    def __call__(self, variables: Mapping[str, object]) -> object:
        return self.run(variables.get("e"), MappingFrame(variables), None)

    def evaluate(self, event: object, frame: Frame = EMPTY_FRAME) -> object:
        """The value for ``event`` with ``frame`` (NULL is ``None``); errors propagate."""
        return self.run(event, frame, None)


def stages_of(tree: ir.Node) -> frozenset[str]:
    """The stages a tree reads (``matched('a')`` nodes)."""
    return frozenset(n.stage for n in ir.walk(tree) if isinstance(n, ir.Stage))


def compile_tree(
    tree: ir.Node,
    functions: Mapping[str, Callable[..., object]] | None = None,
    *,
    source: str | None = None,
    data: bool = False,
) -> CompiledExpr:
    """Compile an IR tree (see :func:`compile_expr` for ``functions`` and ``data``)."""
    funcs = dict(BUILTINS)
    if functions:
        funcs.update(functions)
    iterations = MAX_SIZE if data else MAX_ITERATIONS
    run = _compile_tree(tree, funcs, iterations=iterations, data=data)
    text = source if source is not None else print_expr(tree)
    return CompiledExpr(text, tree, frozenset(ir.free_names(tree)), stages_of(tree), run, funcs)


def compile_expr(
    source: str | ir.Node,
    functions: Mapping[str, Callable[..., object]] | None = None,
    *,
    data: bool = False,
) -> CompiledExpr:
    """Parse (when text) and compile an expression.

    ``functions`` extends (or overrides) the registry for this expression. ``data=True`` also
    allows ``range``, ``enumerate`` and ``zip`` and comprehensions over any list (bounded): for
    generating test data, never for conditions, whose comprehensions iterate over a stage's
    events. Raises :class:`ExpressionError` with the line and column of what is wrong.
    """
    extra = dict(DATA_FUNCTIONS) if data else {}
    if functions:
        extra.update(functions)
    if isinstance(source, ir.Node):
        return compile_tree(source, extra, data=data)
    tree = parse_expr(source)
    try:
        return compile_tree(tree, extra, source=source.strip(), data=data)
    except ExpressionError as err:
        if err.span is not None and err.source is None:
            raise ExpressionError(_message(err), source=source.strip(), span=err.span) from None
        raise


@overload
def as_tree(value: str, element: str) -> ir.Node: ...
@overload
def as_tree(value: _T, element: str) -> _T: ...


def as_tree(value: object, element: str) -> object:
    """``value`` with text parsed into the IR (what pattern definitions store); others unchanged.

    ``element`` names where the text sits (``"channel 'c'"``) in the error, which carries the line
    and column of what is wrong.

    >>> as_tree("e.x > 1", "stage 'a'")
    Compare(op='>', left=Attr(obj=Name(name='e'), name='x'), right=Literal(value=1))
    """
    if not isinstance(value, str):
        return value
    try:
        return parse_expr(value)
    except ExpressionError as err:
        msg = f"{element}: {_message(err)}"
        raise ExpressionError(msg, source=value.strip(), span=err.span) from None


def _message(err: ExpressionError) -> str:
    message: str = getattr(err, "message", str(err).split("\n")[0])
    return message
