"""``--backend`` in the conformance runner: sequence cases become backend scripts, or FAIL with why."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import pytest

from workbench import backends
from workbench.backends import AdvanceTime, BackendError, cases
from workbench.backends.base import Input, PatternLike
from workbench.backends.cases import BackendJobError, run_case_inputs
from workbench.conformance import runner, sequences
from workbench.conformance.runner import RunOptions
from workbench.engine.runtime import RunResult

CASES = Path(__file__).resolve().parents[1] / "data" / "conformance"
FLINK_CASES = CASES / "flink"


def _case(name: str) -> dict[str, Any]:
    path = FLINK_CASES / f"{name}.json"
    case: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return case


def _sequence_cases() -> list[dict[str, Any]]:
    out = []
    for path in sorted(CASES.rglob("*.json")):
        case = json.loads(path.read_text(encoding="utf-8"))
        if case["pattern"].get("kind") == "sequence":
            out.append(case)
    return out


def test_operator_case_script_has_the_watermarks_and_no_final_flush() -> None:
    case = _case("CEPOperatorTest__testCEPOperatorLateRecordsMetric")
    script = sequences.backend_script(case, sequences.build_pattern(case["pattern"]))
    assert not isinstance(script, str)
    marks = [i.watermark for i in script.inputs if isinstance(i, AdvanceTime)]
    expected = [w["wm"] for w in case["operator"]["watermarks"]]
    assert expected == marks
    assert len(case["events"]) == len(script.inputs) - len(marks)
    assert script.finish is False


def test_timed_harness_case_is_not_reproducible() -> None:
    case = next(c for c in _sequence_cases() if "operator" not in c and c["pattern"].get("within_ms"))
    reason = sequences.backend_script(case, sequences.build_pattern(case["pattern"]))
    assert isinstance(reason, str)
    assert "time window" in reason


def test_out_of_order_harness_case_is_not_reproducible() -> None:
    pattern = sequences.build_pattern({"stages": [{"name": "a", "where": "e.type == 'a'"}]})
    case = {"events": [{"type": "a", "t": 5}, {"type": "a", "t": 3}]}
    reason = sequences.backend_script(case, pattern)
    assert isinstance(reason, str)
    assert "event #1 at t=3 after t=5" in reason


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Route the adapter's backend runs to the local backend, recording the backend asked for."""
    asked: list[str] = []

    def local(backend: str, patterns: Sequence[PatternLike], inputs: Iterable[Input], **kw: Any) -> RunResult:
        asked.append(backend)
        return run_case_inputs("local", patterns, inputs, **kw)

    monkeypatch.setattr(sequences, "run_case_inputs", local)
    return asked


def test_every_sequence_case_passes_as_a_script_or_fails_with_the_reason(calls: list[str]) -> None:
    results = {c["id"]: sequences.run_case(c, RunOptions(backend="flink")) for c in _sequence_cases()}
    reason = "not reproducible on backend 'flink'"
    refused = {i: d for i, d in results.items() if d and d[0].startswith(reason)}
    failing = {i: d for i, d in results.items() if d and i not in refused}
    assert failing == {}
    assert all(len(d) == 1 for d in refused.values())
    assert set(calls) == {"flink"}
    assert len(calls) >= 130  # 11 operator cases, 119 untimed in-order harness cases (2 with runtime errors)
    assert 35 <= len(refused) <= 45  # the harness cases with time windows or out-of-order events


def test_a_wrong_backend_result_fails_the_case(monkeypatch: pytest.MonkeyPatch) -> None:
    def nothing(name: str, patterns: Sequence[PatternLike], inputs: Iterable[Input], **_: Any) -> RunResult:
        return RunResult([], [], [], [])

    monkeypatch.setattr(sequences, "run_case_inputs", nothing)
    diffs = sequences.run_case(_case("CEPITCase__testSimplePatternCEP"), RunOptions(backend="flink"))
    assert diffs
    assert diffs[0].startswith("missing matches")


class _FailingJob:
    name = "failing"

    def __init__(self, text: str) -> None:
        self.text = text

    def run(self, *args: Any, **kwargs: Any) -> RunResult:
        raise RuntimeError(self.text)


def test_failed_job_names_the_engine_error(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "Job failed.\nCaused by: <class 'workbench.errors.SkipStrategyError'>: could not skip to 'b'\n"
    monkeypatch.setattr(cases, "get_backend", lambda name, parallelism=1: _FailingJob(text))
    expected = "the flink job failed: SkipStrategyError: could not skip"
    with pytest.raises(BackendJobError, match=expected) as info:
        run_case_inputs("flink", [], [])
    assert info.value.engine_error == "SkipStrategyError"


def test_job_failing_elsewhere_does_not_satisfy_expect_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cases, "get_backend", lambda name, parallelism=1: _FailingJob("TaskManager lost"))
    case = _case("AfterMatchSkipITCase__testSkipToFirstNonExistentPosition")
    assert case.get("expect_error")
    diffs = sequences.run_case(case, RunOptions(backend="flink"))
    assert diffs == ["run failed: BackendJobError: the flink job failed: RuntimeError"]


def test_runner_stops_when_the_backend_cannot_load(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def missing(name: str, parallelism: int = 1) -> Any:
        raise BackendError("the flink backend needs PyFlink")

    monkeypatch.setattr(backends, "get_backend", missing)
    assert runner.main(["--backend", "flink", str(FLINK_CASES)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert ".venv-flink/bin/python -m workbench.conformance --backend flink" in captured.err


@pytest.mark.flink
@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_runner_runs_cases_on_flink(capsys: pytest.CaptureFixture[str]) -> None:
    names = [
        "CEPOperatorTest__testCEPOperatorLateRecordsMetric",  # operator: watermarks, late events
        "CEPITCase__testSimplePatternCEP",  # harness, untimed, in order
        "AfterMatchSkipITCase__testSkipToFirstNonExistentPosition",  # the job fails as expected
    ]
    status = runner.main([str(FLINK_CASES / f"{n}.json") for n in names] + ["--backend", "flink"])
    out = capsys.readouterr().out
    assert "3 passed, 0 failed" in out
    assert status == 0
