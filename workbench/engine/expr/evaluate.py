"""Compile an IR tree into nested Python closures: the evaluator (no ``eval``, no ``exec``).

Each node becomes a function ``run(e, frame, local)``: ``e`` is the event being tested, ``frame``
gives the events each stage took and the values of named variables and aggregates
(:class:`Frame`), and ``local`` holds the names a comprehension or ``let`` bound (or ``None``).

Values follow SQL's NULL rules (``None`` is NULL): a missing field, ``None`` or NaN reads as NULL;
arithmetic with NULL is NULL; a comparison with NULL is NULL (unknown), and ``and``/``or``/``not``
are three-valued, so a condition holds only when its value is true. Errors (a string compared with
a number, a registered function that raises, a limit reached) are ordinary Python exceptions; the
matchers record them per condition and treat the event as not matching.

>>> from workbench.engine.expr.parse import parse_expr
>>> run = compile_tree(parse_expr("e.x > 1 or e.y is None"))
>>> from workbench.engine.events import Event
>>> run(Event("a", 0, None, {"x": float("nan")}), EMPTY_FRAME, None)
True
"""

from __future__ import annotations

import difflib
import functools
import inspect
import operator
from collections.abc import Callable, Mapping
from typing import Any

from workbench.engine.events import Event
from workbench.engine.expr import ir
from workbench.engine.expr.functions import BUILTINS
from workbench.engine.expr.limits import MAX_ITERATIONS, MAX_SIZE
from workbench.engine.expr.parse import STRING_METHODS
from workbench.engine.expr.printer import print_expr
from workbench.engine.expr.stream import CURSOR
from workbench.engine.expr.values import (
    ARITH,
    COMPARE,
    EMPTY_FRAME,
    EVENT_ATTRIBUTES,
    PLAIN,
    Frame,
    Locals,
    MappingFrame,
    Run,
    bind,
    call_method,
    clean,
    field_of,
    index_of,
    items_of,
    truth,
)
from workbench.errors import ExpressionError

__all__ = [
    "EMPTY_FRAME",
    "EVENT_ATTRIBUTES",
    "Frame",
    "MappingFrame",
    "Run",
    "clean",
    "compile_event_test",
    "compile_tree",
    "iterable_source",
]


def compile_tree(
    node: ir.Node,
    functions: Mapping[str, Callable[..., object]] | None = None,
    bound: frozenset[str] = frozenset(),
    *,
    iterations: int = MAX_ITERATIONS,
    data: bool = False,
) -> Run:
    """The closure that evaluates ``node``; ``functions`` defaults to the current registry.

    ``iterations`` bounds the comprehension iterations of one evaluation. A condition's
    comprehensions iterate over data the events carry only (:func:`iterable_source`);
    ``data=True`` lifts that for data expressions (generated test events). Raises
    :class:`ExpressionError` (with the node's span) for a call of an unknown function or another
    comprehension source.
    """
    functions = BUILTINS if functions is None else functions
    return _Compiler(functions, iterations, data).build(node, bound)


def compile_event_test(node: ir.Node) -> Callable[[object], object] | None:
    """A one-argument function ``f(e)`` for the commonest condition, a field of ``e`` against a
    constant (``e.price > 110.0``); ``None`` for any other shape (use :func:`compile_tree`).

    Same value as the general closure, one call instead of three: the hot path of replays.

    >>> from workbench.engine.expr.parse import parse_expr
    >>> f = compile_event_test(parse_expr("e.price > 110.0"))
    >>> f(Event("t", 0, None, {"price": 120})), f(Event("t", 0, None, {"price": float("nan")}))
    (True, None)
    """
    if not isinstance(node, ir.Compare) or node.op in ("in", "not in"):
        return None
    left, right, op = node.left, node.right, str(node.op)
    if isinstance(left, ir.Literal) and not isinstance(right, ir.Literal):
        left, right, op = right, left, _MIRROR[op]
    if not (
        isinstance(left, ir.Attr)
        and left.obj == ir.Name("e")
        and left.name not in EVENT_ATTRIBUTES
        and isinstance(right, ir.Literal)
        and right.value is not None
    ):
        return None
    name, const, impl = left.name, right.value, COMPARE[op]

    def event_test(e: object) -> object:
        if e.__class__ is not Event:  # no current event: NULL
            return None
        v = e.fields.get(name)
        t = v.__class__
        # Why these branches: NaN and None are NULL; only odd types need clean()'s slow path
        if t is float:
            if v != v:
                return None
        elif v is None:
            return None
        elif t is not int and t is not str and t is not bool:
            v = clean(v)
            if v is None:
                return None
        return impl(v, const)

    return event_test


_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


def iterable_source(node: ir.Node) -> bool:
    """Whether a condition's comprehension may iterate over ``node``: data the events carry, never
    a computed sequence. That is a stage's events (``matched('a')``, ``[e]``, a ``+`` of such
    lists), a field (``e.tags``, ``a.price`` over a stage) or a named value; not a literal, a call
    or arithmetic (``'x' * 999999`` and ``range(...)`` are what an attacker iterates).

    >>> from workbench.engine.expr.parse import parse_expr
    >>> [iterable_source(parse_expr(t)) for t in ("matched('a') + [e]", "e.tags", "'x' * 9", "'abc'")]
    [True, True, False, False]
    """
    if isinstance(node, ir.Stage | ir.ListOf | ir.Name | ir.Attr | ir.Comprehension):
        return True
    if isinstance(node, ir.Binary) and node.op == "+":
        return iterable_source(node.left) and iterable_source(node.right)
    return False


class _Compiler:
    def __init__(self, functions: Mapping[str, Callable[..., object]], iterations: int, data: bool) -> None:
        self.functions = functions
        self.iterations = iterations
        self.data = data

    def build(self, node: ir.Node, bound: frozenset[str]) -> Run:
        method: Callable[[ir.Node, frozenset[str]], Run] = getattr(self, f"_{type(node).__name__}")
        return method(node, bound)

    def _Literal(self, node: ir.Literal, bound: frozenset[str]) -> Run:
        value = node.value
        return lambda e, f, loc: value

    def _ListOf(self, node: ir.ListOf, bound: frozenset[str]) -> Run:
        items = [self.build(i, bound) for i in node.items]
        if node.tuple_:
            return lambda e, f, loc: tuple(i(e, f, loc) for i in items)
        return lambda e, f, loc: [i(e, f, loc) for i in items]

    def _Dict(self, node: ir.Dict, bound: frozenset[str]) -> Run:
        pairs = [
            (self.build(k, bound), self.build(v, bound)) for k, v in zip(node.keys, node.values, strict=True)
        ]
        return lambda e, f, loc: {k(e, f, loc): v(e, f, loc) for k, v in pairs}

    def _Name(self, node: ir.Name, bound: frozenset[str]) -> Run:
        name = node.name
        if name in bound:
            return lambda e, f, loc: loc[name]  # type: ignore[index]
        if name == "e":
            return lambda e, f, loc: e

        def lookup(e: object, f: Frame, loc: Locals) -> object:
            try:
                return clean(f.lookup(name))
            except KeyError:
                msg = f"name {name!r} is not defined here"
                raise NameError(msg) from None

        return lookup

    def _Stage(self, node: ir.Stage, bound: frozenset[str]) -> Run:
        stage = node.stage
        return lambda e, f, loc: f.matched(stage)

    def _Attr(self, node: ir.Attr, bound: frozenset[str]) -> Run:
        name = node.name
        if isinstance(node.obj, ir.Name) and node.obj.name == "e" and "e" not in bound:
            if name in EVENT_ATTRIBUTES:
                return lambda e, f, loc: field_of(e, name)

            def field_of_e(e: object, f: Frame, loc: Locals) -> object:
                # Why the inline checks: this is the hot read; only odd values take clean()'s path.
                if e.__class__ is not Event:  # no current event (data expressions): NULL
                    return field_of(e, name)
                v = e.fields.get(name)
                t = v.__class__
                if t is float:
                    return None if v != v else v
                if v is None or t in PLAIN:
                    return v
                return clean(v)

            return field_of_e
        obj = self.build(node.obj, bound)
        return lambda e, f, loc: field_of(obj(e, f, loc), name)

    def _Index(self, node: ir.Index, bound: frozenset[str]) -> Run:
        obj, idx = self.build(node.obj, bound), self.build(node.index, bound)
        return lambda e, f, loc: index_of(obj(e, f, loc), idx(e, f, loc))

    def _Unary(self, node: ir.Unary, bound: frozenset[str]) -> Run:
        inner = self.build(node.operand, bound)
        if node.op == "not":

            def not_(e: object, f: Frame, loc: Locals) -> object:
                v = inner(e, f, loc)
                return None if v is None else not v

            return not_
        sign: Callable[[Any], object] = (
            operator.neg if node.op == "-" else operator.pos
        )  # TypeError at run time

        def signed(e: object, f: Frame, loc: Locals) -> object:
            v = inner(e, f, loc)
            return None if v is None else sign(v)

        return signed

    def _Binary(self, node: ir.Binary, bound: frozenset[str]) -> Run:
        left, right, impl = self.build(node.left, bound), self.build(node.right, bound), ARITH[node.op]

        def arith(e: object, f: Frame, loc: Locals) -> object:
            a = left(e, f, loc)
            if a is None:  # Why: NULL in, NULL out (the right side cannot change that)
                return None
            b = right(e, f, loc)
            return None if b is None else impl(a, b)

        return arith

    def _Compare(self, node: ir.Compare, bound: frozenset[str]) -> Run:
        impl = COMPARE[node.op]
        right_node = node.right
        left = self.build(node.left, bound)
        if (
            isinstance(right_node, ir.Literal)
            and right_node.value is not None
            and node.op not in ("in", "not in")
        ):
            const = right_node.value

            def against_constant(e: object, f: Frame, loc: Locals) -> object:
                a = left(e, f, loc)
                return None if a is None else impl(a, const)

            return against_constant
        right = self.build(right_node, bound)

        def compare(e: object, f: Frame, loc: Locals) -> object:
            a = left(e, f, loc)
            if a is None:  # Why: a comparison with NULL is unknown, never true
                return None
            b = right(e, f, loc)
            return None if b is None else impl(a, b)

        return compare

    def _IsNull(self, node: ir.IsNull, bound: frozenset[str]) -> Run:
        inner, negated = self.build(node.operand, bound), node.negated
        return lambda e, f, loc: (inner(e, f, loc) is None) is not negated

    def _BoolOp(self, node: ir.BoolOp, bound: frozenset[str]) -> Run:
        items = [self.build(i, bound) for i in node.items]
        # An AND stops at the first false item, an OR at the first true one; both after an unknown too.
        stop_when_not = node.op == "and"

        def bool_op(e: object, f: Frame, loc: Locals) -> object:
            unknown = False
            for item in items:
                v = item(e, f, loc)
                if v is None:
                    unknown = True
                elif (not v) is stop_when_not:  # Why: this item decides the AND (false) or OR (true)
                    return not stop_when_not
            return None if unknown else stop_when_not

        return bool_op

    def _IfElse(self, node: ir.IfElse, bound: frozenset[str]) -> Run:
        test, then, orelse = (self.build(n, bound) for n in (node.test, node.then, node.orelse))
        return lambda e, f, loc: then(e, f, loc) if truth(test(e, f, loc)) else orelse(e, f, loc)

    def _function(self, name: str, node: ir.Node) -> Callable[..., object]:
        fn = self.functions.get(name)
        if fn is None:
            close = difflib.get_close_matches(name, list(self.functions), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            msg = (
                f"unknown function {name!r}{hint}; a condition calls built-in functions and those "
                f"registered from Python with workbench.engine.expr.register_function({name!r}, fn)"
            )
            raise ExpressionError(msg, span=node.span)
        return fn

    def _Call(self, node: ir.Call, bound: frozenset[str]) -> Run:
        fn = self._function(node.func, node)
        _check_arity(node, fn)
        args = [self.build(a, bound) for a in node.args]
        if len(args) == 1:
            only = args[0]
            return lambda e, f, loc: fn(only(e, f, loc))
        return lambda e, f, loc: fn(*[a(e, f, loc) for a in args])

    def _Method(self, node: ir.Method, bound: frozenset[str]) -> Run:
        if node.name not in STRING_METHODS:  # trees built in Python skip the parser's check
            msg = f"method {node.name!r} is not allowed"
            raise ExpressionError(msg, span=node.span)
        obj, name = self.build(node.obj, bound), node.name
        args = [self.build(a, bound) for a in node.args]
        return lambda e, f, loc: call_method(obj(e, f, loc), name, [a(e, f, loc) for a in args])

    def _Offset(self, node: ir.Offset, bound: frozenset[str]) -> Run:
        n, cursor = node.n, CURSOR

        def offset(e: object, f: Frame, loc: Locals) -> object:
            stream = cursor.stream
            return None if stream is None else stream.back(n)  # Why None: no key stream here, NULL

        return offset

    def _Window(self, node: ir.Window, bound: frozenset[str]) -> Run:
        self.build(node.value, frozenset())  # checks the value (its functions) now
        text, cursor = print_expr(node), CURSOR

        def window(e: object, f: Frame, loc: Locals) -> object:
            stream = cursor.stream
            if stream is None or e.__class__ is not Event:  # Why: no key stream (or event), NULL
                return None
            return clean(stream.window(text, e.type))

        return window

    def _Let(self, node: ir.Let, bound: frozenset[str]) -> Run:
        args = [self.build(a, bound) for a in node.args]
        body = self.build(node.body, bound | frozenset(node.params))
        params = node.params

        def let(e: object, f: Frame, loc: Locals) -> object:
            inner = dict(loc) if loc else {}
            for p, a in zip(params, args, strict=True):
                inner[p] = a(e, f, loc)
            return body(e, f, inner)

        return let

    def _Comprehension(self, node: ir.Comprehension, bound: frozenset[str]) -> Run:
        clauses: list[tuple[ir.Target, Run, list[Run]]] = []
        inner = bound
        for clause in node.clauses:
            if not self.data and not iterable_source(clause.source):
                msg = (
                    "a comprehension in a condition iterates over data the events carry: a stage's "
                    "events (matched('a'), a stage name, [e], a + of those) or a field (e.tags)"
                )
                raise ExpressionError(msg, span=clause.source.span)
            source = self.build(clause.source, inner)
            inner = inner | ir.target_names(clause.target)
            conds = [self.build(c, inner) for c in clause.conditions]
            clauses.append((clause.target, source, conds))
        element = self.build(node.element, inner)
        depth = len(clauses)
        budget = self.iterations

        def comprehension(e: object, f: Frame, loc: Locals) -> object:
            out: list[object] = []
            steps = [0]  # iterations so far: a filter that rejects everything must not loop forever

            def level(i: int, scope: Locals) -> None:
                if i == depth:
                    out.append(element(e, f, scope))
                    if len(out) > MAX_SIZE:
                        msg = f"a comprehension of more than {MAX_SIZE} elements"
                        raise ValueError(msg)
                    return
                target, source, conds = clauses[i]
                values = source(e, f, scope)
                if values is None:  # Why: a NULL list contributes no elements
                    return
                local = dict(scope) if scope else {}  # one frame per level: bindings are overwritten
                for value in items_of(values):
                    steps[0] += 1
                    if steps[0] > budget:
                        msg = f"a comprehension of more than {budget} iterations (the limit)"
                        raise ValueError(msg)
                    bind(target, value, local)
                    if all(truth(c(e, f, local)) for c in conds):
                        level(i + 1, local)

            level(0, loc)
            return out

        return comprehension


@functools.lru_cache(maxsize=256)
def _arity(fn: Callable[..., object]) -> tuple[int, int | None] | None:
    """How many positional arguments ``fn`` takes (least, most; ``None``: any number), if it tells."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # why: some built-ins have no signature; they check for themselves
        return None
    least, most = 0, 0
    for p in params:
        if p.kind is p.VAR_POSITIONAL:
            return least, None
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            most += 1
            least += p.default is p.empty
        elif p.kind is p.KEYWORD_ONLY and p.default is p.empty:
            return None  # why: a call in an expression cannot name it; the function decides
    return least, most


def _check_arity(node: ir.Call, fn: Callable[..., object]) -> None:
    """Refuse a call with a number of arguments the function cannot take, where it is written
    (it failed on every event, with the Python function's own parameter names)."""
    try:
        arity = _arity(fn)
    except TypeError:  # why: an unhashable callable (a registered object): its calls tell
        return
    if arity is None:
        return
    least, most = arity
    given = len(node.args)
    if least <= given and (most is None or given <= most):
        return
    wanted = f"{least}" if least == most else f"{least} or more" if most is None else f"{least} to {most}"
    noun = "argument" if wanted == "1" else "arguments"
    msg = f"{node.func}() takes {wanted} {noun}, got {given}"
    raise ExpressionError(msg, span=node.span)
