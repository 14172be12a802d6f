"""Random sequence patterns against Flink CEP 2.3.0's own NFA (the oracle; see ``flinkdiff.py``).

Needs a JDK (``javac``) and Flink's jars (``make setup-flink``): run with the Flink suite,
``.venv-flink/bin/python -m pytest -m flink tests/conformance/test_flink_nfa_oracle.py``. A longer
run: ``python -m tests.conformance.flinkdiff --cases 5000 --seed N`` (differing cases are written
to ``artifacts/flinkdiff/`` as conformance cases).
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from tests.conformance.flinkdiff import compare, default_flink_lib, draw, oracle

pytestmark = pytest.mark.flink


@pytest.mark.parametrize(("seed", "flink_order"), [(11, True), (12, True), (13, False)])
def test_random_patterns_match_as_in_flinks_nfa(seed: int, flink_order: bool, tmp_path: Path) -> None:
    # flink_order off: the engine's own plans and tie order, so no skip strategy is drawn (which
    # of several equal-start matches a skip keeps is where the two orders differ, by design)
    lib = default_flink_lib()
    if lib is None or shutil.which("javac") is None:
        pytest.skip("needs javac and Flink 2.3.0's jars (make setup-flink)")
    rng = random.Random(seed)
    drawn = [draw(rng, i, skips=flink_order) for i in range(300)]
    flink = oracle(drawn, lib, tmp_path / "classes")
    assert len(flink) == len(drawn)
    # the draw must exercise the engine: matches, timeouts and patterns Flink refuses all occur
    assert sum(bool(r["expected"]) for r in flink.values()) > 50
    assert sum(bool(r["expected_timeouts"]) for r in flink.values()) > 20
    assert sum("error" in r for r in flink.values()) > 10
    failed = compare(drawn, flink, flink_order=flink_order)
    assert not failed, json.dumps(
        [{"case": case, "diffs": diffs[:4]} for case, diffs in failed[:3]], indent=1
    )
