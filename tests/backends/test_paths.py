"""backend="flink": which path each pattern takes (native MATCH_RECOGNIZE or Python), and why."""

from __future__ import annotations

from benchmarks.patterns import api_patterns
from tests.backends.test_sql_query import EXPRESSIBLE
from workbench.backends.base import AdvanceTime, RunOptions
from workbench.backends.flink.paths import PathChoice, choose_paths
from workbench.engine.reactions.patterns import ReactionGroup

EVENTS = [{"type": "login", "key": "u", "t": 0}, {"type": "trade", "key": "u", "t": 5, "price": 120.0}]


def test_each_benchmark_pattern_gets_a_path_and_a_reason() -> None:
    patterns = list(api_patterns().values())
    choices = {c.pattern: c for c in choose_paths(patterns, EVENTS, RunOptions())}
    assert sorted(name for name, c in choices.items() if c.native) == sorted(EXPRESSIBLE)
    assert "'followed by any'" in choices["P2any"].describe()
    assert "runs on the Python path: no_skip with a quantified stage" in choices["P3"].describe()
    assert choices["P1"].describe() == "flink: pattern 'P1' runs natively (MATCH_RECOGNIZE, Flink's Java NFA)"


def test_the_input_or_options_can_keep_every_pattern_on_the_python_path() -> None:
    p1 = [api_patterns()["P1"]]
    late = [EVENTS[1], EVENTS[0]]
    assert "out of time order" in choose_paths(p1, late, RunOptions())[0].reasons[0]
    marks = [*EVENTS, AdvanceTime(10)]
    assert "AdvanceTime marks" in choose_paths(p1, marks, RunOptions())[0].reasons[0]
    assert "until, finish=False" in choose_paths(p1, EVENTS, RunOptions(finish=False))[0].reasons[0]
    assert choose_paths(p1, EVENTS, RunOptions()) == [PathChoice("P1", ())]


def test_a_reaction_group_takes_the_python_path() -> None:
    group = ReactionGroup("g")
    (choice,) = choose_paths([group], EVENTS, RunOptions())
    assert not choice.native
    assert "not a sequence pattern" in choice.describe()
