"""What :func:`run` and every backend return for one finished run; :func:`run` itself (patterns over
a finite stream, flushed at the end; also importable from :mod:`workbench.engine.runtime`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from workbench.engine.clock import OrderBy
from workbench.engine.detection import Detection, Reaction, TraceRecord
from workbench.engine.events import Event, EventLike
from workbench.engine.faults import ConditionFault
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.outputs import tally_counters
from workbench.errors import CepError

__all__ = ["RunResult", "run"]


@dataclass(slots=True)
class RunResult:
    """What :func:`run` returns."""

    detections: Sequence[Detection]
    reactions: list[Reaction]
    late: list[Event]
    trace: list[TraceRecord]
    errors: list[ConditionFault] = field(default_factory=list)
    dropped: int = 0  # partial matches dropped by caps (``Engine.stats["dropped"]``)

    @property
    def counters(self) -> dict[str, int]:
        """The Prova counters the run's continuations incremented (``counts``), from its records."""
        return tally_counters(self.reactions, self.detections)


def run(
    patterns: Sequence[Pattern | Matcher] | Pattern | Matcher,
    events: Iterable[EventLike],
    *,
    until: int | float | None = None,
    out_of_orderness: int | float = 0,
    trace: bool = False,
    strict: bool = False,
    order_by: OrderBy | None = None,
) -> RunResult:
    """Run patterns over a finite stream, then flush (``strict``, ``order_by``: see
    :class:`~workbench.engine.runtime.Engine`).

    >>> run([], [{"type": "a", "time": 1}]).detections
    []
    """
    from workbench.engine.runtime import Engine  # (the runtime imports this module)

    plist: Sequence[Pattern | Matcher] = [patterns] if isinstance(patterns, Pattern | Matcher) else patterns
    if isinstance(events, str | bytes | Mapping) or not isinstance(events, Iterable):
        msg = f"run() takes an iterable of events (dicts or Events), got {type(events).__name__}"
        raise CepError(msg)
    engine = Engine(plist, out_of_orderness=out_of_orderness, trace=trace, strict=strict, order_by=order_by)
    engine.process_many(events)
    engine.finish(until)
    return RunResult(
        engine.detections, engine.reactions, engine.late, engine.trace_records, engine.errors,
        engine.stats["dropped"],
    )  # fmt: skip
