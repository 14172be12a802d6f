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
    "TypeIn",
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
    """One user condition; ``types`` is the set of event types it can accept (``None``: unknown).

    ``pure`` is set when the condition reads only the event (a string condition without
    ``matched`` or aggregates): a faster ``pure(e)`` that compiled predicates call directly. It may
    raise where ``fn`` raises a different error (fields read as ``e.fields[name]``), so a failure
    is always re-checked through ``fn`` for the user-facing message.
    """

    fn: Callable[[Event, ConditionContext], Any]
    label: str
    stage: str
    types: frozenset[str] | None
    pure: Callable[[Event], Any] | None = None

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
            msg = (
                f"condition {self.label!r} of stage {self.stage!r} failed on event #{event.seq} "
                f"({event.type!r} at {event.time}): {type(err).__name__}: {err}"
            )
            raise CepRuntimeError(msg) from err
        if memo is not None:
            memo[key] = value
        return value


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
    params = ["e", *(["matched"] if uses_matched else []), *uses_aggs]
    exact = _as_function(source, params, expr.functions, fast_fields=False)
    if len(params) == 1:
        fast = _as_function(source, params, expr.functions, fast_fields=True)
        return Leaf(lambda e, ctx: exact(e), source, stage, _string_types(source), fast)
    # Generated glue: read exactly the variables the condition uses, no environment dict.
    reads = ["ctx.matched"] if uses_matched else []
    reads += [f"ctx.aggregate({name!r})" for name in uses_aggs]
    glue = f"lambda e, ctx: _exact(e, {', '.join(reads)})"
    run: Callable[[Event, ConditionContext], Any] = eval(glue, {"__builtins__": {}, "_exact": exact})
    return Leaf(run, source, stage, _string_types(source))


#: attribute names of :class:`Event` itself (``e.NAME`` for any other name reads a field)
_EVENT_ATTRS = frozenset(dir(Event))


def _as_function(
    source: str, params: list[str], functions: Mapping[str, Callable[..., Any]], *, fast_fields: bool
) -> Callable[..., Any]:
    """Compile a checked condition string into ``lambda <params>: <condition>``.

    Same name resolution as :class:`~workbench.engine.expr.CompiledExpr` (variables first, then the
    registered functions, no builtins), without building an environment per call. With
    ``fast_fields``, ``e.NAME`` (NAME not an :class:`Event` attribute) reads ``e.fields['NAME']``
    directly instead of going through ``Event.__getattr__``.
    """
    body = ast.parse(source.strip(), mode="eval").body
    if fast_fields:
        body = _FieldReads().visit(body)
    args = ast.arguments(
        posonlyargs=[], args=[ast.arg(p) for p in params], kwonlyargs=[], kw_defaults=[], defaults=[]
    )
    tree = ast.fix_missing_locations(ast.Expression(ast.Lambda(args, body)))
    env: dict[str, Any] = {"__builtins__": {}, **functions}
    fn: Callable[..., Any] = eval(compile(tree, "<condition>", "eval"), env)
    return fn


class _FieldReads(ast.NodeTransformer):
    """Rewrite ``e.NAME`` into ``e.fields['NAME']`` outside scopes that rebind ``e``."""

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        value = node.value
        if (
            isinstance(value, ast.Name)
            and value.id == "e"
            and isinstance(node.ctx, ast.Load)
            and node.attr not in _EVENT_ATTRS
        ):
            fields = ast.Attribute(ast.Name("e", ast.Load()), "fields", ast.Load())
            return ast.copy_location(ast.Subscript(fields, ast.Constant(node.attr), ast.Load()), node)
        return node

    def _scope(self, node: ast.AST) -> ast.AST:
        names = {a.arg for a in node.args.args} if isinstance(node, ast.Lambda) else set()
        for gen in getattr(node, "generators", []):
            names.update(t.id for t in ast.walk(gen.target) if isinstance(t, ast.Name))
        return node if "e" in names else self.generic_visit(node)

    visit_Lambda = visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _scope


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
    if isinstance(cond, And | Or):
        return needs_context(cond.left) or needs_context(cond.right)
    return False


def compile_predicate(cond: Cond) -> Callable[[Event, ConditionContext | None], Any]:
    """Compile a condition tree into one generated Python function ``pred(e, ctx)``.

    The result has the truth value of ``cond(e, ctx)``: constants fold, type tests are inlined,
    event-only conditions are called directly, the others go through their :class:`Leaf` (memo,
    aggregate stage, error message). When an event-only part raises, the tree itself is evaluated
    again, so errors carry exactly the interpreted form's :class:`CepRuntimeError` message.
    """
    consts: dict[str, Any] = {}

    def name_of(value: Any) -> str:
        name = f"_k{len(consts)}"
        consts[name] = value
        return name

    def gen(c: Cond) -> str:
        if isinstance(c, Const):
            return "True" if c.value else "False"
        if isinstance(c, TypeIn):
            if len(c.types) == 1:
                return f"(e.type == {next(iter(c.types))!r})"
            return f"(e.type in {name_of(c.types)})"
        if isinstance(c, Leaf):
            if c.pure is not None:
                return f"{name_of(c.pure)}(e)"
            return f"{name_of(c)}(e, ctx)"
        if isinstance(c, Not):
            return f"(not {gen(c.inner)})"
        if isinstance(c, And):
            return f"({gen(c.left)} and {gen(c.right)})"
        if isinstance(c, Or):
            return f"({gen(c.left)} or {gen(c.right)})"
        return f"{name_of(c)}(e, ctx)"

    expr = gen(cond)
    if isinstance(cond, Const):
        return cond.__call__  # type: ignore[return-value]
    src = (
        "def pred(e, ctx):\n"
        "    try:\n"
        f"        return {expr}\n"
        "    except _CepRuntimeError:\n"
        "        raise\n"
        "    except _Exception:\n"
        "        return _tree(e, ctx)\n"
    )
    env: dict[str, Any] = {
        "__builtins__": {},
        "_CepRuntimeError": CepRuntimeError,
        "_Exception": Exception,
        "_tree": cond,
        **consts,
    }
    exec(compile(src, "<nfa condition>", "exec"), env)
    pred: Callable[[Event, ConditionContext | None], Any] = env["pred"]
    return pred
