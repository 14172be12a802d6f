"""What every execution backend offers: run patterns over a finite, scripted input.

A backend runs the same compiled patterns (:class:`~workbench.engine.matcher.Matcher`) that the
in-process :class:`~workbench.engine.runtime.Engine` runs, and returns the same records. The input
is a *script*: events in arrival order, optionally interleaved with :class:`AdvanceTime` marks (the
host's ``Engine.advance_time``); the end of the script is a final flush (``finish=True``, the
default), a flush up to ``until``, or nothing (``finish=False``: what is still buffered stays so).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TypeAlias

from workbench.engine.events import EventLike
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.runtime import RunResult
from workbench.errors import CepError

__all__ = ["AdvanceTime", "Backend", "BackendError", "Input", "PatternLike", "RunOptions", "compile_all"]


class BackendError(CepError):
    """A backend cannot run: it is not installed, or it does not support what was asked."""


@dataclass(frozen=True, slots=True)
class AdvanceTime:
    """An input-script mark: no event with ``time <= watermark`` will arrive any more.

    >>> AdvanceTime(20)
    AdvanceTime(watermark=20)
    """

    watermark: int | float


Input: TypeAlias = EventLike | AdvanceTime
"""One item of an input script."""

PatternLike: TypeAlias = Pattern | Matcher
"""A pattern object (compiled on use) or an already compiled matcher."""


@dataclass(frozen=True, slots=True)
class RunOptions:
    """The keywords of one :meth:`Backend.run`, gathered (see there for each)."""

    out_of_orderness: int | float = 0
    until: int | float | None = None
    finish: bool = True
    trace: bool = False
    strict: bool = False
    order_by: tuple[str, ...] = ()


class Backend(ABC):
    """An execution backend: runs patterns over a scripted input, returns the engine's records.

    A backend implements :meth:`execute`; :meth:`run` is the keyword face every backend shares.
    """

    name: str

    def run(
        self,
        patterns: Sequence[PatternLike],
        inputs: Iterable[Input],
        *,
        out_of_orderness: int | float = 0,
        until: int | float | None = None,
        finish: bool = True,
        trace: bool = False,
        strict: bool = False,
        order_by: Sequence[str] = (),
    ) -> RunResult:
        """Run ``patterns`` over ``inputs`` and return detections, reactions, late events, trace.

        Args:
            patterns: pattern objects or compiled matchers (names must be unique).
            inputs: events in arrival order, optionally with :class:`AdvanceTime` marks.
            out_of_orderness: how far (ms) behind the newest event an event may arrive.
            until: with ``finish``, flush only up to this time (default: everything, final).
            finish: flush at the end of the input (``Engine.finish(until)``).
            trace: record trace entries.
            strict: stop at the first runtime error of a condition instead of recording it in
                ``RunResult.errors`` (a backend that cannot record them always stops).
            order_by: fields ordering equal-time events (``Engine(order_by=...)``; a backend that
                cannot raises :class:`~workbench.errors.CepError`).
        """
        options = RunOptions(out_of_orderness, until, finish, trace, strict, tuple(order_by))
        return self.execute(patterns, inputs, options)

    @abstractmethod
    def execute(
        self, patterns: Sequence[PatternLike], inputs: Iterable[Input], options: RunOptions
    ) -> RunResult:
        """:meth:`run` with its keywords gathered in ``options``."""


def compile_all(patterns: Sequence[PatternLike]) -> list[Matcher]:
    """Compile pattern objects, keep matchers as they are.

    >>> compile_all([])
    []
    """
    return [compile_matcher(p) for p in patterns]
