"""What the browser tests share: Chromium's path and flags, and the JupyterLab server they drive.

One server (the session-scoped ``lab`` fixture of ``conftest.py``) serves every browser test; each
test module writes its notebooks into :attr:`Lab.root` before it opens them.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
START_TIMEOUT_S = 90.0

#: the marks of every browser test module.
BROWSER_MARKS = [
    pytest.mark.browser,
    pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium (make system-deps)"),
]


@dataclass(frozen=True)
class Lab:
    """A running JupyterLab server: its address, token, notebook folder and log."""

    url: str
    token: str
    root: Path
    log: Path

    def write_notebook(self, name: str, notebook: dict[str, Any]) -> None:
        """Put a notebook (nbformat JSON) into the server's folder."""
        (self.root / name).write_text(json.dumps(notebook), encoding="utf-8")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _write_settings(settings: Path) -> None:
    """User settings: no news toast over the page, and every cell kept in the DOM."""
    files = {
        "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
            "fetchNews": "false",
            "checkForUpdates": False,
        },
        "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    }
    for rel, data in files.items():
        path = settings / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data), encoding="utf-8")


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server and its kernels (its process group), politely first."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
    with contextlib.suppress(ProcessLookupError):  # kernels share the group: none outlives the server
        os.killpg(proc.pid, signal.SIGKILL)


def _wait_ready(proc: subprocess.Popen[bytes], url: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        if proc.poll() is not None:
            pytest.fail(f"jupyter-lab exited with {proc.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=2) as resp:
                if resp.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"jupyter-lab did not answer in {START_TIMEOUT_S} s:\n{log.read_text()[-3000:]}")
        time.sleep(0.3)


def run_lab(
    base: Path, token: str, *, python: str = sys.executable, base_env: dict[str, str] | None = None
) -> Iterator[Lab]:
    """Start JupyterLab in a fresh home under ``base``; yield it; stop it and its kernels.

    ``python`` is the interpreter whose JupyterLab runs (another environment's, for the Binder
    test), ``base_env`` the environment variables to start from (default: this process's).
    """
    home, root = base / "home", base / "notebooks"
    for d in (home, root, home / "runtime", home / "ipython", home / "settings", home / "workspaces"):
        d.mkdir(parents=True, exist_ok=True)
    _write_settings(home / "settings")
    env = {
        **(os.environ if base_env is None else base_env),
        "HOME": str(home),
        "JUPYTER_CONFIG_DIR": str(home / "config"),
        "JUPYTER_RUNTIME_DIR": str(home / "runtime"),
        "IPYTHONDIR": str(home / "ipython"),
        "JUPYTERLAB_SETTINGS_DIR": str(home / "settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(home / "workspaces"),
        "BOKEH_RESOURCES": "inline",
        # the kernel imports this checkout's workbench (not whichever one the venv installed)
        "PYTHONPATH": str(ROOT),
    }
    port = _free_port()
    log = base / "lab.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                python, "-m", "jupyterlab", "--allow-root", "--no-browser",
                "--ip=127.0.0.1", f"--port={port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
                "--expose-app-in-browser",
            ],
            cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the teardown stops kernels too
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    # A CI timeout sends SIGTERM: turn it into KeyboardInterrupt so this teardown still runs.
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        _wait_ready(proc, url, token, log)
        yield Lab(url, token, root, log)
    finally:
        _stop(proc)
        signal.signal(signal.SIGTERM, previous)
