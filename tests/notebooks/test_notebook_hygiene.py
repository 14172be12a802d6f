"""What the notebooks teach: the public session API, and times as the workbench gives them.

A notebook that turns epoch milliseconds into dates by hand (``unit="ms"``, ``/ 1000``) teaches a
workaround the workbench no longer needs; one that reaches the session through
``find_line_magic(...).__self__`` teaches a private path (``workbench.jupyter.current_session()``).
"""

from __future__ import annotations

import re

import pytest

from tests.notebooks._nb import SOURCES

HAND_DATES = re.compile(r"""unit\s*=\s*["']ms["']|/\s*1000\b|//\s*60_000|\.emit_time\s*/""")
PRIVATE = re.compile(r"find_line_magic|__self__")


def _code(src) -> str:  # type: ignore[no-untyped-def]
    """The code lines of a notebook source (markdown cells are ``# `` comments)."""
    return "\n".join(line for line in src.read_text().splitlines() if not line.startswith("#"))


@pytest.mark.parametrize("src", SOURCES, ids=[s.stem for s in SOURCES])
def test_no_notebook_converts_engine_times_by_hand(src) -> None:  # type: ignore[no-untyped-def]
    found = HAND_DATES.findall(_code(src))
    assert found == [], f"{src.name} converts times by hand: {found}"


@pytest.mark.parametrize("src", SOURCES, ids=[s.stem for s in SOURCES])
def test_notebooks_use_current_session(src) -> None:  # type: ignore[no-untyped-def]
    code = _code(src)
    assert PRIVATE.findall(code) == []
    if "cep." in code:
        assert "current_session()" in code
