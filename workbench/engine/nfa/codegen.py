"""The linear plan lowered to specialised Python: one generated step per pattern.

:func:`linear_kernel` writes the source of :meth:`LinearPlan.process
<workbench.engine.nfa.linear.LinearPlan.process>` for one plan, with everything the interpreter
looks up per event fixed at generation time: the stages are unrolled (one branch per stage, its
contiguity known), the conditions are inlined from their trees (:class:`~workbench.engine.nfa.
conditions.Source`: type tests as comparisons, event-only conditions as one direct call), and the
plan's tables and bound methods are constants. The generated code steps the same
:class:`~workbench.engine.nfa.linear.LinearState` and :class:`~workbench.engine.nfa.linear.LinearRun`
objects, so it and the interpreter can take turns at any event (snapshots, ``state_of``).

Two products share that body: :func:`linear_step`, a ``process(state, event, ctx)`` that the
matcher binds (it hands traced runs to the interpreter, whose trace records it does not write),
and the :class:`~workbench.engine.matcher.Kernel` that the engine's fused loop
(:mod:`workbench.engine.fused`) pastes into its own loop. Rare paths (window expiry, notFollowedBy
checks, ``followedByAny`` branches, held matches, the partial-match cap) call the interpreter's
own methods, so their behaviour has one home.

Only the templates below and :class:`Source` produce text; every value (a window, a stage index,
a condition, a method) enters as a named constant or the ``repr`` of an ``int``.
"""

from __future__ import annotations

from collections.abc import Callable

from workbench.engine.detection import new_match
from workbench.engine.events import Event
from workbench.engine.expr import ir
from workbench.engine.expr.values import EVENT_ATTRIBUTES
from workbench.engine.matcher import Context, Kernel
from workbench.engine.nfa import conditions
from workbench.engine.nfa.chain import by_start
from workbench.engine.nfa.conditions import TRUE, And, Cond, Const, Not, Or, Source, TypeIn, build_function
from workbench.engine.nfa.linear import ANY, RELAXED, STRICT, WINDOW_TIMER, LinearPlan, LinearRun, LinearState
from workbench.errors import CepRuntimeError

__all__ = ["linear_kernel", "linear_step"]

Step = Callable[[LinearState, Event, Context], None]


class _Lines:
    """An indented block of generated statements."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def add(self, *lines: str) -> None:
        self.lines.extend("    " * self.depth + line for line in lines)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


#: comparisons a field test lowers inline, with the literal mirrored when it stands on the left
_MIRROR = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}


class _InlineSource(Source):
    """:class:`Source` that also inlines the commonest condition, a field against a constant.

    ``e.price > 110.0`` becomes a dictionary read and one comparison when the field holds a number
    (not NaN) and the constant is one, or both are strings; any other value goes to the leaf's own
    event test, so NULLs, odd types and errors behave exactly as the interpreter's.
    """

    def gen(self, c: Cond) -> str:
        if isinstance(c, conditions.Leaf) and c.pure is not None:
            test = _field_test(c.tree)
            if test is not None:
                return self.field_test(c.pure, *test)
        return super().gen(c)

    def field_test(self, pure: Callable[[Event], object], name: str, op: str, value: object) -> str:
        const, field = self.const(value), self.literal(name)
        read = f"(_v := e.fields.get({field})).__class__"
        if type(value) is str:
            plain = f"{read} is {self.const(str)}"
        else:
            plain = f"({read} is {self.const(float)} and _v == _v or _v.__class__ is {self.const(int)})"
        fallback = f"{self.const(pure)}(e)"
        return f"(_v {op} {const} if e.__class__ is {self.const(Event)} and {plain} else {fallback})"


def _field_test(tree: ir.Node | None) -> tuple[str, str, int | float | str] | None:
    """``(field, op, constant)`` of ``e.field <op> constant`` (either side), else ``None``.

    >>> from workbench.engine.expr.parse import parse_expr
    >>> _field_test(parse_expr("110 < e.price")), _field_test(parse_expr("e.price > e.qty"))
    (('price', '>', 110), None)
    """
    if not isinstance(tree, ir.Compare) or tree.op not in _MIRROR:
        return None
    left, right, op = tree.left, tree.right, str(tree.op)
    if isinstance(left, ir.Literal):
        left, right, op = right, left, _MIRROR[op]
    if not (isinstance(left, ir.Attr) and left.obj == ir.Name("e") and left.name not in EVENT_ATTRIBUTES):
        return None
    value = right.value if isinstance(right, ir.Literal) else None
    if type(value) not in (int, float, str) or (type(value) is float and value != value):
        return None
    assert isinstance(value, int | float | str)
    return left.name, op, value


class _LinearWriter:
    """Writes the body of one linear plan's step (see the module docstring)."""

    def __init__(self, plan: LinearPlan, prefix: str, fused: bool) -> None:
        self.plan = plan
        self.src = _InlineSource(prefix)
        self.out = _Lines()
        self.fused = fused
        self.c = self.src.const
        self.lazy = not plan.emit_timeouts and not plan.skip.holds  # see LinearPlan._fresh
        #: a middle followedByAny stage: a partial match and its successor share a start, and a
        #: run that keeps its place with a new id can fall behind one of them (a last stage's
        #: branch only completes matches: starts stay distinct and the order by start holds)
        self.branches = plan.forks > 0

    def write(self) -> str:
        plan, out, c = self.plan, self.out, self.c
        out.add("runs = st.runs")
        time_update = "st.time = t" if self.fused else "if st.time is None or t > st.time: st.time = t"
        if plan.window is not None:  # why: the oldest partial match's window has passed
            out.add(f"if runs and runs[0].start_ts + {c(plan.window)} <= t:")
            out.add("    {ctx}", f"    {c(plan.advance)}(st, t, ctx)", "else:", f"    {time_update}")
        else:
            out.add(time_update)
        starts = self.starts()
        out.add(f"if runs or {starts or 'True'}:")
        out.depth += 1
        if not self.fused:  # why: the fused loop sets the context only before a call that reads it
            out.add("{ctx}")
        out.add("done = []")
        woken = self.woken()
        if woken is not None:  # why: an event no waiting stage reacts to leaves every run as it is
            out.add(f"if not runs or e.type not in {c(woken)}:", "    new = runs", "else:")
            out.depth += 1
        out.add("new = []", "new_append = new.append")
        if plan.n > 1:
            out.add("for run in runs:")
            out.depth += 1
            self.stages()
            out.depth -= 1
        if woken is not None:
            out.depth -= 1
            out.add("new_append = new.append")
        self.start(starts)
        if self.branches:  # why: followedByAny branches share a start, out of rid order
            out.add(f"if len(new) > 1: new.sort(key={c(by_start)})")
        out.add("st.runs = new")
        self.finish()
        out.depth -= 1
        return out.text()

    def timer(self) -> str | None:
        """:meth:`LinearPlan.on_timer` for the fused loop: the key's time moves to the timer's, the
        expired partial matches go (:meth:`LinearPlan.advance`: timeouts, held matches released)
        and the key's timer is re-armed at the next deadline while partial matches are left.
        """
        plan, c = self.plan, self.c
        if not self.fused or plan.window is None:
            return None
        self.out = _Lines()
        out, w = self.out, c(plan.window)
        out.add("if st.time is None or tt > st.time: st.time = tt", "runs = st.runs")
        out.add(f"if runs and runs[0].start_ts + {w} <= tt:")
        out.add("    ctx.key = tkey; ctx.now = tt; ctx.keystate = tks")
        out.add(f"    {c(plan.advance)}(st, tt, ctx, timer=True)")
        out.add("scheduled = st.scheduled", "if scheduled is not None and scheduled <= tt:")
        out.depth += 1
        out.add("st.scheduled = None", "if st.runs:")
        out.depth += 1
        self.arm(f"st.runs[0].start_ts + {w}", "tkey", "tks")
        return out.text()

    def woken(self) -> frozenset[str] | None:
        """The event types some waiting stage reacts to (``None``: every type wakes one)."""
        wakes = self.plan.wakes[1:]
        if not wakes or any(w is None for w in wakes):
            return None
        return frozenset().union(*(w for w in wakes if w is not None))

    def starts(self) -> str | None:
        sw = self.plan.start_wakes
        return None if sw is None else f"(e.type in {self.c(sw)})"

    def condition(self, cond: Cond, target: str) -> None:
        """``target = cond(e)``; an event-only part that raises is re-run through the tree, which
        records the fault exactly as the interpreter does."""
        if cond is TRUE:
            self.out.add(f"{target} = True")
            return
        text = self.src.gen(cond)
        if not _calls(cond):  # only type tests and constants: nothing can raise
            self.out.add(f"{target} = {text}")
            return
        self.out.add(
            "try:",
            f"    {target} = {text}",
            f"except {self.c(CepRuntimeError)}:",
            "    raise",
            f"except {self.c(Exception)}:",
            f"    {target} = {self.c(cond)}(e, None)",
        )

    def stages(self) -> None:
        """One branch per stage a partial match can wait at (1 .. n-1)."""
        out, n = self.out, self.plan.n
        if n > 2:
            out.add("i = run.stage")
        for i in range(1, n):
            if n > 2:
                out.add(f"{'if' if i == 1 else 'elif'} i == {i}:" if i < n - 1 else "else:")
                out.depth += 1
            self.stage(i)
            if n > 2:
                out.depth -= 1

    def stage(self, i: int) -> None:
        plan, out, c = self.plan, self.out, self.c
        wakes = plan.wakes[i]
        if wakes is not None:  # why: an event of another type cannot change this partial match
            out.add(f"if e.type not in {c(wakes)}:", "    new_append(run)", "else:")
            out.depth += 1
        if plan.stops[i]:  # why: notFollowedBy checks go edge by edge, as the NFA does
            self.guarded(i)
        else:
            self.condition(plan.conds[i], "ok")
            out.add("if ok:")
            out.depth += 1
            out.add("rid = st.next_rid", "st.next_rid = rid + 1")
            self.take(i)
            if plan.kinds[i] == ANY:  # why: followedByAny also keeps the partial match as it was
                self.keep()
            out.depth -= 1
            if plan.kinds[i] != STRICT:  # why: relaxed contiguity ignores a non-matching event
                out.add("else:", "    new_append(run)")
        if wakes is not None:
            out.depth -= 1

    def take(self, i: int) -> None:
        """The partial match takes the event under ``rid``: a match, or its successor at ``i + 1``."""
        out = self.out
        if i == self.plan.n - 1:
            out.add("done.append((run.inst, (*run.events, e)))")
        elif self.plan.kinds[i] == ANY:  # why: the partial match itself stays (see keep)
            self.new_run(
                "succ", "run.start_id", "rid", str(i + 1), "run.start_ts", "t", "run.inst", "(*run.events, e)"
            )
            out.add("new_append(succ)")
            self.fresh("succ", "t == run.start_ts")
        else:  # the taking partial match is the successor: update it in place
            out.add("run.rid = rid", f"run.stage = {i + 1}", "run.prev_ts = t")
            out.add("run.events = (*run.events, e)", "new_append(run)")
            self.fresh("run", "t == run.start_ts")

    def keep(self) -> None:
        """``followedByAny``: the partial match stays as it was, under a fresh run id (a branch)."""
        self.out.add("rid = st.next_rid", "st.next_rid = rid + 1", "run.rid = rid", "new_append(run)")
        self.fresh("run", "run.prev_ts == run.start_ts")

    def fresh(self, run: str, same_time: str) -> None:
        """:meth:`LinearPlan._fresh` for a partial match that changed: a timer if it took no time."""
        if self.plan.window is not None:
            self.out.add(f"if {same_time}:")
            self.out.depth += 1
            self.schedule(f"{run}.start_ts + {self.c(self.plan.window)}")
            self.out.depth -= 1

    def guarded(self, i: int) -> None:
        """:meth:`LinearPlan._step_guarded` unrolled: the same conditions in the same order."""
        plan, out = self.plan, self.out
        kind, trees = plan.kinds[i], plan.stop_conds[i]
        self.condition(plan.conds[i], "ok")
        for j, (proceed, _) in enumerate(trees):
            self.condition(proceed, f"hit{j}")
        out.add("stopped = 0")
        for j in reversed(range(len(trees))):  # why: STOP states are visited last-pushed first
            out.add(f"if hit{j}:")
            out.depth += 1
            self.condition(trees[j][1], "hit")
            out.add("if hit: stopped += 1")
            out.depth -= 1
        out.add("if ok:", "    rid = st.next_rid", "    st.next_rid = rid + 1")
        if i == plan.n - 1:  # why: a match completed by the stopping event is still emitted
            out.add("    done.append((run.inst, (*run.events, e)))")
        # why: a stopped partial match dies; its branches and STOP states still used run ids
        spent = {ANY: "stopped + 1", RELAXED: "stopped if ok else stopped + 1", STRICT: "stopped"}[kind]
        out.add("if stopped:", f"    st.next_rid += {spent}", "elif ok:")
        out.depth += 1
        if i < plan.n - 1:
            self.take(i)
        if kind == ANY:
            self.keep()
        elif i == plan.n - 1:
            out.add("pass")
        out.depth -= 1
        if kind != STRICT:  # why: relaxed contiguity ignores a non-matching event
            out.add("else:", "    new_append(run)")

    def start(self, starts: str | None) -> None:
        """The event takes the first stage: a new partial match (or a match of one stage)."""
        plan, out, c = self.plan, self.out, self.c
        if starts is not None:
            out.add(f"if {starts}:")
            out.depth += 1
        self.condition(plan.conds[0], "ok")
        out.add("if ok:")
        out.depth += 1
        if self.fused:  # why: ctx.new_instance() inline: the key's counter, else past released keys
            out.add("pindex = ctx.pindex", "instances = ks.instances", "inst = instances.get(pindex)")
            out.add("if inst is None:", "    inst = ctx.budget.released.get(pindex, 0)")
            out.add("instances[pindex] = inst = inst + 1")
        else:
            out.add("inst = ctx.new_instance()")
        out.add("rid = st.next_rid", "st.next_rid = rid + 1")
        if plan.n == 1:
            out.add("done.append((inst, (e,)))")
        else:
            self.new_run("run", "(t, e.seq)", "rid", "1", "t", "t", "inst", "(e,)")
            out.add("new_append(run)")
            if not self.branches:  # why: else sorted below
                out.add(f"if len(new) > 1 and new[-2].start_id > run.start_id: new.sort(key={c(by_start)})")
            if plan.window is not None:
                self.schedule(f"t + {c(plan.window)}")
        out.depth -= 1
        if starts is not None:
            out.depth -= 1

    def new_run(self, name: str, *values: str) -> None:
        """``name = LinearRun(*values)``, its slots stored one by one (no ``__init__`` frame)."""
        self.out.add(f"{name} = {self.c(object.__new__)}({self.c(LinearRun)})")
        slots = ("start_id", "rid", "stage", "start_ts", "prev_ts", "inst", "events")
        self.out.add(*(f"{name}.{slot} = {value}" for slot, value in zip(slots, values, strict=True)))

    def schedule(self, deadline: str) -> None:
        """A partial match asks for its window timer (:meth:`LinearPlan._fresh`, tracing off)."""
        test = "st.scheduled is None" if self.lazy else f"st.scheduled != {deadline}"
        self.out.add(f"if {test}:")
        self.out.depth += 1
        self.arm(deadline, "key", "ks")
        self.out.depth -= 1

    def arm(self, deadline: str, key: str, ks: str) -> None:
        """Set the state's timer: straight onto the engine's queue in the fused loop (as ``ctx.schedule``)."""
        out, token = self.out, self.c(WINDOW_TIMER)
        if not self.fused:
            out.add(f"st.scheduled = {deadline}", f"ctx.schedule(st.scheduled, {token})")
            return
        out.add(f"st.scheduled = deadline = {deadline}", f"counts = {ks}.timer_counts", "pindex = ctx.pindex")
        out.add("counts[pindex] = counts.get(pindex, 0) + 1")
        out.add(f"_heappush(timers, (deadline, _next(timer_seq), {key}, pindex, {token}))")

    def finish(self) -> None:
        """Emit (or hold back) the completed matches, then apply ``max_partial_matches``."""
        plan, out, c = self.plan, self.out, self.c
        if plan.skip.holds:
            out.add("if done or st.held:", "    {ctx}", f"    {c(plan._release)}(st, done, t, ctx)")
        elif self.fused and plan.layout[plan.n][0] == tuple(range(plan.n)):
            # why: a match lists its events in stage order: the detection goes straight to the queue
            name, channels = c(plan.name), c(plan.layout[plan.n][1])
            out.add(
                "for inst, events in done:",
                f"    ctx.emit({c(new_match)}({name}, key, inst, 'match', t, events, {channels}))",
            )
        else:
            out.add("if done:", "    {ctx}")
            out.add("for inst, events in done:", f"    {c(plan._emit)}(inst, 'match', t, events, ctx)")
        if plan.cap is not None:
            cap = c(plan.cap)
            out.add(f"if len(st.runs) > {cap}:", "    {ctx}", f"    {c(plan._cap)}(st, ctx, {cap})")


def _calls(cond: Cond) -> bool:
    """Whether the generated text of ``cond`` calls a user condition (which may raise)."""
    if isinstance(cond, Not):
        return _calls(cond.inner)
    if isinstance(cond, And | Or):
        return _calls(cond.left) or _calls(cond.right)
    return not isinstance(cond, Const | TypeIn)


def linear_kernel(plan: LinearPlan, prefix: str) -> Kernel:
    """The plan's step as a :class:`~workbench.engine.matcher.Kernel` for the fused loop."""
    writer = _LinearWriter(plan, prefix, fused=True)
    body = writer.write()
    timer = writer.timer()
    starts = writer.starts()
    consts = {"len": len, **writer.src.consts}
    # why the timer test: a linear state keeps a timer exactly while ``scheduled`` is set
    return Kernel(body, consts, starts, "not st.runs and not st.held and st.scheduled is None", timer)


def linear_step(plan: LinearPlan) -> Step:
    """A generated ``process(state, event, ctx)`` equal to the plan's (traced runs: the interpreter)."""
    writer = _LinearWriter(plan, "_k", fused=False)
    body = writer.write()
    source = (
        "def step(st, e, ctx):\n"
        "    if ctx.tracing:\n"
        "        return _interpreter(st, e, ctx)\n"
        "    t = e.time\n" + "".join(f"    {line}\n" for line in body.replace("{ctx}", "pass").splitlines())
    )
    namespace = {"_interpreter": plan.process, "len": len, **writer.src.consts}
    fn: Step = build_function(source, "step", namespace, f"<linear step {plan.name!r}>")
    return fn
