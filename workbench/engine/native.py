"""Which native core is in use: the compiled :mod:`workbench.engine._native`, or none (pure Python).

The package's build compiles the native core when it can (``setup.py``); ``WORKBENCH_PURE=1`` in
the environment keeps the pure-Python twins in use even where it is built (the tests run both).

>>> MODULE is None or MODULE.__name__ == "workbench.engine._native"
True
"""

from __future__ import annotations

import os
from types import ModuleType

__all__ = ["MODULE", "PURE_ENV", "describe"]

#: the environment variable that keeps the pure-Python implementations in use
PURE_ENV = "WORKBENCH_PURE"


def _load() -> ModuleType | None:
    if os.environ.get(PURE_ENV, "") not in ("", "0"):
        return None
    try:
        from workbench.engine import _native
    except ImportError:  # why: not built here (no compiler, or a pure-Python install)
        return None
    return _native


#: the compiled native core, or ``None``
MODULE: ModuleType | None = _load()


def describe() -> str:
    """``"native"`` or ``"pure"`` (what benchmarks print beside their figures)."""
    return "native" if MODULE is not None else "pure"
