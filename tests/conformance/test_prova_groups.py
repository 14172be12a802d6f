"""Every Prova case of kind group / filter / not_applicable passes through the groups adapter."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from workbench.conformance.groups import build_pattern, case_events, run_case
from workbench.conformance.runner import RunOptions
from workbench.engine.reactions import ReactionGroup, Receive

DATA = Path(__file__).resolve().parents[1] / "data" / "conformance" / "prova"
KINDS = {"group", "filter", "not_applicable"}
SLOW = {"cep005"}  # 750 000 generated events


def load(name: str) -> dict[str, Any]:
    case: dict[str, Any] = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    return case


CASES = sorted(p.stem for p in DATA.glob("*.json") if load(p.stem)["pattern"]["kind"] in KINDS)


def test_all_prova_group_cases_are_covered() -> None:
    assert len(CASES) >= 33


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in CASES])
def test_case_passes(name: str) -> None:
    assert run_case(load(name), RunOptions()) == []


@pytest.mark.parametrize("name", ["and_not", "or_paused", "or_not_count", "stable_limit", "sensor_esper"])
def test_prova_head_output_is_not_reproduced(name: str) -> None:
    case = load(name)
    head = copy.deepcopy(case)
    head["expected"] = case["observed_head"]["expected"]
    head["expected_timeouts"] = case["observed_head"]["expected_timeouts"]
    assert run_case(head, RunOptions()) != []


def test_a_wrong_expectation_is_reported() -> None:
    case = load("or_stop")
    case["expected"][0]["events"] = [3]
    diffs = run_case(case, RunOptions())
    assert diffs
    assert "missing detections" in diffs[0]


def test_a_wrong_counter_is_reported() -> None:
    case = load("sensor_esper")
    case["assertions"]["TimeoutCount"] = 5
    assert run_case(case, RunOptions()) == ["counter TimeoutCount: expected 5, got 6"]


def test_a_wrong_tree_is_reported() -> None:
    case = load("or_not_and")
    case["expected"][0]["tree"][1]["events"] = [5]
    assert run_case(case, RunOptions()) != []


def test_not_applicable_with_events_fails() -> None:
    case = load("labels")
    case["events"] = [{"t": 1, "type": "x"}]
    assert run_case(case, RunOptions()) != []


def test_patterns_are_built_from_the_engine_api() -> None:
    assert isinstance(build_pattern(load("or_and")), ReactionGroup)
    assert isinstance(build_pattern(load("cep005")), Receive)
    assert build_pattern(load("or_and")) == build_pattern(load("or_and"))


def test_generated_events_use_the_restricted_evaluator() -> None:
    events = case_events(load("last_a_fby_b_big"))
    assert len(events) == 30000
    assert events[2]["type"] == "logout"


def test_order_matters_is_honoured() -> None:
    case = load("or_paused")
    case["order_matters"] = True
    assert run_case(case, RunOptions()) == []
    case["expected"] = list(reversed(case["expected"]))
    assert run_case(case, RunOptions()) != []
