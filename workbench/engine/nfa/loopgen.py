"""The loop plan lowered to one specialised ``process(state, e, ctx)`` per pattern.

:func:`generate` writes the source of :meth:`LoopPlan.interpret
<workbench.engine.nfa.loop.LoopPlan.interpret>` specialised to one plan: the window, the cap, the
wake sets and the stage names become constants, the conditions are inlined from their IR, the
loop stage's aggregate inputs are read once per event, and the per-event state is in locals. It
steps the same :class:`~workbench.engine.nfa.loop.LoopState` in exactly the same way (run ids,
instances, timers, detections, cap), so the two are interchangeable at any event.

What it does not specialise goes to the interpreter, for the whole event and before any partial
match changes: tracing (``ctx.tracing``), and an event on which an event-only condition raises
(the interpreter evaluates it again and records the error once per evaluation, as always).
A condition that reads aggregates is inlined when its IR is made of literals, fields of ``e``,
aggregate names, comparisons, arithmetic, ``not`` and ``is null``; when the inlined form raises,
the interpreted condition decides for that partial match (and records the error). Any other
condition that needs a context is called with a :class:`LoopContext` as the interpreter does.

The source is built from the templates of :mod:`~workbench.engine.nfa.looptemplates` and from IR
nodes only; every value (constants, names, stage names) enters as a named constant of the
function's namespace, and
:func:`~workbench.engine.nfa.conditions.build_function` compiles it.
"""

from __future__ import annotations

from collections.abc import Callable
from operator import attrgetter
from typing import TYPE_CHECKING

from workbench.engine.aggregates import Aggregate, Avg, Count, Sum, input_of, make_aggregate, value_with
from workbench.engine.detection import new_match
from workbench.engine.events import Event
from workbench.engine.expr import clean, ir
from workbench.engine.expr.values import ARITH, COMPARE, EVENT_ATTRIBUTES, field_of
from workbench.engine.matcher import Context, Kernel
from workbench.engine.nfa.chain import WINDOW_TIMER, by_start
from workbench.engine.nfa.conditions import (
    And,
    Cond,
    Const,
    Leaf,
    Not,
    Or,
    Source,
    TypeIn,
    build_function,
    needs_context,
)
from workbench.engine.nfa.looptemplates import CAP, CLOCK, EXPIRE, FRESH, HEAD, WAKE
from workbench.engine.nfa.pattern import AggregateSpec

if TYPE_CHECKING:
    from workbench.engine.nfa.loop import LoopPlan, LoopState

__all__ = [
    "Emitter",
    "Process",
    "Unsupported",
    "by_sid",
    "channels_by_length",
    "compare_ops_are_plain",
    "generate",
    "loop_kernel",
    "namespace",
    "start_test",
    "took_statement",
]

Process = Callable[["LoopState", Event, Context], None]

#: the order of the loop's partial matches (their start ids are distinct)
by_sid = attrgetter("start_id")
_CMP = ("==", "!=", "<", "<=", ">", ">=")
#: the code of a partial match waiting for the last stage (``loop.LAST``; its wake set is ``wakes[-2]``)
LAST_CODE = -2


class Unsupported(Exception):
    """An IR node the emitter does not inline (the condition is then called as the interpreter does)."""


class Emitter(Source):
    """The source of one plan's conditions: event-only parts once per event, the rest per partial match.

    ``probes`` are the per-event assignments (``name = expression``) evaluated before any partial
    match is stepped; ``inputs`` the aggregate inputs of the event by aggregate index.
    """

    def __init__(self, plan: LoopPlan) -> None:
        super().__init__()
        self.plan = plan
        self.probes: list[tuple[str, str]] = []
        self.inputs: dict[int, str] = {}
        self.temps = 0

    def probe(self, text: str) -> str:
        name = f"_p{len(self.probes)}"
        self.probes.append((name, text))
        return name

    def input(self, i: int) -> str:
        """The local holding ``input_of(e, field)`` of aggregate ``i`` (read once per event)."""
        if i not in self.inputs:
            field = self.plan.aggs.specs[i].field
            read = "e" if field is None else self.cleaned(f"e.fields.get({self.literal(field)})")
            self.inputs[i] = self.probe(read)  # what input_of(e, field) reads
        return self.inputs[i]

    def fresh_aggregates(self) -> str:
        """The aggregates of a new partial match: fresh ones (copies of empty prototypes), then the
        first stage's updated (as ``RunAggregates.take((), first stage, e)``)."""
        aggs = self.plan.aggs
        if not aggs.specs:
            return "()"
        protos = [self.const(a) for a in aggs.fresh()]
        fresh = "(" + "".join(f"{p}.copy(), " for p in protos) + ")"
        if not self.plan.agg_of[0]:
            return fresh
        touched, specs = self.const(self.plan.agg_of[0]), self.const(aggs.specs)
        return f"{self.const(_first_take)}({fresh}, {touched}, e, {specs})"

    def temp(self) -> str:
        self.temps += 1
        return f"_v{self.temps}"

    def gen(self, c: Cond) -> str:
        if isinstance(c, Leaf):
            if c.pure is not None:
                return self.probe(f"{self.const(c.pure)}(e)")  # why: reads only the event, once per event
            if c.tree is None:
                raise Unsupported
            return f"({self.expr(c.tree, c.stage)})"
        if isinstance(c, TypeIn):
            return self.probe(super().gen(c))  # why: reads only the event's type, once per event
        if not isinstance(c, Const | Not | And | Or):
            raise Unsupported
        return super().gen(c)

    def wake_test(self, types: frozenset[str] | None) -> str:
        """``typ`` (the event's type) is one of ``types`` (``None``: any type)."""
        if types is None:
            return "True"
        if len(types) == 1:
            return f"typ == {self.literal(next(iter(types)))}"
        return f"typ in {self.const(types)}"

    # ------------------------------------------------------------------ IR -> source (NULL rules)
    def expr(self, node: ir.Node, stage: str) -> str:
        """Source with the value of ``node`` (``None`` is NULL), as the evaluator computes it."""
        if isinstance(node, ir.Literal):
            return self.const(node.value)
        if isinstance(node, ir.Name):
            return self.aggregate(node.name, stage)
        if isinstance(node, ir.Attr) and node.obj == ir.Name("e"):
            read = self.const(field_of) if node.name in EVENT_ATTRIBUTES else self.const(_field_of_e)
            return self.probe(f"{read}(e, {self.const(node.name)})")
        if isinstance(node, ir.Compare) and node.op in _CMP:
            return self.binary(node.left, node.right, stage, f"{{a}} {node.op} {{b}}")
        if isinstance(node, ir.Binary):
            return self.binary(node.left, node.right, stage, f"{self.const(ARITH[node.op])}({{a}}, {{b}})")
        if isinstance(node, ir.Unary):
            a = self.temp()
            op = "not " if node.op == "not" else node.op
            return f"(None if ({a} := {self.expr(node.operand, stage)}) is None else {op}{a})"
        if isinstance(node, ir.IsNull):
            return f"(({self.expr(node.operand, stage)}) is {'not ' if node.negated else ''}None)"
        raise Unsupported

    def binary(self, left: ir.Node, right: ir.Node, stage: str, template: str) -> str:
        """``left OP right``, NULL when either side is (the right side is not read after a NULL)."""
        a, b = self.temp(), self.temp()
        if isinstance(right, ir.Literal) and right.value is not None:  # why: a constant is never NULL
            op = template.format(a=a, b=self.const(right.value))
            return f"(None if ({a} := {self.expr(left, stage)}) is None else {op})"
        op = template.format(a=a, b=b)
        return f"(None if ({a} := {self.expr(left, stage)}) is None or ({b} := {self.expr(right, stage)}) is None else {op})"  # noqa: E501

    def aggregate(self, name: str, stage: str) -> str:
        """The value of aggregate ``name`` for the partial match ``run`` (cleaned, as a name reads)."""
        aggs = self.plan.aggs
        i = aggs.index.get(name)
        if i is None:
            raise Unsupported  # the interpreter raises the unknown-name error
        spec = aggs.specs[i]
        if spec.include_current and stage == spec.stage:
            probe = make_aggregate(spec.function, **dict(spec.params))
            x = self.input(i)
            if type(probe) is Avg:  # why inline: Avg.get_with, without a call per partial match
                a = self.temp()
                value = (
                    f"((({a} := ra[{i}]).total + {x}) / ({a}.n + 1) if {x} is not None else ra[{i}].get())"
                )
            elif hasattr(probe, "get_with"):
                value = f"ra[{i}].get_with({x})"
            else:
                value = f"{self.const(value_with)}(ra[{i}], {x})"
        else:
            value = f"ra[{i}].get()"
        return self.cleaned(value)

    def cleaned(self, value: str) -> str:
        """``clean(value)``, inlined: a float that is not NaN is its own clean value (the usual case)."""
        v = self.temp()
        return f"({v} if ({v} := {value}).__class__ is _float and {v} == {v} else {self.const(clean)}({v}))"


def _first_take(
    aggs: tuple[Aggregate, ...], touched: tuple[int, ...], e: Event, specs: tuple[AggregateSpec, ...]
) -> tuple[Aggregate, ...]:
    """Fresh aggregates after the first stage took ``e`` (they are new: updated in place)."""
    for i in touched:
        aggs[i].update(input_of(e, specs[i].field))
    return aggs


def _field_of_e(e: Event, name: str) -> object:
    """``e.name`` as a condition reads it (a missing field, ``None`` and NaN are NULL)."""
    return clean(e.fields.get(name))


def compare_ops_are_plain() -> bool:
    """The emitter writes comparisons as Python operators: true while the evaluator's are."""
    import operator

    return all(
        COMPARE[op] is getattr(operator, n)
        for op, n in zip(_CMP, ("eq", "ne", "lt", "le", "gt", "ge"), strict=True)
    )


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line + "\n" for line in text.splitlines())


def took_statement(plan: LoopPlan, em: Emitter) -> str:
    """The statement that sets ``took`` for the partial match ``run``."""
    take = plan.take_cond
    if not needs_context(take):
        return f"took = {em.probe(em.gen(take))}"  # why: the same for every partial match
    try:
        inline = em.gen(take)
    except Unsupported:
        return "took = _take_pred(e, _LC(_plan, run, e))"
    return (
        "ra = run.aggs\n"
        "try:\n"
        f"    took = {inline}\n"
        "except _Exception:  # the interpreted condition decides and records the error\n"
        "    took = _take_pred(e, _LC(_plan, run, e))"
    )


def start_test(plan: LoopPlan, em: Emitter) -> str:
    """Whether the event takes the first stage: inlined when it tests only types (it cannot raise)."""

    def plain(c: Cond) -> bool:
        if isinstance(c, Not):
            return plain(c.inner)
        if isinstance(c, And | Or):
            return plain(c.left) and plain(c.right)
        return isinstance(c, Const | TypeIn)

    return Source.gen(em, plan.start_cond) if plain(plan.start_cond) else "_start_pred(e, None)"


def generate(plan: LoopPlan) -> Process:
    """The specialised ``process(state, e, ctx)`` of ``plan`` (same steps as ``plan.interpret``)."""
    em = Emitter(plan)
    try:
        source = _source(plan, em)
    except Unsupported:  # an event-only condition of a kind the emitter does not know
        return plan.interpret
    return build_function(source, "process", namespace(plan, em), f"<loop plan {plan.name!r}>")


def _fresh(run: str, window: bool) -> str:
    """Ask for a timer at the window deadline of the new partial match ``run`` (``ChainPlan._fresh``)."""
    return FRESH.format(run=run) if window else "pass\n"


def _counts_only(plan: LoopPlan, i: int) -> bool:
    """Whether aggregate ``i`` is a count: it takes any input (the event itself for ``count(b)``)
    without arithmetic, so its input needs no plain-number guard."""
    spec = plan.aggs.specs[i]
    return type(make_aggregate(spec.function, **dict(spec.params))) is Count


def _update(plan: LoopPlan, i: int, x: str) -> str:
    """The statement that updates aggregate ``i`` of the partial match's ``ra`` with its input ``x``."""
    spec = plan.aggs.specs[i]
    kind = type(make_aggregate(spec.function, **dict(spec.params)))
    if kind is Sum or kind is Avg:  # why inline: Sum.update, without a call per partial match
        return f"if {x} is not None:\n    _a = ra[{i}]\n    _a.total += {x}\n    _a.n += 1\n"
    if kind is Count:
        return f"if {x} is not None:\n    ra[{i}].n += 1\n"
    return f"ra[{i}].update({x})\n"


def _source(plan: LoopPlan, em: Emitter) -> str:
    # Why the order: the take condition's probes may read aggregate inputs that the updates reuse.
    took = took_statement(plan, em) if compare_ops_are_plain() else "took = _take_pred(e, _LC(_plan, run, e))"
    lp = em.probe(em.gen(plan.last_cond))
    updates = "".join(_update(plan, i, em.input(i)) for i in plan.agg_of[1])
    update = ("ra = run.aggs\n" + updates) if updates else "pass\n"
    # why: an aggregate input that is no plain number (a text price) goes to the interpreter, which
    # records it and skips it; the inlined updates add without a check (a count only counts)
    guards = "".join(
        f"if not ({x} is None or {x}.__class__ is _float or {x}.__class__ is _int):\n    raise _Exception\n"
        for x in sorted({em.input(i) for i in plan.agg_of[1] if not _counts_only(plan, i)})
    )
    window = plan.window is not None
    return (
        HEAD
        + (EXPIRE if window else CLOCK)
        + WAKE.format(
            starts=em.wake_test(plan.start_wakes),
            vc=f"cold and {em.wake_test(plan.cold_wakes)}",
            vl=f"last and {em.wake_test(plan.wakes[-2])}",
            probes=_indent("".join(f"{n} = {v}\n" for n, v in em.probes) + guards + f"lp = {lp}\n", 8),
            complete=_indent("_ctake((), _C, e)\n" if plan.agg_of[2] else "", 20),
            all_complete="False" if plan.agg_of[2] else "lp",  # why: the last stage's aggregates check each
            took=_indent(took, 12),
            update20=_indent(update, 20),
            update16=_indent(update, 16),
            fresh_run=_indent(_fresh("run", window), 16),
            fresh_w=_indent(_fresh("w", window), 20),
            fresh_start=_indent(_fresh("run", window), 12),
            start_aggs=em.fresh_aggregates(),
            start_test=start_test(plan, em),
            cap=CAP if plan.cap is not None else "",
        )
    )


class _Channels(dict[int, tuple[str, ...]]):
    """The channels of a match by its number of events, each computed once (on the first lookup)."""

    __slots__ = ("of",)

    def __init__(self, of: Callable[[int], tuple[str, ...]]) -> None:
        super().__init__()
        self.of = of

    def __missing__(self, n: int) -> tuple[str, ...]:
        ch = self[n] = self.of(n)
        return ch


def channels_by_length(plan: LoopPlan) -> _Channels:
    """The channels of the plan's matches by their number of events, each computed once."""
    return _Channels(plan.match_channels)


def namespace(plan: LoopPlan, em: Emitter) -> dict[str, object]:
    from workbench.engine.nfa.loop import LoopContext, LoopRun

    wakes = plan.wakes
    known = frozenset[str]().union(*(w for w in wakes if w is not None))
    return {
        **em.consts,
        "len": len,
        "sorted": sorted,
        "_float": float,
        "_int": int,
        "_interp": plan.interpret,
        "_advance": plan.advance,
        "_W": plan.window,
        "_by_start": by_start,
        "_by_sid": by_sid,
        "_wt": {typ: tuple(w is None or typ in w for w in wakes) for typ in known},
        "_wdef": tuple(w is None for w in wakes),
        "_C": plan.stages[2],
        "_N": plan.n,
        "_LoopRun": LoopRun,
        "_LC": LoopContext,
        "_plan": plan,
        "_take_pred": plan.take_pred,
        "_start_pred": plan.start_pred,
        "_ctake": plan.aggs.take,
        "_chan": channels_by_length(plan),
        "_Detection": new_match,
        "_name": plan.name,
        "WINDOW_TIMER": WINDOW_TIMER,
        "_CAPN": plan.cap,
        "_capfn": plan._cap,
    }


def loop_kernel(plan: LoopPlan, prefix: str) -> Kernel:
    """The plan's step for the engine's fused loop: the step is called only when it can do anything.

    An event that can change no partial match (its type wakes no list that holds one, no window
    has passed, and it cannot start one) only moves the state's clock, as in ``process``; the fused
    loop then creates no state for a key that has none, nor asks whether it became idle.
    """
    src = Source(prefix)
    c = src.const

    def wakes(types: frozenset[str] | None) -> str:
        if types is None:
            return "True"
        if len(types) == 1:
            return f"e.type == {src.literal(next(iter(types)))}"
        return f"e.type in {c(types)}"

    w = c(plan.window)
    cold_test, last_test = wakes(plan.cold_wakes), wakes(plan.wakes[LAST_CODE])
    if plan.window is not None:  # why: a passed window is expired by the step itself
        cold_test = f"{cold_test} or cold[0].start_ts + {w} <= t"
        last_test = f"{last_test} or last[0].start_ts + {w} <= t"
    starts = wakes(plan.start_wakes)
    body = (
        "cold = st.cold\n"
        "last = st.last\n"
        f"if st.hot or (cold and ({cold_test})) or (last and ({last_test})) or {starts}:\n"
        "    {ctx}\n"
        f"    {c(plan.process)}(st, e, ctx)\n"
        "else:\n"
        "    st.time = t\n"
    )
    idle = "not st.hot and not st.cold and not st.last"
    return Kernel(body, src.consts, None if plan.start_wakes is None else starts, idle)
