"""Which path each pattern of a ``backend="flink"`` run takes: native ``MATCH_RECOGNIZE`` or Python.

A sequence pattern that :mod:`~workbench.backends.flink.sql_query` can write runs in Flink's own
Java NFA (``flink-cep``); everything else (reaction groups, ``followed by any``, ``allow
combinations``, timeouts, ``no_skip`` loops, callables) runs the engine inside a PyFlink
``KeyedProcessFunction``. :func:`choose_paths` decides and says why, per pattern.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from workbench.backends.base import Input, PatternLike, RunOptions
from workbench.backends.flink.levels import emit_reason
from workbench.backends.flink.sql_query import sql_reasons
from workbench.engine.clock import stamp
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import SequencePattern

__all__ = ["PathChoice", "choose_paths", "input_reasons"]


@dataclass(frozen=True, slots=True)
class PathChoice:
    """The path one pattern takes, and why it cannot go native (empty when it does)."""

    pattern: str
    reasons: tuple[str, ...]

    @property
    def native(self) -> bool:
        """Runs as ``MATCH_RECOGNIZE`` in Flink's own CEP operator."""
        return not self.reasons

    def describe(self) -> str:
        """One line for the user: the path, and the reasons for the Python path."""
        if self.native:
            return f"flink: pattern {self.pattern!r} runs natively (MATCH_RECOGNIZE, Flink's Java NFA)"
        return f"flink: pattern {self.pattern!r} runs on the Python path: " + "; ".join(self.reasons)


def input_reasons(inputs: Sequence[Input], options: RunOptions) -> list[str]:
    """Why the run's input or options keep every pattern off the native path (empty: they don't)."""
    reasons = []
    if options.until is not None or not options.finish or options.trace or options.strict:
        reasons.append("until, finish=False, tracing or strict (the native path runs whole replays)")
    if not all(isinstance(item, Mapping | Event) for item in inputs):
        reasons.append("AdvanceTime marks in the input (the native path takes events only)")
        return reasons
    times = (stamp(item, i).time for i, item in enumerate(inputs) if isinstance(item, Mapping | Event))
    if any(b < a for a, b in itertools.pairwise(times)):
        reasons.append("events out of time order (the native path replays in-order events)")
    return reasons


def choose_paths(
    patterns: Sequence[PatternLike], inputs: Sequence[Input], options: RunOptions
) -> list[PathChoice]:
    """Per pattern: native when ``MATCH_RECOGNIZE`` can express it and the input allows it."""
    common = input_reasons(inputs, options)
    emitted = frozenset(t for p in patterns if isinstance(t := getattr(p, "emit_into", None), str))
    choices = []
    for pattern in patterns:
        if not isinstance(pattern, SequencePattern):
            kind = type(pattern).__name__
            reasons = [f"a {kind}, not a sequence pattern (reaction groups and other families)"]
        else:
            reasons = [*common, *sql_reasons(pattern)]
            if emitted and (why := emit_reason(pattern, emitted, compile_matcher(pattern).event_types())):
                reasons.append(why)  # why: emit into and its consumers run as a chain on the Python path
        choices.append(PathChoice(str(getattr(pattern, "name", pattern)), tuple(reasons)))
    return choices
