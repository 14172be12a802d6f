"""The cost view's figure: live partial matches and instances over time, with the growth warnings.

:func:`cost_figure` draws a :class:`~workbench.session.cost.CostReport` as a bokeh layout: a
warning banner naming the construct that makes a pattern grow, then one line per pattern and stage
or channel (summed over keys, or per key with ``by="key"``), x = event time, y = live count.
:class:`CostView` shows it in a notebook (``CostView(report)`` as a cell's value) and keeps the
DataFrame form at hand (:attr:`CostView.frame`).
"""

from __future__ import annotations

import html
from itertools import cycle
from typing import Literal, cast

import pandas as pd
from bokeh.layouts import column
from bokeh.models import Column, ColumnDataSource, HoverTool
from bokeh.models.annotations import Legend, LegendItem
from bokeh.models.glyph import Glyph
from bokeh.models.renderers import GlyphRenderer
from bokeh.models.widgets import Div
from bokeh.plotting import figure

from workbench.session.cost import CostReport

__all__ = ["CostView", "cost_figure", "cost_lines"]

# Paul Tol's "bright" scheme (distinct under the common colour-vision deficiencies)
_PALETTE = ("#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377", "#bbbbbb")
_MAX_LINES = 24


def cost_lines(report: CostReport, by: Literal["element", "key"] = "element") -> dict[str, pd.DataFrame]:
    """One ``(time, live)`` frame per line: ``pattern · element`` (summed over keys) or
    ``pattern · key`` (summed over elements, instances not double counted)."""
    df = report.frame()
    if df.empty:
        return {}
    if by == "key":
        df = df[df["element"] != "(instance)"]
        df = df.assign(line=df["pattern"] + " · " + df["key"].astype(str))
    else:
        df = df.assign(line=df["pattern"] + " · " + df["element"])
    summed = df.groupby(["line", "time"], as_index=False)["live"].sum()
    peaks = summed.groupby("line")["live"].max().sort_values(ascending=False)
    return {str(name): summed[summed["line"] == name][["time", "live"]] for name in peaks.index[:_MAX_LINES]}


def cost_figure(
    report: CostReport,
    *,
    by: Literal["element", "key"] = "element",
    width: int = 900,
    title: str = "live state",
) -> Column:
    """The bokeh layout (warnings above a line chart) of ``report``."""
    fig = figure(
        width=width,
        height=320,
        title=f"{title}: live partial matches (by the stage they wait for) and group instances, by {by}",
        x_axis_label="event time",
        y_axis_label="live",
        tools="pan,wheel_zoom,box_zoom,reset,save",
    )
    items = []
    for (name, frame), color in zip(cost_lines(report, by).items(), cycle(_PALETTE), strict=False):
        src = ColumnDataSource(
            {"time": frame["time"].tolist(), "live": frame["live"].tolist(), "line": [name] * len(frame)}
        )
        r = fig.step("time", "live", source=src, color=color, line_width=2, mode="after")
        items.append(LegendItem(label=name, renderers=[cast("GlyphRenderer[Glyph]", r)]))
    fig.add_tools(HoverTool(tooltips=[("line", "@line"), ("t", "@time"), ("live", "@live")]))
    if items:
        fig.add_layout(Legend(items=items, click_policy="hide"), "right")
    return column(Div(text=warning_html(report), width=width), fig)


def warning_html(report: CostReport) -> str:
    """The banner: each growth warning, or a line saying the state stayed bounded."""
    if not report.warnings:
        return "<p style='color:#228833'>live state stayed bounded: no growth warning</p>"
    lines = "".join(f"<li>{html.escape(w)}</li>" for w in report.warnings)
    return f"<div style='color:#aa3377'><b>⚠ growing state</b><ul>{lines}</ul></div>"


class CostView:
    """A notebook view of a :class:`CostReport`: the figure and, as :attr:`frame`, its DataFrame."""

    def __init__(
        self, report: CostReport, *, by: Literal["element", "key"] = "element", width: int = 900
    ) -> None:
        self.report = report
        self.layout = cost_figure(report, by=by, width=width)

    @property
    def frame(self) -> pd.DataFrame:
        """The samples (``time, pattern, key, element, live``)."""
        return self.report.frame()

    def _ipython_display_(self) -> None:
        from IPython.display import display
        from jupyter_bokeh.widgets import BokehModel

        from workbench.widgets.bokehjs import figure_area

        display(figure_area(BokehModel(self.layout)))

    def save(self, path: str, *, title: str = "CEP cost view") -> str:
        """Write the layout as a standalone HTML page (BokehJS inline)."""
        from bokeh.embed import file_html
        from bokeh.resources import INLINE

        with open(path, "w", encoding="utf-8") as f:
            f.write(file_html(self.layout, INLINE, title))
        return path
