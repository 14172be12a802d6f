"""Shared helpers for the notebook tests: where the notebooks are, and the builder module."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
NB_DIR = ROOT / "notebooks"
SRC_DIR = NB_DIR / "src"
SOURCES = sorted(SRC_DIR.glob("*.nbsrc"))
CHECK_TAG = "nbval-check-output"


def load_builder() -> ModuleType:
    """Import ``notebooks/src/build.py`` (not a package: it is a maintainer's script)."""
    name = "workbench_notebook_builder"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SRC_DIR / "build.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def output_text(outputs: list[dict]) -> str:
    """The text a cell showed: its streams and the text/plain of its results, in order."""
    parts: list[str] = []
    for out in outputs:
        if out.get("output_type") == "stream":
            text = out.get("text", "")
            parts.append("".join(text) if isinstance(text, list) else text)
        elif "data" in out and "text/plain" in out["data"]:
            text = out["data"]["text/plain"]
            parts.append("".join(text) if isinstance(text, list) else text)
    return "".join(parts)
