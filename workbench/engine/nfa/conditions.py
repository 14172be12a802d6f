"""Compiled edge conditions, the condition context, and the event-type analysis used by the index.

A compiled condition is a small immutable tree (:class:`Cond`): constants, leaves (one user
condition: a compiled string or a callable), ``Not``, ``And``, ``Or``. The compiler combines them
exactly as Flink's ``RichAndCondition`` / ``RichNotCondition`` do (until, greedy guards, relaxed
ignore = ``NOT where``).

:func:`type_profile` tells, for an event type outside a finite set, whether the condition is
certainly true, certainly false, or unknown. The matcher uses it to skip partial matches that an
event of an unrelated type cannot change.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from workbench.engine.events import Event
from workbench.engine.expr import EMPTY_FRAME, compile_expr, ir
from workbench.engine.expr.evaluate import compile_event_test
from workbench.engine.faults import FaultSink
from workbench.engine.nfa.pattern import AllOf, AnyOf, Condition
from workbench.errors import CepRuntimeError, ExpressionError, PatternError

__all__ = [
    "TRUE",
    "And",
    "Cond",
    "ConditionContext",
    "Const",
    "Junction",
    "Leaf",
    "Not",
    "Or",
    "Source",
    "TypeIn",
    "build_function",
    "compile_condition",
    "compile_predicate",
    "needs_context",
    "type_profile",
]


class ConditionContext:
    """What a condition sees besides the event: the partial match so far and its aggregates.

    ``matched(stage)`` returns the events this partial match already took for ``stage`` (never the
    event being tested); ``aggregate(name)`` / ``ctx[name]`` the value of a declared aggregate;
    ``timestamp`` the event's time.
    """

    __slots__ = ("_aggs", "_lookup", "_matched", "memo", "stage", "timestamp")

    def __init__(
        self,
        lookup: Callable[[], Mapping[str, list[Event]]],
        aggs: Callable[[str, str | None], object],
        timestamp: int | float,
    ) -> None:
        self._lookup = lookup
        self._matched: Mapping[str, list[Event]] | None = None
        self._aggs = aggs
        self.timestamp = timestamp
        #: the stage whose condition is being evaluated (set by the compiled condition)
        self.stage: str | None = None
        #: results of user conditions already evaluated for this (partial match, event)
        self.memo: dict[int, bool] = {}

    def matched(self, stage: str) -> Sequence[Event]:
        """Events already taken for ``stage`` in this partial match (empty if none)."""
        if self._matched is None:
            self._matched = self._lookup()
        return list(self._matched.get(stage, ()))

    def aggregate(self, name: str) -> object:
        """The current value of the declared aggregate ``name``."""
        return self._aggs(name, self.stage)

    def lookup(self, name: str) -> object:
        """A name an expression reads: the declared aggregate ``name`` (the expression frame)."""
        return self.aggregate(name)

    def __getitem__(self, name: str) -> object:
        return self._aggs(name, self.stage)


class Cond:
    """Base of compiled condition nodes."""

    __slots__ = ()

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class Const(Cond):
    """A constant."""

    value: bool

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return self.value


TRUE = Const(True)
FALSE = Const(False)


@dataclass(frozen=True, slots=True, eq=False)
class Leaf(Cond):
    """One user condition; ``types`` is the set of event types it can accept (``None``: unknown).

    ``pure`` is set when the condition reads only the event (an expression without stages or
    aggregates): ``pure(e)`` that compiled predicates call directly. A condition that raises makes
    the event fail it; the error goes to ``faults`` (which raises instead in strict runs).
    """

    fn: Callable[[Event, ConditionContext], object]
    label: str
    stage: str
    types: frozenset[str] | None
    pure: Callable[[Event], object] | None = None
    faults: FaultSink | None = None
    role: str = "where"
    #: the expression's IR (``None`` for a callable): what code generators lower
    tree: ir.Node | None = None

    def __call__(self, event: Event, ctx: ConditionContext | None) -> bool:
        # ``ctx`` is None only when no condition of the pattern needs one (see needs_context).
        memo = None if ctx is None else ctx.memo
        key = id(self)
        if memo is not None:
            if key in memo:
                return memo[key]
            ctx.stage = self.stage  # type: ignore[union-attr]
        try:
            value = bool(self.fn(event, ctx))  # type: ignore[arg-type]
        except CepRuntimeError:
            raise
        except Exception as err:
            self.fault(err, event)
            value = False
        if memo is not None:
            memo[key] = value
        return value

    def fault(self, err: Exception, event: Event) -> None:
        """Record (or, in a strict run, raise) ``err`` of this condition on ``event``."""
        where = f"stage {self.stage!r} {self.role} {self.label!r}"
        if self.faults is None:
            msg = (
                f"condition {self.label!r} of stage {self.stage!r} failed on event #{event.seq} "
                f"({event.type!r} at {event.time}): {type(err).__name__}: {err}"
            )
            raise CepRuntimeError(msg) from err
        self.faults.report(where, err, event)


@dataclass(frozen=True, slots=True, eq=False)
class TypeIn(Cond):
    """The event's type is one of ``types`` (a stage's ``types`` filter)."""

    types: frozenset[str]
    stage: str

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return event.type in self.types


@dataclass(frozen=True, slots=True)
class Not(Cond):
    """Negation."""

    inner: Cond

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return not self.inner(event, ctx)


@dataclass(frozen=True, slots=True)
class Junction(Cond):
    """Base of :class:`And` and :class:`Or`: two conditions joined by the Python operator ``word``."""

    word: ClassVar[str]
    left: Cond
    right: Cond


@dataclass(frozen=True, slots=True)
class And(Junction):
    """Conjunction (short-circuit, left to right)."""

    word = "and"

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return self.left(event, ctx) and self.right(event, ctx)


@dataclass(frozen=True, slots=True)
class Or(Junction):
    """Disjunction (short-circuit, left to right)."""

    word = "or"

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return self.left(event, ctx) or self.right(event, ctx)


def compile_condition(
    cond: Condition | None,
    stage: str,
    aggregate_names: frozenset[str],
    faults: FaultSink | None = None,
    role: str = "where",
) -> Cond:
    """Compile a user condition of ``stage`` into a :class:`Cond` (``None`` -> always true).

    Runtime errors of the condition go to ``faults`` (``None``: raised as :class:`CepRuntimeError`).
    """
    if cond is None:
        return TRUE
    if isinstance(cond, AllOf | AnyOf):
        if not cond.parts:
            return TRUE if isinstance(cond, AllOf) else FALSE
        parts = [compile_condition(p, stage, aggregate_names, faults, role) for p in cond.parts]
        out = parts[0]
        for p in parts[1:]:
            out = And(out, p) if isinstance(cond, AllOf) else Or(out, p)
        return out
    if isinstance(cond, str | ir.Node):
        return _compile_expression(cond, stage, aggregate_names, faults, role)
    obj: object = cond
    if callable(obj):
        label = getattr(obj, "__name__", repr(obj))
        return Leaf(_wrap_callable(obj), label, stage, None, faults=faults, role=role)
    msg = f"a condition must be a string or a callable, got {type(obj).__name__}"
    raise PatternError(msg, element=stage)


def _wrap_callable(fn: Callable[..., object]) -> Callable[[Event, ConditionContext], object]:
    try:
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
        ]
        arity = len(params)
    except (TypeError, ValueError):
        arity = 2
    if arity == 1:
        return lambda e, ctx: fn(e)
    return fn


def _compile_expression(
    source: str | ir.Node, stage: str, aggregate_names: frozenset[str], faults: FaultSink | None, role: str
) -> Cond:
    try:
        expr = compile_expr(source)
    except ExpressionError as err:
        msg = f"condition of stage {stage!r}: {err}"
        raise PatternError(msg, element=stage) from None
    unknown = expr.names - {"e"} - aggregate_names
    if unknown:
        msg = (
            f"condition of stage {stage!r} uses unknown name(s) {sorted(unknown)}; "
            f"available: e, matched('stage'), {', '.join(sorted(aggregate_names)) or '(no aggregates)'}"
        )
        first = next(n for n in ir.walk(expr.tree) if isinstance(n, ir.Name) and n.name in unknown)
        text = expr.source if isinstance(source, str) else None
        raise ExpressionError(msg, source=text, span=first.span)
    run = expr.run
    types = tree_types(expr.tree)
    if not expr.stages and not (expr.names & aggregate_names):
        frame = EMPTY_FRAME

        def general(e: Event) -> object:
            return run(e, frame, None)

        pure = compile_event_test(expr.tree) or general  # one call for "e.f OP constant"
        return Leaf(
            lambda e, ctx: run(e, frame, None), expr.source, stage, types, pure, faults, role, expr.tree
        )
    return Leaf(lambda e, ctx: run(e, ctx, None), expr.source, stage, types, None, faults, role, expr.tree)


def tree_types(node: ir.Node) -> frozenset[str] | None:
    """Event types an expression can accept, when it is a conjunction with a type test on ``e``."""
    if isinstance(node, ir.BoolOp):
        sub = [tree_types(v) for v in node.items]
        if node.op == "and":
            known = [t for t in sub if t is not None]
            if not known:
                return None
            out = known[0]
            for t in known[1:]:
                out = out & t
            return out
        if any(t is None for t in sub):
            return None
        return frozenset().union(*(t for t in sub if t is not None))
    if isinstance(node, ir.Compare):
        left, right = node.left, node.right
        if node.op == "==" and _is_type_attr(right):
            left, right = right, left
        if not _is_type_attr(left):
            return None
        if node.op == "==" and isinstance(right, ir.Literal) and isinstance(right.value, str):
            return frozenset({right.value})
        if node.op == "in" and isinstance(right, ir.ListOf):
            values = [i.value for i in right.items if isinstance(i, ir.Literal) and isinstance(i.value, str)]
            if len(values) == len(right.items):
                return frozenset(str(v) for v in values)
    return None


def _is_type_attr(node: ir.Node) -> bool:
    return isinstance(node, ir.Attr) and node.name == "type" and node.obj == ir.Name("e")


def type_test(types: tuple[str, ...], stage: str) -> Cond:
    """A condition accepting only the given event types."""
    return TypeIn(frozenset(types), stage)


#: (R, v): for event types outside R the condition is the constant v; None: unknown.
Profile = tuple[frozenset[str], bool] | None


def type_profile(cond: Cond) -> Profile:
    """For types outside a finite set, the condition's constant value (``None``: unknown)."""
    if isinstance(cond, Const):
        return (frozenset(), cond.value)
    if isinstance(cond, TypeIn):
        return (cond.types, False)
    if isinstance(cond, Leaf):
        return None if cond.types is None else (cond.types, False)
    if isinstance(cond, Not):
        p = type_profile(cond.inner)
        return None if p is None else (p[0], not p[1])
    if isinstance(cond, And | Or):
        dominant = isinstance(cond, Or)  # False dominates AND, True dominates OR
        a, b = type_profile(cond.left), type_profile(cond.right)
        doms = [x for x in (a, b) if x is not None and x[1] is dominant]
        if len(doms) == 2:
            return (doms[0][0] & doms[1][0], dominant)
        if doms:
            return doms[0]
        if a is None or b is None:
            return None
        return (a[0] | b[0], not dominant)
    return None


def needs_context(cond: Cond) -> bool:
    """Whether evaluating ``cond`` may read the :class:`ConditionContext` (else ``ctx`` may be ``None``)."""
    if isinstance(cond, Leaf):
        return cond.pure is None
    if isinstance(cond, Not):
        return needs_context(cond.inner)
    if isinstance(cond, Junction):
        return needs_context(cond.left) or needs_context(cond.right)
    return False


Predicate = Callable[[Event, ConditionContext | None], object]


class Source:
    """The text of generated code: each value enters as a named constant ``<prefix>N`` of its namespace."""

    def __init__(self, prefix: str = "_k") -> None:
        self.prefix = prefix
        self.consts: dict[str, object] = {}

    def const(self, value: object) -> str:
        name = f"{self.prefix}{len(self.consts)}"
        self.consts[name] = value
        return name

    def literal(self, value: object) -> str:
        # Why repr for an exact str: its repr is always one quoted literal (a constant lookup costs
        # a dict probe per evaluation); anything else stays a named constant
        return repr(value) if type(value) is str else self.const(value)

    def gen(self, c: Cond) -> str:
        if isinstance(c, Const):
            return "True" if c.value else "False"
        if isinstance(c, TypeIn):
            if len(c.types) == 1:
                return f"(e.type == {self.literal(next(iter(c.types)))})"
            return f"(e.type in {self.const(c.types)})"
        if isinstance(c, Leaf):
            if c.pure is not None:
                return f"{self.const(c.pure)}(e)"
            return f"{self.const(c)}(e, ctx)"
        if isinstance(c, Not):
            return f"(not {self.gen(c.inner)})"
        if isinstance(c, Junction):
            # why flat: 200 'where' clauses are a chain of 200 And nodes; nested parentheses that
            # deep are a SyntaxError, while 'a and b and c' means the same (left to right)
            parts = [c.right]
            left = c.left
            while type(left) is type(c):
                assert isinstance(left, Junction)
                parts.append(left.right)
                left = left.left
            parts.append(left)
            return "(" + f" {c.word} ".join(self.gen(p) for p in reversed(parts)) + ")"
        return f"{self.const(c)}(e, ctx)"


def compile_predicate(cond: Cond) -> Predicate:
    """Generate one Python function ``pred(e, ctx)`` for a condition tree (the transition hot path).

    The result has the truth value of ``cond(e, ctx)``: constants fold, type tests are inlined,
    event-only conditions are called directly, the others go through their :class:`Leaf` (memo,
    aggregate stage, error recording). When an event-only part raises, the tree itself is evaluated
    again, so the error is recorded exactly as the interpreted form does.

    The generated text is built from :class:`Source`'s own templates only: every value enters as
    a named constant ``_kN`` of the function's namespace, except an event type that is an exact
    ``str``, whose ``repr`` is always a single string literal; nothing a user wrote is compiled as
    code.
    """
    if isinstance(cond, Const):
        return cond.__call__  # type: ignore[return-value]
    text = Source()
    try:
        source = (
            "def pred(e, ctx):\n"
            "    try:\n"
            f"        return {text.gen(cond)}\n"
            "    except _CepRuntimeError:\n"
            "        raise\n"
            "    except _Exception:\n"
            "        return _tree(e, ctx)\n"
        )
        namespace: dict[str, object] = {"_tree": cond, **text.consts}
        return build_function(source, "pred", namespace, "<nfa predicate>")
    except (SyntaxError, RecursionError, MemoryError):  # why: a tree nested past what Python compiles
        return cond.__call__  # type: ignore[return-value]  # the interpreted tree: same truth value


def build_function(source: str, name: str, namespace: dict[str, object], filename: str) -> Callable[..., Any]:
    """Define the generated function ``name`` from ``source`` (the one ``exec`` of the engine).

    ``source`` must come from the engine's own templates (:class:`Source`, the plans' code
    generators): every value enters through ``namespace`` as a named constant, never as text. The
    function sees no builtins but what ``namespace`` names, besides the two exception classes
    the templates catch (``_CepRuntimeError``, ``_Exception``).
    """
    scope: dict[str, object] = {
        "__builtins__": {},
        "_CepRuntimeError": CepRuntimeError,
        "_Exception": Exception,
        **namespace,
    }
    exec(compile(source, filename, "exec"), scope)
    fn = scope[name]
    assert callable(fn)
    return fn
