"""Compilation is a step: :func:`compile_matcher` turns a pattern definition into its matcher.

Pattern definitions (frozen dataclasses) never import their matchers; this module knows every
family and dispatches on the definition's type. A compiled :class:`~workbench.engine.matcher.Matcher`
passes through unchanged, so hosts accept either; a family defined outside the engine plugs in with
a ``compile()`` method that returns its matcher.

>>> from workbench.engine.nfa import SequencePattern, Stage
>>> compile_matcher(SequencePattern("p", (Stage("a"), Stage("b")))).name
'p'
"""

from __future__ import annotations

from workbench.engine.matcher import Matcher
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.streamed import compile_sequence, reject_stream
from workbench.engine.reactions.matcher import GroupMatcher
from workbench.engine.reactions.patterns import ReactionGroup, Receive
from workbench.engine.reactions.receive import ReceiveMatcher
from workbench.errors import PatternError

__all__ = ["compile_matcher"]


def compile_matcher(pattern: object) -> Matcher:
    """Validate and compile ``pattern`` (raises :class:`~workbench.errors.PatternError` if malformed)."""
    if isinstance(pattern, SequencePattern):
        return compile_sequence(pattern)
    if isinstance(pattern, ReactionGroup):
        reject_stream(pattern, "reaction group")
        return GroupMatcher(pattern)
    if isinstance(pattern, Receive):
        reject_stream(pattern, "receive")
        return ReceiveMatcher(pattern)
    if isinstance(pattern, Matcher):
        return pattern
    own = getattr(pattern, "compile", None)
    if callable(own):  # a family defined outside the engine compiles itself
        matcher = own()
        if isinstance(matcher, Matcher):
            return matcher
    msg = (
        "a pattern is a SequencePattern, a ReactionGroup or a Receive (or a compiled matcher), "
        f"got {type(pattern).__name__}"
    )
    raise PatternError(msg)
