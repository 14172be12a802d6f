"""Flink-CEP-style sequence patterns compiled to an NFA with a Dewey-versioned shared buffer.

Public API: the pattern dataclasses (:class:`SequencePattern`, :class:`Stage`, :class:`GroupStage`,
:class:`Quantifier`, :class:`Contiguity`, :class:`SkipStrategy`, :class:`AggregateSpec`,
:class:`AllOf`, :class:`AnyOf`), the fluent builder (:func:`begin`), the compiled
:class:`NFAMatcher` and the general plan's per-key :class:`NFAState` (each plan owns its state:
:mod:`workbench.engine.nfa.plans`). Semantics: ``docs/sequences.md``.

Modules: ``pattern`` / ``builder`` (definitions), ``elements`` / ``compiler`` (validation, NFA
graph), ``conditions`` (edge conditions), ``analysis`` (event-type index), ``plans`` (the choice
of a run model: ``linear``, ``loop``, ``general``, ``flink``), ``store`` / ``buffer`` (taken
events), ``skip`` (after-match strategies), ``runaggs`` (aggregates per partial match), ``trace``.
"""

from __future__ import annotations

from workbench.engine.nfa import pattern
from workbench.engine.nfa.builder import PatternBuilder, alternation, begin, permute
from workbench.engine.nfa.conditions import ConditionContext
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.pattern import *  # noqa: F403  (the pattern dataclasses are the package's face)
from workbench.engine.nfa.state import NFAState

__all__ = ["ConditionContext", "NFAMatcher", "NFAState", "PatternBuilder", "alternation", "begin", "permute"]
__all__ += pattern.__all__
