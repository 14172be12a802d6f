"""One runner for the examples in every docstring of ``workbench`` and ``benchmarks``.

Every module is collected by walking the packages, so a new module's examples run without being
listed. The modules that need PyFlink (``workbench.backends.flink``) cannot be imported without it
and are skipped here; their one example is marked ``+SKIP`` (it needs a Flink job).
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _modules(package: str) -> set[str]:
    """Every module of ``package`` by its files (nothing is imported to find them)."""
    out = set()
    for path in (ROOT / package).rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        out.add(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return out


MODULES = sorted(
    (_modules("workbench") | _modules("benchmarks"))
    - {"workbench.conformance.__main__"}  # running it is the conformance command itself
)
NEEDS_PYFLINK = "workbench.backends.flink"


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    if name.startswith(NEEDS_PYFLINK) and importlib.util.find_spec("pyflink") is None:
        pytest.skip("needs PyFlink")
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0


def test_the_walk_finds_every_package() -> None:
    assert {"workbench.engine.expr.parse", "workbench.session.session", "benchmarks.run"} <= set(MODULES)
