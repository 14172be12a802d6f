"""The timeline at real scale, in Chromium: a sampledata run of more than 1,000 instances, dates.

Four stocks' daily closes (bokeh-sampledata, 2006-2013, a datetime time column) through a sequence
that starts an instance at every sharp fall: ``%cep run`` then ``%cep timeline`` in JupyterLab at a
1280-px wide window. The first render must be readable without zooming: one page of rows (not a
thousand), labels that do not overlap, the legend whole inside the figure, a date axis and a date
time label. Screenshots go to ``artifacts/`` (look at them).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, Lab
from tests.browser.test_timeline_browser import UI_TIMEOUT_MS, _run_cells

pytestmark = BROWSER_MARKS

SETUP = """%load_ext workbench
import pandas as pd
from bokeh.sampledata import stocks

frames = []
for symbol in ["AAPL", "GOOG", "IBM", "MSFT"]:
    df = pd.DataFrame(getattr(stocks, symbol))[["date", "close"]]
    df["symbol"] = symbol
    df["change"] = (df["close"].pct_change() * 100).round(2)
    frames.append(df.dropna())
prices = pd.concat(frames, ignore_index=True)
prices["time"] = pd.to_datetime(prices["date"])
prices["type"] = "price"
prices = prices.sort_values(["time", "symbol"], ignore_index=True)
prices = prices[prices.time >= "2006-01-01"][["type", "time", "symbol", "close", "change"]]"""
PATTERN = """%%cep
sequence slide within 10d partition by symbol skip past last event
  begin fall: price where fall.change < -1.5
  followed by more: price where more.change < -2
  followed by again: price where again.change < -2"""
RUN = """%cep run slide --on prices -o slides
from workbench.jupyter import current_session
run = current_session().runs["slide"]
print("instances:", len({(r.key, r.instance) for r in run.trace}), "first_time:", slides.first_time.dtype)"""
SHOW = "%cep timeline slide"
CELLS = (SETUP, PATTERN, RUN, SHOW)


def _notebook() -> dict[str, Any]:
    cells = [
        {"cell_type": "code", "id": f"c{i}", "metadata": {}, "source": c, "outputs": []}
        | {"execution_count": None}
        for i, c in enumerate(CELLS)
    ]
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


_FIGURE_FACTS = """() => {
  const out = [];
  for (const doc of window.Bokeh.documents) {
    for (const m of doc.all_models) {
      if (m.type === 'Figure' || m.constructor?.__name__ === 'Figure') {
        out.push({rows: m.y_range.factors.length, x: [m.x_range.start, m.x_range.end]});
      }
    }
  }
  return out;
}"""


def test_a_thousand_instances_read_at_first_render(lab: Lab) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    lab.write_notebook("scale.ipynb", _notebook())
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(
                viewport={"width": 1280, "height": 1400}
            )  # the whole output, legend included
            page.goto(f"{lab.url}/lab/tree/scale.ipynb?token={lab.token}&reset")
            page.wait_for_selector(
                f"{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=UI_TIMEOUT_MS
            )
            _run_cells(page, panel, range(len(CELLS)))
            page.wait_for_selector(f"{panel} .jp-OutputArea-output canvas", timeout=UI_TIMEOUT_MS)
            page.wait_for_function(
                "() => window.Bokeh && window.Bokeh.documents.length > 0", timeout=UI_TIMEOUT_MS
            )
            page.wait_for_timeout(2000)
            text = page.locator(f"{panel} .jp-Notebook").inner_text()
            output = page.locator(f"{panel} .jp-OutputArea-output:has(canvas)").first
            output.scroll_into_view_if_needed()
            output.screenshot(path=str(ARTIFACTS / "timeline-1000-instances.png"))
            output.screenshot(path=str(ARTIFACTS / "timeline-datetime.png"))  # dates on the axis and label
            truncated = output.evaluate(
                """el => [...el.querySelectorAll('button, .widget-label, .widget-html-content')]
                           .filter(b => b.offsetParent && b.scrollWidth > b.clientWidth + 1)
                           .map(b => b.textContent.trim())"""
            )
            facts = page.evaluate(_FIGURE_FACTS)
            widths = output.evaluate(
                """el => { const c = el.querySelector('.bk-Figure, .bk-Canvas, canvas');
                           return [el.getBoundingClientRect().width, c.getBoundingClientRect().width]; }"""
            )
        finally:
            browser.close()
    printed = re.search(r"instances: (\d+) first_time: (\S+)", text)
    assert printed is not None, text[-1000:]
    assert int(printed[1]) >= 1000, printed[0]
    assert printed[2].startswith("datetime64"), printed[0]  # a Timestamp column, no hand conversion
    assert "page 1 of" in text
    assert "t = 20" in text  # the time label is a date (2013-...), not epoch milliseconds
    assert len(facts) == 1, facts
    assert facts[0]["rows"] <= 31, facts  # one page of rows, not a thousand
    assert widths[1] >= 0.9 * widths[0], widths  # the figure stretches to the output's width
    assert truncated == [], truncated  # no control cut short ("◀ st…") at 1280 px
