"""The expression IR: one small closed tree for every condition, measure and computed value.

Every node is a frozen dataclass; its ``span`` (where it came from, for errors) never takes part in
equality, so two conditions that mean the same compare equal wherever they were written. Nothing
in a tree can name Python: functions and methods are *names* resolved against fixed tables when
the tree is compiled (:mod:`workbench.engine.expr.evaluate`), attributes are event fields.

>>> Binary("+", Literal(1), Literal(2)) == Binary("+", Literal(1), Literal(2), span=SourceSpan(1, 1, 1, 6))
True
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Literal as L

from workbench.errors import SourceSpan

__all__ = [
    "ARITHMETIC",
    "COMPARISONS",
    "Attr",
    "Binary",
    "BoolOp",
    "Call",
    "Compare",
    "Comprehension",
    "Dict",
    "For",
    "IfElse",
    "Index",
    "IsNull",
    "Let",
    "ListOf",
    "Literal",
    "Method",
    "Name",
    "Node",
    "Offset",
    "Scalar",
    "Stage",
    "Target",
    "Unary",
    "Window",
    "children",
    "free_names",
    "map_children",
    "target_names",
    "walk",
]

Scalar = None | bool | int | float | str
ARITHMETIC = ("+", "-", "*", "/", "//", "%", "**")
COMPARISONS = ("==", "!=", "<", "<=", ">", ">=", "in", "not in")

#: a comprehension target: a name, or a tuple of targets (``for i, (a, b) in ...``).
Target = str | tuple["Target", ...]


@dataclass(frozen=True, slots=True)
class Node:
    """Base of every IR node: ``span`` (keyword-only) is where it came from, outside equality."""

    span: SourceSpan | None = field(default=None, compare=False, repr=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class Literal(Node):
    """A constant: ``None`` (NULL), a bool, an int, a float or a string.

    Equality includes the type (and the sign of a zero), so ``0``, ``0.0``, ``-0.0`` and ``False``
    are four different literals.
    """

    value: Scalar
    kind: str = field(init=False, repr=False)

    def __post_init__(self) -> None:
        kind = type(self.value).__name__
        if isinstance(self.value, float) and self.value == 0 and str(self.value).startswith("-"):
            kind = "-float"  # -0.0 == 0.0 in Python, but str(-0.0) is '-0.0'
        object.__setattr__(self, "kind", kind)


@dataclass(frozen=True, slots=True)
class ListOf(Node):
    """A list (or tuple) display: ``[e]``, ``('a', 'b')``."""

    items: tuple[Node, ...]
    tuple_: bool = False


@dataclass(frozen=True, slots=True)
class Dict(Node):
    """A dict display ``{k: v}`` (data such as generated test events; conditions never need one)."""

    keys: tuple[Node, ...]
    values: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Name(Node):
    """A name: ``e`` (the current event), a bound variable, an aggregate, a loop or ``let`` name."""

    name: str


@dataclass(frozen=True, slots=True)
class Let(Node):
    """``(lambda a, b: body)(x, y)``: names for values, nothing more (a parameter is never called)."""

    params: tuple[str, ...]
    args: tuple[Node, ...]
    body: Node


@dataclass(frozen=True, slots=True)
class Stage(Node):
    """The events a stage has taken so far in this partial match (``matched('a')``; never ``e``)."""

    stage: str


@dataclass(frozen=True, slots=True)
class Attr(Node):
    """``obj.name``: a field of an event (``type``, ``time``, ``key``, ``seq`` are the event's own).

    Over a list of events it is the list of their values (``sum(a.price)``); of NULL it is NULL.
    """

    obj: Node
    name: str


@dataclass(frozen=True, slots=True)
class Index(Node):
    """``obj[index]`` on a list or string; out of range is NULL."""

    obj: Node
    index: Node


@dataclass(frozen=True, slots=True)
class Unary(Node):
    """``-x``, ``+x``, ``not x``."""

    op: L["-", "+", "not"]
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary(Node):
    """Arithmetic (``+`` also joins lists and strings, ``*`` repeats them, within limits)."""

    op: L["+", "-", "*", "/", "//", "%", "**"]
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Compare(Node):
    """One comparison (a chain ``a < b < c`` is the ``and`` of its links)."""

    op: L["==", "!=", "<", "<=", ">", ">=", "in", "not in"]
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class IsNull(Node):
    """``x is None`` (``negated``: ``x is not None``)."""

    operand: Node
    negated: bool = False


@dataclass(frozen=True, slots=True)
class BoolOp(Node):
    """``and`` / ``or`` over two or more operands (three-valued: NULL is unknown)."""

    op: L["and", "or"]
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class IfElse(Node):
    """``then if test else orelse`` (a test that is not true takes ``orelse``)."""

    test: Node
    then: Node
    orelse: Node


@dataclass(frozen=True, slots=True)
class Call(Node):
    """A call of a built-in or registered function, by name only."""

    func: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Method(Node):
    """``obj.name(args)`` for one of the allowed string methods (``startswith``, ``lower``, ...)."""

    obj: Node
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class For(Node):
    """One ``for TARGET in SOURCE if COND ...`` clause of a comprehension."""

    target: Target
    source: Node
    conditions: tuple[Node, ...] = ()


@dataclass(frozen=True, slots=True)
class Comprehension(Node):
    """``[element for ...]`` or ``(element for ...)``: a list built from the clauses."""

    element: Node
    clauses: tuple[For, ...]
    generator: bool = False


@dataclass(frozen=True, slots=True)
class Offset(Node):
    """``prev(e, n)``: the key's ``n``-th event before the current one, whatever stage took it
    (SQL's ``PREV``); NULL when the key has had fewer events."""

    n: int


@dataclass(frozen=True, slots=True)
class Window(Node):
    """``avg(e.price over last 5min)``: an aggregate over a sliding window of the key's events of the
    current event's type, the current event included.

    ``size`` is milliseconds of event time (``unit="ms"``) or a number of events (``"events"``);
    with ``unit="session"`` it is a session window's gap in ms (``over session 10min``).
    """

    func: str
    value: Node
    size: int | float
    unit: L["ms", "events", "session"] = "ms"


def children(node: Node) -> Iterator[Node]:
    """The direct sub-nodes of ``node``, in source order.

    >>> [type(c).__name__ for c in children(Binary("+", Name("x"), Literal(1)))]
    ['Name', 'Literal']
    """
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                if isinstance(item, Node):
                    yield item


def map_children(node: Node, fn: Callable[[Node], Node]) -> Node:
    """``node`` with every direct sub-node replaced by ``fn(sub-node)`` (the same object if none changed).

    >>> map_children(Binary("+", Name("x"), Literal(1)), lambda n: Literal(2) if n == Name("x") else n)
    Binary(op='+', left=Literal(value=2), right=Literal(value=1))
    """
    changes: dict[str, object] = {}
    for f in fields(node):
        value = getattr(node, f.name)
        if isinstance(value, Node):
            new = fn(value)
            if new is not value:
                changes[f.name] = new
        elif isinstance(value, tuple) and any(isinstance(v, Node) for v in value):
            items = tuple(fn(v) if isinstance(v, Node) else v for v in value)
            if any(a is not b for a, b in zip(items, value, strict=True)):
                changes[f.name] = items
    # mypy checks the changes against the base class's fields (span only), not node's class
    return replace(node, **changes) if changes else node  # type: ignore[arg-type]


def walk(node: Node) -> Iterator[Node]:
    """``node`` and all its descendants, depth first, in source order."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(reversed(list(children(current))))


def target_names(target: Target) -> frozenset[str]:
    """The names a comprehension target binds (``i, (a, b)`` binds ``i``, ``a`` and ``b``)."""
    if isinstance(target, str):
        return frozenset({target})
    out: frozenset[str] = frozenset()
    for t in target:
        out |= target_names(t)
    return out


def free_names(node: Node, bound: frozenset[str] = frozenset()) -> set[str]:
    """The names ``node`` reads that no comprehension or ``let`` inside it binds.

    >>> sorted(free_names(Comprehension(Name("x"), (For("x", Name("xs")),))))
    ['xs']
    """
    if isinstance(node, Name):
        return set() if node.name in bound else {node.name}
    if isinstance(node, Let):
        out: set[str] = set()
        for a in node.args:
            out |= free_names(a, bound)
        return out | free_names(node.body, bound | frozenset(node.params))
    if isinstance(node, Comprehension):
        out = set()
        inner = bound
        for clause in node.clauses:
            out |= free_names(clause.source, inner)
            inner = inner | target_names(clause.target)
            for c in clause.conditions:
                out |= free_names(c, inner)
        return out | free_names(node.element, inner)
    out = set()
    for child in children(node):
        out |= free_names(child, bound)
    return out
