"""Binder: the ``binder/`` configuration installs and runs the notebooks in a clean environment.

repo2docker is not run here (it needs Docker). Instead the test reproduces what it does with the
files in ``binder/``: a fresh virtual environment, ``pip install -r binder/requirements.txt`` from
the repository root (so ``-e .`` installs this checkout), ``postBuild``, and then every notebook
executed with that environment's kernel, with ``BOKEH_RESOURCES=inline`` as ``binder/start`` sets it.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.notebooks._nb import NB_DIR, ROOT, SOURCES

BINDER = ROOT / "binder"


def test_binder_files() -> None:
    assert sorted(p.name for p in BINDER.iterdir()) == [
        "postBuild",
        "requirements.txt",
        "runtime.txt",
        "start",
    ]
    assert (BINDER / "runtime.txt").read_text().strip() == "python-3.11"
    reqs = [ln.strip() for ln in (BINDER / "requirements.txt").read_text().splitlines()]
    assert "-e ." in reqs, "repo2docker ignores the root pyproject.toml when binder/ exists"
    for script in ("postBuild", "start"):
        path = BINDER / script
        assert os.access(path, os.X_OK), f"binder/{script} must be executable"
        subprocess.run(["bash", "-n", str(path)], check=True)
    start = (BINDER / "start").read_text()
    assert re.search(r"^export BOKEH_RESOURCES=inline$", start, re.M)
    assert start.rstrip().splitlines()[-1] == 'exec "$@"'


RUN_NOTEBOOKS = textwrap.dedent(
    """
    import sys, time
    import nbformat
    from nbclient import NotebookClient
    for path in sys.argv[1:]:
        t0 = time.perf_counter()
        nb = nbformat.read(path, as_version=4)
        NotebookClient(nb, timeout=300, kernel_name="python3",
                       resources={"metadata": {"path": sys.argv[1].rsplit("/", 1)[0]}}).execute()
        print(f"ran {path.rsplit('/', 1)[1]} in {time.perf_counter() - t0:.1f} s", flush=True)
    """
)


BINDER_BASE = ["jupyterlab==4.4.9", "notebook==7.4.7", "jupyter_server==2.17.0"]
"""What Binder's base image already holds (repo2docker 2026.4); requirements.txt comes on top."""


@dataclass(frozen=True)
class BinderEnv:
    venv: Path
    env: dict[str, str]

    @property
    def python(self) -> str:
        return str(self.venv / "bin" / "python")


@pytest.fixture(scope="module")
def binder_env(tmp_path_factory: pytest.TempPathFactory) -> BinderEnv:
    """A clean venv built as repo2docker builds the image: base, requirements.txt, then postBuild."""
    tmp_path = tmp_path_factory.mktemp("binder")
    venv = tmp_path / "venv"
    home = tmp_path / "home"
    home.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VIRTUAL_ENV", "PYTHON", "JUPYTER", "IPYTHON"))
    }
    env.update(
        HOME=str(home),
        PATH=f"{venv / 'bin'}:{env.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        IPYTHONDIR=str(home / "ipython"),
        BOKEH_RESOURCES="inline",
    )
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=120)
    python = str(venv / "bin" / "python")
    pip = [python, "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *BINDER_BASE], cwd=ROOT, env=env, check=True, timeout=1200)
    subprocess.run([*pip, "-r", "binder/requirements.txt"], cwd=ROOT, env=env, check=True, timeout=1200)
    # The kernel must be this environment's, and the package this checkout.
    where = subprocess.run(
        [python, "-c", "import workbench, sys; print(workbench.__file__); print(sys.prefix)"],
        cwd=tmp_path,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    assert where == [str(ROOT / "workbench" / "__init__.py"), str(venv)]
    subprocess.run(["bash", str(BINDER / "postBuild")], cwd=ROOT, env=env, check=True, timeout=900)
    return BinderEnv(venv, env)


@pytest.mark.slow
@pytest.mark.notebook
def test_binder_environment_has_the_highlighting_extension(binder_env: BinderEnv) -> None:
    listed = subprocess.run(
        [str(binder_env.venv / "bin" / "jupyter"), "labextension", "list"],
        env=binder_env.env,
        capture_output=True,
        text=True,
        check=True,
    )
    text = re.sub(r"\x1b\[[0-9;]*m", "", listed.stdout + listed.stderr)  # no colour codes
    line = next((ln for ln in text.splitlines() if "cep-highlight" in ln), "")
    assert re.search(r"cep-highlight v[\d.]+ enabled.*OK", line), text
    share = binder_env.venv / "share" / "jupyter" / "labextensions" / "cep-highlight" / "package.json"
    assert share.exists()


@pytest.mark.slow
@pytest.mark.notebook
def test_binder_requirements_run_the_notebooks(binder_env: BinderEnv) -> None:
    notebooks = [str(NB_DIR / f"{s.stem}.ipynb") for s in SOURCES]
    result = subprocess.run(
        [binder_env.python, "-c", RUN_NOTEBOOKS, *notebooks],
        cwd=NB_DIR,
        env=binder_env.env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    assert result.stdout.count("ran ") == len(notebooks)


@pytest.mark.slow
@pytest.mark.notebook
@pytest.mark.browser
def test_binder_lab_highlights_cep_cells(binder_env: BinderEnv, tmp_path: Path) -> None:
    """The Binder environment's own JupyterLab, in Chromium: a %%cep cell carries the extension's classes."""
    from tests.browser.lab import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS, run_lab

    if not CHROMIUM.exists():
        pytest.skip("needs Debian's chromium (make system-deps)")
    sync_api = pytest.importorskip("playwright.sync_api")
    cell = (
        "%%cep\nsequence probe within 10min partition by card\n"
        "  begin small: payment where small.amount < 1.5"
    )
    notebook = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
        "cells": [
            {"cell_type": "code", "metadata": {}, "source": cell, "outputs": [], "execution_count": None}
        ],
    }
    for lab in run_lab(tmp_path, "binder-token", python=binder_env.python, base_env=binder_env.env):
        lab.write_notebook("binder.ipynb", notebook)
        with sync_api.sync_playwright() as p:
            browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page(viewport={"width": 1280, "height": 700})
                page.goto(f"{lab.url}/lab/tree/binder.ipynb?token={lab.token}&reset")
                page.wait_for_selector(".jp-NotebookPanel .cep-Editor .cep-tok-keyword", timeout=90_000)
                keywords = page.locator(".cep-Editor .cep-tok-keyword").all_inner_texts()
                ARTIFACTS.mkdir(exist_ok=True)
                page.locator(".jp-NotebookPanel .jp-Cell").first.screenshot(
                    path=str(ARTIFACTS / "binder-highlighting.png")
                )
            finally:
                browser.close()
    assert {"sequence", "within", "partition", "by", "begin", "where"} <= set(keywords)
