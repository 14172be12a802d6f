"""The engine-wide memory budget: the oldest partial matches and group instances go first.

Each pattern caps its partial matches per key (``max_partial_matches``); the engine also caps the
partial matches and reaction-group instances live at once across *all* keys and patterns
(``Engine(max_live=...)``, :data:`DEFAULT_MAX_LIVE` by default). The policy:

* **Oldest first, across all keys.** When the live total passes the limit, the partial matches
  (and group instances) that started earliest -- by the time and arrival position of their first
  event, or the creation time of an instance -- are dropped, whichever key and pattern holds them.
* **Down to 7/8 of the limit.** A shed leaves room for ``limit // 8`` new ones, so its cost (one
  census of the keys holding state and a merge of their start positions) is spread over the
  partial matches started before the next one: a constant cost per partial match, amortised.
* **Checked between events, not inside them.** The engine counts the live total every ``stride``
  events; the stride follows the growth seen since the last count (at most :data:`MAX_STRIDE`
  events, or a quarter of the keys holding state when there are more), so a run that never
  approaches the limit pays one count per few thousand events and nothing per event. Where every
  pattern bounds what one event can add (:func:`growth`), the next count is simply due when that
  bound could first reach the limit.

What is dropped is counted in ``Engine.stats["dropped"]`` (per pattern in the run's
:class:`~workbench.engine.budget.Budget`), traced as ``PRUNED`` and warned about once per pattern
and run, with the same text every time.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
from collections.abc import Hashable, Iterable, MutableMapping, Sequence
from typing import TYPE_CHECKING, cast

from workbench.engine.detection import TraceKind
from workbench.engine.host import HostContext, KeyState
from workbench.engine.matcher import Context, Matcher
from workbench.engine.nfa.eventonly import EventOnlyPlan, EventOnlyState
from workbench.engine.nfa.general import GeneralPlan
from workbench.engine.nfa.linear import LinearPlan
from workbench.engine.nfa.loop import LoopPlan, LoopState
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.state import NFAState
from workbench.engine.nfa.streamed import StreamMatcher
from workbench.engine.reactions.delivery import Delivery
from workbench.engine.reactions.matcher import GroupMatcher
from workbench.engine.reactions.state import GroupState, InstanceState
from workbench.errors import CepError

if TYPE_CHECKING:
    from workbench.engine.nfa.linear import LinearState

__all__ = ["DEFAULT_MAX_LIVE", "MAX_STRIDE", "Shedder", "budget_detail"]

#: the default engine-wide limit, sized for about 512 MB: a two-event partial match with its first
#: event takes about 460 bytes in the linear plan and 1,060 in the general one (tracemalloc), so
#: 230-530 MB at the limit (``python -m benchmarks.memory --only budget``)
DEFAULT_MAX_LIVE = 500_000
#: the most events between two counts of the live total
MAX_STRIDE = 4096
#: a partial match's or instance's age: the time and arrival position of its first event
Age = tuple[float, int]


def budget_detail(limit: int) -> dict[str, object]:
    """The trace detail of a partial match the engine-wide budget dropped.

    >>> budget_detail(10)["reason"]
    'budget: more than 10 partial matches in the engine'
    """
    return {"reason": f"budget: more than {limit} partial matches in the engine", "max_live": limit}


class _ShedContext:
    """The context a plan's own cap sees while the engine sheds: budget detail, budget warning."""

    __slots__ = ("inner", "limit")

    def __init__(self, inner: HostContext, limit: int) -> None:
        self.inner = inner
        self.limit = limit

    @property
    def tracing(self) -> bool:
        return self.inner.tracing

    def trace(
        self, kind: TraceKind, instance: int, element: str | None = None, event_seq: int | None = None,
        detail: dict[str, object] | None = None,
    ) -> None:  # fmt: skip
        self.inner.trace(kind, instance, element, event_seq, budget_detail(self.limit))

    def drop(self, count: int) -> None:
        self.inner.drop(count)

    def warn_once(self, topic: str, message: str) -> None:
        self.inner.warn_once(
            "max_live",
            f"pattern {self.inner.pattern!r}: the engine held more than {self.limit} partial matches "
            "and group instances; the oldest were dropped (max_live; given once per run, the run's "
            "stats count every dropped one)",
        )


def _target(matcher: Matcher, state: object) -> tuple[object, object]:
    """The plan (or group matcher) and its state behind a matcher's per-key state."""
    if isinstance(matcher, StreamMatcher):
        return _target(matcher.inner, getattr(state, "inner", None))
    if isinstance(matcher, NFAMatcher):
        return matcher.plan, state
    return matcher, state


def live(matcher: Matcher, state: object) -> int:
    """How many partial matches (or group instances) ``state`` holds (0: nothing this budget sheds)."""
    if type(state) is LoopState:  # why first: the budget counts every key's state, often a loop's
        return state.partial_matches
    plan, st = _target(matcher, state)
    if isinstance(st, NFAState):
        return len(st.runs)
    if isinstance(st, LoopState | EventOnlyState):
        return st.partial_matches
    if isinstance(plan, LinearPlan):
        return len(cast("LinearState", st).runs)
    if isinstance(st, GroupState):
        return len(st.instances)
    return 0


def growth(matcher: Matcher) -> int | None:
    """The most partial matches one event can add to one key's state (``None``: no bound known).

    A linear plan starts at most one partial match per event and, unless a middle stage is
    ``followed by any`` (a partial match that takes the event also stays behind), never turns one
    into two.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> from workbench.engine.families import compile_matcher
    >>> growth(compile_matcher(SequencePattern("p", (Stage("a"), Stage("b")))))
    1
    """
    plan, _ = _target(matcher, None)
    if isinstance(plan, LinearPlan) and not plan.forks:
        return 1
    return None


def ages(matcher: Matcher, state: object) -> list[Age]:
    """The ages of ``state``'s partial matches (or instances), oldest first."""
    plan, st = _target(matcher, state)
    if isinstance(st, NFAState):
        return sorted(r.start_id for r in st.runs.values() if r.start_id is not None)
    if isinstance(st, LoopState):
        return sorted(r.start_id for r in (*st.hot, *st.cold, *st.last))
    if isinstance(st, EventOnlyState):
        return [g.start_id for g in st.groups for _ in g.runs]  # groups are kept in start order
    if isinstance(plan, LinearPlan):
        return [r.start_id for r in cast("LinearState", st).runs]  # kept in start order
    if isinstance(st, GroupState):
        return sorted(map(_instance_age, st.instances.values()))
    return []


def shed(matcher: Matcher, state: object, n: int, ctx: _ShedContext) -> None:
    """Drop the ``n`` oldest partial matches (or instances) of ``state``."""
    plan, st = _target(matcher, state)
    if isinstance(plan, GeneralPlan) and isinstance(st, NFAState):
        oldest = sorted(st.runs.values(), key=lambda r: (r.start_id, r.rid))[:n]
        for run in oldest:
            st.remove(run)
            plan.store.release(st, run.node, run.version)
            if ctx.tracing:
                ctx.trace(TraceKind.PRUNED, run.inst)
        plan._after_cap(st)
        st.dropped += n
        ctx.drop(n)
        ctx.warn_once("max_live", "")
    elif isinstance(plan, LinearPlan | LoopPlan | EventOnlyPlan):
        plan._cap(st, cast(Context, ctx), live(matcher, state) - n)  # type: ignore[arg-type]
    elif isinstance(plan, GroupMatcher) and isinstance(st, GroupState):
        _shed_instances(plan, st, n, ctx)


def _instance_age(inst: InstanceState) -> Age:
    """A group instance's age: its creation time and its initiator's position (start-up ones first)."""
    return (inst.created, -1 if inst.initiator is None else inst.initiator.seq)


def _shed_instances(matcher: GroupMatcher, state: GroupState, n: int, ctx: _ShedContext) -> None:
    """End the ``n`` oldest group instances without a result (their pending timers go stale)."""
    roots = sorted(state.instances.values(), key=_instance_age)[:n]
    for root in roots:
        Delivery(matcher.plan, state, root, matcher.group, root, (), ctx.inner, None).end()
        if ctx.tracing:
            ctx.trace(TraceKind.PRUNED, root.id)
    ctx.drop(n)
    ctx.warn_once("max_live", "")


class Shedder:
    """When to count the engine's live partial matches, and what to drop when there are too many.

    Args:
        limit: the most partial matches and group instances live at once (``None``: no limit).
    """

    __slots__ = ("countdown", "last", "limit", "since")

    def __init__(self, limit: int | None) -> None:
        if limit is not None and (type(limit) is not int or limit < 1):
            msg = f"max_live must be an integer >= 1 or None, got {limit!r}"
            raise CepError(msg)
        self.limit = limit
        #: events left before the next count (the first comes before one event each could fill it)
        self.countdown = MAX_STRIDE if limit is None else max(1, min(MAX_STRIDE, limit // 2))
        #: the live total after the last count (and shed), and the events processed since
        self.last = 0
        self.since = 0

    def spent(self, events: int) -> bool:
        """``events`` were processed (at least one): whether a count is due."""
        events = max(events, 1)
        self.since += events
        self.countdown -= events
        return self.countdown <= 0

    def check(
        self, keys: MutableMapping[Hashable, KeyState], matchers: Sequence[Matcher], ctx: HostContext,
        *, per_event: bool = True,
    ) -> None:  # fmt: skip
        """Count the live total; over the limit, shed the oldest down to 7/8 of it; set the next count.

        ``per_event``: each input event is processed once, on arrival and alone, so the per-event
        bounds of :func:`growth` hold per input event (not with derived events or a reorder buffer).
        """
        limit = self.limit
        if limit is None:
            return
        sizes = [
            (key, pindex, n)
            for key, ks in keys.items()
            for pindex, state in ks.states.items()
            if (n := live(matchers[pindex], state))
        ]
        total = sum(n for _, _, n in sizes)
        rate = max(total - self.last, 1) / max(self.since, 1)
        self.since = 0
        if total > limit:
            total = self._shed(keys, matchers, ctx, sizes, total - (limit - limit // 8))
        self.last = total
        room = max(limit - total, 0)
        bounds = [growth(m) for m in matchers] if per_event else [None]
        if all(b is not None for b in bounds):  # why: the limit cannot be passed before room // bound events
            self.countdown = max(1, room // max(sum(b for b in bounds if b is not None), 1))
            return
        ceiling = max(MAX_STRIDE, len(sizes) // 4)
        self.countdown = max(1, min(ceiling, int(room / (2 * rate))))

    def _shed(
        self, keys: MutableMapping[Hashable, KeyState], matchers: Sequence[Matcher], ctx: HostContext,
        sizes: Iterable[tuple[Hashable, int, int]], excess: int,
    ) -> int:  # fmt: skip
        """Drop the ``excess`` oldest across all keys (ties at the cut may take a few more)."""
        assert self.limit is not None
        found = [(key, pindex, ages(matchers[pindex], keys[key].states[pindex])) for key, pindex, _ in sizes]
        # why merge: each key's ages are already in order, so the cut needs no sort of them all
        merged = heapq.merge(*(own for _, _, own in found))
        cut = next(itertools.islice(merged, excess - 1, None), None)
        if cut is None:
            return 0
        proxy = _ShedContext(ctx, self.limit)
        for key, pindex, own in found:
            n = bisect.bisect_right(own, cut)
            if not n:
                continue
            ks = keys[key]
            matcher = matchers[pindex]
            ctx.key, ctx.keystate, ctx.pindex, ctx.pattern = key, ks, pindex, matcher.name
            state = ks.states[pindex]
            shed(matcher, state, n, proxy)
            # why: as the host: an idle state goes at once unless a timer of it is pending
            if matcher.is_idle(state) and not ks.timer_counts.get(pindex):
                ctx.release(ks, pindex)
                if ks.is_empty():
                    del keys[key]
        return sum(len(own) - bisect.bisect_right(own, cut) for _, _, own in found)
