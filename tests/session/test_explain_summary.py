"""``%cep explain``'s summary: outcomes per instance, detections per kind, the most common reasons."""

from __future__ import annotations

import random
import re
from collections import Counter

import pandas as pd
import pytest

from workbench.session.session import CepSession

TEXT = """
event temp(machine, celsius)
sequence hot5
    partition by machine
    within 6h
    begin start: temp where e.celsius > 80
    followed by hot: temp where e.celsius > 80 times 5
group cooling
    on temp(machine as M) where e.celsius > 80
    @and @timeout(2h) {
        again: temp(machine = M) where e.celsius > 85
        @stop cooled: temp(machine = M) where e.celsius < 60
    }
"""


def _readings(seed: int, n: int = 160) -> pd.DataFrame:
    rng = random.Random(seed)
    t, rows = 0, []
    for _ in range(n):
        t += rng.randint(1, 3) * 900_000
        machine, celsius = rng.choice("ab"), rng.choice([50, 70, 85, 90])
        rows.append({"time": t, "type": "temp", "machine": machine, "celsius": celsius})
    return pd.DataFrame(rows)


def _session(seed: int) -> CepSession:
    s = CepSession()
    s.define(TEXT)
    data = _readings(seed)
    s.replay(["hot5"], data)
    s.replay(["cooling"], data)
    return s


def _n(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}es" if word == "match" else f"{n} {word}s"


def _detections(kinds: Counter[str]) -> str:
    return (
        f"{_n(kinds.total(), 'detection')} ({_n(kinds['match'], 'match')}, {_n(kinds['timeout'], 'timeout')})"
    )


def _header(text: str) -> str:
    return text.splitlines()[0]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_header_counts_outcomes_and_both_detection_kinds(seed: int) -> None:
    s = _session(seed)
    frame = s.matches("hot5")
    kinds = Counter(frame.kind)
    header = _header(s.explain("hot5"))
    instances = frame.groupby(["key", "instance"]).ngroups
    assert header.startswith(f"hot5: {instances} instances (")
    assert _detections(kinds) in header
    assert f"{kinds['timeout']} timed out" in header
    assert f"{kinds['match']} fired" in header


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_most_common_reason_counts_what_the_timeouts_had(seed: int) -> None:
    """Oracle: the timeout detections, counted by how many 'hot' events each had taken."""
    s = _session(seed)
    frame = s.matches("hot5")
    timeouts = frame[frame.kind == "timeout"]
    had = Counter(list(channels).count("hot") for channels in timeouts.channels)
    text = s.explain("hot5")
    found = re.search(
        r"most common reason: (\d+) of 5 'hot' events before the 6h timeout \((\d+) of (\d+)", text
    )
    assert found is not None, text
    k, n, missed = (int(g) for g in found.groups())
    assert n == max(had.values())
    assert had[k] == n
    assert missed == len(timeouts)


def test_header_counts_follow_the_key() -> None:
    s = _session(1)
    frame = s.matches("hot5")
    for key in ("a", "b"):
        mine = frame[frame.key == key]
        kinds = Counter(mine.kind)
        header = _header(s.explain("hot5", key=key))
        assert header.startswith(f"hot5 key={key!r}: {mine.groupby('instance').ngroups} instances")
        assert _detections(kinds) in header


def test_group_reasons_name_the_stop_channel_and_the_missing_channel() -> None:
    s = _session(1)
    text = s.explain("cooling")
    trace = s.runs["cooling"].trace
    stopped = {r.instance for r in trace if r.kind.value == "stopped"}
    assert f"{len(stopped)} stopped" in _header(text)
    assert f"stopped by 'cooled' ({len(stopped)} of" in text
    assert "no 'again' event before the 2h timeout" in text


def test_details_follow_on_request() -> None:
    s = _session(1)
    short = s.explain("hot5")
    assert "instance 1: " not in short
    assert "--all lists the" in short
    full = s.explain("hot5", details=True)
    assert full.startswith(_header(short))
    assert "key='a' instance 1: " in full


def test_a_few_instances_are_listed_after_the_summary() -> None:
    s = CepSession()
    s.define(TEXT)
    s.replay(["hot5"], _readings(1, n=8))
    text = s.explain("hot5")
    assert "--all" not in text
    assert "instance 1: " in text


def test_the_reason_names_the_timeout_that_expired_a_members_own_or_the_groups() -> None:
    s = CepSession()
    s.define(
        "group g\n    on login(user as U)\n    @and @timeout(400ms) {\n"
        "        @timeout(250ms) back: login(user = U)\n        out: logout(user = U)\n    }"
    )
    s.replay(["g"], pd.DataFrame({"type": ["login"], "time": [0], "user": ["ann"], "key": ["ann"]}))
    assert "no 'back' and no 'out' event before the 250ms timeout on 'back'" in s.explain("g")
