"""The local backend: the in-process :class:`~workbench.engine.runtime.Engine`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from workbench.backends.base import AdvanceTime, Backend, Input, PatternLike, RunOptions
from workbench.engine.events import EventLike
from workbench.engine.runtime import Engine, RunResult
from workbench.errors import CepError

__all__ = ["LocalBackend"]

#: events handed to the engine per call (a bounded list, whatever the input's length)
BATCH = 65_536


class LocalBackend(Backend):
    """Run patterns in this process with the keyed event-time :class:`Engine`.

    >>> LocalBackend().run([], [{"type": "a", "time": 1}]).detections
    []
    """

    name = "local"

    def execute(
        self, patterns: Sequence[PatternLike], inputs: Iterable[Input], options: RunOptions
    ) -> RunResult:
        """See :meth:`workbench.backends.base.Backend.run`."""
        until = options.until
        if until is not None and not options.finish:
            msg = f"until={until!r} needs finish=True (until is where the final flush stops)"
            raise CepError(msg)
        engine = Engine(
            patterns,
            out_of_orderness=options.out_of_orderness,
            trace=options.trace,
            strict=options.strict,
            order_by=list(options.order_by) or None,
        )
        batch: list[EventLike] = []
        for item in inputs:
            if isinstance(item, AdvanceTime):
                if batch:  # why first: the events before the watermark, in order
                    engine.process_many(batch)
                    batch.clear()
                engine.advance_time(item.watermark)
                continue
            batch.append(item)
            if len(batch) == BATCH:
                engine.process_many(batch)
                batch.clear()
        if batch:  # why in runs: process_many gives what process per event gives, through the fused loop
            engine.process_many(batch)
        if options.finish:
            engine.finish(until)
        return RunResult(
            engine.detections, engine.reactions, engine.late, engine.trace_records, engine.errors,
            engine.stats["dropped"],
        )  # fmt: skip
