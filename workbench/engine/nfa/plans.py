"""The compiler's choice of a run model (a *plan*) for one sequence pattern.

Every plan steps the partial matches of one key, held in the plan's own typed state class, and
gives the same detections, timeouts, traces and timer requests as the general plan:

========================  ==============================  ==========================================
plan                      state                           runs
========================  ==============================  ==========================================
:class:`LinearPlan`       :class:`LinearState`            chains of single-event stages
:class:`LoopPlan`         :class:`LoopState`              ``a, b{n,}, c`` with relaxed contiguity
:class:`EventOnlyPlan`    :class:`EventOnlyState`         conditions that read only the event
:class:`GeneralPlan`      :class:`NFAState`               any pattern (Flink's NFA, interpreted)
:class:`FlinkOrderPlan`   :class:`FlinkState`             ``flink_order``: Flink's order among ties
========================  ==============================  ==========================================

:func:`choose_plan` is the one place that decides.
"""

from __future__ import annotations

from typing import Protocol, TypeVar

from workbench.engine.events import Event
from workbench.engine.matcher import Context
from workbench.engine.nfa.analysis import Analysis
from workbench.engine.nfa.buffer import Time
from workbench.engine.nfa.choice import pattern_has_choice
from workbench.engine.nfa.eventonly import EventOnlyPlan, EventOnlyState
from workbench.engine.nfa.flink import FlinkOrderPlan
from workbench.engine.nfa.general import GeneralPlan
from workbench.engine.nfa.graph import CompiledNFA
from workbench.engine.nfa.linear import LinearPlan, LinearState
from workbench.engine.nfa.loop import LoopPlan, LoopState
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.runaggs import RunAggregates
from workbench.engine.nfa.state import NFAState
from workbench.engine.nfa.store import BufferStore, PathStore

__all__ = ["AnyPlan", "Plan", "PlanState", "choose_plan"]

#: the per-key state of any plan
PlanState = NFAState | LinearState | LoopState | EventOnlyState
S = TypeVar("S", NFAState, LinearState, LoopState, EventOnlyState)
"""The per-key state class a plan owns."""


class Plan(Protocol[S]):
    """What every plan does for one key (the matcher's per-key half)."""

    def new_state(self) -> S:
        """A fresh per-key state."""
        ...

    def is_idle(self, state: S) -> bool:
        """Nothing in flight."""
        ...

    def process(self, state: S, event: Event, ctx: Context) -> None:
        """Advance time to the event, then step the partial matches it can change."""
        ...

    def advance(self, state: S, t: Time, ctx: Context) -> None:
        """Advance time: expire windows, release pending ``notFollowedBy`` matches."""
        ...

    def on_timer(self, state: S, time: Time, token: object, ctx: Context) -> None:
        """A window deadline passed with no event."""
        ...


#: any of the plans
AnyPlan = LinearPlan | LoopPlan | EventOnlyPlan | GeneralPlan


def choose_plan(
    pattern: SequencePattern,
    nfa: CompiledNFA,
    facts: Analysis,
    aggs: RunAggregates,
    *,
    specialise: bool = True,
) -> AnyPlan:
    """The plan that runs ``pattern``.

    ``flink_order`` needs Flink's heap order and shared buffer. Otherwise the first fast plan whose
    shape the compiled NFA has, else the general plan with a path per partial match. With
    ``specialise=False`` the general plan runs on the shared buffer, as Flink does (tests compare
    the fast plans with it).
    """
    if pattern.flink_order:
        return FlinkOrderPlan(pattern, nfa, facts, aggs, BufferStore())
    if not specialise:
        return GeneralPlan(pattern, nfa, facts, aggs, BufferStore())
    if pattern_has_choice(pattern):  # why: the fast plans' shapes have no alternation
        return GeneralPlan(pattern, nfa, facts, aggs, PathStore())
    return (
        LinearPlan.build(pattern, nfa, facts)
        or LoopPlan.build(pattern, nfa, facts)
        or EventOnlyPlan.build(pattern, nfa, facts)
        or GeneralPlan(pattern, nfa, facts, aggs, PathStore())
    )
