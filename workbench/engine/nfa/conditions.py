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

import ast
import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from workbench.engine.events import Event
from workbench.engine.expr import compile_expr
from workbench.engine.nfa.pattern import AllOf, AnyOf, Condition
from workbench.errors import CepRuntimeError, ExpressionError, PatternError

__all__ = [
    "TRUE",
    "And",
    "Cond",
    "ConditionContext",
    "Const",
    "Leaf",
    "Not",
    "Or",
    "compile_condition",
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
        aggs: Callable[[str, str | None], Any],
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

    def matched(self, stage: str) -> list[Event]:
        """Events already taken for ``stage`` in this partial match (empty if none)."""
        if self._matched is None:
            self._matched = self._lookup()
        return list(self._matched.get(stage, ()))

    def aggregate(self, name: str) -> Any:
        """The current value of the declared aggregate ``name``."""
        return self._aggs(name, self.stage)

    def __getitem__(self, name: str) -> Any:
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
    """One user condition; ``types`` is the set of event types it can accept (``None``: unknown)."""

    fn: Callable[[Event, ConditionContext], Any]
    label: str
    stage: str
    types: frozenset[str] | None

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        memo = ctx.memo
        key = id(self)
        if key in memo:
            return memo[key]
        ctx.stage = self.stage
        try:
            value = memo[key] = bool(self.fn(event, ctx))
            return value
        except CepRuntimeError:
            raise
        except Exception as err:
            msg = (
                f"condition {self.label!r} of stage {self.stage!r} failed on event #{event.seq} "
                f"({event.type!r} at {event.time}): {type(err).__name__}: {err}"
            )
            raise CepRuntimeError(msg) from err


@dataclass(frozen=True, slots=True)
class Not(Cond):
    """Negation."""

    inner: Cond

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return not self.inner(event, ctx)


@dataclass(frozen=True, slots=True)
class And(Cond):
    """Conjunction (short-circuit, left to right)."""

    left: Cond
    right: Cond

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return self.left(event, ctx) and self.right(event, ctx)


@dataclass(frozen=True, slots=True)
class Or(Cond):
    """Disjunction (short-circuit, left to right)."""

    left: Cond
    right: Cond

    def __call__(self, event: Event, ctx: ConditionContext) -> bool:
        return self.left(event, ctx) or self.right(event, ctx)


def compile_condition(cond: Condition | None, stage: str, aggregate_names: frozenset[str]) -> Cond:
    """Compile a user condition of ``stage`` into a :class:`Cond` (``None`` -> always true)."""
    if cond is None:
        return TRUE
    if isinstance(cond, AllOf | AnyOf):
        if not cond.parts:
            return TRUE if isinstance(cond, AllOf) else FALSE
        parts = [compile_condition(p, stage, aggregate_names) for p in cond.parts]
        out = parts[0]
        for p in parts[1:]:
            out = And(out, p) if isinstance(cond, AllOf) else Or(out, p)
        return out
    if isinstance(cond, str):
        return _compile_string(cond, stage, aggregate_names)
    obj: object = cond
    if callable(obj):
        return Leaf(_wrap_callable(obj), getattr(obj, "__name__", repr(obj)), stage, None)
    msg = f"a condition must be a string or a callable, got {type(obj).__name__}"
    raise PatternError(msg, element=stage)


def _wrap_callable(fn: Callable[..., Any]) -> Callable[[Event, ConditionContext], Any]:
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


def _compile_string(source: str, stage: str, aggregate_names: frozenset[str]) -> Cond:
    try:
        expr = compile_expr(source)
    except ExpressionError as err:
        msg = f"condition of stage {stage!r}: {err}"
        raise PatternError(msg, element=stage) from None
    unknown = expr.names - {"e", "matched"} - aggregate_names
    if unknown:
        msg = (
            f"condition {source!r} of stage {stage!r} uses unknown name(s) {sorted(unknown)}; "
            f"available: e, matched, {', '.join(sorted(aggregate_names)) or '(no aggregates)'}"
        )
        raise PatternError(msg, element=stage)
    uses_aggs = sorted(expr.names & aggregate_names)
    uses_matched = "matched" in expr.names

    def run(e: Event, ctx: ConditionContext) -> Any:
        env: dict[str, Any] = {"e": e}
        if uses_matched:
            env["matched"] = ctx.matched
        for name in uses_aggs:
            env[name] = ctx.aggregate(name)
        return expr(env)

    return Leaf(run, source, stage, _string_types(source))


def _string_types(source: str) -> frozenset[str] | None:
    """Event types a condition string can accept, when it is a conjunction with a type test."""
    try:
        tree = ast.parse(source.strip(), mode="eval").body
    except SyntaxError:
        return None
    return _ast_types(tree)


def _ast_types(node: ast.expr) -> frozenset[str] | None:
    if isinstance(node, ast.BoolOp):
        sub = [_ast_types(v) for v in node.values]
        if isinstance(node.op, ast.And):
            known = [s for s in sub if s is not None]
            if not known:
                return None
            out = known[0]
            for s in known[1:]:
                out = out & s
            return out
        if any(s is None for s in sub):
            return None
        return frozenset().union(*(s for s in sub if s is not None))
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left, op, right = node.left, node.ops[0], node.comparators[0]
        if _is_type_attr(right) and isinstance(op, ast.Eq):
            left, right = right, left
        if not _is_type_attr(left):
            return None
        if isinstance(op, ast.Eq) and isinstance(right, ast.Constant) and isinstance(right.value, str):
            return frozenset({right.value})
        if isinstance(op, ast.In) and isinstance(right, ast.Tuple | ast.List | ast.Set):
            vals = [c.value for c in right.elts if isinstance(c, ast.Constant) and isinstance(c.value, str)]
            if len(vals) == len(right.elts):
                return frozenset(str(v) for v in vals)
    return None


def _is_type_attr(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "type"
        and isinstance(node.value, ast.Name)
        and node.value.id == "e"
    )


def type_test(types: tuple[str, ...], stage: str) -> Cond:
    """A condition accepting only the given event types."""
    allowed = frozenset(types)
    return Leaf(lambda e, ctx: e.type in allowed, f"type in {sorted(allowed)}", stage, allowed)


#: (R, v): for event types outside R the condition is the constant v; None: unknown.
Profile = tuple[frozenset[str], bool] | None


def type_profile(cond: Cond) -> Profile:
    """For types outside a finite set, the condition's constant value (``None``: unknown)."""
    if isinstance(cond, Const):
        return (frozenset(), cond.value)
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
