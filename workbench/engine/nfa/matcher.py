"""The sequence-pattern matcher: compile the pattern, choose a plan, hand each key to it.

One :class:`NFAMatcher` (immutable, shared by every key) holds the compiled NFA and the plan that
runs it (:mod:`workbench.engine.nfa.plans`); each key has the plan's state. The matcher's
``process``, ``advance`` and ``is_idle`` *are* the plan's (bound once, no call in between).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from workbench.engine.events import Event
from workbench.engine.faults import FaultSink
from workbench.engine.matcher import Context, Kernel
from workbench.engine.nfa.analysis import analyse
from workbench.engine.nfa.buffer import Time
from workbench.engine.nfa.compiler import compile_nfa
from workbench.engine.nfa.graph import CompiledNFA
from workbench.engine.nfa.linear import LinearPlan
from workbench.engine.nfa.loop import LoopPlan
from workbench.engine.nfa.measures import MeasureEvaluator, MeasuringContext
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.plans import AnyPlan, PlanState, choose_plan
from workbench.engine.nfa.runaggs import RunAggregates

__all__ = ["NFAMatcher"]


class NFAMatcher:
    """A compiled sequence pattern (implements :class:`~workbench.engine.matcher.Matcher`).

    Attributes:
        name: the pattern's name.
        pattern: the source pattern.
        nfa: the compiled graph.
        facts: what the graph tells about event types (the event-type index).
        plan: the run model chosen for it.
        compiled: whether generated code runs the plan (when the plan offers it).
        faults: where the conditions report runtime errors (an engine points it at its log).
    """

    #: ``process(state, event, ctx)``: the plan's, bound in ``__init__``
    process: Callable[[PlanState, Event, Context], None]
    #: ``advance(state, t, ctx)``: advance the key's time (expire windows)
    advance: Callable[[PlanState, Time, Context], None]
    #: ``is_idle(state)``: nothing in flight
    is_idle: Callable[[PlanState], bool]
    #: ``on_timer(state, time, token, ctx)``: a window deadline passed with no event (the plan's)
    on_timer: Callable[[PlanState, Time, Hashable, Context], None]

    def __init__(self, pattern: SequencePattern, *, specialise: bool = True, compiled: bool = True) -> None:
        self.name = pattern.name
        self.pattern = pattern
        aggs = RunAggregates(pattern)
        self.faults = aggs.faults = FaultSink(pattern.name)
        self.nfa: CompiledNFA = compile_nfa(pattern, frozenset(aggs.index), self.faults)
        aggs.check_stages(self.nfa.stage_names)
        facts = self.facts = analyse(self.nfa)
        self.plan: AnyPlan = choose_plan(pattern, self.nfa, facts, aggs, specialise=specialise)
        own = getattr(self.plan, "aggs", None)
        if isinstance(own, RunAggregates):  # why: a plan that keeps its own records to the same log
            own.faults = self.faults
        #: whether the plan's generated code runs (when it offers some), else its interpreter
        self.compiled = compiled
        # Bound once: the runtime calls the plan's methods with no call in between.
        step = getattr(self.plan, "compiled_step", None) if compiled else None
        try:
            self.process = step() if step is not None else self.plan.process  # type: ignore[assignment]
        except (SyntaxError, RecursionError, MemoryError):
            # why: thousands of stages nest the generated code past what Python compiles; the
            # interpreter steps the same state (and no kernel is offered then)
            self.compiled = False
            self.process = self.plan.process  # type: ignore[assignment]
        self.advance = self.plan.advance  # type: ignore[assignment]
        self.is_idle = self.plan.is_idle  # type: ignore[assignment]
        self.on_timer = self.plan.on_timer  # type: ignore[assignment]
        #: the plan's own ``on_timer``, which emits without measures: the engine's fused loop calls
        #: it beside the plan's kernel and adds the measures itself
        self.unmeasured_on_timer: Callable[..., None] = self.plan.on_timer
        #: adds the pattern's measures to its detections (``None``: the pattern has none)
        self.measures: MeasureEvaluator | None = None
        if pattern.measures:
            self._measure(MeasureEvaluator(pattern.measures, self.faults, subsets=pattern.subsets))

    def _measure(self, evaluator: MeasureEvaluator) -> None:
        """Route the plan's outputs through ``evaluator`` (only patterns with measures pay for it)."""
        evaluator.check_stages(self.nfa.stage_names)
        self.measures = evaluator
        wrap = MeasuringContext(evaluator)
        process, advance, on_timer = self.process, self.advance, self.on_timer

        def measured_process(state: PlanState, event: Event, ctx: Context) -> None:
            wrap.inner = ctx
            process(state, event, wrap)

        def measured_advance(state: PlanState, t: Time, ctx: Context) -> None:
            wrap.inner = ctx
            advance(state, t, wrap)

        def measured_timer(state: PlanState, time: Time, token: Hashable, ctx: Context) -> None:
            wrap.inner = ctx
            on_timer(state, time, token, wrap)

        self.process = measured_process
        self.advance = measured_advance
        self.on_timer = measured_timer

    def event_types(self) -> frozenset[str] | None:
        """The types that can start or change a partial match, when the conditions tell (else all).

        Other events cannot change any partial match; windows still expire on time because the
        plans schedule timers at every deadline.
        """
        return self.facts.relevant

    def wakes(self, name: str) -> frozenset[str] | None:
        """Event types that can change a partial match waiting in NFA state ``name`` (``None``: all)."""
        return self.facts.wakes[name]

    def start_wakes(self) -> frozenset[str] | None:
        """Event types that can start a partial match (``None``: all)."""
        return self.facts.start_wakes

    def kernel(self, pindex: int) -> Kernel | None:
        """The plan's step as source for the engine's fused loop, if it offers one (and compiled)."""
        make = getattr(self.plan, "kernel", None) if self.compiled else None
        return None if make is None else make(f"_p{pindex}_")

    def new_state(self, key: Hashable) -> PlanState:
        """A fresh per-key state of the plan."""
        return self.plan.new_state()

    @property
    def specialised(self) -> bool:
        """Whether the linear or loop plan runs this pattern (same results as the general one)."""
        return self.fast_path is not None

    @property
    def fast_path(self) -> str | None:
        """``"linear"``, ``"loop"`` or ``None`` (the event-only or the general plan runs the pattern)."""
        if isinstance(self.plan, LinearPlan):
            return "linear"
        if isinstance(self.plan, LoopPlan):
            return "loop"
        return None
