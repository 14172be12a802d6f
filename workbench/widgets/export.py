"""A timeline's figure on its own: a fresh bokeh figure of the whole run, and a standalone HTML page
of it (BokehJS inline, so the page works offline)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from bokeh.embed import file_html
from bokeh.models import ColumnDataSource
from bokeh.plotting import figure
from bokeh.resources import INLINE

from workbench.widgets.figure import (
    band_columns,
    build_figure,
    detection_columns,
    marker_columns,
    show_used_entries,
    x_extent,
)

if TYPE_CHECKING:
    from workbench.widgets.timeline import Timeline

__all__ = ["save_page", "standalone_figure"]


def standalone_figure(tl: Timeline, title: str) -> figure:
    """A new bokeh figure of the whole run under ``tl``'s filters, with its own data sources."""
    page = None if tl.page_rows is None else tl.page
    view = tl.model.view(
        keys=tl.keys, patterns=tl.patterns, page=page, page_rows=tl.page_rows or 30, **tl.limits
    )
    lo, hi = view.extent if view.extent is not None else (tl.model.first, tl.model.horizon)
    sources = {
        "bands": ColumnDataSource(band_columns(view.bands)),
        "markers": ColumnDataSource(marker_columns(view.markers)),
        "detections": ColumnDataSource(detection_columns(view.detections)),
        "highlight": ColumnDataSource({"row": [], "time": []}),
    }
    fig, _, _ = build_figure(
        view.rows,
        sources,
        width=tl.width,
        title=title,
        cursor=None,
        extent=x_extent(lo, hi),
        dates=tl.axis_dates(),
    )
    show_used_entries(fig, view)
    return fig


def save_page(tl: Timeline, path: Path, title: str) -> Path:
    """Write :func:`standalone_figure` as an HTML page at ``path``."""
    path.write_text(file_html(standalone_figure(tl, title), INLINE, title), encoding="utf-8")
    return path
