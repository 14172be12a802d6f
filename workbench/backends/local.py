"""The local backend: the in-process :class:`~workbench.engine.runtime.Engine`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from workbench.backends.base import AdvanceTime, Input, PatternLike
from workbench.engine.runtime import Engine, RunResult
from workbench.errors import CepError

__all__ = ["LocalBackend"]


class LocalBackend:
    """Run patterns in this process with the keyed event-time :class:`Engine`.

    >>> LocalBackend().run([], [{"type": "a", "time": 1}]).detections
    []
    """

    name = "local"

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
    ) -> RunResult:
        """See :meth:`workbench.backends.base.Backend.run`."""
        if until is not None and not finish:
            msg = f"until={until!r} needs finish=True (until is where the final flush stops)"
            raise CepError(msg)
        engine = Engine(patterns, out_of_orderness=out_of_orderness, trace=trace, strict=strict)
        for item in inputs:
            if isinstance(item, AdvanceTime):
                engine.advance_time(item.watermark)
            else:
                engine.process(item)
        if finish:
            engine.finish(until)
        return RunResult(
            engine.detections, engine.reactions, engine.late, engine.trace_records, engine.errors
        )
