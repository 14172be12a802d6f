"""The timeline's live mode: feed an engine from an asyncio task (or poll one) and stream the figure.

The kernel stays responsive (widget events from the browser reach Python only between cells, so the
replay loop runs as a task, never as a blocking loop; ``jupyter.md`` section 1, point 3). Each batch
appends the engine's new trace records and detections to the timeline with :meth:`Timeline.add`,
which sends them as deltas. The timeline shows its last page of rows while live.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import Any

from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event
from workbench.engine.runtime import Engine

__all__ = ["LiveMode"]


class LiveMode(ABC):
    """Replay into, or follow, an engine; mixed into :class:`~workbench.widgets.Timeline`."""

    page: int
    _task: asyncio.Task[None] | None
    _consumed: dict[int, tuple[int, int]]

    @abstractmethod
    def add(self, records: Iterable[TraceRecord] = (), detections: Iterable[Detection] = ()) -> None:
        """Append records and detections and redraw (the timeline's own)."""

    def replay(
        self,
        engine: Engine,
        events: Iterable[Event | Mapping[str, Any]],
        *,
        batch: int = 50,
        delay: float = 0.05,
        finish: bool = True,
    ) -> asyncio.Task[None]:
        """Feed ``events`` to ``engine`` in batches from an asyncio task, streaming the figure.

        Returns the task (``await`` it, or :meth:`stop` it). The kernel stays responsive. The
        rows shown are the last page's, which grows as instances start.
        """
        self.stop()
        self.page = -1

        async def run() -> None:
            sent = self._consumed.get(id(engine), (0, 0))
            chunk: list[Event | Mapping[str, Any]] = []
            for e in events:
                chunk.append(e)
                if len(chunk) >= batch:
                    # Sleep first: the cell that displayed the timeline has ended and the browser
                    # has had a moment to create its view before the first delta arrives.
                    await asyncio.sleep(delay)
                    engine.process_many(chunk)
                    chunk = []
                    sent = self._pull(engine, sent)
            engine.process_many(chunk)
            if finish:
                engine.finish()
            self._pull(engine, sent)

        self._task = asyncio.ensure_future(run())
        return self._task

    def follow(self, engine: Engine, *, interval: float = 0.2) -> asyncio.Task[None]:
        """Poll a live engine (fed elsewhere, e.g. a processing-time feed) every ``interval`` s."""
        self.stop()
        self.page = -1

        async def run() -> None:
            sent = self._consumed.get(id(engine), (0, 0))
            while True:
                sent = self._pull(engine, sent)
                await asyncio.sleep(interval)

        self._task = asyncio.ensure_future(run())
        return self._task

    def stop(self) -> None:
        """Cancel the live task, if any."""
        if self._task is not None and not self._task.done():
            self._task.cancel()
        self._task = None

    def _pull(self, engine: Engine, sent: tuple[int, int]) -> tuple[int, int]:
        records, detections = engine.trace_records, engine.detections
        n_r, n_d = sent
        if len(records) > n_r or len(detections) > n_d:
            self.add(records[n_r:], detections[n_d:])
        self._consumed[id(engine)] = (len(records), len(detections))
        return len(records), len(detections)
