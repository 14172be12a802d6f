"""``diff_patterns``: the differences of two versions, checked against the two runs' detections."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from workbench.errors import CepError
from workbench.session.diff import diff_patterns
from workbench.session.session import CepSession

TEXT = """
sequence hot3
    partition by machine
    within 6h
    begin start: temp where e.celsius > 80
    followed by hot: temp where e.celsius > 80 times 3
sequence hot3b
    partition by machine
    within 6h
    begin start: temp where e.celsius > 80
    followed by hot: temp where e.celsius > THRESHOLD times 3
"""


def _readings(seed: int) -> pd.DataFrame:
    rng = random.Random(seed)
    t, rows = 0, []
    for _ in range(100):
        t += rng.randint(1, 3) * 900_000
        rows.append(
            {"time": t, "type": "temp", "machine": rng.choice("ab"), "celsius": rng.choice([50, 82, 85, 90])}
        )
    return pd.DataFrame(rows)


def _signatures(s: CepSession, name: str) -> set[tuple[object, str, tuple[int, ...]]]:
    return {(d.key, d.kind, d.seqs) for d in s.detections(name)}


@pytest.mark.parametrize(("seed", "threshold"), [(1, 84), (2, 84), (3, 86), (4, 80)])
def test_counts_agree_with_the_two_runs(seed: int, threshold: int) -> None:
    s = CepSession()
    s.define(TEXT.replace("THRESHOLD", str(threshold)))
    result = diff_patterns(s, "hot3", "hot3b", _readings(seed))
    old, new = _signatures(s, "hot3"), _signatures(s, "hot3b")
    frame = result.frame
    changes = frame.change.value_counts().to_dict()
    assert changes.get("changed", 0) + changes.get("removed", 0) == len(old - new)
    assert changes.get("changed", 0) + changes.get("added", 0) == len(new - old)
    assert f"{len(old & new)} unchanged" in result.text.splitlines()[0]
    if threshold == 80:  # the same pattern twice: no difference
        assert frame.empty
    for row in frame.itertuples():
        if row.change == "changed":
            assert row.diverged.startswith("old t=")
            assert "; new t=" in row.diverged


def test_a_threshold_change_shows_the_rejection() -> None:
    s = CepSession()
    s.define(TEXT.replace("THRESHOLD", "84"))
    result = diff_patterns(s, "hot3", "hot3b", _readings(1))
    assert "`e.celsius > 84`: 82 > 84 is false" in result.text
    assert "first difference: old" in result.text


def test_the_same_name_twice_is_an_error() -> None:
    s = CepSession()
    s.define(TEXT.replace("THRESHOLD", "84"))
    with pytest.raises(CepError, match="two different patterns"):
        diff_patterns(s, "hot3", "hot3", _readings(1))
