"""Variant Prova cases (tests/data/conformance/prova_variants/), written from the documented
semantics with other field names, keys and timings, run through the groups adapter."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workbench.conformance.groups import build_pattern, run_case
from workbench.conformance.runner import RunOptions
from workbench.engine.reactions import ReactionGroup
from workbench.errors import CepError

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance" / "prova_variants"
CASES = sorted(p.stem for p in DATA.glob("*.json"))


def load(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return case


def test_there_are_variant_cases() -> None:
    assert len(CASES) >= 6


@pytest.mark.parametrize("name", CASES)
def test_variant_case_passes(name: str) -> None:
    assert run_case(load(name), RunOptions()) == []


@pytest.mark.parametrize("name", CASES)
def test_variant_case_detects_a_dropped_event(name: str) -> None:
    case = load(name)
    if not case["expected"]:
        pytest.skip("no detection to disturb")
    wrong = copy.deepcopy(case)
    wrong["expected"][0]["events"] = wrong["expected"][0]["events"][:-1]
    assert run_case(wrong, RunOptions()) != []


def test_a_nested_group_is_referred_to_by_its_member_id() -> None:
    case = load("and_not_then_again")
    assert case["pattern"]["channels"][1]["after"] == "inner"
    case["pattern"]["channels"][1]["after"] = "g1"  # the group's own name works as well
    assert run_case(case, RunOptions()) == []


def test_exit_counts_flag_decides_whether_the_top_exit_counts() -> None:
    case = load("and_not_then_again")
    case["pattern"]["exit"] = {"counts": False}
    assert run_case(case, RunOptions()) == ["counter Count: expected 5, got 4"]


def test_prova_duration_strings_and_single_ids_are_read() -> None:
    case = load("or_stop_ids_then_timeout")
    case["pattern"]["timeout_ms"] = "0 minutes 300 ms"
    case["pattern"]["channels"][2]["stop_ids"] = "x"
    assert run_case(case, RunOptions()) == []
    pattern = build_pattern(case)
    assert isinstance(pattern, ReactionGroup)
    assert pattern.timeout_ms == 300
    case["pattern"]["timeout_ms"] = "3 sec"
    assert build_pattern(case).timeout_ms == 3000  # type: ignore[union-attr]
    case["pattern"]["timeout_ms"] = "soon"
    with pytest.raises(CepError, match="unreadable duration"):
        build_pattern(case)


def test_exit_result_is_not_compared() -> None:
    case = load("or_stop_ids_then_timeout")
    case["expected"][0]["exit_result"] = {"anything": 1}
    assert run_case(case, RunOptions()) == []


def test_the_blogs_count_in_an_or_group_reads_as_size() -> None:
    # The blog's or_not_count writes OR(NOT @count(2) login, logout); the code's version @size(2).
    path = DATA.parent / "prova" / "or_not_count.json"
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    channel = case["pattern"]["channels"][0]
    del channel["size"]
    channel["count"] = 2
    assert run_case(case, RunOptions()) == []
    channel["count"] = -1
    with pytest.raises(CepError, match="in an OR group"):
        run_case(case, RunOptions())


def test_a_raw_count_annotation_string_is_read() -> None:
    case = load("retrospective_strict_not")
    channel = case["pattern"]["channels"][1]
    for key in ("count_min", "count_max", "count_mode"):
        del channel[key]
    channel["count"] = "1, 1, strict"
    assert run_case(case, RunOptions()) == []
    channel["count"] = [1, 1, "strict"]
    assert run_case(case, RunOptions()) == []
    channel["count"] = "1,-1"  # at least one, record: s3 (no drop at all) now fails its close
    assert run_case(case, RunOptions()) != []
