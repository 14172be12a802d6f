"""``backend="flink-sql"``: a sequence pattern as Flink SQL ``MATCH_RECOGNIZE``, run by the JVM.

Flink's ``MATCH_RECOGNIZE`` is executed by ``flink-cep`` itself, so where a pattern can be written in
it, the matching runs at JVM speed instead of in Python. :func:`sql_reasons` says why a pattern
cannot (empty: it can); :func:`match_recognize` writes the query; :func:`run_sql` runs it on a
local mini-cluster and returns the matches as :class:`~workbench.engine.detection.Detection`.

What can be written, and how, is :mod:`workbench.backends.flink.sql_query` (quantifiers, greedy and
reluctant, loops that skip events, running aggregates in ``DEFINE``, ``within``, the skip
strategies; everything else is refused with the reason). Matches come back with the local engine's
events, stages and times; instance ids are numbered per key in emission order (the engine's
numbering counts partial matches, which SQL does not expose).
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Mapping, Sequence

from workbench.backends.base import Backend, Input, PatternLike, RunOptions
from workbench.backends.flink import require_pyflink
from workbench.backends.flink.sql_query import (
    SqlUnsupported,
    match_recognize,
    positive_stages,
    sql_reasons,
)
from workbench.engine.clock import stamp
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import SequencePattern
from workbench.engine.runtime import RunResult

__all__ = ["FlinkSqlBackend", "SqlUnsupported", "match_recognize", "run_sql", "sql_reasons"]


_SQL_TYPES = {bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE", str: "STRING"}


def _columns(events: Sequence[Event]) -> dict[str, type]:
    columns: dict[str, type] = {}
    for e in events:
        for name, value in e.fields.items():
            kind = type(value) if value is not None else columns.get(name, type(None))
            seen = columns.setdefault(name, kind)
            if seen is type(None):
                columns[name] = kind
            elif kind not in (seen, type(None)) and {seen, kind} != {int, float}:
                msg = f"field {name!r} has values of types {seen.__name__} and {kind.__name__}"
                raise SqlUnsupported(msg)
            elif {seen, kind} == {int, float}:
                columns[name] = float
    for name, kind in columns.items():
        if kind not in _SQL_TYPES:
            msg = f"field {name!r} of type {kind.__name__} has no SQL column type here"
            raise SqlUnsupported(msg)
    return columns


def run_sql(pattern: SequencePattern, inputs: Iterable[Input], *, parallelism: int = 1) -> RunResult:
    """Run ``pattern`` as ``MATCH_RECOGNIZE`` over in-order events on a local mini-cluster."""
    require_pyflink()
    from pyflink.common import Row, Types
    from pyflink.table import Schema, StreamTableEnvironment

    from workbench.backends.flink.env import make_environment

    used = _used_events(pattern, inputs)
    columns = _columns(used)
    fields = {"type": "type", "time": "t", "t": "t", **{name: f"f_{name}" for name in columns}}
    keys: dict[Hashable, int] = {}
    rows = [
        Row(
            keys.setdefault(e.key, len(keys)), e.seq, e.type, int(e.time), *(e.fields.get(n) for n in columns)
        )
        for e in used
    ]
    names = ["key_id", "seq", "type", "t", *(f"f_{n}" for n in columns)]
    flink_types = [Types.LONG(), Types.LONG(), Types.STRING(), Types.LONG()]
    flink_types += [
        {bool: Types.BOOLEAN(), int: Types.LONG(), float: Types.DOUBLE(), str: Types.STRING()}[k]
        for k in columns.values()
    ]
    env = make_environment(parallelism)
    t_env = StreamTableEnvironment.create(env)
    stream = env.from_collection(rows, type_info=Types.ROW_NAMED(names, flink_types))
    schema = (
        Schema.new_builder()
        .column_by_expression("rt", "TO_TIMESTAMP_LTZ(t, 3)")
        .watermark("rt", "rt - INTERVAL '0.001' SECOND")
        .build()
    )
    t_env.create_temporary_view("cep_events", t_env.from_data_stream(stream, schema))
    query = match_recognize(pattern, "cep_events", fields)
    by_seq = {e.seq: e for e in used}
    key_of = {i: k for k, i in keys.items()}
    found = []
    with t_env.sql_query(query).execute().collect() as results:
        for row in results:
            stages = tuple(() if x is None else tuple(int(s) for s in str(x).split(",")) for x in row[1:])
            found.append((int(row[0]), stages))
    found.sort(key=lambda m: (by_seq[_last(m[1])].time, _last(m[1]), m[1]))
    return RunResult(_detections(pattern, found, by_seq, key_of), [], [], [])


def _used_events(pattern: SequencePattern, inputs: Iterable[Input]) -> list[Event]:
    """The stamped input events the pattern reads; refuses marks and events that go back in time."""
    events = []
    for position, item in enumerate(inputs):
        if not isinstance(item, Mapping | Event):
            msg = "flink-sql takes events only (no AdvanceTime marks)"
            raise SqlUnsupported(msg)
        events.append(stamp(item, position))
    types = compile_matcher(pattern).event_types()
    used = [e for e in events if types is None or e.type in types]
    for a, b in itertools.pairwise(used):
        if b.time < a.time:
            msg = f"flink-sql replays in-order events only (event #{b.seq} goes back in time)"
            raise SqlUnsupported(msg)
    return used


def _last(stages: Sequence[Sequence[int]]) -> int:
    return next(seqs[-1] for seqs in reversed(stages) if seqs)


def _detections(
    pattern: SequencePattern,
    found: Sequence[tuple[int, tuple[tuple[int, ...], ...]]],
    by_seq: Mapping[int, Event],
    key_of: Mapping[int, Hashable],
) -> list[Detection]:
    """The matches as detections, instance ids numbered per key in emission order."""
    stage_names = [s.name for s in positive_stages(pattern)]
    detections, counters = [], dict.fromkeys(key_of, 0)
    for key_id, stages in found:
        counters[key_id] += 1
        matched = tuple(by_seq[s] for seqs in stages for s in seqs)
        channels = tuple(name for name, seqs in zip(stage_names, stages, strict=True) for _ in seqs)
        detections.append(
            Detection(
                pattern.name,
                key_of[key_id],
                counters[key_id],
                "match",
                matched[-1].time,
                matched,
                channels,
            )
        )
    return detections


class FlinkSqlBackend(Backend):
    """``backend="flink-sql"``: sequence patterns as ``MATCH_RECOGNIZE`` (see the module docstring).

    Takes in-order events only, without ``AdvanceTime`` marks, ``until``, ``finish=False`` or
    tracing; returns matches (no reactions, no late events: in-order input has none).
    """

    name = "flink-sql"

    def __init__(self, parallelism: int = 1) -> None:
        self.parallelism = parallelism

    def execute(
        self, patterns: Sequence[PatternLike], inputs: Iterable[Input], options: RunOptions
    ) -> RunResult:
        """See :meth:`workbench.backends.base.Backend.run`."""
        if options.until is not None or not options.finish or options.trace:
            msg = "flink-sql runs a whole in-order replay: no until, finish=False or trace"
            raise SqlUnsupported(msg)
        events = list(inputs)
        detections: list[Detection] = []
        for pattern in patterns:
            if not isinstance(pattern, SequencePattern):
                msg = f"flink-sql runs sequence patterns only, got {type(pattern).__name__}"
                raise SqlUnsupported(msg)
            detections.extend(run_sql(pattern, events, parallelism=self.parallelism).detections)
        detections.sort(key=lambda d: (d.time, d.events[-1].seq))
        return RunResult(detections, [], [], [])
