"""Real-browser test of the timeline widget in JupyterLab.

Starts JupyterLab on 127.0.0.1 with a token, a temporary notebook folder and a temporary HOME,
opens a notebook that defines a pattern, runs it through the engine with tracing on and shows
``Timeline.from_engine(engine)`` scrubbed back to its first step. Debian's Chromium (Playwright,
``executable_path=/usr/bin/chromium``, never a downloaded browser) checks that the bokeh canvas
rendered, presses Play and checks that the figure changed (BokehJS data lengths and pixels).
Screenshots go to ``artifacts/``. Every process the test starts is stopped in its teardown.
"""

from __future__ import annotations

import math
import re
import shutil
import time
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, ROOT, Lab

UI_TIMEOUT_MS = 60_000

pytestmark = BROWSER_MARKS

# The notebook: events in a DataFrame, a reaction group written with %%cep, a replay with %cep run,
# and the timeline of that run scrubbed back to its first step (so that Play has work to do).
EVENTS_CODE = """logins = pd.DataFrame(
    [{"time": t, "type": typ, "key": user, "user": user} for t, typ, user in [
        (0, "login", "ann"), (100, "failed", "ann"), (200, "login", "bob"), (300, "failed", "ann"),
        (400, "failed", "bob"), (500, "failed", "ann"), (700, "reset", "bob"), (900, "login", "cat"),
        (1000, "failed", "cat"),
    ]]
)"""
SETUP_CELL = f"""%load_ext workbench
import pandas as pd
from workbench.widgets import Timeline

{EVENTS_CODE}"""
PATTERN = """group login_watch
    on login(user as U)
    @and @timeout(1s) {
        @count(3) tries: failed(user = U)
        @not reset: reset(user = U)
    }"""
CEP_CELL = "%%cep\n" + PATTERN
SHOW_CELL = """%cep run login_watch --on logins -o hits
run = get_ipython().find_line_magic("cep").__self__.session.runs["login_watch"]
tl = Timeline(run.trace, run.detections, title="login_watch")
tl.speed.value = 4.0
tl.step(-10**6)  # back to the first step: Play animates from there
print("detections:", len(hits))
tl"""
# Live mode: a second timeline, empty when shown, fed by an asyncio task replaying the same events
# (one event a second, so that the browser sees it grow step by step even on a loaded machine).
LIVE_CELL = """from workbench.engine import Engine
from workbench.session.inputs import load_events

session = get_ipython().find_line_magic("cep").__self__.session
live_engine = Engine([session.get("login_watch").pattern], trace=True)
live = Timeline(title="live replay")
task = live.replay(live_engine, load_events(logins), batch=1, delay=1.0)
live"""
CELLS = (SETUP_CELL, CEP_CELL, SHOW_CELL)
DEMO_NOTEBOOK = "01-prova-reaction-groups.ipynb"


def _notebook() -> dict[str, Any]:
    def code(i: int, source: str) -> dict[str, Any]:
        return {
            "cell_type": "code",
            "id": f"cell-{i}",
            "metadata": {},
            "source": source,
            "outputs": [],
            "execution_count": None,
        }

    return {
        "cells": [code(i, c) for i, c in enumerate((*CELLS, LIVE_CELL))],
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


@pytest.fixture(scope="module", autouse=True)
def _notebooks(lab: Lab) -> None:
    """This module's notebooks in the shared server's folder."""
    lab.write_notebook("timeline.ipynb", _notebook())
    shutil.copy(ROOT / "notebooks" / DEMO_NOTEBOOK, lab.root / DEMO_NOTEBOOK)


_BROWSER_BANDS = """() => {
  const out = [];
  for (const doc of (window.Bokeh ? window.Bokeh.documents : [])) {
    for (const m of doc.all_models) {
      if ((m.type === 'ColumnDataSource' || m.constructor?.__name__ === 'ColumnDataSource')
          && m.data.state !== undefined) {
        const d = m.data, rows = [];
        for (let i = 0; i < m.get_length(); i++) {
          rows.push([d.row[i], d.start[i], d.end[i], d.state[i], d.label[i]]);
        }
        out.push(rows);
      }
    }
  }
  return out;
}"""


def _browser_bands(page: Any) -> list[list[tuple[Any, ...]]]:
    """Each timeline's bands as BokehJS holds them (one list per figure, in display order)."""
    return [sorted(tuple(b) for b in rows) for rows in page.evaluate(_BROWSER_BANDS)]


def _expected_bands() -> list[tuple[Any, ...]]:
    """The bands the figure must hold at the last step: the same run, drawn in this process."""
    import pandas as pd

    from workbench.session.inputs import load_events
    from workbench.session.session import CepSession
    from workbench.widgets import Timeline

    namespace: dict[str, Any] = {"pd": pd}
    exec(EVENTS_CODE, namespace)
    session = CepSession()
    session.define(PATTERN)
    outcome = session.run(["login_watch"], load_events(namespace["logins"]), trace=True)
    data = Timeline(outcome.trace, outcome.detections).sources["bands"].data
    cols = ("row", "start", "end", "state", "label")
    return sorted(zip(*(data[c] for c in cols), strict=True))


_CDS_LENGTHS = """() => {
  const out = [];
  for (const doc of (window.Bokeh ? window.Bokeh.documents : [])) {
    for (const m of doc.all_models) {
      if (m.type === 'ColumnDataSource' || m.constructor?.__name__ === 'ColumnDataSource') {
        out.push(m.get_length());
      }
    }
  }
  return out;
}"""


def test_timeline_renders_and_plays(lab: Lab) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            try:
                before, after, before_png, after_png = _drive(page, lab)
            except Exception:
                last = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell").last
                last.scroll_into_view_if_needed(timeout=5000)
                page.screenshot(path=str(ARTIFACTS / "timeline-failure.png"), full_page=True)
                (ARTIFACTS / "timeline-console.txt").write_text("\n".join(errors), encoding="utf-8")
                raise
        finally:
            browser.close()
    assert sum(after) > sum(before), (before, after)
    assert before_png != after_png, "the figure did not change after Play"
    bokeh_errors = [e for e in errors if "bokeh" in e.lower() or "BokehView" in e]
    assert not bokeh_errors, bokeh_errors


def _run_cells(page: Any, panel: str, indices: range) -> None:
    """Run the cells one by one, each after the previous finished; retry a request the kernel missed.

    (While the kernel is still connecting, JupyterLab can drop a run request; a retry is safe
    because a cell that ran shows its execution count and is not run again.)
    """
    cells = page.locator(f"{panel} .jp-Notebook .jp-Cell")
    for i in indices:
        prompt = cells.nth(i).locator(".jp-InputArea-prompt")
        deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
        issued = -math.inf
        while True:
            text = prompt.inner_text()
            if re.search(r"\[\d+\]", text):
                break  # ran
            if time.monotonic() > deadline:
                pytest.fail(f"cell {i} never ran; its prompt says {text!r}")
            # Neither queued nor running some seconds after the request: it was lost, ask again.
            if "*" not in text and time.monotonic() - issued > 8:
                cells.nth(i).locator(".jp-InputPrompt").click()
                page.evaluate("window.jupyterapp.commands.execute('notebook:run-cell')")
                issued = time.monotonic()
            page.wait_for_timeout(250)


def _drive(page: Any, lab: Lab) -> tuple[list[int], list[int], bytes, bytes]:
    """Open the notebook, run it, screenshot, press Play, screenshot; return BokehJS lengths and images."""
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    page.goto(f"{lab.url}/lab/tree/timeline.ipynb?token={lab.token}&reset")
    page.wait_for_selector(
        f"{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=UI_TIMEOUT_MS
    )
    _run_cells(page, panel, range(len(CELLS)))
    page.wait_for_selector(f"{panel} .jp-OutputArea-output canvas", timeout=UI_TIMEOUT_MS)
    page.wait_for_selector(f"{panel} .widget-play button", timeout=UI_TIMEOUT_MS)
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0", timeout=UI_TIMEOUT_MS)
    page.wait_for_timeout(1500)  # let BokehJS finish its first paint
    text = page.locator(f"{panel} .jp-Notebook").inner_text()
    assert "defined 'login_watch'" in text
    assert "detections: 1" in text
    output = page.locator(f"{panel} .jp-OutputArea-output:has(canvas)").first
    before_png = output.screenshot(path=str(ARTIFACTS / "timeline-before-play.png"))
    before = page.evaluate(_CDS_LENGTHS)
    assert sum(before) > 0, f"no bokeh data in the browser: {before}"

    page.locator(f"{panel} .widget-play button").first.click()
    # Play steps the slider; each step redraws from Python. Wait until the figure grew.
    grown = f"() => ({_CDS_LENGTHS})().reduce((a, b) => a + b, 0) > {sum(before)}"
    page.wait_for_function(grown, timeout=UI_TIMEOUT_MS)
    # At the last step the browser's bands must equal the model's, row for row: the stream and
    # patch deltas landed where they were meant to.
    expected = _expected_bands()
    deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
    got: list[list[tuple[Any, ...]]] = []
    while time.monotonic() < deadline:
        got = _browser_bands(page)
        if got == [expected]:
            break
        page.wait_for_timeout(500)
    assert got == [expected], f"browser bands differ from the model's: {got} vs {expected}"
    after = page.evaluate(_CDS_LENGTHS)
    after_png = output.screenshot(path=str(ARTIFACTS / "timeline-after-play.png"))

    # Live mode: the replay task streams into a second, initially empty timeline while the kernel
    # is idle; it must end up holding exactly the bands of the finished run.
    page.locator(f"{panel} .widget-play button").first.click()  # pause the first one
    _run_cells(page, panel, range(len(CELLS), len(CELLS) + 1))
    page.wait_for_function("() => window.Bokeh.documents.length > 1", timeout=UI_TIMEOUT_MS)
    seen_growing: set[int] = set()
    deadline = time.monotonic() + UI_TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        got = _browser_bands(page)
        if len(got) == 2:
            seen_growing.add(len(got[1]))
            if got[1] == expected:
                break
        page.wait_for_timeout(200)
    assert len(got) == 2, f"expected two figures, got {len(got)}"
    assert got[1] == expected, f"live timeline: {got[1]} vs {expected}"
    assert len(seen_growing) > 2, f"the live figure did not grow step by step: {sorted(seen_growing)}"
    live_fig = page.locator(f"{panel} .jp-OutputArea-output:has(canvas)").nth(1)
    live_fig.scroll_into_view_if_needed()
    live_fig.screenshot(path=str(ARTIFACTS / "timeline-live.png"))
    page.screenshot(path=str(ARTIFACTS / "timeline-page.png"), full_page=True)
    return before, after, before_png, after_png


def _open_notebook(page: Any, lab: Lab, workspace: str) -> str:
    """Open the test notebook in a JupyterLab workspace of its own; wait for an idle kernel."""
    panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
    page.goto(f"{lab.url}/lab/workspaces/{workspace}/tree/timeline.ipynb?token={lab.token}&reset")
    page.wait_for_selector(
        f"{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=UI_TIMEOUT_MS
    )
    return panel


def _figure_rendered(page: Any, panel: str, errors: list[str], what: str) -> None:
    """A bokeh canvas is in the notebook, and no widget shows a JavaScript error box."""
    page.wait_for_selector(f"{panel} .jp-OutputArea-output canvas", timeout=UI_TIMEOUT_MS)
    page.wait_for_function("() => window.Bokeh && window.Bokeh.documents.length > 0", timeout=UI_TIMEOUT_MS)
    page.wait_for_timeout(1000)
    text = page.locator(f"{panel} .jp-Notebook").inner_text()
    assert "javascript error" not in text.lower(), f"{what}: {text[-2000:]}"
    bad = [e for e in errors if "require" in e or "BokehView" in e or "Bokeh" in e]
    assert not bad, f"{what}: {bad}"


def test_timeline_renders_after_reload_and_in_a_second_tab(lab: Lab) -> None:
    """BokehJS lives in the page: reload and re-run, then reopen in another tab, same kernel."""
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    errors: list[str] = []
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            page = context.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            panel = _open_notebook(page, lab, "reload")
            _run_cells(page, panel, range(len(CELLS)))
            _figure_rendered(page, panel, errors, "first run")

            page.reload()  # the kernel keeps running, the page forgets BokehJS
            page.wait_for_selector(
                f"{panel} .jp-Notebook-ExecutionIndicator[data-status='idle']", timeout=UI_TIMEOUT_MS
            )
            _run_cells(page, panel, range(len(CELLS)))
            _figure_rendered(page, panel, errors, "after a reload")
            figure = page.locator(f"{panel} .jp-OutputArea-output:has(canvas)").first
            figure.scroll_into_view_if_needed()
            figure.screenshot(path=str(ARTIFACTS / "timeline-after-reload.png"))
            page.evaluate("window.jupyterapp.commands.execute('docmanager:save')")
            page.wait_for_timeout(1500)

            # A second tab on the saved notebook: the widget views are restored from the kernel.
            tab = context.new_page()
            tab.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            panel2 = _open_notebook(tab, lab, "second-tab")
            _figure_rendered(tab, panel2, errors, "in a second tab")
            tab.screenshot(path=str(ARTIFACTS / "timeline-second-tab.png"), full_page=True)
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "timeline-reload-failure.png"), full_page=True)
            (ARTIFACTS / "timeline-reload-console.txt").write_text("\n".join(errors), encoding="utf-8")
            raise
        finally:
            browser.close()


def test_demo_notebook_markdown_renders_as_markdown(lab: Lab) -> None:
    """The first markdown cell of a demo notebook: one title heading, then paragraphs (no stray '#')."""
    sync_api = pytest.importorskip("playwright.sync_api")
    ARTIFACTS.mkdir(exist_ok=True)
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            panel = ".jp-NotebookPanel:not(.lm-mod-hidden)"
            page.goto(f"{lab.url}/lab/workspaces/markdown/tree/{DEMO_NOTEBOOK}?token={lab.token}&reset")
            first = page.locator(f"{panel} .jp-MarkdownCell .jp-RenderedMarkdown").first
            first.wait_for(timeout=UI_TIMEOUT_MS)
            page.wait_for_timeout(500)
            first.screenshot(path=str(ARTIFACTS / "notebook-markdown-cell.png"))
            headings = first.locator("h1, h2, h3, h4, h5, h6").all_inner_texts()
            paragraphs = first.locator("p").all_inner_texts()
        finally:
            browser.close()
    assert [h.rstrip("¶").strip() for h in headings] == ["1 · Prova reaction groups"]
    assert len(paragraphs) >= 3
    assert not any(t.lstrip().startswith("#") for t in paragraphs), paragraphs
