"""Real-browser tests of the debugging views: a replay stopped at a breakpoint, and the cost view.

The notebook replays a reaction group with ``stop_when="counted 2/3"``: the timeline must show the
stop (status line, cursor, ringed row) in JupyterLab. A second cell shows the cost view of a
``followed by any`` pattern: its figure and the warning naming the construct. Screenshots go to
``artifacts/`` (``breakpoint.png``, ``cost-view.png``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, Lab
from tests.browser.test_timeline_browser import UI_TIMEOUT_MS, _run_cells

pytestmark = BROWSER_MARKS

SETUP = """import asyncio, random
from workbench.engine import Engine
from workbench.language.compile import compile_pattern
from workbench.session.cost import measure_cost
from workbench.widgets import Timeline
from workbench.widgets.cost import CostView

tries = compile_pattern('''group tries
    on login(user as U)
    @and @timeout(1s) {
        @count(3) failed: failed(user = U)
    }''')
events = [{"type": typ, "time": t, "key": u, "user": u} for t, typ, u in [
    (0, "login", "ann"), (5, "login", "bob"), (10, "failed", "ann"), (15, "failed", "bob"),
    (20, "failed", "ann"), (30, "failed", "ann"),
]]"""
BREAK = """engine = Engine([tries], trace=True)
tl = Timeline.from_engine(engine, title="tries: stopped at a breakpoint")
task = tl.replay(engine, events, batch=1, delay=0.3, stop_when="counted 2/3")
tl"""
EXPLAIN = """await task
print(tl.explain_stop())"""
COST = """rnd = random.Random(1)
stream = [{"type": rnd.choice("aabx"), "time": t * 10, "key": f"k{t % 3}"} for t in range(300)]
grows = compile_pattern("sequence grows begin a where e.type == 'a' "
                        "followed by any b where e.type == 'b' followed by c where e.type == 'c'")
bounded = compile_pattern("sequence bounded within 50ms begin a where e.type == 'a' "
                          "followed by b where e.type == 'b' followed by c where e.type == 'c'")
CostView(measure_cost([grows, bounded], stream, every=5))"""
CELLS = (SETUP, BREAK, EXPLAIN, COST)


def _notebook() -> dict[str, Any]:
    cells = [
        {
            "cell_type": "code",
            "id": f"c{i}",
            "metadata": {},
            "source": s,
            "outputs": [],
            "execution_count": None,
        }
        for i, s in enumerate(CELLS)
    ]
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def test_breakpoint_and_cost_view_render(lab: Lab) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    lab.write_notebook("debugging.ipynb", _notebook())
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1100})
            try:
                _drive(page, lab)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "debugging-failure.png"), full_page=True)
                raise
        finally:
            browser.close()


def _drive(page: Any, lab: Lab) -> None:
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    page.goto(f"{lab.url}/lab/tree/debugging.ipynb?token={lab.token}&reset")
    page.wait_for_selector(
        f"{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=UI_TIMEOUT_MS
    )
    _run_cells(page, panel, range(3))
    status = page.locator(f"{panel} .jp-OutputArea-output", has_text="stopped at counted 2/3").first
    status.wait_for(timeout=UI_TIMEOUT_MS)
    page.wait_for_selector(f"{panel} .jp-OutputArea-output canvas", timeout=UI_TIMEOUT_MS)
    page.wait_for_timeout(1500)  # let BokehJS paint the stop
    text = page.locator(f"{panel} .jp-Notebook").inner_text()
    assert "stopped at counted 2/3 on failed: tries#1 key=ann at t=20" in text
    assert "at the breakpoint (t=20)" in text, "explain_stop printed the instance at that moment"
    assert "javascript error" not in text.lower()
    figure = page.locator(f"{panel} .jp-OutputArea-output:has(canvas)").first
    figure.screenshot(path=str(ARTIFACTS / "breakpoint.png"))

    _run_cells(page, panel, range(3, 4))
    warning = page.locator(f"{panel} .jp-OutputArea-output", has_text="growing state").first
    warning.wait_for(timeout=UI_TIMEOUT_MS)
    page.wait_for_function("() => window.Bokeh.documents.length > 1", timeout=UI_TIMEOUT_MS)
    page.wait_for_timeout(1500)
    # (the banner is a bokeh Div, drawn in a shadow root: inner_text misses it, a locator finds it)
    cause = page.locator(f"{panel} .jp-OutputArea-output", has_text="`followed by any b` keeps every earlier")
    assert cause.count() >= 1
    cost = page.locator(f"{panel} .jp-OutputArea-output:has(canvas)").last
    cost.scroll_into_view_if_needed()
    cost.screenshot(path=str(ARTIFACTS / "cost-view.png"))
