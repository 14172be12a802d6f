"""The state behind the ``%cep`` magics (and the ``workbench`` CLI): defined patterns and results.

A :class:`CepSession` holds the patterns defined so far (by name, with the text they came from), the
``event`` declarations, the detections and the trace of the last run of each pattern, and an optional
live (processing-time) engine for ``%cep feed``. It imports neither IPython nor widgets, so the CLI
and tests use it directly.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from workbench.engine.detection import Detection, TraceKind
from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault
from workbench.engine.matcher import Pattern
from workbench.engine.runtime import Engine, RunResult
from workbench.engine.timekeeping import Clock
from workbench.errors import CepError, CepRuntimeError, EventError
from workbench.language import compile_text, format_pattern
from workbench.language.compile import Definition
from workbench.language.emit import session_cycle
from workbench.session.feeders import derived_shape, with_feeders
from workbench.session.inputs import KeyFields, key_text, with_key
from workbench.session.locate import locate_element
from workbench.session.ordering import check_order_by, order_fields
from workbench.session.records import plain_record, records_format
from workbench.session.runs import (
    Progress,
    Replay,
    RunOutcome,
    RunSettings,
    Seen,
    _Run,
    kept,
    reporting,
    result_of,
    stamped,
    to_frame,
)
from workbench.session.times import NUMBERS, TimeFormat, wall_clock
from workbench.session.views import SessionViews

if TYPE_CHECKING:
    import pandas as pd

    from workbench.backends.columnar.frame import EventColumns

__all__ = ["CepSession", "Replay", "RunOutcome", "to_frame"]  # the run records live in .runs


class CepSession(SessionViews):
    """Patterns defined in a kernel (or a CLI run), and what running them produced."""

    def __init__(self) -> None:
        self.definitions: dict[str, Definition] = {}
        self.sources: dict[str, str] = {}
        self.schema: dict[str, tuple[str, ...]] = {}
        self.field_types: dict[str, dict[str, str]] = {}
        self.runs: dict[str, _Run] = {}
        self.live: Engine | None = None
        #: the partition field(s) the live feed keys its events by (``None``: the events' own keys)
        self.live_key: KeyFields | None = None
        self.live_names: tuple[str, ...] = ()
        self.live_events: dict[int, Event] = {}  # the live feed's matched events, by seq
        self.live_times: TimeFormat = NUMBERS  # wall-clock dates unless a test clock stamps the feed
        self.late: list[Event] = []  # the late events of the last replay (%cep late)
        self.late_fields: tuple[str, ...] = ()  # the fields of that replay's input (its schema)
        self.errors: list[ConditionFault] = []  # the condition errors of the last replay (%cep errors)
        # How the last replay's input gave its times (set by the replay); runs keep it, so their
        # outputs show dates for a datetime time column, datetime fields and keys.
        self.times: TimeFormat = NUMBERS

    # ---- definitions

    def define(self, text: str, *, first_line: int = 1, default_name: str | None = None) -> list[Definition]:
        """Compile ``text`` and (re)define every pattern in it; returns the new definitions.

        Nothing is defined when any part of the text is wrong (the error says where).
        """
        defs = compile_text(
            text,
            first_line=first_line,
            schema=self.schema,
            field_types=self.field_types,
            default_name=default_name,
        )
        session_cycle(self.definitions, defs)  # why: a cycle can close across cells
        if default_name is not None and defs and default_name not in {d.pattern.name for d in defs}:
            defined = ", ".join(repr(d.pattern.name) for d in defs)
            msg = f"the cell is called {default_name!r} but defines {defined}; drop the name or rename"
            raise CepError(msg)
        for d in defs:
            self.field_types.update({k: dict(v) for k, v in d.field_types.items()})
            self.definitions[d.pattern.name] = d
            self.sources[d.pattern.name] = format_pattern(d.pattern, partition=d.partition)
            self.runs.pop(d.pattern.name, None)
            self.schema.update(d.schema)
        if not defs:  # a cell with only event declarations
            from workbench.language import ast
            from workbench.language.parser import parse

            for item in parse(text, first_line=first_line).items:
                if isinstance(item, ast.EventDecl):
                    names = [f.text for f in item.fields]
                    self.schema[item.type.text] = tuple(names)
                    typed = zip(names, item.types or (None,) * len(names), strict=True)
                    self.field_types[item.type.text] = {k: v for k, v in typed if v}
        return defs

    @contextlib.contextmanager
    def undone_on_error(self) -> Iterator[None]:
        """Definitions made inside the block are undone when it raises (a ``%%cep --on`` cell
        whose run fails leaves the patterns, their sources, runs and the event schema as they were)."""
        tables: tuple[dict[str, object], ...] = (
            self.definitions, self.sources, self.runs, self.schema, self.field_types,  # type: ignore[assignment]
        )  # fmt: skip
        saved = [dict(t) for t in tables]
        try:
            yield
        except BaseException:
            for table, before in zip(tables, saved, strict=True):
                table.clear()
                table.update(before)
            raise

    def remove(self, name: str) -> None:
        """Forget a pattern."""
        self.get(name)
        del self.definitions[name]
        self.sources.pop(name, None)
        self.runs.pop(name, None)

    # ---- running

    def run(
        self,
        names: Sequence[str],
        events: Sequence[Event],
        *,
        progress: Progress | None = None,
        trace: bool = True,
        out_of_orderness: int | float = 0,
        backend: str = "local",
        strict: bool = False,
        order_by: Sequence[str] = (),
    ) -> RunOutcome:
        """Replay ``events`` (event time) through the named patterns and keep the results.

        A condition that fails on an event (a runtime error) does not stop the run: the event does
        not match, and the error is kept once per kind in ``errors`` (``strict``: raise instead).

        The run goes through :func:`workbench.backends.get_backend` (``"local"``: this process;
        ``"flink"``/``"flink-sql"``: PyFlink, a clear :class:`~workbench.backends.BackendError` when it
        is not installed).
        """
        from workbench.backends import get_backend

        patterns = self._patterns(names)
        runner = get_backend(backend)
        check_order_by(order_by, {f for e in events for f in e.fields}, backend)
        with self._located(names):
            result = runner.run(
                patterns,
                reporting(events, progress),
                out_of_orderness=out_of_orderness,
                trace=trace,
                strict=strict,
                order_by=order_by,
            )
        if progress is not None:
            progress(len(events), len(events))
        self.late = list(result.late)
        self.errors = list(result.errors)
        by_seq = {e.seq: e for e in stamped(events)}
        return self._outcome(names, result, by_seq)

    def replay(
        self,
        names: Sequence[str],
        data: object,
        *,
        time: str | None = None,
        key: str | None = None,
        type: str | None = None,
        progress: Callable[[int], Progress | None] | None = None,
        trace: bool = True,
        out_of_orderness: int | float = 0,
        backend: str = "local",
        strict: bool = False,
        allow_missing_key: bool = False,
        order_by: str | Sequence[str] | None = None,
    ) -> Replay:
        """Replay ``data`` (a DataFrame, an event file, or events) through the named patterns.

        Patterns partitioned by different fields run as separate groups (:meth:`partition_groups`)
        and their outcomes are merged. A DataFrame or file replayed locally goes column by column
        (:mod:`workbench.backends.columnar`): an event is built only for the rows a pattern can
        use, with the same results. ``progress(total)`` makes a progress callback (or ``None``).
        An event with no value in its partition key column is an :class:`EventError` unless
        ``allow_missing_key`` (then those events share the key ``None``; ``missing_keys`` counts them).
        ``order_by`` (fields, or ``"a,b"``) orders equal-time events (``Engine(order_by=...)``).
        """
        from workbench.session.files import records_frame
        from workbench.session.inputs import check_out_of_orderness, missing_keys, read_frame

        check_out_of_orderness(out_of_orderness)
        names = _names(names, "replay")
        if isinstance(data, str | Path):
            data = read_frame(data)  # read once for every group
        elif isinstance(data, Iterator):
            data = list(data)  # read once: each partition group loads the events again
        if isinstance(data, list | tuple):
            table = records_frame(data)
            data = data if table is None else table  # why: flat dicts replay as a table does
        # why: the run shows its input's dates as dates (a DataFrame's columns, or event mappings')
        self.times = (
            records_format(data, time) if isinstance(data, list | tuple) else TimeFormat.of_input(data, time)
        )
        outcomes: list[RunOutcome] = []
        types: frozenset[str] = frozenset()
        fields: frozenset[str] = frozenset()
        rows, keyed, missing = 0, False, 0
        fields_by = order_fields(order_by)
        settings = RunSettings(trace=trace, out_of_orderness=out_of_orderness, strict=strict)
        settings["order_by"] = fields_by
        columnar = backend == "local"
        names = with_feeders(self.definitions, names, key)  # why: the patterns whose events they read
        for part_key, group in self.partition_groups(names, key):
            if allow_missing_key and part_key is not None:
                missing = max(missing, missing_keys(data, part_key))
            loaded = _load(data, columnar, time, part_key, type, allow_missing_key)
            if isinstance(loaded, list):  # why: events (another backend, or input that is no table)
                report = progress(len(loaded)) if progress is not None else None
                outcomes.append(self.run(group, loaded, progress=report, backend=backend, **settings))
                seen = Seen.of_events(loaded)
            else:
                report = progress(loaded.rows) if progress is not None else None
                check_order_by(fields_by, loaded.fields)
                outcomes.append(self._replay_columns(group, loaded, report, **settings))
                seen = Seen.of_columns(loaded)
            types, fields, rows, keyed = seen.types, seen.fields, seen.rows, keyed or seen.keyed
        self.late_fields = tuple(sorted(fields, key=str))  # why str: a mapping event may name a field None
        types, fields = derived_shape(self.definitions, names, types, fields)  # why: no note on them
        return Replay(self.merge(outcomes), types, fields, rows, keyed or rows == 0, missing)

    def _replay_columns(
        self,
        names: Sequence[str],
        cols: EventColumns,
        progress: Progress | None,
        trace: bool,
        out_of_orderness: int | float,
        strict: bool,
        order_by: Sequence[str] = (),
    ) -> RunOutcome:
        from workbench.backends.columnar.frame import RowEvents
        from workbench.backends.columnar.replay import replay_columns

        patterns = self._patterns(names)
        with self._located(names):
            result = replay_columns(
                patterns,
                cols,
                out_of_orderness=out_of_orderness,
                trace=trace,
                strict=strict,
                progress=progress,
                order_by=order_by,
            )
        return self._outcome(names, result, RowEvents(cols))

    def _outcome(self, names: Sequence[str], result: RunResult, events: Mapping[int, Event]) -> RunOutcome:
        """Keep a replay's results (``%cep late``, ``%cep errors``, explain) and return them."""
        self.late = list(result.late)
        self.errors = list(result.errors)
        self._keep(names, result, events)
        return RunOutcome(
            kept(result.detections), list(result.trace), list(result.late), events, list(result.errors),
            result.dropped,
        )  # fmt: skip

    def _patterns(self, names: Sequence[str]) -> list[Pattern]:
        """The patterns called ``names`` (at least one), for a replay or a live feed."""
        if not names:
            msg = "name at least one pattern to run"
            raise CepError(msg)
        return [self.get(n).pattern for n in names]

    @contextlib.contextmanager
    def _located(self, names: Sequence[str]) -> Iterator[None]:
        """A runtime error (``strict``) that names a stage or channel also says where it was written."""
        try:
            yield
        except CepRuntimeError as err:
            where = locate_element(self.definitions, names, str(err))
            if not where:
                raise
            located = f"{err}{where}"
            raise type(err)(located) from err

    def _keep(
        self,
        names: Sequence[str],
        result: RunResult,
        events: Mapping[int, Event],
        times: TimeFormat | None = None,
    ) -> None:
        """Record each pattern's detections and trace (a replay's, or a live feed's so far)."""
        for n in names:
            # why whole: one pattern's replay keeps its (lazy) list, built only when read
            found = result.detections
            mine = [d for d in found if d.pattern == n] if len(names) > 1 else kept(found)
            self.runs[n] = _Run(
                mine,
                [r for r in result.trace if r.pattern == n],
                events,
                self.times if times is None else times,
            )

    def times_of(self, names: Sequence[str]) -> TimeFormat:
        """How the last runs of ``names`` show times (dates or elapsed times when any of them read
        them, else the datetime and timedelta fields of any of them)."""
        formats = [self.runs[n].times for n in names if n in self.runs]
        fielded = next((f for f in formats if f.fields or f.durations), NUMBERS)
        return next((f for f in formats if f.shown), fielded)

    def partition_groups(
        self, names: Sequence[str], key: KeyFields | None
    ) -> list[tuple[KeyFields | None, list[str]]]:
        """The patterns to run together, by the key column each needs.

        An explicit ``key`` (``--key``) keys every pattern; otherwise each pattern is keyed by its own
        ``partition by`` field (or not at all), so patterns partitioned differently run separately.
        """
        if key is not None:
            return [(key, list(names))]
        groups: dict[KeyFields | None, list[str]] = {}
        for n in names:
            groups.setdefault(self.get(n).partition, []).append(n)
        return list(groups.items())

    def merge(self, outcomes: Sequence[RunOutcome]) -> RunOutcome:
        """One outcome for runs of the same events by pattern groups (detections in time order)."""
        if len(outcomes) == 1:
            return outcomes[0]
        detections = sorted((d for o in outcomes for d in o.detections), key=lambda d: d.time)
        late = sorted({e.seq: e for o in outcomes for e in o.late}.values(), key=lambda e: e.seq)
        trace = [r for o in outcomes for r in o.trace]
        errors = [f for o in outcomes for f in o.errors]
        self.late = list(late)
        self.errors = errors
        return RunOutcome(
            detections, trace, late, outcomes[-1].events, errors, sum(o.dropped for o in outcomes)
        )

    def start_feed(self, names: Sequence[str], *, clock: Clock | None = None, strict: bool = False) -> Engine:
        """Start a live processing-time engine on the named patterns (replacing a running one).

        It runs as a replay does (traced, condition errors recorded once per kind, ``strict``
        raises with the place the failing element was written); only the clock differs: the
        wall clock (or ``clock``) stamps each event.
        """
        names = with_feeders(self.definitions, _names(names, "start_feed"), None)  # why: as replay
        patterns = self._patterns(names)
        groups = self.partition_groups(names, None)
        if len(groups) > 1:  # why: one live engine keys every event one way
            by = "; ".join(f"{', '.join(g)} by {key_text(k) if k else 'nothing'}" for k, g in groups)
            msg = f"patterns partitioned differently cannot share a live feed ({by}): start one per partition"
            raise CepError(msg)
        self.live = Engine(patterns, time_mode="processing", clock=clock, trace=True, strict=strict)
        self.live_key = groups[0][0]
        self.live_names = tuple(names)
        self.live_events = {}
        self.live_times = wall_clock() if clock is None else NUMBERS
        self._keep(names, result_of(self.live), self.live_events, self.live_times)
        return self.live

    def feed(self, items: Iterable[Event | Mapping[str, object]] | pd.DataFrame) -> list[Detection]:
        """Push events (mappings, Events, or a DataFrame's rows) into the live engine (stamped with
        the clock) and fire due timers."""
        if self.live is None:
            msg = "no live feed: start one with %cep feed NAME... --start"
            raise CepError(msg)
        import pandas as pd

        key = self.live_key
        rows: Iterable[Event | Mapping[str, object]]
        if isinstance(items, pd.DataFrame):
            rows = _feed_frame(items, key)
            self.live_times = self.live_times.with_input(TimeFormat.of_input(items))
            key = None  # why: the rows are keyed already, as a replay keys them
        else:
            rows = items if isinstance(items, list) else list(items)
            self.live_times = self.live_times.with_input(records_format(rows))
        out: list[Detection] = []
        with self._located(self.live_names):
            for i, item in enumerate(rows):
                raw = plain_record(item) if isinstance(item, Mapping) else item  # why: dates as milliseconds
                if isinstance(raw, dict) and key is not None:
                    raw = with_key(raw, key)  # why: as a replay keys them, by the partition's fields
                    if raw["key"] is None:
                        msg = f"event {i} of this feed has no value for its partition key {key_text(key)!r}"
                        raise EventError(msg, position=i, field=key_text(key))
                out.extend(self.live.process(raw))
            out.extend(self.live.tick())
        self._collect_live()
        return out

    def stop_feed(self) -> list[Detection]:
        """Flush and close the live engine."""
        if self.live is None:
            return []
        with self._located(self.live_names):
            out = self.live.finish()
        self._collect_live()
        self.live = None
        return out

    def _collect_live(self) -> None:
        assert self.live is not None
        result = result_of(self.live)
        for d in result.detections:
            for e in d.events:
                self.live_events[e.seq] = e
        self._keep(self.live_names, result, self.live_events, self.live_times)


def _feed_frame(frame: pd.DataFrame, key: KeyFields | None) -> list[Event]:
    """The rows of ``frame`` as events for a live feed, read as a replay reads them (datetime and
    timedelta columns as milliseconds, keyed by ``key``); a frame without a time column gets time 0,
    which the feed's clock replaces, as it replaces any time an event gives."""
    from workbench.session.inputs import load_events

    named = {str(c) for c in frame.columns}
    if "time" not in named and "t" not in named:
        frame = frame.assign(time=0)
    return load_events(frame, key=key)


def _load(
    data: object, columnar: bool, time: str | None, key: KeyFields | None, type: str | None, allow: bool
) -> EventColumns | list[Event]:
    """``data`` as columns (a table replayed locally), else as events; ``allow``: missing keys."""
    from workbench.session.inputs import load_columns, load_events

    cols = load_columns(data, time=time, key=key, type=type, allow_missing_key=allow) if columnar else None
    if cols is not None:
        return cols
    return load_events(data, time=time, key=key, type=type, allow_missing_key=allow)


TRACE_ENDINGS = frozenset(
    {TraceKind.DETECTED, TraceKind.FAILED, TraceKind.STOPPED, TraceKind.TIMED_OUT, TraceKind.VIOLATED}
)


def _names(names: Sequence[str], call: str) -> list[str]:
    """The pattern names a call runs: one name may come as a string; none is an error."""
    if isinstance(names, str):  # why: a string is a sequence of one-letter "names" otherwise
        names = [names]
    if not names:
        msg = f"{call}: no pattern to run; name at least one"
        raise CepError(msg)
    return list(names)
