"""Flink-CEP-style sequence patterns compiled to an NFA with a Dewey-versioned shared buffer.

Public API: the pattern dataclasses (:class:`SequencePattern`, :class:`Stage`, :class:`GroupStage`,
:class:`Quantifier`, :class:`Contiguity`, :class:`SkipStrategy`, :class:`AggregateSpec`,
:class:`AllOf`, :class:`AnyOf`), the fluent builder (:func:`begin`), the compiled
:class:`NFAMatcher` and its per-key :class:`NFAState`. Semantics: ``docs/sequences.md``.
"""

from __future__ import annotations

from workbench.engine.nfa.builder import PatternBuilder, begin
from workbench.engine.nfa.conditions import ConditionContext
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import (
    AggregateSpec,
    AllOf,
    AnyOf,
    Condition,
    Contiguity,
    GroupStage,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.nfa.state import NFAState

__all__ = [
    "AggregateSpec",
    "AllOf",
    "AnyOf",
    "Condition",
    "ConditionContext",
    "Contiguity",
    "GroupStage",
    "NFAMatcher",
    "NFAState",
    "PatternBuilder",
    "Quantifier",
    "SequencePattern",
    "SkipStrategy",
    "Stage",
    "begin",
]
