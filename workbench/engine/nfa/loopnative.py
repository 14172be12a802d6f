"""The loop plan's step in the native core: :class:`workbench.engine._native.LoopStep`, bound to a plan.

The native step is the twin of the step :func:`~workbench.engine.nfa.loopgen.generate` writes in
Python, and it steps the same state the same way. It takes what depends on the pattern's conditions
from four small Python functions, written here from the conditions' IR by the same emitter:

``probe(e)``
    once per event: every event-only value (``lp``, the last stage's test; the loop condition when
    it reads only the event; the aggregates' inputs), and the guards that send an event with an
    input that is no plain number to the interpreter. It returns ``(lp, took, inputs, probes)``.
``took(run, e, probes)``
    per partial match, when the loop condition reads aggregates.
``start(e)``, ``fresh(e)``
    whether the event starts a partial match, and that partial match's aggregates.

:func:`native_step` returns ``None`` when the native core is not in use, and the caller keeps
the generated Python step.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from workbench.engine.aggregates import Avg, Count, Sum, make_aggregate, value_with
from workbench.engine.detection import new_match
from workbench.engine.expr import clean, ir
from workbench.engine.expr.values import ARITH, EVENT_ATTRIBUTES, field_of
from workbench.engine.native import MODULE
from workbench.engine.nfa.chain import WINDOW_TIMER, by_start
from workbench.engine.nfa.conditions import (
    And,
    Cond,
    Const,
    Leaf,
    Not,
    Or,
    TypeIn,
    build_function,
    needs_context,
)
from workbench.engine.nfa.loopgen import (
    Emitter,
    Unsupported,
    channels_by_length,
    compare_ops_are_plain,
    generate,
    namespace,
    start_test,
    took_statement,
)

if TYPE_CHECKING:
    from workbench.engine._native import LoopStep
    from workbench.engine.matcher import Context
    from workbench.engine.nfa.loop import LoopPlan, LoopRun

__all__ = ["native_step"]

_bound = False


def _bind() -> bool:
    """Tell the native core the layout of ``LoopRun`` (once); False when it does not fit."""
    global _bound
    if MODULE is None:
        return False
    if not _bound:
        from workbench.engine.events import Event
        from workbench.engine.host import HostContext, KeyState
        from workbench.engine.nfa.loop import LoopRun, LoopState
        from workbench.engine.timekeeping import Timekeeping

        try:
            MODULE.bind_loop_run(LoopRun)
            MODULE.bind_types(LoopState, Event, HostContext, Sum, Avg)
            MODULE.bind_timers(Timekeeping.schedule)
            MODULE.bind_key_state(KeyState)
        except TypeError:  # why: a native core built for other slots: the Python step works
            return False
        _bound = True
    return True


def _kind(plan: LoopPlan, i: int) -> int:
    """How aggregate ``i`` takes an input (the native step's ``SUM_OR_AVG``, ``COUNT``, ``OTHER``)."""
    assert MODULE is not None
    spec = plan.aggs.specs[i]
    kind = type(make_aggregate(spec.function, **dict(spec.params)))
    if kind is Sum or kind is Avg:
        return int(MODULE.SUM_OR_AVG)
    return int(MODULE.COUNT) if kind is Count else int(MODULE.OTHER)


#: Python's rich comparison codes (``Py_LT`` ... ``Py_GE``) by operator
_RICH = {"<": 0, "<=": 1, "==": 2, "!=": 3, ">": 4, ">=": 5}


def _junctions(n: ModuleType, c: Cond, leaf: Callable[[Cond], Any]) -> Any:
    """``c`` as native nodes: constants, ``not``, ``and`` and ``or`` here, any other part by ``leaf``
    (left to right, as the emitter writes them)."""
    if isinstance(c, Const):
        return n.Constant(bool(c.value))
    if isinstance(c, Not):
        return n.Negation(_junctions(n, c.inner, leaf))
    if isinstance(c, And | Or):
        left, right = _junctions(n, c.left, leaf), _junctions(n, c.right, leaf)
        return n.Both(left, right) if isinstance(c, And) else n.Either(left, right)
    return leaf(c)


class _Nodes:
    """The loop condition as native nodes: the twin of ``Emitter.gen``/``Emitter.expr``, node for
    node (event-only parts become the emitter's probes, so the step computes them once per event)."""

    def __init__(self, plan: LoopPlan, em: Emitter, native: ModuleType) -> None:
        self.plan, self.em, self.n = plan, em, native

    def index(self, name: str) -> int:
        """The position of the probe ``name`` among the step's probes."""
        return [p for p, _ in self.em.probes].index(name)

    def probe(self, name: str) -> Any:
        return self.n.Probe(self.index(name))

    def cond(self, c: Cond) -> Any:
        return _junctions(self.n, c, self.leaf)

    def leaf(self, c: Cond) -> Any:
        """A condition that is no junction: a probe when it reads only the event, else its tree."""
        if isinstance(c, Leaf) and c.pure is None and c.tree is not None:
            return self.expr(c.tree, c.stage)
        if isinstance(c, Leaf | TypeIn):
            return self.probe(self.em.gen(c))  # why: reads only the event (or Unsupported)
        raise Unsupported

    def expr(self, node: ir.Node, stage: str) -> Any:
        n = self.n
        if isinstance(node, ir.Literal):
            return n.Constant(node.value)
        if isinstance(node, ir.Name):
            return self.aggregate(node.name, stage)
        if isinstance(node, ir.Attr) and node.obj == ir.Name("e"):
            return self.probe(self.em.expr(node, stage))
        if isinstance(node, ir.Compare) and node.op in _RICH:
            return n.Compare(_RICH[node.op], *self.sides(node.left, node.right, stage))
        if isinstance(node, ir.Binary):
            return n.Arithmetic(ARITH[node.op], *self.sides(node.left, node.right, stage))
        if isinstance(node, ir.Unary) and node.op in ("not", "-", "+"):
            return n.Unary(node.op, self.expr(node.operand, stage))
        if isinstance(node, ir.IsNull):
            return n.IsNull(self.expr(node.operand, stage), node.negated)
        raise Unsupported

    def sides(self, left: ir.Node, right: ir.Node, stage: str) -> tuple[Any, Any]:
        a = self.expr(left, stage)
        if isinstance(right, ir.Literal) and right.value is not None:  # why: a constant is never NULL
            return a, self.n.Constant(right.value)
        return a, self.expr(right, stage)

    def aggregate(self, name: str, stage: str) -> Any:
        aggs, n = self.plan.aggs, self.n
        i = aggs.index.get(name)
        if i is None:
            raise Unsupported  # the interpreter raises the unknown-name error
        spec = aggs.specs[i]
        if not (spec.include_current and stage == spec.stage):
            return n.Aggregate(i, n.GET, 0, value_with, clean)
        x = self.index(self.em.input(i))
        probe = make_aggregate(spec.function, **dict(spec.params))
        how = n.AVG_WITH if type(probe) is Avg else n.GET_WITH if hasattr(probe, "get_with") else n.VALUE_WITH
        return n.Aggregate(i, how, x, value_with, clean)


class _Probing(Emitter):
    """The emitter, noting beside each probe it registers what the probe reads, as the native
    step's :class:`~workbench.engine._native.Read` (``None`` where it does not know)."""

    def __init__(self, plan: LoopPlan, native: ModuleType) -> None:
        super().__init__(plan)
        self.n = native
        self.reads: list[Any] = []
        self.next_read: Any = None
        #: the probe node of each condition that got a probe of its own (by ``id``)
        self.of_cond: dict[int, Any] = {}

    def probe(self, text: str) -> str:
        name = super().probe(text)
        self.reads.append(self.next_read)
        self.next_read = None
        return name

    def gen(self, c: Cond) -> str:
        if isinstance(c, Leaf) and c.pure is not None:
            self.next_read = self.n.CallRead(c.pure)
        elif isinstance(c, TypeIn):
            self.next_read = self.n.TypeTest(c.types)
        else:
            return super().gen(c)
        name = super().gen(c)
        self.of_cond[id(c)] = self.n.Probe(len(self.probes) - 1)
        return name

    def expr(self, node: ir.Node, stage: str) -> str:
        if isinstance(node, ir.Attr) and node.obj == ir.Name("e"):
            n = self.n
            self.next_read = (
                n.CallRead(field_of, node.name)
                if node.name in EVENT_ATTRIBUTES
                else n.FieldRead(node.name, clean)
            )
        return super().expr(node, stage)

    def input(self, i: int) -> str:
        if i not in self.inputs:
            field = self.plan.aggs.specs[i].field
            self.next_read = self.n.EventRead() if field is None else self.n.FieldRead(field, clean)
        return super().input(i)

    def combined(self, c: Cond) -> Any:
        """The node of a condition over probes already registered (``Unsupported``: another kind)."""
        return _junctions(self.n, c, self.registered)

    def registered(self, c: Cond) -> Any:
        node = self.of_cond.get(id(c))
        if node is None:
            raise Unsupported
        return node

    def last_is(self, c: Cond) -> None:
        """The probe just registered is the condition ``c`` over earlier probes."""
        try:
            self.reads[-1] = self.n.Combined(self.combined(c))
        except Unsupported:
            self.reads[-1] = None  # why: the Python probe function evaluates them all


def _indent(text: str) -> str:
    return "".join("    " + line + "\n" for line in text.splitlines())


def native_step(plan: LoopPlan) -> LoopStep | None:
    """The native step of ``plan`` (``None``: no native core, or a condition the emitter does not
    write, in which case the caller's Python step decides as it does today)."""
    if not _bind():
        return None
    native = MODULE
    assert native is not None
    plain = compare_ops_are_plain()
    # why not plain too: then the Python step calls the interpreted condition per partial match
    per_run = needs_context(plan.take_cond) or not plain
    em = _Probing(plan, native)
    root = None
    took_index = -1
    if per_run and plain:
        try:
            root = _Nodes(plan, em, native).cond(plan.take_cond)
        except Unsupported:  # why: start again as the Python step does (its inlined or called form)
            em = _Probing(plan, native)
    try:
        # why this order: the Python step's (the loop condition's probes, then the last stage's,
        # then the aggregates' inputs), so both evaluate the same expressions in the same order
        if root is not None:
            took = "took = None\n"
        elif plain:
            took = took_statement(plan, em)
            if not per_run:
                em.last_is(plan.take_cond)  # why: took = <the condition's own probe>
                took_index = len(em.probes) - 1
        else:
            took = "took = _take_pred(e, _LC(_plan, run, e))"
        lp = em.probe(em.gen(plan.last_cond))
        em.last_is(plan.last_cond)
        updates = [(i, _kind(plan, i), em.input(i)) for i in plan.agg_of[1]]
        start = start_test(plan, em)
        fresh = em.fresh_aggregates()
    except Unsupported:
        return None
    # why not a count's: it takes any input (see loopgen's guards)
    guarded = sorted({x for _, kind, x in updates if kind != native.COUNT})
    guards = "".join(
        f"if not ({x} is None or {x}.__class__ is _float or {x}.__class__ is _int):\n    raise _Exception\n"
        for x in guarded
    )
    names = [n for n, _ in em.probes]
    inputs = "".join(f"{x}, " for _, _, x in updates)
    probe_src = (
        "def probe(e):\n"
        + _indent("".join(f"{n} = {v}\n" for n, v in em.probes) + guards + f"lp = {lp}\n")
        + _indent(took if not per_run else "took = None\n")
        + f"    return (lp, took, ({inputs}), ({''.join(f'{n}, ' for n in names)}))\n"
    )
    ns = namespace(plan, em)  # why last: it takes the constants every piece above registered
    reads = em.reads if all(r is not None for r in em.reads) else None
    where = f"<loop plan {plan.name!r}, native>"
    condition: object = None
    if root is not None:
        condition = native.Condition(root, build_function(_FALLBACK, "fallback", ns, where))
    elif per_run:
        unpack = f"{', '.join(names)}, = pr\n" if names else ""
        condition = build_function(
            "def took(run, e, pr):\n" + _indent(unpack + took) + "    return took\n", "took", ns, where
        )
    step: LoopStep = native.LoopStep(
        interp=plan.interpret,
        window=plan.window,
        name=plan.name,
        chan=channels_by_length(plan),
        wt=ns["_wt"],
        wdef=ns["_wdef"],
        probe=build_function(probe_src, "probe", ns, where),
        took=condition,
        start=build_function(f"def start(e):\n    return {start}\n", "start", ns, where),
        fresh=build_function(f"def fresh(e):\n    return {fresh}\n", "fresh", ns, where),
        ctake=plan.aggs.take,
        last_stage=plan.stages[2],
        n=plan.n,
        capfn=plan._cap,
        cap=plan.cap,
        timer=WINDOW_TIMER,
        detect=new_match,
        by_start=by_start,
        start_wakes=plan.start_wakes,
        cold_wakes=plan.cold_wakes,
        last_wakes=plan.wakes[-2],
        last_aggs=bool(plan.agg_of[2]),
        updates=[(i, kind) for i, kind, _ in updates],
        emit_timeouts=plan.emit_timeouts,
        report=_reporter(plan),
        python=generate(plan),  # why: the twin, for objects of other classes (a wrapped context)
        python_advance=type(plan).advance.__get__(plan),
        reads=reads,
        lp_index=names.index(lp),
        took_index=took_index,
        input_index=[names.index(x) for _, _, x in updates],
        guard_index=[names.index(x) for x in guarded],
        # why only then: the first stage's own aggregates take the event in fresh(e)
        protos=None if plan.agg_of[0] else plan.aggs.fresh(),
        # why only a type test: the usual start, and then ``start(e)`` is one native membership test
        start_read=native.TypeTest(plan.start_cond.types) if isinstance(plan.start_cond, TypeIn) else None,
    )
    return step


def _reporter(plan: LoopPlan) -> Callable[[list[LoopRun], Context], None]:
    """What ``LoopPlan.advance`` does with the partial matches whose window passed (time them out,
    or trace them), for the native step's own expiry."""

    def report(expired: list[LoopRun], ctx: Context) -> None:
        assert plan.window is not None
        plan._time_out(plan._expire(expired, ctx), plan.window, ctx)

    return report


#: the interpreted loop condition, asked when a native node raises (it records the error)
_FALLBACK = "def fallback(run, e):\n    return _take_pred(e, _LC(_plan, run, e))\n"
