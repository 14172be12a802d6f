"""Flink CEP conformance cases through the sequence adapter, plus checks of the adapter itself."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from workbench.conformance import sequences
from workbench.conformance.runner import RunOptions

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance"
FLINK = sorted((DATA / "flink").glob("*.json"))
SEQUENCE_CASES = FLINK + [p for p in sorted((DATA / "prova").glob("*.json")) if '"sequence"' in p.read_text()]


def load(path: Path) -> dict[str, Any]:
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


def test_corpus_is_present() -> None:
    assert len(FLINK) >= 170
    assert len(SEQUENCE_CASES) > len(FLINK)


@pytest.mark.parametrize("path", SEQUENCE_CASES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_case_passes(path: Path) -> None:
    assert sequences.run_case(load(path), RunOptions()) == []


INDEXED = [
    p
    for p in FLINK
    if load(p)["pattern"].get("skip", "no_skip") == "no_skip" and not load(p).get("expect_error")
]


@pytest.mark.parametrize("path", INDEXED, ids=lambda p: p.stem)
def test_indexed_mode_finds_the_same_matches(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without Flink's heap order (the default, indexed mode) the multiset of matches is the same."""
    case = load(path)
    build = sequences.build_pattern

    def indexed(*args: Any, **kwargs: Any) -> Any:
        return dataclasses.replace(build(*args, **kwargs), flink_order=False)

    monkeypatch.setattr(sequences, "build_pattern", indexed)
    unordered = {**case, "order_matters": False}
    assert sequences.run_case(unordered, RunOptions()) == []


def test_adapter_reports_differences() -> None:
    case = load(DATA / "flink" / "NFAITCase__testSimplePatternNFA.json")
    wrong = {**case, "expected": [{**case["expected"][0], "events": [0]}]}
    diffs = sequences.run_case(wrong, RunOptions())
    assert diffs
    assert any("missing" in d for d in diffs)
    no_error = {**case, "expect_error": "should fail"}
    assert sequences.run_case(no_error, RunOptions())


def test_expected_errors_are_errors() -> None:
    for path in FLINK:
        case = load(path)
        if case.get("expect_error"):
            ok = {k: v for k, v in case.items() if k != "expect_error"}
            assert sequences.run_case(ok, RunOptions()), f"{path.stem} should fail without expect_error"


def test_by_stage_is_compared_on_timeouts_when_given() -> None:
    case = load(DATA / "flink" / "NFAStatusChangeITCase__testNFAChangedOnTimeoutWithoutPrune.json")
    right = {**case, "expected_timeouts": [{**case["expected_timeouts"][0], "by_stage": {"start": [0]}}]}
    assert sequences.run_case(right, RunOptions()) == []
    wrong = {**case, "expected_timeouts": [{**case["expected_timeouts"][0], "by_stage": {"end": [0]}}]}
    assert sequences.run_case(wrong, RunOptions()) != []
