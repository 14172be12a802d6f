"""The timeline's bokeh figure: glyph columns from the model's view, and the figure built over them.

No widgets here: :mod:`.timeline` wraps this figure in ipywidgets, and :meth:`Timeline.save` builds a
standalone copy with :func:`build_figure`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

from bokeh.models import (
    ColumnDataSource,
    DatetimeTickFormatter,
    FactorRange,
    HoverTool,
    Range1d,
)
from bokeh.models.annotations import Legend, LegendItem, Span
from bokeh.models.glyph import Glyph
from bokeh.models.glyphs import HBar, Scatter
from bokeh.models.renderers import GlyphRenderer
from bokeh.plotting import figure

if TYPE_CHECKING:
    from bokeh.models.sources import DataDict

from workbench.widgets.rows import Band, DetectionMark, Marker, View
from workbench.widgets.styles import (
    DETECTION_COLORS,
    KIND_GLYPHS,
    STATE_COLORS,
    STATE_HATCH,
    kind_color,
    marker_size,
)

__all__ = [
    "EPOCH_MS_FROM",
    "MarkerId",
    "band_columns",
    "build_figure",
    "cap_width",
    "detection_columns",
    "empty_columns",
    "figure_height",
    "label_dy",
    "marker_columns",
    "marker_ids",
    "show_used_entries",
    "time_axis",
    "x_extent",
]

T = TypeVar("T")


def band_columns(bands: list[Band]) -> DataDict:
    return {
        "row": [b.row for b in bands],
        "start": [b.start for b in bands],
        "end": [b.end for b in bands],
        "mid": [(b.start + b.end) / 2 for b in bands],
        "state": [str(b.state) for b in bands],
        "label": [b.label for b in bands],
        "color": [STATE_COLORS[b.state] for b in bands],
        "hatch": [STATE_HATCH.get(b.state, " ") for b in bands],
        "cap": [cap_width(b) for b in bands],
        "label_dy": [label_dy(b) for b in bands],
    }


def cap_width(band: Band) -> float:
    """Screen width of the tick that shows a zero-length band (a final state at the instance's end)."""
    return 7.0 if band.end <= band.start else 0.0


def label_dy(band: Band) -> float:
    """Screen offset of a band's ``k/n`` label: a zero-length band's goes above its row, where the
    tick, an event's dot and a breakpoint's ring at that time would hide it."""
    return -19.0 if band.end <= band.start and band.label else 0.0


def marker_columns(markers: list[Marker]) -> DataDict:
    return {
        "row": [m.row for m in markers],
        "time": [m.time for m in markers],
        "kind": [m.kind for m in markers],
        "text": [m.text for m in markers],
        "glyph": [KIND_GLYPHS.get(m.kind, "circle") for m in markers],
        "color": [kind_color(m.kind) for m in markers],
        "size": [marker_size(m.count) for m in markers],
        "count": [m.count for m in markers],
    }


MarkerId = tuple[str, float, str, int | None, int, int]


def marker_ids(markers: list[Marker]) -> dict[MarkerId, Marker]:
    """Markers by identity across redraws: row, time, kind, event, count and an occurrence number.

    The text is not part of it: it changes when a later detection names a marker's event.
    """
    seen: dict[tuple[str, float, str, int | None, int], int] = {}
    out: dict[MarkerId, Marker] = {}
    for m in markers:
        base = (m.row, m.time, m.kind, m.seq, m.count)
        n = seen[base] = seen.get(base, -1) + 1
        out[(*base, n)] = m
    return out


def detection_columns(marks: list[DetectionMark]) -> DataDict:
    return {
        "row": [d.row for d in marks],
        "time": [d.time for d in marks],
        "index": [d.index for d in marks],
        "kind": [d.kind for d in marks],
        "text": [d.text for d in marks],
        "color": [DETECTION_COLORS.get(d.kind, DETECTION_COLORS["timeout"]) for d in marks],
    }


def empty_columns(columns: Callable[[list[T]], DataDict]) -> DataDict:
    return columns([])


def x_extent(first: float, last: float) -> tuple[float, float]:
    """The x range for times ``first..last``, padded so the glyphs at the ends show whole."""
    if not (math.isfinite(first) and math.isfinite(last)):
        return (0.0, 1.0)
    pad = max((last - first) * 0.03, 1.0)
    return (first - pad, last + pad)


EPOCH_MS_FROM = 1e11  # times beyond this (1973 onwards, in ms) are read as dates


def time_axis(fig: figure, first: float, dates: bool | None = None) -> None:
    """Label the x axis with dates when the input's times were datetimes (``dates``; ``None``: when
    the times look like epoch milliseconds), and the hover tool's times with them."""
    if dates is None:
        dates = math.isfinite(first) and first >= EPOCH_MS_FROM
    if dates:
        fig.xaxis[0].formatter = date_ticks()
        fig.xaxis[0].axis_label = "event time"
        for tool in fig.select(type=HoverTool):
            if isinstance(tool, HoverTool) and tool.name == "bands":
                tool.tooltips = [("state", "@state @label"), ("from", "@start{%F %T}"), ("to", "@end{%F %T}")]
                tool.formatters = {"@start": "datetime", "@end": "datetime"}


def date_ticks() -> DatetimeTickFormatter:
    """Tick labels that name the time of day down to the millisecond (bokeh's own write ``500ms``
    below a second, which cannot tell one second from the next), with the date under the first."""
    day = "%Y-%m-%d"
    context = DatetimeTickFormatter(
        milliseconds=day, seconds=day, minsec=day, minutes=day, hourmin=day, hours=day, days=day, months="%Y"
    )
    return DatetimeTickFormatter(
        milliseconds="%H:%M:%S.%3N",
        seconds="%H:%M:%S",
        minsec="%H:%M:%S",
        minutes="%H:%M",
        hourmin="%H:%M",
        hours="%H:%M",
        context=context,
    )


LEGEND_ROWS_PX = 64  # the legend under the plot: four lines of entries


def figure_height(rows: int) -> int:
    """The figure's height in pixels for ``rows`` rows (22 px a row, at least 220) plus the legend."""
    return max(220, 70 + 22 * max(1, rows)) + LEGEND_ROWS_PX


def build_figure(
    rows: list[str],
    sources: Mapping[str, ColumnDataSource],
    *,
    width: int,
    title: str,
    cursor: float | None,
    extent: tuple[float, float] = (0.0, 1.0),
    dates: bool | None = None,
) -> tuple[figure, Span, FactorRange]:
    """The bokeh figure over the four sources (bands, markers, detections, highlight).

    It stretches to the width of the notebook (``width`` is its minimum, and the width of a saved
    page); the legend sits under the plot, so a narrow screen never clips it.
    """
    y_range = FactorRange(factors=list(reversed(rows)) or [""])
    fig = figure(
        width=width,
        min_width=min(width, 480),
        sizing_mode="stretch_width",
        height=figure_height(len(rows)),
        y_range=y_range,
        x_range=Range1d(start=extent[0], end=extent[1]),
        title=title,
        x_axis_label="event time (ms)",
        tools="xpan,xwheel_zoom,box_zoom,reset,save,tap",
        toolbar_location="above",
    )
    fig.ygrid.grid_line_color = None
    fig.yaxis.major_label_text_font_size = "9pt"
    bands = _draw_bands(fig, sources["bands"])
    marks, dets = _draw_points(fig, sources)
    fig.add_tools(HoverTool(renderers=[marks, dets], tooltips=[("", "@text")]))
    fig.add_tools(
        HoverTool(
            name="bands",
            renderers=[bands],
            tooltips=[("state", "@state @label"), ("from", "@start"), ("to", "@end")],
        )
    )
    time_axis(fig, extent[0], dates)
    fig.add_layout(_legend(fig), "below")
    span = Span(
        location=cursor if cursor is not None and math.isfinite(cursor) else 0,
        dimension="height",
        line_color="#cc3311",
        line_dash="dashed",
        line_width=1,
        visible=cursor is not None,
    )
    fig.add_layout(span)
    return fig, span, y_range


def _draw_bands(fig: figure, source: ColumnDataSource) -> GlyphRenderer[HBar]:
    """State bands (with a tick for zero-length ones) and their ``k/n`` labels; the bars' renderer."""
    bars = fig.hbar(
        y="row",
        left="start",
        right="end",
        height=0.6,
        fill_color="color",
        line_color="white",
        fill_alpha=0.85,
        hatch_pattern="hatch",
        hatch_color="white",
        hatch_alpha=0.8,
        source=source,
    )
    fig.rect(
        x="start", y="row", width="cap", width_units="screen", height=0.6, fill_color="color",
        line_color="color", source=source,
    )  # fmt: skip
    fig.text(
        x="mid", y="row", text="label", text_align="center", text_baseline="middle", text_font_size="8pt",
        y_offset="label_dy", source=source,
    )  # fmt: skip
    return bars


def _points(fig: figure, source: ColumnDataSource, **style: Any) -> GlyphRenderer[Scatter]:
    """A scatter of ``source``'s ``time`` x ``row`` points."""
    return fig.scatter(x="time", y="row", source=source, **style)


def _draw_points(
    fig: figure, sources: Mapping[str, ColumnDataSource]
) -> tuple[GlyphRenderer[Scatter], GlyphRenderer[Scatter]]:
    """Trace markers, detection stars and the selection ring; the markers' and stars' renderers."""
    marks = _points(
        fig, sources["markers"], marker="glyph", size="size", fill_color="color", line_color="color"
    )
    dets = _points(
        fig, sources["detections"], marker="star", size=17, fill_color="color", line_color="#333333"
    )
    _points(
        fig,
        sources["highlight"],
        marker="circle",
        size=20,
        fill_alpha=0.0,
        line_color="#cc3311",
        line_width=3,
    )
    return marks, dets


_LEGEND_KINDS = ("started", "accepted", "counted", "paused", "resumed", "stopped", "negated", "violated",
                 "timed_out", "failed", "pruned", "held", "ignored", "late", "event")  # fmt: skip
"""Trace kinds in the legend (``extended`` and ``detected`` share glyphs with ``started``/the star)."""


#: a trace kind drawn without an entry of its own -> the entry that stands for it
_LEGEND_ALIAS = {"extended": "started", "detected": "started"}


def _legend(fig: figure) -> Legend:
    """Every glyph the figure can draw: a square per state (hatched where the band is), a marker per
    trace kind, and the match and timeout stars; each drawn once off-screen (NaN) for its entry.

    Each entry is tagged with what it stands for (``state:…``, ``detection:…``, ``kind:…``), so
    :func:`show_used_entries` can show only those the view draws."""
    items = []

    def entry(tag: str, label: str, **style: Any) -> None:
        r = fig.scatter(x=[math.nan], y=[math.nan], size=11, **style)
        # bokeh's stubs make GlyphRenderer invariant in its glyph; a legend takes any glyph's renderer
        items.append(LegendItem(label=label, renderers=[cast("GlyphRenderer[Glyph]", r)], tags=[tag]))

    for state, color in STATE_COLORS.items():
        hatch = STATE_HATCH.get(state, " ")
        entry(
            f"state:{state}",
            str(state).replace("_", " "),
            marker="square",
            color=color,
            hatch_pattern=hatch,
            hatch_color="white",
        )
    for kind, color in DETECTION_COLORS.items():
        entry(f"detection:{kind}", f"{kind} detection", marker="star", fill_color=color, line_color="#333333")
    for kind in _LEGEND_KINDS:
        entry(f"kind:{kind}", f"· {kind.replace('_', ' ')}", marker=KIND_GLYPHS[kind], color=kind_color(kind))
    return Legend(
        items=items,
        orientation="horizontal",
        ncols=9,
        label_text_font_size="8pt",
        glyph_height=12,
        glyph_width=14,
        spacing=2,
        margin=4,
        border_line_alpha=0.0,
    )


def show_used_entries(fig: figure, view: View) -> None:
    """Show only the legend entries of what ``view`` draws (a property is sent only when it flips)."""
    used = {f"state:{b.state}" for b in view.bands}
    used.update(f"detection:{d.kind}" for d in view.detections)
    used.update(f"kind:{_LEGEND_ALIAS.get(m.kind, m.kind)}" for m in view.markers)
    for legend in fig.below:
        if isinstance(legend, Legend):
            for item in legend.items:
                if not isinstance(item, LegendItem):  # why: bokeh also takes (label, renderers) pairs
                    continue
                shown = bool(item.tags) and item.tags[0] in used
                if item.visible != shown:
                    item.visible = shown
