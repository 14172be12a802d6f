"""The sequence-pattern API (Flink CEP style) as frozen dataclasses.

A :class:`SequencePattern` is a list of stages. Each :class:`Stage` (or :class:`GroupStage`) says
how it follows the previous stage (:class:`Contiguity`: Flink's ``next`` / ``followedBy`` /
``followedByAny``; with ``negated=True``: ``notNext`` / ``notFollowedBy``), which events it accepts
(``where``, ``until``, ``types``) and how many (:class:`Quantifier`: ``times(n)``, ``times(n, m)``,
``oneOrMore()``, ``timesOrMore(n)``, ``optional()``, ``greedy()``, ``consecutive()``,
``allowCombinations()``). The pattern adds ``within_ms`` (first-and-last window), the after-match
:class:`SkipStrategy` and named :class:`AggregateSpec` s. The fluent builder in
:mod:`workbench.engine.nfa.builder` is sugar over these classes.

Conditions (:data:`Condition`) are either

* an **expression** (:mod:`workbench.engine.expr`): text is parsed into the expression IR when
  the stage is defined (an invalid one raises :class:`~workbench.errors.ExpressionError` with its
  line and column), so a pattern built from ``%%cep`` text and one built in Python compare equal.
  It reads ``e`` (the event being tested; ``e.price`` reads a field, ``e.type`` and ``e.t`` the
  type and time; a missing field is NULL), ``matched('stage')`` (the events this partial match
  has already taken for ``stage``, in order, **never including** ``e``), and every declared
  aggregate by name;
* a **callable** ``fn(e)`` or ``fn(e, ctx)`` returning a truthy value, where ``ctx`` is a
  :class:`~workbench.engine.nfa.conditions.ConditionContext` with ``ctx.matched(stage)``,
  ``ctx.aggregate(name)`` (also ``ctx[name]``) and ``ctx.timestamp``;
* :class:`AllOf` / :class:`AnyOf` of conditions (``where(a).where(b).or_(c)`` is
  ``AnyOf((AllOf((a, b)), c))``: Flink's ``or`` applies to everything accumulated before it).

``None`` means "always true".
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from dataclasses import field as _field
from typing import Any, Literal, Union

from workbench.engine.expr import as_tree, ir
from workbench.engine.nfa.measures import Measure, Subsets, subsets_of
from workbench.engine.nfa.quantifier import Contiguity, Quantifier
from workbench.errors import PatternError

__all__ = [
    "AggregateSpec",
    "AllOf",
    "Alternation",
    "AnyOf",
    "Condition",
    "Contiguity",
    "Element",
    "GroupStage",
    "Measure",
    "Permute",
    "Quantifier",
    "SequencePattern",
    "SkipKind",
    "SkipStrategy",
    "Stage",
    "stage_names",
]


@dataclass(frozen=True, slots=True)
class AllOf:
    """All conditions hold (Flink ``where(a).where(b)``)."""

    parts: tuple[Condition, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    """At least one condition holds (Flink ``.or(c)``, which ORs with everything before it)."""

    parts: tuple[Condition, ...]


Condition = Union[str, ir.Node, Callable[..., object], AllOf, AnyOf]  # noqa: UP007 - runtime alias


def as_condition(cond: Condition | None, element: str) -> Condition | None:
    """``cond`` with its text parsed into the expression IR (once, when the pattern is defined).

    Raises :class:`~workbench.errors.ExpressionError` with the line and column of what is wrong.
    """
    if isinstance(cond, str):
        return as_tree(cond, f"condition of stage {element!r}")
    if isinstance(cond, AllOf | AnyOf):
        parts = tuple(as_condition(p, element) for p in cond.parts)
        return type(cond)(parts)  # type: ignore[arg-type]
    return cond


#: the most elements a ``permute`` may list (its orders grow as the factorial: 6 give 720 branches)
MAX_PERMUTE = 6


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage (Flink: one named ``Pattern`` in the chain).

    Attributes:
        name: unique stage name (the key of the match's ``stage -> events`` view).
        where: the condition an event must satisfy (``None`` = any event).
        contiguity: how the stage's first event follows the previous stage (ignored for the first
            stage: a match can start at any event).
        negated: ``notNext`` (with ``STRICT``) or ``notFollowedBy`` (with ``RELAXED``).
        quantifier: how many events the stage takes.
        until: stop condition of a looping stage (Flink ``until``).
        types: when non-empty, the stage only accepts events of these types (ANDed with ``where``;
            lets the matcher index partial matches by event type even for callable conditions).
        within_ms: a first-and-last window declared on this stage (the pattern uses the minimum of
            all declared windows; ``0`` disables windows, as in Flink).
        within_prev_ms: Flink ``within(w, PREVIOUS_AND_CURRENT)``: a partial match waiting for this
            stage dies when ``t - t_previous_taken >= w`` (ignored on quantified stages, as in Flink).
    """

    name: str
    where: Condition | None = None
    contiguity: Contiguity = Contiguity.RELAXED
    negated: bool = False
    quantifier: Quantifier = _field(default_factory=Quantifier)
    until: Condition | None = None
    types: tuple[str, ...] = ()
    within_ms: int | float | None = None
    within_prev_ms: int | float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "where", as_condition(self.where, self.name))
        object.__setattr__(self, "until", as_condition(self.until, self.name))
        types: object = self.types
        if isinstance(types, str):
            object.__setattr__(self, "types", (types,))
        elif not isinstance(types, tuple):
            object.__setattr__(self, "types", tuple(self.types))


@dataclass(frozen=True, slots=True)
class GroupStage:
    """A group pattern (Flink ``begin(Pattern)`` / ``next(Pattern)`` / ...) with its own quantifier.

    The group's stages are inlined by the compiler; stage names must be unique across the whole
    pattern. A group cannot be negated or greedy and has no ``where``.

    Attributes:
        name: the group's name (used in messages and for the trace).
        stages: the inner stages (the first one's ``contiguity`` is irrelevant).
        contiguity: how the group's first event follows the previous stage.
        quantifier: how many times the whole group repeats.
        until: stop condition of a looping group (ANDed into every inner stage).
    """

    name: str
    stages: tuple[Element, ...]
    contiguity: Contiguity = Contiguity.RELAXED
    quantifier: Quantifier = _field(default_factory=Quantifier)
    until: Condition | None = None
    within_ms: int | float | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "until", as_condition(self.until, self.name))
        stages: object = self.stages
        if not isinstance(stages, tuple):
            object.__setattr__(self, "stages", tuple(self.stages))

    @property
    def negated(self) -> bool:
        """Groups are never negated."""
        return False


class _Choice:
    """What an alternation or permutation answers where a stage would: one pass, never negated."""

    __slots__ = ()

    @property
    def quantifier(self) -> Quantifier:
        """Exactly once (alternations take no quantifier)."""
        return Quantifier()

    @property
    def negated(self) -> bool:
        """Never negated."""
        return False

    @property
    def until(self) -> None:
        """No stop condition."""
        return None

    @property
    def within_ms(self) -> None:
        """No window of its own."""
        return None


@dataclass(frozen=True, slots=True)
class Alternation(_Choice):
    """Alternation of sub-sequences (SQL ``(a b) | c``): a match takes exactly one branch.

    Each branch is a chain of stages (its first element's contiguity is irrelevant: the branch
    follows the previous element with the alternation's ``contiguity``). Branches are preferred in
    order (SQL's lexicographic order): when several complete at the same event, the left one comes
    first, so it is the one that survives a skip strategy. The stages of the branch not taken have
    no events in the match. An alternation takes no quantifier, is never negated and cannot be
    inside a :class:`GroupStage` (groups may be inside its branches).

    Attributes:
        branches: at least two chains of at least one element each; stage names unique across all.
        contiguity: how the taken branch's first event follows the previous element.
        name: the name used in messages.
    """

    branches: tuple[tuple[Element, ...], ...]
    contiguity: Contiguity = Contiguity.RELAXED
    name: str = _field(default="alternation", compare=False)

    def __post_init__(self) -> None:
        # A branch head's own contiguity is moot (the alternation's applies): stored as RELAXED so
        # equal alternations compare equal however they were written.
        branches = tuple(tuple(_moot(e) if i == 0 else e for i, e in enumerate(b)) for b in self.branches)
        object.__setattr__(self, "branches", branches)


@dataclass(frozen=True, slots=True)
class Permute(_Choice):
    """SQL ``PERMUTE(a, b, c)``: the elements in any order, each exactly once.

    It is the :class:`Alternation` of every permutation in lexicographic order of the listed
    elements (``a b c | a c b | b a c | ...``, the first listed preferred); ``inner`` is the
    contiguity between consecutive elements of the permutation (``STRICT`` is SQL's). Elements
    cannot be optional or negated (two orders would give the same match).
    """

    elements: tuple[Element, ...]
    contiguity: Contiguity = Contiguity.RELAXED
    inner: Contiguity = Contiguity.RELAXED
    name: str = _field(default="permute", compare=False)

    def __post_init__(self) -> None:
        if len(self.elements) > MAX_PERMUTE:  # why: every order is a branch of the automaton
            msg = (
                f"permute of {len(self.elements)} elements has {math.factorial(len(self.elements)):,} "
                f"orders; at most {MAX_PERMUTE} elements ({math.factorial(MAX_PERMUTE)} orders) can be"
                " permuted"
            )
            raise PatternError(msg, element=self.name)
        object.__setattr__(self, "elements", tuple(_moot(e) for e in self.elements))

    def alternation(self) -> Alternation:
        """The alternation of all orders (lexicographic in the listed order)."""
        orders = itertools.permutations(self.elements)
        branches = tuple(tuple(replace(e, contiguity=self.inner) for e in order) for order in orders)
        return Alternation(branches, self.contiguity, self.name)


def _moot(e: Element) -> Element:
    """``e`` with the contiguity it ignores (at the head of a branch) set to ``RELAXED``."""
    obj: object = e
    if isinstance(obj, Stage | GroupStage | Alternation | Permute) and not e.negated:
        return replace(e, contiguity=Contiguity.RELAXED)
    return e


#: an element of a sequence: a stage, a group, an alternation or a permutation
Element = Union[Stage, GroupStage, Alternation, Permute]  # noqa: UP007 - runtime alias


SkipKind = Literal["no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last"]
_SKIP_KINDS = ("no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last")


@dataclass(frozen=True, slots=True)
class SkipStrategy:
    """After-match skip strategy.

    Attributes:
        kind: ``no_skip`` (default), ``skip_to_next``, ``skip_past_last_event``, ``skip_to_first``,
            ``skip_to_last``.
        stage: the target stage of ``skip_to_first`` / ``skip_to_last``.
        throw_on_miss: with ``skip_to_first``/``skip_to_last``: raise
            :class:`~workbench.errors.SkipStrategyError` when a match has no event for ``stage``
            or the skip would land on the match's first event.
    """

    kind: SkipKind = "no_skip"
    stage: str | None = None
    throw_on_miss: bool = False

    def __post_init__(self) -> None:
        if self.kind not in _SKIP_KINDS:
            msg = f"unknown skip strategy {self.kind!r}; known: {', '.join(_SKIP_KINDS)}"
            raise PatternError(msg)
        if self.kind in ("skip_to_first", "skip_to_last") and not self.stage:
            msg = f"{self.kind} needs a target stage"
            raise PatternError(msg)

    @classmethod
    def parse(cls, text: str, *, throw_on_miss: bool = False) -> SkipStrategy:
        """``"skip_to_first:NAME"`` style text (the conformance format)."""
        kind, _, stage = text.partition(":")
        return cls(kind, stage or None, throw_on_miss)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class AggregateSpec:
    """A named incremental aggregate over the events a stage takes in one partial match.

    Conditions read it by ``name``. The value is kept per partial match, updated in O(1) when the
    stage takes an event and copied in O(number of aggregates) when a partial match branches.

    Attributes:
        name: the variable name conditions use.
        function: an aggregate name for :func:`workbench.engine.aggregates.make_aggregate`
            (``count``, ``sum``, ``avg``, ``min``, ``max``, ``first``, ``last``, ``var``, ``std``...).
        stage: the stage whose taken events feed it.
        field: the event field to aggregate (``None``: the event itself, e.g. for ``count``).
        params: extra keyword arguments for the factory.
        include_current: ``False`` (Flink's view, default): while stage ``stage`` evaluates a
            candidate event, the aggregate covers only the events taken before it. ``True``
            (SQL MATCH_RECOGNIZE ``DEFINE``): the candidate event is tentatively included.
    """

    name: str
    function: str
    stage: str
    field: str | None = None
    params: Mapping[str, Any] = _field(default_factory=dict)
    include_current: bool = False


@dataclass(frozen=True, slots=True)
class SequencePattern:
    """A Flink-CEP-style sequence pattern; ``compile()`` gives the NFA matcher.

    Attributes:
        name: the pattern's name (unique within one engine).
        stages: the stages in order (at least one).
        within_ms: first-and-last window: a partial match dies when ``t - t_first >= within_ms``
            (``None`` = no window). Stage-level ``within_ms`` values also count (minimum wins).
        skip: the after-match skip strategy.
        aggregates: named aggregates conditions can read.
        max_partial_matches: cap on live partial matches per key (``None`` = unlimited). When it
            bites the oldest partial matches are dropped, a :class:`RuntimeWarning` is issued and
            ``NFAState.dropped`` counts them.
        emit_timeouts: emit timed-out partial matches as ``kind="timeout"`` detections.
        flink_order: reproduce Flink's exact order among partial/completed matches that share
            their first event (Java ``PriorityQueue`` heap order). That order decides emission
            order and, under a skip strategy, *which* of several equal-start matches survives.
            Costs O(live partial matches) per event; the default (``False``) orders ties by
            creation and visits only the partial matches an event can change.
        measures: named expressions evaluated once per detection (:class:`Measure`, SQL
            ``MEASURES``); a mapping ``name -> expression`` is accepted too. They become the
            detection's ``measures`` and columns of the detections DataFrame, in this order.
        emit_into: an event type: each detection (match or timeout) is also an event of this type
            for the other patterns of the engine, its measures as fields
            (:mod:`workbench.engine.derived`).
        subsets: named subsets of the stages (SQL ``SUBSET ab = (a, b)``): a mapping ``name ->
            stage names``; a measure reads ``matched('ab')``, the events of those stages in match
            order (over a timeout, those the partial match has).
    """

    name: str
    stages: tuple[Element, ...]
    within_ms: int | float | None = None
    skip: SkipStrategy = _field(default_factory=SkipStrategy)
    aggregates: tuple[AggregateSpec, ...] = ()
    max_partial_matches: int | None = 100_000
    emit_timeouts: bool = True
    flink_order: bool = False
    measures: tuple[Measure, ...] = ()
    emit_into: str | None = None
    subsets: Mapping[str, tuple[str, ...]] = _field(default_factory=Subsets)

    def __post_init__(self) -> None:
        # Accept lists for convenience; store tuples so equal patterns compare (and hash) equal.
        stages: object = self.stages
        if not isinstance(stages, tuple):
            object.__setattr__(self, "stages", tuple(self.stages))
        aggregates: object = self.aggregates
        if not isinstance(aggregates, tuple):
            object.__setattr__(self, "aggregates", tuple(self.aggregates))
        object.__setattr__(self, "measures", _measures(self.measures, self.name))
        names = frozenset(stage_names(self.stages))
        object.__setattr__(self, "subsets", subsets_of(self.subsets, names, self.name))
        into: object = self.emit_into
        if into is not None and (not isinstance(into, str) or not into):
            msg = f"emit_into must be an event type name, got {self.emit_into!r}"
            raise PatternError(msg, pattern=self.name)
        if self.max_partial_matches is not None and self.max_partial_matches < 1:
            msg = f"max_partial_matches must be >= 1 or None, got {self.max_partial_matches!r}"
            raise PatternError(msg, pattern=self.name)


def _measures(value: object, pattern: str) -> tuple[Measure, ...]:
    """``measures`` as a tuple of :class:`Measure` (from a mapping or pairs); names unique."""
    items: list[object] = list(value.items()) if isinstance(value, Mapping) else list(value)  # type: ignore[call-overload]
    out = tuple(m if isinstance(m, Measure) else Measure(*m) for m in items)  # type: ignore[misc]
    names = [m.name for m in out]
    for name in names:
        if names.count(name) > 1:
            msg = f"measure {name!r} is defined twice"
            raise PatternError(msg, pattern=pattern)
    return out


def stage_names(elements: Sequence[Element]) -> Iterator[str]:
    """Every stage name of ``elements``, inside groups, alternations and permutations too."""
    for s in elements:
        if isinstance(s, GroupStage):
            yield from stage_names(s.stages)
        elif isinstance(s, Alternation):
            for branch in s.branches:
                yield from stage_names(branch)
        elif isinstance(s, Permute):
            yield from stage_names(s.elements)
        else:
            yield s.name
