"""The timeline widget: a bokeh figure in an ipywidgets container, fed by the trace and detections.

``Timeline(trace, detections)`` or ``Timeline.from_engine(engine)`` builds it; displaying it in a
notebook shows the figure (rows = instance x channel or stage, grouped by key; x = event time),
the play/step/slider/speed controls, key and pattern filters, a detection selector (the selected
detection's events are ringed and its DataFrame row is shown under the figure) and a legend.

Everything drawn comes from :class:`~workbench.widgets.model.TimelineModel`. The bokeh data
sources are write-only: the widget remembers what it sent and never reads ``source.data`` back
(jupyter_bokeh echoes streamed rows into the Python-side copy; ``jupyter.md`` §2.2).

Live mode (:meth:`Timeline.replay`, :meth:`Timeline.follow`) runs as an asyncio task, so the kernel
stays responsive: it appends new records to the model and sends deltas (``stream`` for new glyphs,
``patch`` for bands whose end moved), replacing the data wholesale only when the layout changed
(new aggregation level, the window of recent instances moved, binning).

:meth:`Timeline.save` writes a standalone HTML page (BokehJS inline, works offline) of the figure.
"""

from __future__ import annotations

import asyncio
import bisect
import html
import math
from collections.abc import Collection, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any

import ipywidgets as widgets
from bokeh.models import ColumnDataSource, Range1d
from bokeh.plotting import figure

from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event
from workbench.engine.runtime import Engine, RunResult
from workbench.session.shown import Shown
from workbench.session.times import NUMBERS, TimeFormat, of_engine
from workbench.widgets.bokehjs import control_row as _row
from workbench.widgets.bokehjs import figure_area, load_bokeh
from workbench.widgets.bokehjs import unshrinking as _unshrinking
from workbench.widgets.breakpoints import stop_note, stop_ring
from workbench.widgets.detail import detail_table
from workbench.widgets.export import save_page, standalone_figure
from workbench.widgets.figure import (
    band_columns,
    build_figure,
    detection_columns,
    empty_columns,
    marker_columns,
    show_used_entries,
    time_axis,
    x_extent,
)
from workbench.widgets.filters import ALL, filter_choice, frozen
from workbench.widgets.live import LiveMode
from workbench.widgets.model import TimelineModel
from workbench.widgets.rows import View
from workbench.widgets.sync import SentView

__all__ = ["Timeline", "load_bokeh"]


class Timeline(LiveMode):
    """Interactive timeline of pattern instances, fed by trace records and detections.

    Args:
        trace: trace records (``Engine(trace=True)``); without them only detections are drawn.
        detections: the detections of the same run.
        title: figure title.
        width: figure width in pixels.
        max_instances: window of most recently active instances drawn (older ones are counted).
        max_rows: more rows than this aggregate (instances, then key x pattern, then pattern).
        max_markers: more markers than this are binned.
        keys / patterns: initial filters (``None``: all).
        page_rows: rows a page holds (instances come in pages of at most this many rows, in start
            order; the ``rows`` slider turns them). ``None``: the window of the ``max_instances``
            most recently active instances, aggregated beyond ``max_rows`` rows.
        times: how the input gave its times (:class:`~workbench.session.times.TimeFormat`): with
            dates, the label, axis, dropdown, hover texts and detail show dates.

    >>> from workbench.engine import TraceKind, TraceRecord
    >>> tl = Timeline([TraceRecord(0, "p", "k", 1, TraceKind.STARTED)])
    >>> tl.view().rows
    ['k · p#1 · (instance)']
    """

    def __init__(
        self,
        trace: Iterable[TraceRecord] = (),
        detections: Iterable[Detection] = (),
        *,
        title: str = "CEP timeline",
        width: int = 900,
        max_instances: int = 30,
        max_rows: int = 90,
        max_markers: int = 4000,
        keys: Collection[Hashable] | None = None,
        patterns: Collection[str] | None = None,
        page_rows: int | None = 30,
        times: TimeFormat | None = None,
    ) -> None:
        self.model = TimelineModel(trace, detections)
        self.times = times if times is not None else NUMBERS
        self.model.show_time = self.times.text
        self.page_rows = page_rows
        self.page = 0  # the page of rows shown (-1: the last one, which grows in live mode)
        self.title = title
        self.width = width
        self.limits = {"max_instances": max_instances, "max_rows": max_rows, "max_markers": max_markers}
        self.keys: Collection[Hashable] | None = keys
        self.patterns: Collection[str] | None = patterns
        self.selected: int | None = None
        self.following = True  # the cursor sits at the newest time (live mode), until scrubbed
        self._task: asyncio.Task[None] | None = None
        self._extent = (0.0, 1.0)
        self._consumed: dict[int, tuple[int, int]] = {}  # id(engine) -> records, detections taken
        self.events: dict[int, Event] = {}
        self.deltas = {"stream": 0, "patch": 0, "reset": 0}  # counters, for tests and curiosity
        self.sources = {
            "bands": ColumnDataSource(empty_columns(band_columns)),
            "markers": ColumnDataSource(empty_columns(marker_columns)),
            "detections": ColumnDataSource(empty_columns(detection_columns)),
            "highlight": ColumnDataSource({"row": [], "time": []}),
        }
        self.figure, self._span, self._y_range = build_figure(
            [], self.sources, width=width, title=title, cursor=None, dates=self.axis_dates()
        )
        self._sent = SentView(self.sources, self.figure, self._y_range, self.deltas)
        self.sources["detections"].selected.on_change("indices", self._on_tap)
        self._build_controls()
        self.refresh()

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_engine(cls, engine: Engine, **kwargs: Any) -> Timeline:
        """A timeline of what ``engine`` has recorded so far (build it with ``trace=True``).

        A live feed on the wall clock shows dates (unless ``times=`` says otherwise).
        """
        kwargs.setdefault("times", of_engine(engine))
        tl = cls(engine.trace_records, engine.detections, **kwargs)
        tl._consumed[id(engine)] = (len(engine.trace_records), len(engine.detections))
        return tl

    @classmethod
    def from_run(cls, result: RunResult, **kwargs: Any) -> Timeline:
        """A timeline of a finished :func:`workbench.engine.run` (called with ``trace=True``)."""
        return cls(result.trace, result.detections, **kwargs)

    def _build_controls(self) -> None:
        self.play = widgets.Play(value=0, min=0, max=0, step=1, interval=400, description="play")
        self.slider = widgets.IntSlider(
            value=0,
            min=0,
            max=0,
            description="step",
            continuous_update=True,
            layout=widgets.Layout(width="320px"),
        )
        widgets.jslink((self.play, "value"), (self.slider, "value"))
        # why: fixed-width buttons in a full row were squeezed by flexbox and cut to "◀ st…"
        self.back = widgets.Button(description="◀ step", layout=_unshrinking())
        self.forward = widgets.Button(description="step ▶", layout=_unshrinking())
        self.speed = widgets.FloatLogSlider(
            value=1.0,
            base=2,
            min=-3,
            max=4,
            step=1,
            description="speed",
            layout=widgets.Layout(width="260px"),
        )
        self.time_label = widgets.HTML(layout=widgets.Layout(min_width="230px"))
        self.key_filter = widgets.Dropdown(options=[ALL], value=ALL, description="key")
        self.pattern_filter = widgets.Dropdown(options=[ALL], value=ALL, description="pattern")
        self.detection_select = widgets.Dropdown(
            options=[("(none)", -1)], value=-1, description="detection", layout=widgets.Layout(width="480px")
        )
        self.status = widgets.HTML()
        self.detail = widgets.HTML()
        self.rows_page = widgets.IntSlider(
            value=1, min=1, max=1, description="rows page", layout=widgets.Layout(width="320px")
        )
        self.rows_label = widgets.HTML()
        self.rows_page.observe(self._on_page, names="value")
        self.slider.observe(self._on_slider, names="value")
        self.speed.observe(self._on_speed, names="value")
        self.back.on_click(lambda _b: self.step(-1))
        self.forward.on_click(lambda _b: self.step(1))
        self.key_filter.observe(self._on_filter, names="value")
        self.pattern_filter.observe(self._on_filter, names="value")
        self.detection_select.observe(self._on_select, names="value")
        from jupyter_bokeh.widgets import BokehModel

        self.plot = BokehModel(self.figure)
        self.widget = widgets.VBox(
            [
                _row([self.play, self.back, self.forward, self.slider, self.speed, self.time_label]),
                _row([self.key_filter, self.pattern_filter, self.detection_select]),
                _row([self.rows_page, self.rows_label]),
                figure_area(self.plot),  # BokehJS before the figure, in every page that shows it
                self.status,
                self.detail,
            ]
        )

    # ------------------------------------------------------------------ display
    def _ipython_display_(self) -> None:
        from IPython.display import display

        self.rebuild()
        display(self.widget)

    def rebuild(self) -> None:
        """Resend everything: fresh source data from the model, and a fresh render bundle.

        A ``BokehModel`` view starts from the document as it was when its bundle was built, and
        deltas sent while no view exists are lost, so every display starts from here. The data
        comes from the model, never from the (echo-polluted) Python-side sources.
        """
        self._sent.view = None
        self.refresh()
        self.plot.update_from_model(self.figure)

    def __repr__(self) -> str:
        m = self.model
        return (
            f"Timeline({len(m.instances)} instances, {len(m.detections)} detections, "
            f"{len(m.times)} steps, t={self.time})"
        )

    # ------------------------------------------------------------------ state
    @property
    def time(self) -> float:
        """The cursor's time: the slider's step, or the newest time while following."""
        times = self.model.times
        if not times:
            return -math.inf
        if self.following:
            return times[-1]
        return times[min(int(self.slider.value), len(times) - 1)]

    def axis_dates(self) -> bool | None:
        """Whether the time axis shows dates: the input's were (elapsed times never are; ``None``:
        guess from the numbers, epoch ms)."""
        return True if self.times.dates else False if self.times.elapsed else None

    def view(self) -> View:
        """The model's view at the cursor with the current filters, page and limits."""
        page = None if self.page_rows is None else self.page
        return self.model.view(
            self.time,
            keys=self.keys,
            patterns=self.patterns,
            page=page,
            page_rows=self.page_rows or 30,
            **self.limits,
        )

    def seek(self, t: float) -> None:
        """Move the cursor to the last step at or before ``t``."""
        times = self.model.times
        i = max(0, bisect.bisect_right(times, t) - 1)
        self.following = i >= len(times) - 1
        self._set_slider(i)
        self.refresh()

    def step(self, delta: int) -> None:
        """Move the cursor ``delta`` steps (a step is a distinct record time)."""
        n = len(self.model.times)
        if n:
            i = min(max(0, self.slider.value + delta), n - 1)
            self.following = i == n - 1
            self._set_slider(i)
            self.refresh()

    def select(self, index: int | None) -> None:
        """Select detection ``index`` (``None`` clears): ring its events, show its DataFrame row."""
        self.selected = index
        if index is None:
            self.sources["highlight"].data = {"row": [], "time": []}
            self.detail.value = ""
        else:
            d = self.model.detections[index]
            self._show_page_of(d)
            pts = self.model.detection_points(index)
            rows = set(self._sent.rows)
            shown = [(r, t) for r, t, _ in pts if r in rows]
            self.sources["highlight"].data = {"row": [r for r, _ in shown], "time": [t for _, t in shown]}
            self.detail.value = detail_table(index, d, Shown(self.times))
        want = -1 if index is None else index
        if self.detection_select.value != want:
            self.detection_select.value = want

    # ------------------------------------------------------------------ rendering
    def refresh(self) -> None:
        """Bring controls and figure up to date with the model (a delta when possible)."""
        self._sync_controls()
        view = self.view()
        self._sent.update(view)
        show_used_entries(self.figure, view)
        # The x axis spans the rows' whole lives (the page's instances, or the whole run), not the
        # data drawn so far: scrubbing moves the cursor, not the axis. Set only when that span
        # changed (another page or filter, a longer run), so the user's zoom survives playback.
        lo, hi = view.extent if view.extent is not None else (self.model.first, self.model.horizon)
        self._set_x(x_extent(lo, hi))
        self._sync_pages(view)
        t = view.time
        self._span.location = t if math.isfinite(t) else 0
        self._span.visible = math.isfinite(t)
        states = (
            self.model.state_at(
                t, keys=self.keys, patterns=self.patterns, max_instances=self.limits["max_instances"]
            )
            if math.isfinite(t)
            else {}
        )
        counts: dict[str, int] = {}
        for s in states.values():
            if s.live:
                name = f"{s.state}" + (f" {s.label}" if s.label else "")
                counts[name] = counts.get(name, 0) + 1
        self.time_label.value = f"<b>t = {html.escape(self.times.text(t)) if math.isfinite(t) else '-'}</b>"
        notes = (
            [f"view: {view.level} rows"]
            if self.stopped_at is None
            else [stop_note(self.stopped_at, self.times.text)]
        )
        if view.hidden_instances and view.extent is None:
            notes.append(f"{view.hidden_instances} older instances not drawn")
        if view.binned:
            notes.append("markers binned")
        if counts:
            notes.append("live rows: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
        self.status.value = html.escape(" · ".join(notes))
        if self.selected is not None:
            self.select(self.selected)

    def _set_x(self, extent: tuple[float, float]) -> None:
        if extent != self._extent:
            self._extent = extent
            x_range = self.figure.x_range
            assert isinstance(x_range, Range1d)  # build_figure makes it one
            x_range.start, x_range.end = extent
            time_axis(self.figure, extent[0], self.axis_dates())

    def _sync_pages(self, view: View) -> None:
        """The rows slider and its label follow the view's page."""
        self._quiet = True
        try:
            self.rows_page.max = max(1, view.pages)
            self.rows_page.value = view.page + 1
        finally:
            self._quiet = False
        self.rows_page.layout.display = "none" if self.page_rows is None else ""
        if view.extent is None:
            self.rows_label.value = ""
            return
        lo, hi = view.extent
        self.rows_label.value = html.escape(
            f"page {view.page + 1} of {view.pages} · {len(view.rows)} rows · "
            f"{self.times.text(lo)} – {self.times.text(hi)}"
        )

    def _show_page_of(self, d: Detection | TraceRecord) -> None:
        """Turn to the page that holds ``d``'s instance (paged views)."""
        if self.page_rows is None:
            return
        page = self.model.page_of(d, keys=self.keys, patterns=self.patterns, page_rows=self.page_rows)
        if page is not None and page != self.page:
            self.page = page
            self.refresh()

    def show_stop(self, record: TraceRecord) -> None:
        """Show a breakpoint's record: its instance's page, the cursor at its time, its row ringed."""
        self._show_page_of(record)
        self.seek(record.time)
        self.sources["highlight"].data = stop_ring(record, self._sent.rows)

    def _on_page(self, change: Mapping[str, int]) -> None:
        if self._quiet:
            return
        self.page = int(change["new"]) - 1
        self.refresh()

    def _sync_controls(self) -> None:
        m = self.model
        n = len(m.times)
        if self.slider.max != max(0, n - 1):
            self.play.max = self.slider.max = max(0, n - 1)
        if self.following and n:
            self._set_slider(n - 1)
        self._syncing = True  # why: new options move a dropdown's value; that is no user's choice
        try:
            for dropdown, chosen, names, noun in (
                (self.key_filter, self.keys, [str(k) for k in m.keys], "keys"),
                (self.pattern_filter, self.patterns, list(m.patterns), "patterns"),
            ):
                options, value = filter_choice(chosen, names, noun)
                if list(dropdown.options) != options:
                    dropdown.options = options
                if dropdown.value != value:
                    dropdown.value = value
            shown = (len(m.detections), self.selected, frozen(self.keys), frozen(self.patterns))
            if shown != self._detections_shown:
                self._detections_shown = shown
                self.detection_select.options = [("(none)", -1)] + [
                    (f"#{i} {d.kind} {d.pattern}#{d.instance} key={d.key} @ {self.times.text(d.time)}", i)
                    for i, d in enumerate(m.detections)
                    if i == self.selected
                    or (
                        (self.keys is None or d.key in self.keys)
                        and (self.patterns is None or d.pattern in self.patterns)
                    )
                ]
                self.detection_select.value = -1 if self.selected is None else self.selected
        finally:
            self._syncing = False

    def _set_slider(self, i: int) -> None:
        self._quiet = True
        try:
            self.slider.value = i
        finally:
            self._quiet = False

    # ------------------------------------------------------------------ callbacks
    _quiet = False
    _syncing = False
    #: what the detection dropdown lists: (detections, selected, key filter, pattern filter)
    _detections_shown: tuple[object, ...] = ()

    def _on_slider(self, change: Mapping[str, int]) -> None:
        if self._quiet:
            return
        n = len(self.model.times)
        self.following = n == 0 or change["new"] >= n - 1
        self.refresh()

    def _on_speed(self, change: Mapping[str, float]) -> None:
        self.play.interval = max(20, int(400 / float(change["new"])))

    def _on_filter(self, _change: Mapping[str, object]) -> None:
        if self._syncing:
            return
        by_name = {str(k): k for k in self.model.keys}
        k, p = self.key_filter.value, self.pattern_filter.value
        # why the names test: the constructor's set of several keys (or patterns) is an option too
        if k == ALL or k in by_name:
            self.keys = None if k == ALL else {by_name[k]}
        if p == ALL or p in self.model.patterns:
            self.patterns = None if p == ALL else {p}
        self.page = 0
        self._sent.view = None
        self.refresh()

    def _on_select(self, change: Mapping[str, int | None]) -> None:
        new = change["new"]
        index = None if new is None or new < 0 else int(new)
        if index != self.selected:
            self.select(index)

    def _on_tap(self, _attr: str, _old: object, new: list[int]) -> None:
        # A tap on a detection star: the indices are rows of the browser's source, which holds the
        # detections in the order we sent them (our own list, never the source read back).
        if new and 0 <= new[0] < len(self._sent.detections):
            self.select(self._sent.detections[new[0]])

    def add(self, records: Iterable[TraceRecord] = (), detections: Iterable[Detection] = ()) -> None:
        """Append records and detections to the model and redraw (deltas when possible)."""
        for r in records:
            self.model.add_record(r)
        for d in detections:
            self.model.add_detection(d)
        self.refresh()

    # ------------------------------------------------------------------ export
    def standalone_figure(self, title: str | None = None) -> figure:
        """A new bokeh figure of the whole run (current filters), with its own data sources."""
        return standalone_figure(self, title or self.title)

    def save(self, path: str | Path, *, title: str | None = None) -> Path:
        """Write the figure (full run, current filters) as a standalone HTML page with inline BokehJS."""
        return save_page(self, Path(path), title or self.title)
