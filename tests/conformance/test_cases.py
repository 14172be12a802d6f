"""Every conformance case shipped in tests/data/conformance passes through the runner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.conformance.runner import RunOptions, run_case

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance"
CASES = sorted(DATA.rglob("*.json"))


def test_cases_are_present() -> None:
    assert len(list((DATA / "prova").glob("*.json"))) >= 30
    assert len(list((DATA / "flink").glob("*.json"))) >= 170


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case(path: Path) -> None:
    case = json.loads(path.read_text(encoding="utf-8"))
    result = run_case(case, RunOptions(), str(path))
    assert result.passed, "\n".join(result.diffs)
