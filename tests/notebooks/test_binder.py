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


@pytest.mark.slow
@pytest.mark.notebook
def test_binder_requirements_run_the_notebooks(tmp_path: Path) -> None:
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
    subprocess.run(
        [python, "-m", "pip", "install", "-q", "-r", "binder/requirements.txt"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=1200,
    )
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
    subprocess.run(["bash", str(BINDER / "postBuild")], cwd=ROOT, env=env, check=True, timeout=300)
    notebooks = [str(NB_DIR / f"{s.stem}.ipynb") for s in SOURCES]
    result = subprocess.run(
        [python, "-c", RUN_NOTEBOOKS, *notebooks],
        cwd=NB_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-5000:]
    assert result.stdout.count("ran ") == len(notebooks)
