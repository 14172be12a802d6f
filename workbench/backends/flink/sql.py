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
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

from workbench.backends.base import Backend, Input, PatternLike, RunOptions
from workbench.backends.flink import require_pyflink
from workbench.backends.flink.sql_query import (
    SqlUnsupported,
    match_recognize,
    positive_stages,
    sql_reasons,
)
from workbench.engine.clock import stamp
from workbench.engine.detection import NO_MEASURES, Detection, MeasureValues
from workbench.engine.events import Event
from workbench.engine.families import compile_matcher
from workbench.engine.nfa import SequencePattern
from workbench.engine.runtime import RunResult

__all__ = ["FlinkSqlBackend", "SqlUnsupported", "match_recognize", "run_sql", "sql_reasons"]


_SQL_TYPES = {bool: "BOOLEAN", int: "BIGINT", float: "DOUBLE", str: "STRING"}


_FLINK_TYPES = {
    bool: lambda: _types().BOOLEAN(),
    int: lambda: _types().LONG(),
    float: lambda: _types().DOUBLE(),
    str: lambda: _types().STRING(),
}


def _types() -> Any:
    from pyflink.common import Types

    return Types


def _columns(events: Sequence[Event]) -> dict[str, type]:
    """Each field's column type (int and float together: float); refuses other mixes."""
    return _column_types(e.fields for e in events)


def _column_types(records: Iterable[Mapping[str, object]]) -> dict[str, type]:
    columns: dict[str, type] = {}
    for record in records:
        for name, value in record.items():
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


_PARTS = [f"k{i}" for i in range(64)]


def _parts(e: Event) -> tuple[object, ...]:
    return e.key if isinstance(e.key, tuple) else (e.key,)


def _key_columns(events: Sequence[Event]) -> tuple[Callable[[Event], tuple[object, ...]], dict[str, type]]:
    """The partition columns: a composite key's parts (``PARTITION BY k0, k1``), else a key id.

    A composite key (every key a tuple of one length, of SQL-typable parts) partitions by its
    parts, compared as SQL compares them (``1`` and ``1.0`` are one key, as in Python); any other
    key is numbered (``key_id``), compared as Python compares keys. Detections get the events' own
    keys back either way.
    """
    lengths = {len(e.key) if isinstance(e.key, tuple) else -1 for e in events}
    width = lengths.pop() if len(lengths) == 1 else -1
    if 0 < width <= len(_PARTS):
        try:
            parts = _column_types(dict(zip(_PARTS, _parts(e), strict=False)) for e in events)
        except SqlUnsupported:
            parts = {}
        if len(parts) == width:
            floats = [parts[f"k{i}"] is float for i in range(width)]

            def split(e: Event) -> tuple[object, ...]:
                return tuple(
                    float(v) if f and isinstance(v, int) else v
                    for v, f in zip(_parts(e), floats, strict=True)
                )

            return split, parts
    ids: dict[Hashable, int] = {}
    return (lambda e: (ids.setdefault(e.key, len(ids)),)), {"key_id": int}


def run_sql(pattern: SequencePattern, inputs: Iterable[Input], *, parallelism: int = 1) -> RunResult:
    """Run ``pattern`` as ``MATCH_RECOGNIZE`` over in-order events on a local mini-cluster."""
    require_pyflink()
    from pyflink.common import Row, Types
    from pyflink.table import Schema, StreamTableEnvironment

    from workbench.backends.flink.env import make_environment

    used = _used_events(pattern, inputs)
    columns = _columns(used)
    fields = {"type": "type", "time": "t", "t": "t", **{name: f"f_{name}" for name in columns}}
    keys, key_columns = _key_columns(used)
    rows = [Row(*keys(e), e.seq, e.type, int(e.time), *(e.fields.get(n) for n in columns)) for e in used]
    names = [*key_columns, "seq", "type", "t", *(f"f_{n}" for n in columns)]
    flink_types = [_FLINK_TYPES[k]() for k in key_columns.values()]
    flink_types += [Types.LONG(), Types.STRING(), Types.LONG()]
    flink_types += [_FLINK_TYPES[k]() for k in columns.values()]
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
    strings = ["type", *(name for name, kind in columns.items() if kind is str)]
    query = match_recognize(pattern, "cep_events", fields, list(key_columns), strings)
    by_seq = {e.seq: e for e in used}
    n_keys, n_stages = len(key_columns), len(positive_stages(pattern))
    found = []
    with t_env.sql_query(query).execute().collect() as results:
        for row in results:
            values = list(row)
            stages = tuple(
                () if x is None else tuple(int(s) for s in str(x).split(","))
                for x in values[n_keys : n_keys + n_stages]
            )
            found.append((stages, tuple(values[n_keys + n_stages :])))
    found.sort(key=lambda m: (by_seq[_last(m[0])].time, _last(m[0]), m[0]))
    return RunResult(_detections(pattern, found, by_seq), [], [], [])


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
    found: Sequence[tuple[tuple[tuple[int, ...], ...], tuple[object, ...]]],
    by_seq: Mapping[int, Event],
) -> list[Detection]:
    """The matches as detections (the events' own keys), instance ids numbered per key in emission order."""
    stage_names = [s.name for s in positive_stages(pattern)]
    names = [m.name for m in pattern.measures]
    kinds = {m.name: m.kind for m in pattern.measures}
    exprs = {m.name: m.expr for m in pattern.measures}
    detections: list[Detection] = []
    counters: dict[Hashable, int] = {}
    for stages, values in found:
        matched = tuple(by_seq[s] for seqs in stages for s in seqs)
        key = matched[0].key
        counters[key] = counters.get(key, 0) + 1
        channels = tuple(name for name, seqs in zip(stage_names, stages, strict=True) for _ in seqs)
        measures = (
            MeasureValues(dict(zip(names, values, strict=True)), kinds, exprs) if names else NO_MEASURES
        )
        detections.append(
            Detection(
                pattern.name,
                key,
                counters[key],
                "match",
                matched[-1].time,
                matched,
                channels,
                measures=measures,
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
