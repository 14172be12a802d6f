"""The Prova blog examples and the Flink W pattern, written in the language, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.conformance.runner import compare_detections, detection_to_expected
from workbench.engine import run
from workbench.language import compile_text
from workbench.session.inputs import load_events

DATA = Path(__file__).parent.parent / "data"
BLOG = {d.pattern.name: d.pattern for d in compile_text((DATA / "language" / "prova_blog.cep").read_text())}


@pytest.mark.parametrize("name", ["and_not", "or_stop", "or_paused", "or_not_count"])
def test_prova_blog_example(name: str) -> None:
    case = json.loads((DATA / "conformance" / "prova" / f"{name}.json").read_text(encoding="utf-8"))
    events = [
        {"type": e["type"], "time": e["t"], "key": e.get("key"), "fields": e.get("fields", {})}
        for e in case["events"]
    ]
    result = run(BLOG[name], events)
    expected = list(case["expected"]) + [dict(t, kind="timeout") for t in case.get("expected_timeouts", [])]
    actual = [detection_to_expected(d) for d in result.detections]
    assert compare_detections(expected, actual) == []


def test_flink_w_pattern() -> None:
    (w,) = compile_text((DATA / "language" / "w_shape.cep").read_text())
    assert w.partition == "symbol"
    events = load_events(DATA / "language" / "w_prices.csv", key="symbol")
    skipped = run(w.pattern, events).detections
    assert [list(d.seqs) for d in skipped if d.kind == "match"] == [[0, 2, 3, 4, 5]]
    # without the skip strategy both W shapes of the post (acdef and bcdef) are found
    text = (DATA / "language" / "w_shape.cep").read_text().replace("skip past last event", "")
    (unskipped,) = compile_text(text)
    matches = [list(d.seqs) for d in run(unskipped.pattern, events).detections if d.kind == "match"]
    assert matches == [[0, 2, 3, 4, 5], [1, 2, 3, 4, 5]]
