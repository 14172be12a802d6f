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

from tests.conformance.flinkdiff import Drawn, compare, default_flink_lib, draw, oracle

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


#: Found by seed 20261204 (case 931, shrunk to one event): ``b, notFollowedBy(b, sum(s0) < 4 | d),
#: followedByAny c{2,} optional greedy until b``. Flink's NFA throws a NullPointerException
#: (``NFA.findFinalStateAfterProceed``) while it evaluates a condition, and hands it on wrapped in a
#: FlinkRuntimeException ("Failure happened in filter function").
FLINK_NPE_IN_A_CONDITION = (
    "case\tnpe\tno_skip\t-\t3\t9223372036854775807\t0\n"
    "stage\ts0\tbegin\t1\t-1\t0\t0\trelaxed\tb,>=,4\t-\t-1\t-1\n"
    "stage\ts1\tnotFollowedBy\t1\t1\t0\t0\trelaxed\tb,sum,s0,0,<,4|d\t-\t-1\t-1\n"
    "stage\ts2\tfollowedByAny\t2\t-1\t1\t1\tstrict\tc,<,3\tb\t-1\t-1\n"
    "event\t40\tb\t5.0\n"
    "end\n"
)


def test_flinks_own_failure_inside_a_condition_is_no_oracle(tmp_path: Path) -> None:
    # A failure of Flink itself says nothing about what the pattern means: no expectation (a
    # "crash"), not a refusal the engine would have to repeat (an "error")
    lib = default_flink_lib()
    if lib is None or shutil.which("javac") is None:
        pytest.skip("needs javac and Flink 2.3.0's jars (make setup-flink)")
    flink = oracle([Drawn({"id": "npe"}, FLINK_NPE_IN_A_CONDITION)], lib, tmp_path / "classes")
    assert "crash" in flink["npe"], flink
    assert "error" not in flink["npe"]
