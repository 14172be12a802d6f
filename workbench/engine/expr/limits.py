"""The bounds every expression runs within, so that no text can hang or exhaust the engine.

Each limit is named in the error that enforces it.
"""

from __future__ import annotations

__all__ = ["MAX_DEPTH", "MAX_EXPONENT_BITS", "MAX_ITERATIONS", "MAX_LITERAL", "MAX_SIZE", "MAX_TEXT"]

MAX_TEXT = 20_000
"""Characters in one expression's text."""

MAX_DEPTH = 60
"""Nesting depth of an expression tree."""

MAX_LITERAL = 10_000
"""Characters in one string literal."""

MAX_SIZE = 1_000_000
"""Elements of a list or characters of a string that an expression builds (``+``, ``*``, ``range``)."""

MAX_ITERATIONS = 100_000
"""Iterations of the comprehensions in one evaluation of a condition (a filter that rejects every
element costs iterations, not size). Data expressions (generated test events) may take
:data:`MAX_SIZE`. Over a stage with more events, use an incremental aggregate (``sum(A.x)``)."""

MAX_EXPONENT_BITS = 64_000
"""Bits of an integer power's result (``9 ** 9 ** 9`` needs billions)."""
