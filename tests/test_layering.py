"""The layers import only downward: a static check of every import in ``workbench/``, lazy ones too.

``engine`` is the standard library only; ``language`` and ``session`` never need a kernel; the CLI
never imports the notebook layer. The check reads the source (``ast``), so an import inside a
function counts as much as one at the top.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "workbench"
THIRD_PARTY_UI = ("IPython", "ipywidgets", "bokeh", "jupyter_bokeh", "traitlets")

#: module prefix -> the imports it must never make (prefixes of dotted names).
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "workbench.engine": (
        "workbench.language",
        "workbench.session",
        "workbench.jupyter",
        "workbench.widgets",
        "workbench.backends",
        "workbench.results",
        "workbench.conformance",
        "workbench.cli",
        "workbench.demo",
        "pandas",
        "numpy",
        "pyarrow",
        "lark",
        *THIRD_PARTY_UI,
    ),
    "workbench.language": (
        "workbench.session",
        "workbench.jupyter",
        "workbench.widgets",
        "workbench.backends",
        *THIRD_PARTY_UI,
    ),
    "workbench.session": ("workbench.jupyter", "workbench.widgets", *THIRD_PARTY_UI),
    "workbench.backends": ("workbench.jupyter", "workbench.widgets", *THIRD_PARTY_UI),
    "workbench.results": ("workbench.jupyter", "workbench.widgets", "workbench.session", *THIRD_PARTY_UI),
    "workbench.cli": ("workbench.jupyter", "workbench.widgets", *THIRD_PARTY_UI),
    # the demo sits right above the engine: the Prova blog examples and Prova-style printing
    "workbench.demo": (
        "workbench.session",
        "workbench.jupyter",
        "workbench.widgets",
        "workbench.backends",
        "pandas",
        *THIRD_PARTY_UI,
    ),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _violations() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = _module_name(path)
        for layer, banned in FORBIDDEN.items():
            if module != layer and not module.startswith(layer + "."):
                continue
            for name in sorted(_imports(path)):
                hit = next((b for b in banned if name == b or name.startswith(b + ".")), None)
                if hit is not None:
                    found.append(f"{module} imports {name} (the {layer} layer must not import {hit})")
    return found


def test_no_layer_imports_one_above_it() -> None:
    assert _violations() == []


def test_the_check_sees_lazy_imports(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from workbench.jupyter import magics\n    import pandas as pd\n")
    assert {"workbench.jupyter", "workbench.jupyter.magics", "pandas"} <= _imports(probe)


@pytest.mark.parametrize(
    "module", ["workbench.cli", "workbench.session", "workbench.language", "workbench.engine"]
)
def test_importing_a_lower_layer_loads_no_kernel_or_widgets(module: str) -> None:
    code = (
        f"import sys, {module}\n"
        "from workbench.language import compile_pattern\n"
        "compile_pattern('sequence s begin a next b')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        f"{THIRD_PARTY_UI!r})\n"
        "assert not bad, bad\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
