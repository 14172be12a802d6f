"""The timeline's live mode: feed an engine from an asyncio task (or poll one) and stream the figure.

The kernel stays responsive (widget events from the browser reach Python only between cells, so the
replay loop runs as a task, never as a blocking loop; ``jupyter.md`` section 1, point 3). Each batch
appends the engine's new trace records and detections to the timeline with :meth:`Timeline.add`,
which sends them as deltas. The timeline shows its last page of rows while live.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from workbench.engine.clock import stamp
from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event, EventLike
from workbench.engine.runtime import Engine
from workbench.errors import CepError
from workbench.widgets.breakpoints import Breakpoint, StopWhen, breakpoint_of, describe

__all__ = ["LiveMode"]


@dataclass(slots=True)
class _Replay:
    """A replay in progress: what is left to feed, and where the breakpoint check got to."""

    engine: Engine
    events: Iterator[EventLike]
    batch: int
    delay: float
    finish: bool
    hit: Breakpoint | None
    checked: int = 0
    finished: bool = False
    stop_index: int = -1
    fed: int = 0


class LiveMode(ABC):
    """Replay into, or follow, an engine; mixed into :class:`~workbench.widgets.Timeline`."""

    page: int
    _task: asyncio.Task[None] | None
    _consumed: dict[int, tuple[int, int]]
    stopped_at: TraceRecord | None = None  # the record a breakpoint stopped the replay at
    _replaying: _Replay | None = None
    events: dict[int, Event]  # the replayed events by seq (for explain)

    @abstractmethod
    def add(self, records: Iterable[TraceRecord] = (), detections: Iterable[Detection] = ()) -> None:
        """Append records and detections and redraw (the timeline's own)."""

    def replay(
        self,
        engine: Engine,
        events: Iterable[EventLike],
        *,
        batch: int = 50,
        delay: float = 0.05,
        finish: bool = True,
        stop_when: StopWhen | None = None,
    ) -> asyncio.Task[None]:
        """Feed ``events`` to ``engine`` in batches from an asyncio task, streaming the figure.

        Returns the task (``await`` it, or :meth:`stop` it). The kernel stays responsive. The
        rows shown are the last page's, which grows as instances start.

        ``stop_when`` (:mod:`~workbench.widgets.breakpoints`: ``"counted 2/3"``, ``"paused"``,
        ``"held back"``, ``"violated"``, ... or a predicate on a trace record) pauses the replay
        at the first record it holds for: the task ends there, :attr:`stopped_at` is that
        record, the timeline shows its instance at that moment, and :meth:`explain_stop` tells
        the instance's story up to it. :meth:`resume` goes on to the next such record.
        """
        self.stop()
        self.page = -1
        hit = None if stop_when is None else breakpoint_of(stop_when)
        self._replaying = _Replay(engine, iter(events), batch, delay, finish, hit, len(engine.trace_records))
        self.stopped_at = None
        self._task = asyncio.ensure_future(self._run_replay(self._replaying))
        return self._task

    def resume(self) -> asyncio.Task[None]:
        """Go on with the replay a breakpoint stopped, to the next breakpoint or the end."""
        run = self._replaying
        if run is None or self.stopped_at is None:
            msg = "resume(): no replay is stopped at a breakpoint"
            raise CepError(msg)
        self.stopped_at = None
        self._task = asyncio.ensure_future(self._run_replay(run))
        return self._task

    async def _run_replay(self, run: _Replay) -> None:
        engine = run.engine
        sent = self._consumed.get(id(engine), (0, 0))
        chunk: list[Event] = []
        for raw in run.events:
            event = stamp(raw, engine.event_clock.next_seq + len(chunk))
            self.events[event.seq] = event
            chunk.append(event)
            # why one at a time under a breakpoint: it stops right after the event that caused it
            if len(chunk) < run.batch and run.hit is None:
                continue
            if run.fed % run.batch == 0:
                # Sleep first: the cell that displayed the timeline has ended and the browser
                # has had a moment to create its view before the first delta arrives.
                await asyncio.sleep(run.delay)
            engine.process_many(chunk)
            run.fed += len(chunk)
            chunk = []
            if self._check(run, sent):
                return
            if run.fed % run.batch == 0:
                sent = self._pull(engine, sent)
        engine.process_many(chunk)
        if run.finish and not run.finished:
            run.finished = True
            engine.finish()
            if self._check(run, sent):
                return
        self._pull(engine, sent)
        self._replaying = None

    def _check(self, run: _Replay, sent: tuple[int, int]) -> bool:
        """Whether a record since the last check is a breakpoint; if so, stop there and show it."""
        records = run.engine.trace_records
        start, run.checked = run.checked, len(records)
        if run.hit is None:
            return False
        for n, record in enumerate(records[start:], start):
            if run.hit(record):
                run.stop_index, run.checked = n, n + 1  # why: resume() looks on after this record
                self._pull(run.engine, sent)
                self.stopped_at = record
                self.show_stop(record)
                return True
        return False

    def explain_stop(self, pattern: object = None) -> str:
        """``%cep explain``'s story of the stopped instance, up to the breakpoint's record.

        ``pattern``: the pattern object (default: the one the engine runs under that name).
        """
        run, record = self._replaying, self.stopped_at
        if run is None or record is None:
            msg = "explain_stop(): no replay is stopped at a breakpoint"
            raise CepError(msg)
        from workbench.session.explain import explain

        if pattern is None:
            pattern = next(
                (getattr(m, "pattern", None) for m in run.engine.matchers if m.name == record.pattern),
                None,
            )
        upto = run.engine.trace_records[: run.stop_index + 1]
        ident = (record.key, record.instance)
        mine = [r for r in upto if r.pattern == record.pattern and (r.key, r.instance) == ident]
        found = [d for d in run.engine.detections if d.pattern == record.pattern and d.time <= record.time]
        text = explain(pattern, mine, found, self.events, key=record.key, instance=record.instance)
        # why: the story ends at the breakpoint, not at the end of the input
        text = text.replace("at the end of the input", f"at the breakpoint (t={record.time})")
        return f"stopped at {describe(record)}\n{text}"

    @abstractmethod
    def show_stop(self, record: TraceRecord) -> None:
        """Show ``record``'s instance at ``record``'s time (the timeline's own)."""

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
