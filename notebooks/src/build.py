"""Build the demo notebooks from their sources, run them, and store lean outputs.

Each notebook ``notebooks/NAME.ipynb`` is written from ``notebooks/src/NAME.nbsrc``, a plain-text
"percent" file (reviewable diffs, no JSON)::

    # %% [markdown]
    # Some *markdown*, every line behind a `# ` comment prefix (as jupytext writes it).
    # %% tags=["nbval-check-output"]
    print(detections.to_string())

A line starting with ``# %%`` opens a cell; ``[markdown]`` makes it a markdown cell, whose lines
lose their ``# `` (or bare ``#``) comment prefix, so ``# # Title`` is the heading ``# Title``; ``tags=[...]``
(JSON) sets the cell's tags. Tags are how nbval is told what to compare: ``nbval-check-output``
cells are compared under ``pytest --nbval-lax``, all other cells are only checked to run. Tags, not
comment lines, because a comment above ``%%cep`` would stop it from being a cell magic.

Running the notebook (nbclient, in the notebook's folder, with this Python's kernel) stores real
outputs; then the outputs are made lean: BokehJS and widget payloads (megabytes of inline
JavaScript, widget views that cannot render without a live kernel) and execution timestamps are
removed, text and DataFrame tables are kept. Usage::

    python notebooks/src/build.py                 # every notebook
    python notebooks/src/build.py 01 04           # the notebooks whose names start with 01 or 04
    python notebooks/src/build.py --no-execute    # write cells only (no outputs)
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
from nbclient import NotebookClient

SRC_DIR = Path(__file__).resolve().parent
NB_DIR = SRC_DIR.parent
HEADER = "# %%"

# Output MIME types that are never stored: BokehJS loaders and documents, widget views, and any
# other JavaScript. They are large, and useless without the live kernel that created them.
DROPPED_MIME = frozenset(
    {
        "application/javascript",
        "application/vnd.bokehjs_load.v0+json",
        "application/vnd.bokehjs_exec.v0+json",
        "application/vnd.jupyter.widget-view+json",
        "application/vnd.holoviews_load.v0+json",
    }
)
MAX_OUTPUT_CHARS = 60_000
"""An HTML output larger than this (after dropping payloads) is replaced by its text form."""


@dataclass(frozen=True)
class SourceCell:
    """One cell of a ``.nbsrc`` file."""

    kind: str  # "code" or "markdown"
    source: str
    tags: tuple[str, ...] = ()


def _parse_header(line: str, lineno: int) -> tuple[str, tuple[str, ...]]:
    rest = line[len(HEADER) :].strip()
    kind = "code"
    if rest.startswith("[markdown]"):
        kind = "markdown"
        rest = rest[len("[markdown]") :].strip()
    tags: tuple[str, ...] = ()
    if rest:
        if not rest.startswith("tags="):
            msg = f"line {lineno}: expected `# %% [markdown]` and/or `tags=[...]`, got {line!r}"
            raise ValueError(msg)
        value = json.loads(rest[len("tags=") :])
        if not isinstance(value, list) or not all(isinstance(t, str) for t in value):
            msg = f"line {lineno}: tags must be a JSON list of strings, got {rest!r}"
            raise ValueError(msg)
        tags = tuple(value)
    return kind, tags


def _uncomment(line: str, lineno: int) -> str:
    """A markdown line without its comment prefix: ``# text`` -> ``text``, ``#`` -> ``""``."""
    if line.startswith("# "):
        return line[2:]
    if line.rstrip() == "#" or not line.strip():
        return ""
    msg = f"line {lineno}: a markdown line must start with '# ' (the comment prefix), got {line!r}"
    raise ValueError(msg)


def parse_source(text: str) -> list[SourceCell]:
    """Split a ``.nbsrc`` text into cells (blank lines around each cell are trimmed).

    >>> [(c.kind, c.source) for c in parse_source("# %% [markdown]\\n# # Title\\n# %%\\nx = 1\\n")]
    [('markdown', '# Title'), ('code', 'x = 1')]
    """
    cells: list[SourceCell] = []
    kind: str | None = None
    tags: tuple[str, ...] = ()
    lines: list[str] = []

    def close() -> None:
        if kind is not None:
            cells.append(SourceCell(kind, "\n".join(lines).strip("\n"), tags))

    for lineno, line in enumerate(text.splitlines(), start=1):
        if line.startswith(HEADER):
            close()
            kind, tags = _parse_header(line, lineno)
            lines = []
        elif kind is None:
            if line.strip():
                msg = f"line {lineno}: text before the first `# %%` cell header"
                raise ValueError(msg)
        else:
            lines.append(_uncomment(line, lineno) if kind == "markdown" else line)
    close()
    return cells


def make_notebook(cells: list[SourceCell]) -> nbformat.NotebookNode:
    """A v4 notebook with the given cells and the ``python3`` kernel."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    nb.metadata["language_info"] = {"name": "python"}
    for c in cells:
        cell = (
            nbformat.v4.new_code_cell(c.source)
            if c.kind == "code"
            else nbformat.v4.new_markdown_cell(c.source)
        )
        cell.id = f"cell-{len(nb.cells):03d}"  # stable ids: rebuilding does not churn the diff
        if c.tags:
            cell.metadata["tags"] = list(c.tags)
        nb.cells.append(cell)
    return nb


def _lean_output(out: dict[str, Any]) -> dict[str, Any] | None:
    """The output without heavy payloads, or ``None`` when nothing worth keeping is left."""
    data = out.get("data")
    if data is None:
        return out
    if "application/vnd.jupyter.widget-view+json" in data:
        return None  # a widget's text/plain is only its repr
    kept = {k: v for k, v in data.items() if k not in DROPPED_MIME}
    html = kept.get("text/html")
    if html is not None:
        text = "".join(html) if isinstance(html, list) else html
        if "<script" in text or len(text) > MAX_OUTPUT_CHARS:
            del kept["text/html"]
    if not kept or (set(kept) == {"text/plain"} and not "".join(kept["text/plain"]).strip()):
        return None
    out = dict(out)
    out["data"] = kept
    out["metadata"] = {}
    return out


def strip_outputs(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Remove payloads that must not be committed (in place), and return the notebook."""
    nb.metadata.pop("widgets", None)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        if cell.cell_type != "code":
            continue
        outs = []
        for out in cell.get("outputs", []):
            lean = _lean_output(out)
            if lean is not None:
                outs.append(nbformat.from_dict(lean))
        cell.outputs = outs
    return nb


def build(src: Path, *, execute: bool = True, timeout: int = 600) -> Path:
    """Write ``notebooks/<src stem>.ipynb`` from ``src`` (executed unless ``execute`` is false)."""
    nb = make_notebook(parse_source(src.read_text(encoding="utf-8")))
    if execute:
        client = NotebookClient(
            nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": str(NB_DIR)}}
        )
        client.execute()
    strip_outputs(nb)
    nbformat.validate(nb)
    target = NB_DIR / f"{src.stem}.ipynb"
    nbformat.write(nb, target)
    return target


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("prefixes", nargs="*", help="build only notebooks whose names start with these")
    parser.add_argument("--no-execute", action="store_true", help="write the cells without running them")
    args = parser.parse_args(argv)
    sources = sorted(SRC_DIR.glob("*.nbsrc"))
    if args.prefixes:
        sources = [s for s in sources if any(s.stem.startswith(p) for p in args.prefixes)]
    for src in sources:
        t0 = time.perf_counter()
        target = build(src, execute=not args.no_execute)
        size = target.stat().st_size
        print(f"{target.name}: {time.perf_counter() - t0:.1f} s, {size / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
