"""The cost view's numbers: live partial matches per stage and key, and the growth warnings."""

from __future__ import annotations

import random

import pytest

from workbench.demo.examples import EXAMPLES
from workbench.engine.nfa.eventonly import EventOnlyPlan
from workbench.engine.nfa.matcher import NFAMatcher
from workbench.engine.nfa.plans import PlanState
from workbench.engine.runtime import Engine
from workbench.language.compile import compile_pattern
from workbench.session.cost import causes_of, live_by_element, measure_cost

ANY = (
    "sequence grows"
    " begin a where e.type == 'a'"
    " followed by any b where e.type == 'b' followed by c where e.type == 'c'"
)
BOUNDED = (
    "sequence bounded within 50ms"
    " begin a where e.type == 'a'"
    " followed by b where e.type == 'b' followed by c where e.type == 'c'"
)
LOOP = (
    "sequence loop"
    " begin a where e.type == 'a'"
    " followed by b where e.type == 'b' one or more followed by c where e.type == 'c'"
)
COMBI = (
    "sequence combi within 1h"
    " begin a where e.type == 'a'"
    " followed by b where e.type == 'b' times 2 allow combinations"
)

EVENT_ONLY = (
    "sequence eventonly within 1h"
    " begin a: a"
    " followed by any b: b times 2..4 allow combinations"
    " followed by any c: x"
)


def _events(n: int = 240, seed: int = 1) -> list[dict[str, object]]:
    rnd = random.Random(seed)
    return [{"type": rnd.choice("aabx"), "time": t * 10, "key": f"k{t % 3}"} for t in range(n)]


@pytest.mark.parametrize("text", [ANY, BOUNDED, LOOP, COMBI, EVENT_ONLY])
def test_the_live_counts_are_the_engines_partial_matches(text: str) -> None:
    pattern = compile_pattern(text)
    engine = Engine([pattern])
    events = _events(90)
    for e in events:
        engine.process(e)
    for key in engine.keys:
        state = engine.state_of(pattern.name, key)
        total = state.partial_matches if isinstance(state, PlanState) else None
        by_stage = live_by_element(engine, pattern.name, key)
        assert "?" not in by_stage
        if total is not None:
            assert sum(by_stage.values()) == total


def test_the_event_only_plan_is_counted_by_stage_as_the_general_plan() -> None:
    pattern = compile_pattern(EVENT_ONLY)
    fast = Engine([NFAMatcher(pattern)])
    general = Engine([NFAMatcher(pattern, specialise=False)])
    assert isinstance(fast.matchers[0].plan, EventOnlyPlan)  # type: ignore[attr-defined]
    for i, t in enumerate("abbbxab"):
        fast.process({"type": t, "time": i, "key": "k"})
        general.process({"type": t, "time": i, "key": "k"})
        assert live_by_element(fast, "eventonly", "k") == live_by_element(general, "eventonly", "k")
    assert live_by_element(fast, "eventonly", "k") == {"b": 17, "c": 5}


def test_growth_is_named_and_bounded_state_is_not() -> None:
    report = measure_cost([compile_pattern(ANY), compile_pattern(BOUNDED)], _events(), every=5)
    assert len(report.warnings) == 1
    (warning,) = report.warnings
    assert warning.startswith("grows:")
    assert "`followed by any b`" in warning
    assert "no `within`" in warning
    frame = report.frame()
    assert list(frame.columns) == ["time", "pattern", "key", "element", "live"]
    assert set(frame["pattern"]) == {"grows", "bounded"}
    peaks = report.peaks()
    assert peaks.iloc[0]["pattern"] == "grows"
    totals = report.totals()
    grows = totals[totals["pattern"] == "grows"]["live"].tolist()
    assert grows[-1] > grows[len(grows) // 4] > 0


def test_causes_name_allow_combinations_and_a_group_without_timeout() -> None:
    assert any("`allow combinations` on b" in c for c in causes_of(compile_pattern(COMBI)))
    assert causes_of(compile_pattern(BOUNDED)) == []
    assert causes_of(EXAMPLES["and_not"].group) == []  # it has a @timeout
    forever = compile_pattern("group forever on login(user as U) @or { out: logout(user = U) }")
    assert causes_of(forever) == ["no `@timeout`: an instance that never completes lives forever"]


def test_groups_count_instances_and_their_channels() -> None:
    ex = EXAMPLES["or_paused"]
    report = measure_cost([ex.group], ex.events)
    frame = report.frame()
    assert {"(instance)", "id1", "c_logout", "c_update"} <= set(frame["element"])
    last = frame[frame["time"] == frame["time"].max()]
    assert set(last["key"]) == {"user1", "user2"}
    assert not report.warnings
