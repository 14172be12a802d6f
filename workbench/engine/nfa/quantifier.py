"""How a stage follows the one before it (:class:`Contiguity`) and how many events it takes
(:class:`Quantifier`): Flink CEP's ``next``/``followedBy``/``followedByAny`` and its ``times``,
``oneOrMore``, ``optional``, ``greedy``, ``consecutive`` and ``allowCombinations``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from workbench.errors import PatternError

__all__ = ["MAX_COUNT", "Contiguity", "Quantifier"]


class Contiguity(StrEnum):
    """How an event relates to the one taken before it.

    * ``STRICT``: Flink ``next`` / ``consecutive()``: the very next event must be taken.
    * ``RELAXED``: Flink ``followedBy`` / default loop: skip events that do NOT satisfy the
      condition; a satisfying event must be taken.
    * ``NONDETERMINISTIC_RELAXED``: Flink ``followedByAny`` / ``allowCombinations()``: any event may
      be skipped, so every later satisfying event can be chosen.
    """

    STRICT = "strict"
    RELAXED = "relaxed"
    NONDETERMINISTIC_RELAXED = "nondeterministic_relaxed"


#: the largest count a quantifier may have (``times n..m``: every occurrence is an automaton state)
MAX_COUNT = 1_000


@dataclass(frozen=True, slots=True)
class Quantifier:
    """How many events a stage takes.

    Attributes:
        min: minimum count (>= 1; Flink's ``times(0, m)`` is ``min=1, max=m, optional=True``).
        max: maximum count; ``None`` = unbounded (``oneOrMore`` / ``timesOrMore``).
        optional: the stage may be skipped entirely.
        greedy: a looping / ranged stage takes as many events as it can (the next stage cannot use
            an event the loop could still take).
        inner: contiguity between the stage's own events (``RELAXED`` default, ``STRICT`` =
            ``consecutive()``, ``NONDETERMINISTIC_RELAXED`` = ``allowCombinations()``).
        window_ms: Flink's ``times(n, w)`` / ``timesOrMore(n, w)`` / ``oneOrMore(w)`` gap limit.

    ``min == max == 1`` is the plain single-event stage (Flink ``times(1)`` behaves the same).
    """

    min: int = 1
    max: int | None = 1
    optional: bool = False
    greedy: bool = False
    inner: Contiguity = Contiguity.RELAXED
    window_ms: int | float | None = None

    def __post_init__(self) -> None:
        lo, hi = self.min, self.max
        if type(lo) is not int or (hi is not None and type(hi) is not int):
            msg = f"bad quantifier: min={lo!r}, max={hi!r} (need whole counts)"
            raise PatternError(msg)
        if max(lo, hi or 0) > MAX_COUNT:  # why: each occurrence is a state: a huge count never compiles
            msg = f"bad quantifier: min={lo}, max={hi}: a count above {MAX_COUNT} is not supported"
            raise PatternError(msg)

    @property
    def single(self) -> bool:
        """One event (no quantifier)."""
        return self.min == 1 and self.max == 1

    @property
    def looping(self) -> bool:
        """Unbounded (``oneOrMore`` / ``timesOrMore``)."""
        return self.max is None

    @classmethod
    def one(cls) -> Quantifier:
        """Exactly one event."""
        return cls()

    @classmethod
    def times(cls, n: int, m: int | None = None, *, window_ms: int | float | None = None) -> Quantifier:
        """``times(n)`` or ``times(n, m)``; ``times(0, m)`` becomes optional ``times(1, m)``."""
        hi = n if m is None else m
        if n == 0 and hi > 0:
            return cls(1, hi, optional=True, window_ms=window_ms)
        return cls(n, hi, window_ms=window_ms)

    @classmethod
    def one_or_more(cls, *, window_ms: int | float | None = None) -> Quantifier:
        """``oneOrMore()``."""
        return cls(1, None, window_ms=window_ms)

    @classmethod
    def times_or_more(cls, n: int, *, window_ms: int | float | None = None) -> Quantifier:
        """``timesOrMore(n)``."""
        return cls(n, None, window_ms=window_ms)
