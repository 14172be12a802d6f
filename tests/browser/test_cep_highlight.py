"""Real-browser test of the cep-highlight JupyterLab extension (extensions/cep_highlight).

Starts JupyterLab on 127.0.0.1 with a token and a temporary notebook folder, opens a notebook with a
Python cell and two ``%%cep`` cells in Debian's Chromium (Playwright, never a downloaded browser),
and checks that the ``%%cep`` tokens carry the extension's ``cep-tok-*`` classes in the theme's
colours, that a Python cell does not, and that a cell switches language as ``%%cep`` is typed.
Screenshots go to ``artifacts/``.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.lab import ARTIFACTS, BROWSER_MARKS, CHROMIUM, CHROMIUM_ARGS, Lab

UI_TIMEOUT_MS = 30_000

CEP_CELL = """%%cep fraud -o hits
# card fraud: a tiny test payment, then big ones from another country
event payment(card, amount, country)
sequence probe within 10min partition by card skip past last event
  begin small: payment where small.amount < 1.5
  followed by big: payment where big.amount > 500 and big.country != small.country
    times 2 or more

group login_watch partition by user
  on login(user as u)
  @and(g) @timeout(30s) {
    @count(3) failed(user = u)
    @not reset(user = u, channel = "email")
  }"""
MISTAKES_CELL = """%%cep
sequence s within 5mins
  begin a where a.x > 1 $ 2
  @sometimes b(x = "unterminated"""
CEP_FILE = "# a pattern file for `workbench run`\nsequence s within 5s\n  begin a where a.x > 1\n"
PYTHON_CELL = "total = sum([1, 2, 3])  # an ordinary Python cell\nprint('within', total)"

pytestmark = BROWSER_MARKS


def _labextension_installed() -> bool:
    share = Path(sys.prefix) / "share" / "jupyter" / "labextensions" / "cep-highlight" / "package.json"
    return share.exists()


def _notebook() -> dict[str, Any]:
    def code(source: str) -> dict[str, Any]:
        return {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}

    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
            "language_info": {"name": "python", "codemirror_mode": {"name": "ipython", "version": 3}},
        },
        "cells": [
            code(PYTHON_CELL),
            code(CEP_CELL),
            code(MISTAKES_CELL),
            code(""),
            code("%load_ext workbench"),
            code(""),
        ],
    }


@pytest.fixture(scope="module")
def page(lab: Lab) -> Iterator[Any]:
    if not _labextension_installed():
        pytest.fail("the cep-highlight labextension is not installed: pip install ./extensions/cep_highlight")
    lab.write_notebook("highlight.ipynb", _notebook())
    (lab.root / "patterns.cep").write_text(CEP_FILE, encoding="utf-8")
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1300, "height": 1000})
            errors: list[str] = []

            def on_console(message: Any) -> None:
                if message.type == "error":
                    errors.append(message.text)

            pg.on("pageerror", lambda exc: errors.append(str(exc)))
            pg.on("console", on_console)
            pg.set_default_timeout(UI_TIMEOUT_MS)
            pg.goto(f"{lab.url}/lab/tree/highlight.ipynb?token={lab.token}&reset")
            pg.wait_for_selector(f"{PANEL} .jp-Cell .cm-editor")
            pg.wait_for_selector(f"{PANEL} .cep-Editor .cep-tok-keyword")
            yield pg
            assert errors == [], f"errors in the page: {errors}"
        finally:
            browser.close()


PANEL = ".jp-NotebookPanel:not(.lm-mod-hidden)"


def _cell(page: Any, index: int) -> Any:
    return page.locator(f"{PANEL} .jp-Notebook .jp-Cell").nth(index)


def _notebook_area(page: Any) -> Any:
    return page.locator(f"{PANEL} .jp-Notebook")


def _tokens(cell: Any) -> dict[str, list[str]]:
    """The text of each ``cep-tok-*`` span of a cell's editor, by class."""
    found: dict[str, list[str]] = cell.evaluate(
        """cell => {
            const out = {};
            for (const span of cell.querySelectorAll('.cm-content [class*="cep-tok-"]')) {
                for (const cls of span.classList) {
                    if (cls.startsWith('cep-tok-')) (out[cls.slice(8)] ??= []).push(span.textContent);
                }
            }
            return out;
        }"""
    )
    return found


def _colour_check(cell: Any) -> list[tuple[str, str, str]]:
    """For each token class, (class, computed colour, the theme variable's colour)."""
    result: list[tuple[str, str, str]] = cell.evaluate(
        """cell => {
            const probe = document.createElement('span');
            document.body.appendChild(probe);
            const resolve = v => { probe.style.color = `var(${v})`; return getComputedStyle(probe).color; };
            const pairs = [['keyword', '--jp-mirror-editor-keyword-color'],
                           ['annotation', '--jp-mirror-editor-meta-color'],
                           ['duration', '--jp-mirror-editor-number-color'],
                           ['string', '--jp-mirror-editor-string-color'],
                           ['comment', '--jp-mirror-editor-comment-color'],
                           ['operator', '--jp-mirror-editor-operator-color']];
            const out = pairs.map(([cls, v]) => {
                const span = cell.querySelector(`.cep-tok-${cls}`);
                return [cls, span ? getComputedStyle(span).color : 'missing', resolve(v)];
            });
            probe.remove();
            return out;
        }"""
    )
    return result


def _screenshot(element: Any, name: str) -> Path:
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    element.screenshot(path=str(path))
    return path


def test_cep_cell_tokens_carry_extension_classes(page: Any) -> None:
    cell = _cell(page, 1)
    assert "cep-Editor" in (cell.locator(".cm-editor").get_attribute("class") or "")
    tokens = _tokens(cell)
    assert tokens["magic"] == ["%%cep"]
    assert tokens["option"] == ["-o"]
    for word in ("event", "sequence", "within", "partition", "by", "skip", "past", "last", "begin",
                 "followed", "where", "times", "or", "more", "group", "on", "as", "and"):  # fmt: skip
        assert word in tokens["keyword"], word
    assert tokens["annotation"] == ["@and", "@timeout", "@count", "@not"]
    assert tokens["duration"] == ["10min", "30s"]
    assert tokens["number"] == ["1.5", "500", "2", "3"]
    assert tokens["string"] == ['"email"']
    assert tokens["comment"] == ["# card fraud: a tiny test payment, then big ones from another country"]
    assert {"<", ">", "!=", "=", ":"} <= set(tokens["operator"])
    assert {"amount", "country"} <= set(tokens["property"])
    assert "error" not in tokens


def test_mistakes_are_marked_as_errors(page: Any) -> None:
    tokens = _tokens(_cell(page, 2))
    assert tokens["error"] == ["5mins", "$", "@sometimes", '"unterminated']


def test_python_cell_is_left_alone(page: Any) -> None:
    cell = _cell(page, 0)
    assert "cep-Editor" not in (cell.locator(".cm-editor").get_attribute("class") or "")
    assert _tokens(cell) == {}
    assert cell.locator(".cm-content span").count() > 0, "the Python cell lost its own highlighting"


def test_token_colours_follow_the_theme(page: Any) -> None:
    cell = _cell(page, 1)
    light = _colour_check(cell)
    assert all(got == want for _, got, want in light), light
    assert len({got for _, got, _ in light}) >= 4, f"token classes should look different: {light}"
    print("light:", _screenshot(_notebook_area(page), "cep_highlight_light.png"))
    page.evaluate("window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})")
    page.wait_for_function("document.body.dataset.jpThemeLight === 'false'")
    page.wait_for_timeout(500)  # let the theme's stylesheet apply
    dark = _colour_check(cell)
    try:
        assert all(got == want for _, got, want in dark), dark
        assert [c for _, c, _ in dark] != [c for _, c, _ in light], "colours did not change with the theme"
        print("dark:", _screenshot(_notebook_area(page), "cep_highlight_dark.png"))
    finally:
        page.evaluate(
            "window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Light'})"
        )
        page.wait_for_function("document.body.dataset.jpThemeLight === 'true'")


def test_typing_the_magic_switches_the_cell(page: Any) -> None:
    cell = _cell(page, 3)
    editor = cell.locator(".cm-editor")
    cell.locator(".cm-content").click()
    page.keyboard.type("x = 1\n")
    assert _tokens(cell) == {}
    page.keyboard.press("Control+Home")
    page.keyboard.type("%%cep\nsequence s within 5s\n")
    cell.locator(".cep-Editor .cep-tok-duration").wait_for()
    tokens = _tokens(cell)
    assert tokens["magic"] == ["%%cep"]
    assert tokens["keyword"] == ["sequence", "within"]
    assert tokens["duration"] == ["5s"]
    print("typed:", _screenshot(cell, "cep_highlight_typed.png"))
    page.keyboard.press("Control+Home")
    page.keyboard.press("Delete")  # '%cep...' is no longer a %%cep cell
    editor.evaluate("e => new Promise(r => requestAnimationFrame(() => r(null)))")
    assert "cep-Editor" not in (editor.get_attribute("class") or "")
    assert _tokens(cell) == {}


def test_tab_completes_in_a_cep_cell(page: Any) -> None:
    """The kernel-side completer (workbench.jupyter.completion) answers JupyterLab's Tab."""
    load = _cell(page, 4)
    load.locator(".cm-content").click()
    page.keyboard.press("Shift+Enter")  # runs %load_ext workbench (starts the kernel if needed)
    load.locator(".jp-InputPrompt", has_text="[1]").wait_for(timeout=90_000)
    cell = _cell(page, 5)
    cell.locator(".cm-content").click()
    page.keyboard.type("%%cep\nsequence s\n  begin a where a.x > 1 @ti")
    page.keyboard.press("Tab")
    popup = page.locator(".jp-Completer:not(.lm-mod-hidden)")
    popup.wait_for()
    items = popup.locator(".jp-Completer-item .jp-Completer-match").all_inner_texts()
    assert items == ["timeout", "timeout_channel", "timer"]
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(ARTIFACTS / "cep_completion.png"))
    page.keyboard.press("Escape")


def test_cep_files_open_highlighted(page: Any) -> None:
    """Runs last: it opens a file editor tab over the notebook."""
    page.evaluate(
        "window.jupyterapp.commands.execute('docmanager:open', {path: 'patterns.cep', factory: 'Editor'})"
    )
    editor = page.locator(".jp-FileEditor:not(.lm-mod-hidden) .cm-editor.cep-Editor")
    editor.locator(".cep-tok-keyword").first.wait_for()
    tokens = _tokens(editor)
    assert tokens["comment"] == ["# a pattern file for `workbench run`"]
    assert tokens["keyword"] == ["sequence", "within", "begin", "where"]
    assert tokens["duration"] == ["5s"]
    assert "magic" not in tokens
    print("file:", _screenshot(editor, "cep_highlight_file.png"))
