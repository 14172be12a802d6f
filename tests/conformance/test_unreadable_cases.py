"""One unreadable or malformed case file is one FAIL; the run goes on with the others."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workbench.conformance.runner import load_case, main, run_case

CASES = Path(__file__).parent.parent / "data" / "conformance"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"{not json", "not JSON"),
        (b"\xff\xfe{}", "is not UTF-8"),
        (b"[1, 2]", "a case is a JSON object with a 'pattern' object, got list"),
        (b'{"pattern": 3}', "a case is a JSON object with a 'pattern' object"),
        (b"[" * 100_000, "not JSON"),
    ],
)
def test_a_bad_case_file_is_one_failure_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, reason: str
) -> None:
    good = sorted((CASES / "flink").glob("*.json"))[:2]
    for path in good:
        shutil.copy(path, tmp_path / path.name)
    bad = tmp_path / "zz_bad.json"
    bad.write_bytes(content)
    assert main(["-q", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert f"FAIL {bad}: cannot read case: " in out
    assert reason in out
    assert out.rstrip().endswith("2 passed, 1 failed")
    assert isinstance(load_case(bad), str)


def test_a_case_file_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    source = sorted((CASES / "flink").glob("*.json"))[0]
    copy = tmp_path / "bom.json"
    copy.write_bytes(b"\xef\xbb\xbf" + source.read_bytes())
    case = load_case(copy)
    assert isinstance(case, dict)
    assert run_case(case, path=str(copy)).passed


def test_run_case_refuses_a_case_without_a_pattern_object() -> None:
    result = run_case({"pattern": [1]}, path="x.json")  # type: ignore[typeddict-item]
    assert not result.passed
    assert "'pattern' object" in result.diffs[0]


@pytest.mark.parametrize(
    ("edit", "reason"),
    [
        (lambda stage: stage.pop("name"), "pattern.stages[0]: no 'name'"),
        (
            lambda stage: stage["quantifier"].update(max=float("nan")),
            "pattern.stages[0]: cannot convert float NaN",
        ),
        (lambda stage: stage.update(contiguity="sideways"), "pattern.stages[0]: 'sideways' is not a valid"),
    ],
)
def test_a_malformed_stage_is_a_located_failure_not_a_crash(
    edit: Callable[[dict[str, Any]], None], reason: str
) -> None:
    source = CASES / "flink" / "AfterMatchSkipITCase__testSkipPastLast.json"
    case = json.loads(source.read_text(encoding="utf-8"))
    edit(case["pattern"]["stages"][0])
    result = run_case(case, path=str(source))
    assert not result.passed
    assert result.diffs[0].startswith(f"pattern rejected: CepError: {reason}"), result.diffs
