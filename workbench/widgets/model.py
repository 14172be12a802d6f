"""The timeline's data model: trace records and detections -> rows, state bands and markers.

Pure Python (no bokeh, no widgets), so every rule here is unit-tested without a browser.

**Rows.** One row per pattern instance (its ``element`` is ``None``) and one per channel or stage
of that instance that appears in the trace, grouped by key, then pattern, then instance; an
instance's own row comes first, its elements follow in order of first appearance. Late events get
a ``late`` row per key.

**States.** Each row is a sequence of state segments (:class:`Band`). A record changes the state
of its row (see :func:`next_state`): ``started``/``extended``/``accepted`` make it *active*,
``counted`` makes it *counted* with a ``k/n`` label, ``paused`` pauses it and ``resumed`` restores
the state it had before the pause, and ``stopped``, ``negated`` (satisfied by absence),
``violated``, ``timed_out``, ``detected``, ``failed``, ``pruned`` and ``held`` (a completed match
the skip strategy holds back) set their own state.
``ignored`` and ``late`` leave the state alone (they are markers only), except that an event
ignored because its channel is paused shows the channel *paused*. An element row exists from its
instance's start; before its first record it is *waiting*, or *paused* when that first record is a
``resumed`` or a paused ``ignored`` (a channel declared paused). A ``failed`` record is about the
whole instance: its element names the cause, so it applies to the instance's row.

**Lifetime.** An instance ends at an instance-level record (``element is None``) of kind
``detected``, ``timed_out``, ``stopped`` or ``pruned``, or at any ``failed`` record, unless a
later record of the same instance follows (repeated emission): then it goes on. Rows of open
instances extend to the *horizon*, the latest time seen.

**Scrubbing.** :meth:`TimelineModel.state_at` gives every row's state at time ``t``: the state
after every record with ``time <= t``.

**Bounded views.** :meth:`TimelineModel.view` keeps a window of the ``max_instances`` most recently
active instances and aggregates when rows would exceed ``max_rows``: first element rows fold into
their instance row (level ``"instance"``), then instances into one row per key and pattern
(``"key"``), then into one row per pattern (``"pattern"``). Markers beyond ``max_markers`` are
binned per row, kind and time bucket, each bin carrying its count.
"""

from __future__ import annotations

import bisect
import heapq
import math
from collections.abc import Collection, Hashable, Iterable

from workbench.engine.detection import Detection, TraceKind, TraceRecord
from workbench.engine.events import Event
from workbench.widgets.pages import page_extent, paginate
from workbench.widgets.rows import (
    LEVELS,
    Band,
    DetectionMark,
    Instance,
    Marker,
    RowId,
    RowState,
    State,
    TimeText,
    View,
    bin_markers,
    describe,
    next_state,
    shows_paused,
    subject,
)

__all__ = ["TimelineModel"]


#: instance-level records that end an instance (unless a later record of it follows).
_ENDS_INSTANCE = frozenset(
    {TraceKind.DETECTED, TraceKind.FAILED, TraceKind.TIMED_OUT, TraceKind.STOPPED, TraceKind.PRUNED}
)


class TimelineModel:
    """Trace records and detections, organised for drawing and scrubbing.

    Args:
        trace: the engine's trace records (``Engine(trace=True).trace_records``), in emission order.
        detections: the engine's detections.

    Feed more with :meth:`add_record` / :meth:`add_detection` (the live mode does).
    """

    def __init__(self, trace: Iterable[TraceRecord] = (), detections: Iterable[Detection] = ()) -> None:
        self.instances: dict[tuple[str, Hashable, int], Instance] = {}
        self.detections: list[Detection] = []
        self.events: dict[int, Event] = {}
        self.late: dict[Hashable, list[TraceRecord]] = {}
        self.keys: dict[Hashable, int] = {}  # key -> order of first appearance
        self.patterns: dict[str, int] = {}
        self.times: list[float] = []  # distinct record and detection times, sorted (the play steps)
        self.horizon = -math.inf
        self.first = math.inf
        self.version = 0  # bumped on every change: the widget redraws when it moved
        self.show_time: TimeText = str  # how texts write a time (the Timeline sets the input's dates)
        for r in trace:
            self.add_record(r)
        for d in detections:
            self.add_detection(d)

    # ------------------------------------------------------------------ input
    def _seen(self, t: float, key: Hashable, pattern: str | None) -> None:
        self.version += 1
        if t > self.horizon:
            self.horizon = t
        if t < self.first:
            self.first = t
        times = self.times
        if not times or t > times[-1]:
            times.append(t)
        elif t != times[-1]:
            i = bisect.bisect_left(times, t)
            if times[i] != t:
                times.insert(i, t)
        self.keys.setdefault(key, len(self.keys))
        if pattern is not None:
            self.patterns.setdefault(pattern, len(self.patterns))

    def add_record(self, record: TraceRecord) -> None:
        """Apply one trace record."""
        t = record.time
        if record.kind is TraceKind.LATE:
            self._seen(t, record.key, None)
            self.late.setdefault(record.key, []).append(record)
            return
        self._seen(t, record.key, record.pattern)
        ident = (record.pattern, record.key, record.instance)
        inst = self.instances.get(ident)
        if inst is None:
            inst = self.instances[ident] = Instance(record.pattern, record.key, record.instance, t)
            inst.changes[None] = [(t, State.ACTIVE, "")]
        if inst.end is not None and t > inst.end:
            inst.end = None  # a record after the end: the instance went on (repeated emission)
        inst.last = max(inst.last, t)
        inst.records.append(record)
        el = subject(record)
        if el is not None and el not in inst.changes:
            inst.elements.append(el)
            # Before its first record a row waits -- unless that record shows it was paused all along.
            first = State.PAUSED if shows_paused(record) else State.WAITING
            inst.changes[el] = [(inst.start, first, "")] if inst.start < t else []
        changes = inst.changes[el]
        current = changes[-1][1:] if changes else (State.WAITING, "")
        if record.kind is TraceKind.PAUSED and current[0] is not State.PAUSED:
            inst.paused_from[el] = current
        state, label = next_state(current, inst.paused_from.get(el), record)
        if record.kind is TraceKind.FAILED:
            state = _failure_state(inst, record)
        if record.kind is TraceKind.RESUMED:
            inst.paused_from.pop(el, None)
        if not changes or (state, label) != changes[-1][1:]:
            if changes and changes[-1][0] == t:
                changes[-1] = (t, state, label)  # same instant: the last record wins
            else:
                changes.append((t, state, label))
        if el is None and record.kind in _ENDS_INSTANCE:
            inst.end = t

    def add_detection(self, detection: Detection) -> None:
        """Add a detection (its events also label the trace's event markers)."""
        self._seen(detection.time, detection.key, detection.pattern)
        self.detections.append(detection)
        for e in detection.events:
            self.events[e.seq] = e
        if detection.initiator is not None:
            self.events[detection.initiator.seq] = detection.initiator

    # ------------------------------------------------------------------ queries
    def _select(
        self, keys: Collection[Hashable] | None, patterns: Collection[str] | None, t: float
    ) -> list[Instance]:
        return [
            inst
            for inst in self.instances.values()
            if inst.start <= t
            and (keys is None or inst.key in keys)
            and (patterns is None or inst.pattern in patterns)
        ]

    def state_at(
        self,
        t: float,
        *,
        keys: Collection[Hashable] | None = None,
        patterns: Collection[str] | None = None,
        max_instances: int | None = None,
    ) -> dict[RowId, RowState]:
        """Every row's state after all records with ``time <= t`` (rows of instances started by ``t``).

        With ``max_instances``, only the rows of the window of most recently active instances (as
        :meth:`view` draws them).
        """
        out: dict[RowId, RowState] = {}
        chosen = (
            self._select(keys, patterns, t)
            if max_instances is None
            else self.window(t, keys=keys, patterns=patterns, max_instances=max_instances)[0]
        )
        for inst in chosen:
            live = not inst.ended_by(t)
            for el in [None, *inst.elements]:
                state, label = State.WAITING, ""
                for time, s, lab in inst.changes[el]:
                    if time > t:
                        break
                    state, label = s, lab
                out[inst.row(el)] = RowState(inst.row(el), state, label, live)
        return out

    def bands_of(
        self, inst: Instance, element: str | None, t: float = math.inf
    ) -> list[tuple[float, float, State, str]]:
        """The state segments ``(start, end, state, label)`` of one row, cut at ``t``."""
        end = min(inst.end if inst.end is not None else self.horizon, t)
        changes = inst.changes[element]
        out = []
        for i, (start, state, label) in enumerate(changes):
            if start > end:
                break
            stop = changes[i + 1][0] if i + 1 < len(changes) else end
            out.append((start, min(stop, end), state, label))
        return out

    def view(
        self,
        t: float | None = None,
        *,
        keys: Collection[Hashable] | None = None,
        patterns: Collection[str] | None = None,
        max_instances: int = 30,
        max_rows: int = 90,
        max_markers: int = 4000,
        page: int | None = None,
        page_rows: int = 30,
    ) -> View:
        """The drawable view at time ``t`` (default: the horizon), filtered, windowed and aggregated.

        With ``page``, the rows of that page (:mod:`.pages`: instances in start order, at most
        ``page_rows`` rows a page, every row at element level) instead of the window of recent
        instances; ``-1`` is the last page.
        """
        now = self.horizon if t is None else t
        paging: tuple[int, int, tuple[float, float] | None] = (0, 1, None)
        if page is None:
            window, hidden = self.window(now, keys=keys, patterns=patterns, max_instances=max_instances)
            late_keys = [k for k in self.late if (keys is None or k in keys) and patterns is None]
            level = self._level(window, late_keys, max_rows)
        else:
            pages = paginate(self._select(keys, patterns, math.inf), self.keys, page_rows) or [[]]
            at = len(pages) - 1 if page < 0 else min(page, len(pages) - 1)
            window = [i for i in pages[at] if i.start <= now]
            hidden = sum(len(p) for p in pages) - len(pages[at])
            late_keys = [k for k in self.late if (keys is None or k in keys) and patterns is None]
            level = "element"
            extent = page_extent(pages[at], self.horizon)
            paging = (at, len(pages), extent if math.isfinite(extent[0]) else None)
        rows, bands, markers = self._rows(window, level, now)
        self._late_rows(late_keys, level, now, paging[2] if page is not None else None, rows, markers)
        dets = self._detection_marks(now, keys, patterns, window, level, rows, markers, page is not None)
        binned = len(markers) > max_markers
        if binned:
            markers = bin_markers(markers, max_markers, self.show_time)
        return View(rows, bands, markers, dets, level, now, hidden, binned, *paging)

    def _rows(
        self, window: list[Instance], level: str, now: float
    ) -> tuple[list[str], list[Band], list[Marker]]:
        """The rows, state bands and trace markers of the instances in ``window`` up to ``now``."""
        rows: list[str] = []
        bands: list[Band] = []
        markers: list[Marker] = []
        for inst in window:
            elements: list[str | None] = [None, *inst.elements] if level == "element" else [None]
            for el in elements:
                name = _row_name(level, inst, el)
                if name not in rows:
                    rows.append(name)
                for start, stop, state, label in self.bands_of(inst, el, now):
                    bands.append(Band(name, start, stop, state, label))
            for r in inst.records:
                if r.time > now:
                    continue
                text = describe(r, self.events, self.show_time)
                markers.append(
                    Marker(_row_name(level, inst, subject(r)), r.time, str(r.kind), text, r.event_seq)
                )
        return rows, bands, markers

    def _late_rows(
        self,
        late_keys: list[Hashable],
        level: str,
        now: float,
        extent: tuple[float, float] | None,
        rows: list[str],
        markers: list[Marker],
    ) -> None:
        """Late events: a row per key, or (a page: ``extent`` given) one ``late`` row for the page's times."""
        for k in late_keys:
            name = "late" if level == "pattern" or extent is not None else f"{k} · late"
            recs = [r for r in self.late[k] if r.time <= now]
            if extent is not None:
                recs = [r for r in recs if extent[0] <= r.time <= extent[1]]
            if recs and name not in rows:
                rows.append(name)
            markers.extend(
                Marker(name, r.time, "late", describe(r, self.events, self.show_time), r.event_seq)
                for r in recs
            )

    def _detection_marks(
        self,
        now: float,
        keys: Collection[Hashable] | None,
        patterns: Collection[str] | None,
        window: list[Instance],
        level: str,
        rows: list[str],
        markers: list[Marker],
        paged: bool = False,
    ) -> list[DetectionMark]:
        """The detections up to ``now`` on their instances' rows; adds rows (and event markers) for
        detections of instances the trace never mentioned."""
        in_window = {(i.pattern, i.key, i.instance): i for i in window}
        dets = []
        for n, d in enumerate(self.detections):
            if d.time > now or (keys is not None and d.key not in keys):
                continue
            if patterns is not None and d.pattern not in patterns:
                continue
            ident = (d.pattern, d.key, d.instance)
            owner = in_window.get(ident)
            if owner is not None:
                name = _row_name(level, owner, None)
            elif ident not in self.instances:
                # An instance the trace never mentioned (tracing was off): the detection and its
                # events still get a row of their own.
                per_instance = level in LEVELS[:2] and not paged  # a page has one such row a pattern
                name = RowId(d.pattern, d.key, d.instance).label() if per_instance else d.pattern
                if name not in rows:
                    rows.append(name)
                markers.extend(
                    Marker(name, e.time, "event", f"{c}: {e.describe()}", e.seq)
                    for c, e in zip(d.channels, d.events, strict=True)
                )
            else:
                continue  # outside the window of recent instances
            text = f"{d.kind} {d.pattern}#{d.instance} key={d.key} @ {self.show_time(d.time)}: " + ", ".join(
                f"{c}={e.describe()}" for c, e in zip(d.channels, d.events, strict=True)
            )
            if d.negated:
                text += " | not: " + ", ".join(d.negated)
            dets.append(DetectionMark(name, d.time, n, d.kind, text))
        return dets

    def window(
        self,
        t: float,
        *,
        keys: Collection[Hashable] | None = None,
        patterns: Collection[str] | None = None,
        max_instances: int = 200,
    ) -> tuple[list[Instance], int]:
        """The ``max_instances`` most recently active instances at ``t``, in row order, and how many
        other started instances were left out."""
        chosen = self._select(keys, patterns, t)
        hidden = max(0, len(chosen) - max_instances)
        if hidden:
            chosen = heapq.nlargest(max_instances, chosen, key=lambda i: (min(i.last, t), i.start))
        chosen.sort(key=lambda i: (self.keys[i.key], i.pattern, i.start, i.instance))
        return chosen, hidden

    def _level(self, window: list[Instance], late_keys: list[Hashable], max_rows: int) -> str:
        extra = len(late_keys)
        if sum(1 + len(i.elements) for i in window) + extra <= max_rows:
            return "element"
        if len(window) + extra <= max_rows:
            return "instance"
        if len({(i.key, i.pattern) for i in window}) + extra <= max_rows:
            return "key"
        return "pattern"

    def page_of(
        self,
        d: Detection | TraceRecord,
        *,
        keys: Collection[Hashable] | None = None,
        patterns: Collection[str] | None = None,
        page_rows: int = 30,
    ) -> int | None:
        """The page (:meth:`view` with ``page``) that holds ``d``'s instance (a detection's or a
        trace record's); ``None`` if none does."""
        pages = paginate(self._select(keys, patterns, math.inf), self.keys, page_rows)
        ident = (d.pattern, d.key, d.instance)
        for n, page in enumerate(pages):
            if any((i.pattern, i.key, i.instance) == ident for i in page):
                return n
        return None

    def detection_points(self, index: int) -> list[tuple[str, float, int]]:
        """Where detection ``index``'s events sit in the element-level view: ``(row, time, seq)``.

        An event is placed where its instance's trace accepted or counted it (the channel row);
        without such a record, on the channel's row (or the instance's) at the event's time.
        """
        d = self.detections[index]
        inst = self.instances.get((d.pattern, d.key, d.instance))
        out: list[tuple[str, float, int]] = []
        for channel, e in zip(d.channels, d.events, strict=True):
            rec = None
            if inst is not None:
                rec = next(
                    (
                        r
                        for r in inst.records
                        if r.event_seq == e.seq and r.kind in (TraceKind.ACCEPTED, TraceKind.COUNTED)
                    ),
                    None,
                )
            if rec is not None:
                out.append((RowId(d.pattern, d.key, d.instance, rec.element).label(), rec.time, e.seq))
            else:
                el = channel if inst is not None and channel in inst.elements else None
                out.append((RowId(d.pattern, d.key, d.instance, el).label(), e.time, e.seq))
        return out


def _failure_state(inst: Instance, record: TraceRecord) -> State:
    """How an instance that ended without a match is drawn: *stopped* when its cause is a channel
    that a ``@stop`` just stopped (the group was ended on purpose), else *failed*."""
    cause = inst.changes.get(record.element) if record.element is not None else None
    if cause and cause[-1][1] is State.STOPPED:
        return State.STOPPED
    return State.FAILED


def _row_name(level: str, inst: Instance, el: str | None) -> str:
    """The row an instance's element lands on at aggregation ``level``."""
    if level == "element":
        return inst.row(el).label()
    if level == "instance":
        return inst.row().label()
    if level == "key":
        return f"{inst.key} · {inst.pattern}"
    return inst.pattern
