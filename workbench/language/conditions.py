"""Read the condition expressions of ``%%cep`` text into the expression IR, resolving stage names.

A condition is an expression of :mod:`workbench.engine.expr`, parsed once into its IR with spans in
the cell's coordinates. Within a sequence, a stage's name stands for the events that stage has taken
so far (``DOWN`` is ``matched('DOWN')``); as in SQL's MATCH_RECOGNIZE, ``DOWN.price`` is the price of
the last event ``DOWN`` took (``DOWN[-1].price``), inside ``DOWN``'s own condition the price of the
event being tested (``e.price``), and inside a function call the list of every ``DOWN`` price
(``first(DOWN.price)``). ``first``, ``last``, ``prev``, ``count`` and the aggregates are built-in
functions over such lists; ``avg(DOWN.price)``-style aggregates become incremental aggregates (the
compiler's ``rewrite``).

Every name is checked at definition time: unknown variables, stages, functions and (where an
``event`` declaration gives the schema) fields are reported with the position and the nearest
known name, as are constants whose type clashes with a declared field type.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace

from workbench.engine.expr import BUILTINS, compile_tree, ir, parse_expr
from workbench.errors import ExpressionError, SourceSpan
from workbench.language import ast
from workbench.language.errors import CepCompileError

__all__ = ["EVENT_ATTRIBUTES", "HELPERS", "Scope", "check_condition", "nearest"]

#: attributes every event has besides its fields.
EVENT_ATTRIBUTES = frozenset({"type", "time", "t", "key", "seq", "fields", "get"})

#: the functions over a stage's events that a stage name is most often given to.
HELPERS = frozenset({"first", "last", "prev", "count", "avg"})


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
        variables: bound variables (initiator bindings, ``@vars`` of the group, aggregates).
        stages: the names of the stages of the sequence (empty for groups).
        fields: the fields ``e`` may have, when a schema is known (``None``: unchecked).
        functions: functions registered by name from Python, callable in conditions.
        event_name: the name of the current event (``e``).
        current: the stage whose condition this is (``None``: none).
        field_types: declared field types, when known.
    """

    variables: frozenset[str] = frozenset()
    stages: frozenset[str] = frozenset()
    fields: frozenset[str] | None = None
    functions: Mapping[str, Callable[..., object]] = field(default_factory=dict)
    event_name: str = "e"
    current: str | None = None
    field_types: Mapping[str, str] | None = None


Rewrite = Callable[[ir.Node], tuple[ir.Node, frozenset[str]]]
"""A tree rewrite run before names are resolved; it returns the new tree and the names it added."""


def check_condition(
    expr: ast.Expr, scope: Scope, source: str, *, what: str = "condition", rewrite: Rewrite | None = None
) -> ir.Node:
    """Parse ``expr`` into the IR, resolve stage names, check every name; return the tree.

    ``source`` is the whole text in the caller's coordinates (for the caret excerpt); ``rewrite``
    runs on the parsed tree before stage names are resolved. Raises :class:`CepCompileError` (a
    :class:`~workbench.errors.PatternError`) naming the position.
    """
    try:
        tree = parse_expr(expr.text, origin=expr.span)
    except ExpressionError as err:
        span = err.span or expr.span
        message = getattr(err, "message", str(err)).replace("expression", what, 1)
        raise CepCompileError(message, span, source) from None
    if rewrite is not None:
        tree, added = rewrite(tree)
        scope = replace(scope, variables=scope.variables | added)
    tree = _Resolver(scope).node(tree, frozenset(), in_call=False)
    _check_names(tree, scope, source, expr.span)
    try:
        compile_tree(tree, scope.functions)
    except ExpressionError as err:
        raise CepCompileError(getattr(err, "message", str(err)), err.span or expr.span, source) from None
    if scope.field_types:
        clash = _type_clash(tree, scope)
        if clash is not None:
            node, msg = clash
            raise CepCompileError(msg, node.span or expr.span, source)
    return tree


class _Resolver:
    """Turns stage names into :class:`~workbench.engine.expr.ir.Stage` reads (outside shadowing scopes)."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    def _stage(self, node: ir.Node, bound: frozenset[str]) -> str | None:
        if isinstance(node, ir.Name) and node.name in self.scope.stages and node.name not in bound:
            return node.name
        return None

    def node(self, node: ir.Node, bound: frozenset[str], *, in_call: bool) -> ir.Node:
        stage = self._stage(node, bound)
        if stage is not None:
            return ir.Stage(stage, span=node.span)
        if isinstance(node, ir.Attr):
            stage = self._stage(node.obj, bound)
            if stage is not None:
                if stage == self.scope.current:  # MATCH_RECOGNIZE: B.x in B's own condition
                    current = ir.Name(self.scope.event_name, span=node.obj.span)
                    return ir.Attr(current, node.name, span=node.span)
                base: ir.Node = ir.Stage(stage, span=node.obj.span)
                if not in_call:  # the last event's field; as an argument, every event's
                    base = ir.Index(base, ir.Literal(-1), span=node.obj.span)
                return ir.Attr(base, node.name, span=node.span)
        if isinstance(node, ir.Let):
            args = tuple(self.node(a, bound, in_call=False) for a in node.args)
            body = self.node(node.body, bound | frozenset(node.params), in_call=False)
            return replace(node, args=args, body=body)
        if isinstance(node, ir.Comprehension):
            inner = bound
            clauses = []
            for c in node.clauses:  # a stage's field is iterated as a list: for p in A.price
                source = self.node(c.source, inner, in_call=True)
                inner = inner | ir.target_names(c.target)
                conds = tuple(self.node(x, inner, in_call=False) for x in c.conditions)
                clauses.append(replace(c, source=source, conditions=conds))
            element = self.node(node.element, inner, in_call=False)
            return replace(node, element=element, clauses=tuple(clauses))
        if isinstance(node, ir.Call):  # an argument reads a stage's whole list: sum(A.price)
            return replace(node, args=tuple(self.node(a, bound, in_call=True) for a in node.args))
        return ir.map_children(node, lambda child: self.node(child, bound, in_call=False))


def _check_names(tree: ir.Node, scope: Scope, source: str, fallback: SourceSpan) -> None:
    known = {scope.event_name, *scope.variables}
    for name in sorted(ir.free_names(tree) - known):
        where = next((n for n in ir.walk(tree) if isinstance(n, ir.Name) and n.name == name), None)
        span = where.span if where is not None and where.span is not None else fallback
        pool = sorted(known | scope.stages)
        if name in HELPERS or name in BUILTINS or name in scope.functions:
            msg = f"{name!r} is a function: call it, e.g. {name}(A)"
        else:
            kinds = "variable or stage" if scope.stages else "variable"
            hint = nearest(name, pool)
            if not hint and (scope.fields is None or name in scope.fields):  # why: 'price' for 'e.price'
                event = scope.event_name
                hint = f" (did you mean '{event}.{name}'? the event's fields are read as {event}.FIELD)"
            msg = f"unknown {kinds} {name!r}{hint}"
        raise CepCompileError(msg, span, source)
    for node in ir.walk(tree):
        if isinstance(node, ir.Stage) and node.stage not in scope.stages:
            msg = f"unknown stage {node.stage!r}{nearest(node.stage, scope.stages)}"
            raise CepCompileError(msg, node.span or fallback, source)
        if (
            scope.fields is not None
            and isinstance(node, ir.Attr)
            and node.obj == ir.Name(scope.event_name)
            and node.name not in scope.fields
            and node.name not in EVENT_ATTRIBUTES
        ):
            hint = nearest(node.name, scope.fields)
            msg = f"unknown field {node.name!r}{hint}; fields: {', '.join(sorted(scope.fields))}"
            span = node.span or fallback
            width = len(node.name)
            span = SourceSpan(span.end_line, max(1, span.end_column - width), span.end_line, span.end_column)
            raise CepCompileError(msg, span, source)


#: the Python types a declared field type accepts.
FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "str": (str,),
    "int": (int,),
    "float": (int, float),
    "number": (int, float),
    "bool": (bool,),
}


def accepts(field_type: str, value: object) -> bool:
    """Whether a constant ``value`` fits a declared field type (``None`` always does)."""
    if value is None:
        return True
    allowed = FIELD_TYPES.get(field_type, (object,))
    if isinstance(value, bool) and bool not in allowed:
        return False
    return isinstance(value, allowed)


def _type_clash(tree: ir.Node, scope: Scope) -> tuple[ir.Node, str] | None:
    """The first comparison or arithmetic that mixes a typed field with a constant of another type."""
    types = scope.field_types or {}

    def field_of(n: ir.Node) -> str | None:
        if isinstance(n, ir.Attr) and n.obj == ir.Name(scope.event_name) and n.name in types:
            return n.name
        return None

    def constants(n: ir.Node) -> list[ir.Scalar] | None:
        if isinstance(n, ir.Literal):
            return [n.value]
        if isinstance(n, ir.ListOf) and all(isinstance(x, ir.Literal) for x in n.items):
            return [x.value for x in n.items if isinstance(x, ir.Literal)]
        return None

    for node in ir.walk(tree):
        if isinstance(node, ir.Compare):
            for a, b, reverse in ((node.left, node.right, False), (node.right, node.left, True)):
                f = field_of(a)
                values = None if f is None else constants(b)
                if f is None or values is None:
                    continue
                if node.op in ("in", "not in"):
                    if not reverse and isinstance(b, ir.Literal):
                        continue  # e.f in 'abc': substring test on a string constant
                    if reverse:  # 'x' in e.f: needs a string (or container) field
                        if types[f] != "str":
                            return a, f"type clash: {values[0]!r} in e.{f}, but {f!r} is declared {types[f]}"
                        continue
                for v in values:
                    if not accepts(types[f], v):
                        return a, (
                            f"type clash: field {f!r} is declared {types[f]}, "
                            f"compared with {type(v).__name__} {v!r}"
                        )
        if isinstance(node, ir.Binary):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                f = field_of(a)
                if f is None or not isinstance(b, ir.Literal) or b.value is None:
                    continue
                numeric = types[f] in ("int", "float", "number")
                if numeric and isinstance(b.value, str):
                    return a, f"type clash: field {f!r} is declared {types[f]}, combined with str {b.value!r}"
                if types[f] == "str" and isinstance(b.value, int | float) and node.op not in ("*", "%"):
                    return a, f"type clash: field {f!r} is declared str, combined with a number"
    return None
