"""The demo notebooks: built from their sources, lean, and running top to bottom.

``pytest --nbval-lax notebooks/`` re-runs the notebooks with nbval and compares the cells tagged
``nbval-check-output``. These tests add what nbval cannot see: that the committed notebooks match
their ``notebooks/src/*.nbsrc`` sources, carry no BokehJS or widget payloads, and that no cell
fails, including errors IPython prints to stderr (a ``UsageError`` passes ``--nbval-lax``).
"""

from __future__ import annotations

import copy
import re

import mistune
import nbformat
import pytest
from nbclient import NotebookClient

from tests.notebooks._nb import CHECK_TAG, NB_DIR, SOURCES, load_builder, output_text

build = load_builder()
IDS = [s.stem for s in SOURCES]
MAX_NOTEBOOK_BYTES = 400_000


def _notebook(src_stem: str) -> nbformat.NotebookNode:
    return nbformat.read(NB_DIR / f"{src_stem}.ipynb", as_version=4)


def test_there_are_notebooks() -> None:
    assert len(SOURCES) >= 5
    for src in SOURCES:
        assert (NB_DIR / f"{src.stem}.ipynb").exists(), f"{src.name} was never built"


# ------------------------------------------------------------------------------------ the builder


def test_parse_source_cells_and_tags() -> None:
    text = (
        '# %% [markdown]\n# # Title\n#\n# Some *text*.\n\n# %% tags=["nbval-check-output"]\n'
        "%%cep w\nsequence w begin a\n# %%\nx = 1\n"
    )
    cells = build.parse_source(text)
    assert [(c.kind, c.tags) for c in cells] == [
        ("markdown", ()),
        ("code", ("nbval-check-output",)),
        ("code", ()),
    ]
    assert cells[0].source == "# Title\n\nSome *text*."
    assert cells[1].source == "%%cep w\nsequence w begin a"


@pytest.mark.parametrize(
    "text",
    [
        "stray\n# %%\nx\n",
        "# %% tags=nbval-skip\nx\n",
        "# %% [raw]\nx\n",
        "# %% tags=[1]\nx\n",
        "# %% [markdown]\nno comment prefix\n",
    ],
)
def test_parse_source_rejects_bad_headers(text: str) -> None:
    with pytest.raises(ValueError, match="line"):
        build.parse_source(text)


def test_strip_outputs_drops_payloads_and_keeps_text() -> None:
    nb = build.make_notebook([build.SourceCell("code", "x")])
    nb.metadata["widgets"] = {"state": {}}
    nb.cells[0].metadata["execution"] = {"iopub.status.busy": "2026-01-01"}
    nb.cells[0].outputs = [
        nbformat.v4.new_output("stream", name="stdout", text="kept\n"),
        nbformat.v4.new_output(
            "display_data", data={"application/javascript": "x" * 10, "text/html": "<script>load()</script>"}
        ),
        nbformat.v4.new_output(
            "display_data",
            data={"application/vnd.jupyter.widget-view+json": {"model_id": "m"}, "text/plain": "Box()"},
        ),
        nbformat.v4.new_output(
            "execute_result", data={"text/plain": "table", "text/html": "<table></table>"}, execution_count=1
        ),
    ]
    build.strip_outputs(nb)
    assert "widgets" not in nb.metadata
    assert "execution" not in nb.cells[0].metadata
    assert [o.output_type for o in nb.cells[0].outputs] == ["stream", "execute_result"]
    assert nb.cells[0].outputs[1].data == {"text/plain": "table", "text/html": "<table></table>"}
    nbformat.validate(nb)


# ------------------------------------------------------------------------- the committed notebooks


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_notebook_matches_its_source(src) -> None:  # type: ignore[no-untyped-def]
    """Edit the .nbsrc and rebuild (python notebooks/src/build.py); never edit the .ipynb by hand."""
    cells = build.parse_source(src.read_text(encoding="utf-8"))
    nb = _notebook(src.stem)
    got = [(c.cell_type, c.source, tuple(c.metadata.get("tags", ()))) for c in nb.cells]
    assert got == [(c.kind, c.source, c.tags) for c in cells]


def _source_headings(src_text: str) -> list[str]:
    """Headings as the author wrote them in the .nbsrc: markdown lines ``# ## Title`` (prefix + heading)."""
    headings: list[str] = []
    in_markdown = False
    for line in src_text.splitlines():
        if line.startswith("# %%"):
            in_markdown = line.startswith("# %% [markdown]")
        elif in_markdown and (m := re.match(r"^# (#{1,6}) +(.+?)\s*#*\s*$", line)):
            headings.append(f"h{len(m.group(1))}:{m.group(2)}")
    return headings


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_markdown_cells_render_their_own_headings_only(src) -> None:  # type: ignore[no-untyped-def]
    """Each markdown cell, rendered by a markdown parser, has exactly the headings its source has."""
    nb = _notebook(src.stem)
    rendered: list[str] = []
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        html = mistune.html(cell.source)
        assert isinstance(html, str)
        for level, text in re.findall(r"<h([1-6])[^>]*>(.*?)</h\1>", html, flags=re.S):
            rendered.append(f"h{level}:{re.sub(r'<[^>]+>', '', text)}")
    expected = [re.sub(r"[`*]", "", h) for h in _source_headings(src.read_text(encoding="utf-8"))]
    assert [re.sub(r"[`*]", "", h) for h in rendered] == expected
    assert expected, f"{src.stem}: the notebook has no heading at all"


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_notebook_is_lean_and_executed(src) -> None:  # type: ignore[no-untyped-def]
    path = NB_DIR / f"{src.stem}.ipynb"
    raw = path.read_text(encoding="utf-8")
    assert len(raw.encode()) < MAX_NOTEBOOK_BYTES
    for payload in ("application/javascript", "bokehjs", "widget-view+json", "Bokeh.set_log_level"):
        assert payload not in raw, f"{path.name} stores a {payload} payload"
    nb = nbformat.read(path, as_version=4)
    assert "widgets" not in nb.metadata
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code
    assert all(c.execution_count is not None for c in code), "build the notebook with outputs"
    for c in code:
        if "raises-exception" not in c.metadata.get("tags", ()):
            assert not any(o.output_type == "error" for o in c.outputs), c.source


@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_checked_cells_and_magics(src) -> None:  # type: ignore[no-untyped-def]
    nb = _notebook(src.stem)
    checked = [c for c in nb.cells if CHECK_TAG in c.metadata.get("tags", ())]
    assert checked, f"{src.stem}: no cell is compared by nbval"
    assert all(output_text(c.outputs).strip() for c in checked), "a checked cell has no stored text"
    for c in nb.cells:
        lines = c.source.splitlines() if c.cell_type == "code" else []
        magic_lines = [i for i, line in enumerate(lines) if line.startswith("%%")]
        assert magic_lines in ([], [0]), f"a cell magic must be the first line of its cell: {c.source[:80]!r}"


# ------------------------------------------------------------------------------------- execution


@pytest.mark.notebook
@pytest.mark.parametrize("src", SOURCES, ids=IDS)
def test_notebook_runs_and_checked_outputs_match(src) -> None:  # type: ignore[no-untyped-def]
    stored = _notebook(src.stem)
    nb = copy.deepcopy(stored)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(NB_DIR)}}
    ).execute()
    for i, (ran, ref) in enumerate(zip(nb.cells, stored.cells, strict=True)):
        if ran.cell_type != "code":
            continue
        errors = [o for o in ran.outputs if o.output_type == "error"]
        if "raises-exception" not in ran.metadata.get("tags", ()):
            assert not errors, f"cell {i} failed: {errors}"
        stderr = [o for o in ran.outputs if o.output_type == "stream" and o.name == "stderr"]
        assert not any("UsageError" in o.text for o in stderr), f"cell {i}: {stderr}"
        if CHECK_TAG in ran.metadata.get("tags", ()):
            assert output_text(ran.outputs) == output_text(ref.outputs), f"cell {i} output changed"
