"""Runtime errors of conditions: recorded once per kind, counted, and never the end of a run.

A condition that raises on an event (a string compared with a number, a registered function that
fails, a limit reached) makes that event fail the condition; the run goes on. Each distinct error
(pattern, where, kind) is kept once as a :class:`ConditionFault`, with the first event it happened
on and how many times it happened. ``strict=True`` raises :class:`CepRuntimeError` at the first one
instead.

Every compiled matcher reports through its own :class:`FaultSink`; an engine points the sinks of
its matchers at its :class:`FaultLog`.

>>> log = FaultLog()
>>> sink = FaultSink("p", log)
>>> from workbench.engine.events import Event
>>> for i in range(3):
...     sink.report("stage 'a' where", TypeError("'<' not supported"), Event("x", i, None, {}, i))
>>> [(f.where, f.kind, f.count, f.first_seq) for f in log.faults]
[("stage 'a' where", 'TypeError', 3, 0)]
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from workbench.engine.events import error_text
from workbench.errors import CepRuntimeError

__all__ = ["ConditionFault", "FaultLog", "FaultSink"]


@dataclass
class ConditionFault:
    """One distinct runtime error of a condition, its first event, and how many events it hit."""

    pattern: str
    where: str
    kind: str
    message: str
    first_seq: int
    first_time: int | float | None
    first_key: Hashable
    count: int = 1
    last_seq: int = -1

    def describe(self, time_text: Callable[[float], str] = str) -> str:
        """One line: where, what, first event (its time as ``time_text`` writes it) and count."""
        times = "once" if self.count == 1 else f"{self.count} times"
        at = "?" if self.first_time is None else time_text(self.first_time)
        return (
            f"pattern {self.pattern!r}, {self.where}: {self.kind}: {self.message} "
            f"(first on event #{self.first_seq} at t={at}, {times})"
        )


class FaultLog:
    """The distinct condition errors of one run (or engine), in order of first occurrence."""

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict
        self._faults: dict[tuple[str, str, str], ConditionFault] = {}

    def record(self, pattern: str, where: str, error: BaseException, event: object) -> None:
        """Count ``error``; with ``strict``, raise it as a :class:`CepRuntimeError` instead."""
        kind = type(error).__name__
        text = error_text(error)
        seq = getattr(event, "seq", -1)
        time = getattr(event, "time", None)
        if self.strict:
            msg = (
                f"pattern {pattern!r}, {where} failed on event #{seq} "
                f"({getattr(event, 'type', '?')!r} at {time}): {kind}: {text}"
            )
            raise CepRuntimeError(msg) from error
        slot = (pattern, where, kind)
        fault = self._faults.get(slot)
        if fault is None:
            self._faults[slot] = ConditionFault(
                pattern, where, kind, text, seq, time, getattr(event, "key", None), 1, seq
            )
        elif seq != fault.last_seq or seq < 0:
            # Why: one event meets a condition once per partial match; count events, not evaluations
            fault.count += 1
            fault.last_seq = seq

    @property
    def faults(self) -> list[ConditionFault]:
        """The distinct errors, first seen first."""
        return list(self._faults.values())


class FaultSink:
    """Where one compiled pattern's conditions report; ``log`` is set by the engine that runs it."""

    __slots__ = ("log", "pattern")

    def __init__(self, pattern: str, log: FaultLog | None = None) -> None:
        self.pattern = pattern
        self.log = log if log is not None else FaultLog()

    def report(self, where: str, error: BaseException, event: object) -> None:
        """Record ``error`` of the condition at ``where`` on ``event``."""
        self.log.record(self.pattern, where, error, event)
