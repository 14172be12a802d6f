"""A fluent, Flink-like builder over the pattern dataclasses (pure sugar; every step is immutable).

>>> p = (
...     begin("a").where("e.type == 'a'")
...     .followed_by("b").where("e.type == 'b'").one_or_more().consecutive()
...     .not_followed_by("x").where("e.type == 'x'")
...     .within(10)
...     .build("p")
... )
>>> [s.name for s in p.stages], p.within_ms
(['a', 'b', 'x'], 10)

Alternation and permutation (SQL ``|`` and ``PERMUTE``) are elements made by :func:`alternation`
and :func:`permute`, appended like a stage:

>>> p = begin("x").followed_by(alternation(begin("a").next("b"), "c")).build("p")
>>> [[s.name for s in b] for b in p.stages[1].branches]
[['a', 'b'], ['c']]

Flink's camelCase names are aliases: ``followedBy``, ``followedByAny``, ``notNext``,
``notFollowedBy``, ``oneOrMore``, ``timesOrMore``, ``allowCombinations``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Union

from workbench.engine.expr import ir
from workbench.engine.nfa.pattern import (
    AggregateSpec,
    AllOf,
    Alternation,
    AnyOf,
    Condition,
    Contiguity,
    GroupStage,
    Measure,
    Permute,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.errors import PatternError

__all__ = ["PatternBuilder", "alternation", "begin", "permute"]

StageLike = Stage | GroupStage | Alternation | Permute
Step = Union[str, "PatternBuilder", Alternation, Permute]


@dataclass(frozen=True)
class PatternBuilder:
    """An immutable chain of stages under construction; the last stage is the one being edited."""

    stages: tuple[StageLike, ...]
    skip_strategy: SkipStrategy = field(default_factory=SkipStrategy)
    aggregates: tuple[AggregateSpec, ...] = ()
    window_ms: int | float | None = None
    measures: tuple[Measure, ...] = ()

    # ------------------------------------------------------------------ helpers
    def _edit(self, **changes: object) -> PatternBuilder:
        last = self.stages[-1]
        try:
            new = replace(last, **changes)  # type: ignore[arg-type]
        except TypeError as err:
            msg = f"cannot set {sorted(changes)} on a {type(last).__name__}: {err}"
            raise PatternError(msg, element=last.name) from None
        return replace(self, stages=(*self.stages[:-1], new))

    def _quant(self, **changes: object) -> PatternBuilder:
        last = self.stages[-1]
        if last.negated:
            msg = "quantifier/optional not applicable to NOT pattern (notNext/notFollowedBy)"
            raise PatternError(msg, element=last.name)
        return self._edit(quantifier=replace(last.quantifier, **changes))  # type: ignore[arg-type]

    def _append(self, stage: Step, contiguity: Contiguity, negated: bool = False) -> PatternBuilder:
        if isinstance(stage, Alternation | Permute):
            if negated:
                msg = "an alternation or permute cannot be negated"
                raise PatternError(msg, element=stage.name)
            return replace(self, stages=(*self.stages, replace(stage, contiguity=contiguity)))
        if isinstance(stage, PatternBuilder):
            if negated:
                msg = "a group cannot be negated"
                raise PatternError(msg)
            group = GroupStage(name=f"group_{len(self.stages)}", stages=stage.stages, contiguity=contiguity)
            return replace(self, stages=(*self.stages, group))
        return replace(self, stages=(*self.stages, Stage(stage, contiguity=contiguity, negated=negated)))

    # ------------------------------------------------------------------ conditions
    def where(self, cond: Condition) -> PatternBuilder:
        """AND a condition into the current stage."""
        last = self.stages[-1]
        if isinstance(last, GroupStage | Alternation | Permute):
            msg = "a group or alternation has no where(); put conditions on its stages"
            raise PatternError(msg, element=last.name)
        new: Condition = cond if last.where is None else AllOf((last.where, cond))
        return self._edit(where=new)

    def or_(self, cond: Condition) -> PatternBuilder:
        """OR a condition with everything accumulated so far (Flink ``or``)."""
        last = self.stages[-1]
        if isinstance(last, GroupStage | Alternation | Permute) or last.where is None:
            msg = "or() needs a preceding where()"
            raise PatternError(msg, element=last.name)
        return self._edit(where=AnyOf((last.where, cond)))

    def until(self, cond: Condition) -> PatternBuilder:
        """Stop condition of a looping stage."""
        if self.stages[-1].until is not None:
            msg = "The until condition is already set"
            raise PatternError(msg, element=self.stages[-1].name)
        return self._edit(until=cond)

    def subtype(self, *types: str) -> PatternBuilder:
        """Accept only events of these types (Flink ``subtype``)."""
        return self._edit(types=tuple(types))

    # ------------------------------------------------------------------ chaining
    def next(self, stage: Step) -> PatternBuilder:
        """Strict contiguity."""
        return self._append(stage, Contiguity.STRICT)

    def followed_by(self, stage: Step) -> PatternBuilder:
        """Relaxed contiguity."""
        return self._append(stage, Contiguity.RELAXED)

    def followed_by_any(self, stage: Step) -> PatternBuilder:
        """Non-deterministic relaxed contiguity."""
        return self._append(stage, Contiguity.NONDETERMINISTIC_RELAXED)

    def not_next(self, name: str) -> PatternBuilder:
        """The next event must not satisfy the new stage's condition."""
        return self._append(name, Contiguity.STRICT, negated=True)

    def not_followed_by(self, name: str) -> PatternBuilder:
        """No event satisfying the new stage's condition until the next stage (or the window end)."""
        return self._append(name, Contiguity.RELAXED, negated=True)

    # ------------------------------------------------------------------ quantifiers
    def times(self, n: int, m: int | None = None, window_ms: int | float | None = None) -> PatternBuilder:
        """``times(n)`` / ``times(n, m)`` (``times(0, m)`` = optional ``times(1, m)``)."""
        q = Quantifier.times(n, m, window_ms=window_ms)
        return self._quant(min=q.min, max=q.max, optional=q.optional, window_ms=window_ms)

    def one_or_more(self, window_ms: int | float | None = None) -> PatternBuilder:
        """``oneOrMore()``."""
        return self._quant(min=1, max=None, window_ms=window_ms)

    def times_or_more(self, n: int, window_ms: int | float | None = None) -> PatternBuilder:
        """``timesOrMore(n)``."""
        return self._quant(min=n, max=None, window_ms=window_ms)

    def optional(self) -> PatternBuilder:
        """The stage may be skipped."""
        return self._quant(optional=True)

    def greedy(self) -> PatternBuilder:
        """Take as many events as possible."""
        return self._quant(greedy=True)

    def consecutive(self) -> PatternBuilder:
        """Strict contiguity between the stage's own events."""
        return self._quant(inner=Contiguity.STRICT)

    def allow_combinations(self) -> PatternBuilder:
        """Non-deterministic relaxed contiguity between the stage's own events."""
        return self._quant(inner=Contiguity.NONDETERMINISTIC_RELAXED)

    # ------------------------------------------------------------------ windows, skip, aggregates
    def within(self, ms: int | float) -> PatternBuilder:
        """First-and-last window of the whole pattern."""
        return replace(self, window_ms=ms)

    def within_prev(self, ms: int | float) -> PatternBuilder:
        """Previous-and-current window on the current stage."""
        return self._edit(within_prev_ms=ms)

    def skip(self, strategy: SkipStrategy | str) -> PatternBuilder:
        """After-match skip strategy (object or ``"skip_to_first:NAME"`` text)."""
        s = SkipStrategy.parse(strategy) if isinstance(strategy, str) else strategy
        return replace(self, skip_strategy=s)

    def aggregate(self, spec: AggregateSpec) -> PatternBuilder:
        """Declare a named aggregate."""
        return replace(self, aggregates=(*self.aggregates, spec))

    def measure(self, name: str, expr: str | ir.Node) -> PatternBuilder:
        """Add a measure (SQL ``MEASURES``): ``expr`` evaluated once per detection, column ``name``."""
        return replace(self, measures=(*self.measures, Measure(name, expr)))  # type: ignore[arg-type]

    def build(self, name: str, **options: object) -> SequencePattern:
        """The :class:`SequencePattern` (``options``: other SequencePattern fields)."""
        return SequencePattern(
            name,
            self.stages,
            within_ms=self.window_ms,
            skip=self.skip_strategy,
            aggregates=self.aggregates,
            measures=options.pop("measures", self.measures),  # type: ignore[arg-type]
            **options,  # type: ignore[arg-type]
        )

    followedBy = followed_by
    followedByAny = followed_by_any
    notNext = not_next
    notFollowedBy = not_followed_by
    oneOrMore = one_or_more
    timesOrMore = times_or_more
    allowCombinations = allow_combinations


def begin(name: Step, skip: SkipStrategy | str | None = None) -> PatternBuilder:
    """Start a pattern with stage ``name`` (or a group built with another builder, or a choice)."""
    strategy = SkipStrategy() if skip is None else SkipStrategy.parse(skip) if isinstance(skip, str) else skip
    if isinstance(name, Alternation | Permute):
        return PatternBuilder((name,), strategy)
    if isinstance(name, PatternBuilder):
        group = GroupStage(name="group_0", stages=name.stages, contiguity=Contiguity.STRICT)
        return PatternBuilder((group,), strategy)
    return PatternBuilder((Stage(name, contiguity=Contiguity.STRICT),), strategy)


def _branch(item: str | PatternBuilder) -> tuple[StageLike, ...]:
    return (Stage(item),) if isinstance(item, str) else item.stages


def alternation(*branches: str | PatternBuilder) -> Alternation:
    """SQL ``(a b) | c``: each branch a stage name or a chain built with :func:`begin`; the left
    branch is preferred. Append it with ``begin`` / ``next`` / ``followed_by`` / ``followed_by_any``."""
    return Alternation(tuple(_branch(b) for b in branches))


def permute(*elements: str | PatternBuilder, inner: Contiguity = Contiguity.RELAXED) -> Permute:
    """SQL ``PERMUTE(a, b, c)``: the elements in any order (a chain of several stages is one group);
    ``inner`` is the contiguity between consecutive elements (``STRICT``: SQL's)."""
    out: list[StageLike] = []
    for e in elements:
        stages = _branch(e)
        if len(stages) > 1:  # why: named and written as the language does, ``(f g)``
            head = replace(stages[0], contiguity=Contiguity.RELAXED)
            stages = (GroupStage("(" + " ".join(s.name for s in stages) + ")", (head, *stages[1:])),)
        out.append(stages[0])
    return Permute(tuple(out), inner=inner)
