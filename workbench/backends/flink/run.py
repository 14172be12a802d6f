"""Run patterns over finite inputs on Flink and collect the engine's records.

:func:`run_many` puts several independent runs into one Flink job (Flink's start-up costs seconds,
a small run milliseconds), :func:`run_matchers` is the one-run case and :class:`FlinkBackend` the
:class:`~workbench.backends.base.Backend` face of it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field

from workbench.backends.base import Backend, Input, PatternLike, RunOptions, compile_all
from workbench.backends.flink.chain import chain_records, detect_chain, renumber
from workbench.backends.flink.env import ExecutionMode, make_environment
from workbench.backends.flink.function import (
    STARTUP_TIMESTAMP,
    BatchItem,
    EventBatch,
    FlinkRecord,
    OutputRecord,
    Startup,
    millis,
    outputs_of,
)
from workbench.backends.flink.levels import levels_of
from workbench.backends.flink.paths import PathChoice, choose_paths
from workbench.backends.flink.pipeline import detect
from workbench.backends.keyed import HostOutput, KeyedDriver, collect_results
from workbench.backends.replay import ReplayPlan, plan_replay
from workbench.engine.derived import emits_of, emitter_of
from workbench.engine.events import Event
from workbench.engine.gcpause import gc_paused
from workbench.engine.matcher import Matcher
from workbench.engine.nfa import SequencePattern
from workbench.engine.runtime import RunResult
from workbench.errors import CepError, PatternError

__all__ = [
    "FlinkBackend",
    "FlinkRun",
    "batch_records",
    "gc_paused",
    "plan_records",
    "results_of",
    "run_many",
    "run_matchers",
    "run_offsets",
]


@dataclass(frozen=True, slots=True)
class FlinkRun:
    """One run: patterns over an input script, with the engine's options.

    Attributes:
        patterns: pattern objects or compiled matchers (names unique within the run).
        inputs: events in arrival order, optionally with :class:`~workbench.backends.base.AdvanceTime`.
        out_of_orderness: see :class:`~workbench.engine.runtime.Engine`.
        until: with ``finish``, flush only up to this time.
        finish: flush at the end of the input.
        trace: produce trace records.
        forget_idle_keys: the engine's option: a key whose instances all ended leaves no state
            (its Flink state is cleared; instance ids then count on per operator instance, see
            ``docs/flink.md``).
    """

    patterns: Sequence[PatternLike]
    inputs: Sequence[Input]
    out_of_orderness: int | float = 0
    until: int | float | None = None
    finish: bool = True
    trace: bool = False
    forget_idle_keys: bool = False
    plan: ReplayPlan = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        plan = plan_replay(
            self.inputs, out_of_orderness=self.out_of_orderness, until=self.until, finish=self.finish
        )
        object.__setattr__(self, "plan", plan)

    def host(self) -> KeyedDriver:
        """The key host of this run (compiles the patterns)."""
        return self._driver(self.matchers())

    def matchers(self) -> list[Matcher]:
        """The run's compiled matchers (names unique; a cycle of ``emit into`` refused)."""
        matchers = compile_all(self.patterns)
        names = [m.name for m in matchers]
        for name in names:
            if names.count(name) > 1:
                msg = "a pattern with this name is already in the run"
                raise PatternError(msg, pattern=name)
        emitter_of(matchers)
        return matchers

    def chain(self) -> tuple[list[KeyedDriver], dict[str, str]]:
        """The drivers of each level of an ``emit into`` chain, and which pattern emits into what."""
        matchers = self.matchers()
        levels = levels_of(matchers)
        emits = {m.name: t for m in matchers if (t := emits_of(m)) is not None}
        return [self._driver([matchers[i] for i in level]) for level in levels], emits

    def _driver(self, matchers: Sequence[Matcher]) -> KeyedDriver:
        return KeyedDriver(
            matchers,
            horizon=self.plan.horizon,
            final_after=self.plan.final_after,
            tracing=self.trace,
            forget=self.forget_idle_keys,
        )


def run_offsets(runs: Sequence[FlinkRun]) -> list[int]:
    """Per run, how far its times are shifted on Flink's time axis so that runs follow each other.

    One job has one watermark, while every run starts its own clock. Shifting run ``i + 1`` past
    the last event of run ``i`` keeps each run's events ahead of the watermark that the previous runs
    drove; a run's remaining timers then fire once the next run's events pass them, or at the end.
    """
    offsets: list[int] = []
    previous_end: int | None = None
    for run in runs:
        times = [event.time for event, _ in run.plan.events]
        if not times:
            offsets.append(offsets[-1] if offsets else 0)
            continue
        # why min/max before millis: millis never decreases, so it keeps the extremes (one call each)
        offset = 0 if previous_end is None else max(0, previous_end + 1 - millis(min(times)))
        offsets.append(offset)
        previous_end = offset + millis(max(times))
    return offsets


def plan_records(
    runs: Sequence[FlinkRun], hosts: Sequence[KeyedDriver], offsets: Sequence[int], *, batch: int = 0
) -> list[FlinkRecord]:
    """The job's input records: start-up records first, then every run's events in arrival order.

    ``batch > 0`` (only for in-order runs, ``out_of_orderness == 0``, whose operator processes
    events at once): a key's events within each stretch of ``batch`` arrivals travel as one
    :class:`~workbench.backends.flink.function.EventBatch` (see :func:`batch_records`).
    """
    records: list[FlinkRecord] = [
        (i, Startup(key), False, STARTUP_TIMESTAMP, -1)
        for i, host in enumerate(hosts)
        for key in host.startup_keys()
    ]
    for i, run in enumerate(runs):
        events = run.plan.events
        if batch > 0:
            records.extend(batch_records(i, events, offsets[i], batch))
        else:
            records.extend((i, e, late, millis(e.time, offsets[i]), p) for p, (e, late) in enumerate(events))
    return records


#: Marks a full batch set aside in a stretch's groups.
_CHUNK = object()

#: Outputs a collected job's operator gathers before it emits them (one record, one fetch).
HOLD = 5_000

#: Events per stretch of input whose events of one key become one record (and at most per record).
#: Large: Flink's cost per record (0.3-0.5 ms through the Python operators on the way) fell to a
#: tenth with 20x fewer records; a record of 1,024 events is about 20 kB (compressed).
BATCH_WINDOW, BATCH_LIMIT = 200_000, 1_024


def batch_records(
    run: int, events: Sequence[tuple[Event, bool]], offset: int, window: int = BATCH_WINDOW
) -> list[FlinkRecord]:
    """One run's planned ``(event, late)`` items as per-key batches, for an in-order run.

    Within each stretch of ``window`` arrivals, a key's events (at most :data:`BATCH_LIMIT` per
    batch) form one record stamped with its earliest on-time event's time, and the stretch's
    records go out in that order. So the watermark that the records drive never passes an event
    of a key that is still to come: an earlier stretch's on-time events are no later than this
    one's (the run is in order), and within a stretch the records are sorted by their earliest
    time. Each key still receives its events in arrival order. (Keys equal in Python share a
    batch; ``record_key`` maps them to one Flink key anyway.)
    """
    records: list[tuple[int, int, FlinkRecord]] = []
    for start in range(0, len(events), window):
        groups: dict[object, list[BatchItem]] = {}
        for position, (event, late) in enumerate(events[start : start + window], start):
            key = event.key
            group = groups.get(key)
            if group is None:
                group = groups[key] = []
            elif len(group) == BATCH_LIMIT:  # why: bound a record's size; the next batch follows it
                groups[(_CHUNK, position)] = group[:]  # (no event key holds _CHUNK)
                group.clear()
            group.append((event.type, event.time, key, event.fields, event.seq, late, position))
        stretch = []
        for group in groups.values():
            # why the first on-time item: in an in-order run on-time times never go back, so it
            # holds the earliest on-time time
            first = next((item for item in group if not item[5]), group[0])
            stamp = millis(first[1], offset)
            stretch.append(
                (stamp, group[0][6], (run, EventBatch.of(group[0][2], tuple(group)), False, stamp, -1))
            )
        stretch.sort(key=lambda r: (r[0], r[1]))
        records.extend(stretch)
    return [r for _, _, r in records]


def results_of(runs: Sequence[FlinkRun], outputs: Iterable[OutputRecord]) -> list[RunResult]:
    """Sort collected ``(run, output)`` records (or grouped ones) into per-run results, in engine order."""
    per_run: list[list[HostOutput]] = [[] for _ in runs]
    for run, out in outputs_of(outputs):
        per_run[run].append(out)
    return [collect_results(renumber(outs)) for outs in per_run]


def run_many(
    runs: Sequence[FlinkRun],
    *,
    parallelism: int = 1,
    execution_mode: ExecutionMode = "thread",
    checkpoint_interval_ms: int | None = None,
    job_name: str = "cep-workbench",
    config: dict[str, str] | None = None,
) -> list[RunResult]:
    """Run several independent runs in one Flink job; one :class:`RunResult` per run, in order.

    Each run keeps its own keys (the Flink key is ``(run, key)``), clock decisions and outputs, so
    the results equal running each alone. ``config``: further Flink options (e.g. bundle sizes).
    """
    if parallelism < 1:
        msg = f"parallelism must be >= 1, got {parallelism!r}"
        raise CepError(msg)
    if not runs:
        return []
    with gc_paused():
        return _run_many(runs, parallelism, execution_mode, checkpoint_interval_ms, job_name, config)


def _run_many(
    runs: Sequence[FlinkRun],
    parallelism: int,
    execution_mode: ExecutionMode,
    checkpoint_interval_ms: int | None,
    job_name: str,
    config: dict[str, str] | None,
) -> list[RunResult]:
    hosts = [run.host() for run in runs]
    chains = [run.chain() for run in runs] if any(emits_of(m) for h in hosts for m in h.host.matchers) else []
    offsets = run_offsets(runs)
    bound = max(run.out_of_orderness for run in runs)
    # Why not with emit into: the chain's levels release outputs on watermarks (see chain.py)
    eager = not chains
    records = plan_records(runs, hosts, offsets, batch=BATCH_WINDOW if eager and bound == 0 else 0)
    env = make_environment(
        1 if eager else parallelism,  # why 1: key_by's own key step keeps each key's order (detect)
        checkpoint_interval_ms=checkpoint_interval_ms,
        execution_mode=execution_mode,
        config=config,
    )
    if not records:
        return [RunResult([], [], [], []) for _ in runs]
    if chains:  # why: emit into: one keyed operator per level of derived events (see chain.py)
        depth = max(len(levels) for levels, _ in chains)
        drivers = [
            [
                levels[n] if n < len(levels) else run._driver([])
                for (levels, _), run in zip(chains, runs, strict=True)
            ]
            for n in range(depth)
        ]
        source = env.from_collection(chain_records(records)).name(f"{job_name}-input")
        stream = detect_chain(source, drivers, offsets, [e for _, e in chains], out_of_orderness=bound)
    else:
        source = env.from_collection(records).name(f"{job_name}-input")
        # Why in memory without checkpoints: nothing can snapshot this job
        durable = checkpoint_interval_ms is not None
        stream = detect(
            source, hosts, offsets, out_of_orderness=bound, parallelism=parallelism,
            durable=durable, grouped=True, eager=eager, hold=0 if durable else HOLD,
        )  # fmt: skip
    with stream.execute_and_collect(job_name) as results:
        collected: Iterator[tuple[int, HostOutput]] = iter(results)
        return results_of(runs, collected)


def run_matchers(
    patterns: Sequence[PatternLike],
    inputs: Iterable[Input],
    *,
    parallelism: int = 1,
    out_of_orderness: int | float = 0,
    until: int | float | None = None,
    finish: bool = True,
    trace: bool = False,
    execution_mode: ExecutionMode = "thread",
    forget_idle_keys: bool = False,
    config: dict[str, str] | None = None,
) -> RunResult:
    """Run patterns (or compiled matchers) over one input script on a local Flink mini-cluster.

    The result equals :class:`~workbench.backends.local.LocalBackend`'s for the same arguments:
    the same detections (also in the same order), reactions, late events and trace records.
    """
    with gc_paused():
        run = FlinkRun(
            tuple(patterns), tuple(inputs), out_of_orderness, until, finish, trace, forget_idle_keys
        )
    return run_many([run], parallelism=parallelism, execution_mode=execution_mode, config=config)[0]


class FlinkBackend(Backend):
    """The Flink backend: each :meth:`run` is one job on a local mini-cluster (or the configured one).

    Args:
        parallelism: the matcher operator's parallelism.
        execution_mode: PyFlink's Python execution mode (``"thread"`` or ``"process"``).
        native: run each sequence pattern that ``MATCH_RECOGNIZE`` can express natively (Flink's
            Java NFA, one job per pattern), the others on the Python path; ``False``: all Python.
        report: called with one line per pattern saying which path it took and why (default:
            written to stderr); the last run's choices are also in :attr:`paths`.
        forget_idle_keys: on the Python path, clear a key's state once its instances all ended
            (the engine's option of that name).
    """

    name = "flink"

    def __init__(
        self,
        parallelism: int = 1,
        execution_mode: ExecutionMode = "thread",
        *,
        native: bool = True,
        report: Callable[[str], None] | None = None,
        forget_idle_keys: bool = False,
    ) -> None:
        self.forget_idle_keys = forget_idle_keys
        self.parallelism = parallelism
        self.execution_mode = execution_mode
        self.native = native
        self.report = report if report is not None else _to_stderr
        self.paths: list[PathChoice] = []

    def execute(
        self, patterns: Sequence[PatternLike], inputs: Iterable[Input], options: RunOptions
    ) -> RunResult:
        """See :meth:`workbench.backends.base.Backend.run`."""
        from workbench.backends.flink.sql import SqlUnsupported, run_sql

        events = list(inputs)
        self.paths = choose_paths(patterns, events, options) if self.native else []
        native: list[RunResult] = []
        python: list[PatternLike] = list(patterns)
        if self.native:
            python = [p for p, c in zip(patterns, self.paths, strict=True) if not c.native]
        for i, (pattern, choice) in enumerate(zip(patterns, self.paths, strict=False)):
            if not choice.native:
                continue
            assert isinstance(pattern, SequencePattern)
            try:
                native.append(run_sql(pattern, events, parallelism=self.parallelism))
            except SqlUnsupported as err:  # why: a column the events lack, or mixed field types
                self.paths[i] = PathChoice(choice.pattern, (str(err),))
                python.append(pattern)
        for choice in self.paths:
            self.report(choice.describe())
        result = (
            run_matchers(
                python,
                events,
                parallelism=self.parallelism,
                out_of_orderness=options.out_of_orderness,
                until=options.until,
                finish=options.finish,
                trace=options.trace,
                execution_mode=self.execution_mode,
                forget_idle_keys=self.forget_idle_keys,
            )
            if python or not native
            else RunResult([], [], [], [])
        )
        if native:
            merged = [*result.detections, *(d for r in native for d in r.detections)]
            result.detections = sorted(merged, key=lambda d: (d.time, d.events[-1].seq if d.events else -1))
        return result

    def run_many(self, runs: Sequence[FlinkRun]) -> list[RunResult]:
        """Several runs in one job (see :func:`run_many`)."""
        return run_many(runs, parallelism=self.parallelism, execution_mode=self.execution_mode)


def _to_stderr(line: str) -> None:
    print(line, file=sys.stderr)
