"""Shared buffer: Dewey compatibility, events stored once, release, snapshot/restore."""

from __future__ import annotations

import pickle

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.oracle import feed, is_type, seqs
from workbench.engine.nfa import NFAMatcher, begin
from workbench.engine.nfa.buffer import SharedBuffer, compatible
from workbench.engine.runtime import Engine
from workbench.testing import NFATestHarness


def test_dewey_compatibility() -> None:
    assert compatible((1, 0, 0), (1, 0))  # prefix
    assert compatible((1, 2), (1, 1))  # same length, later last digit
    assert not compatible((1, 1), (1, 2))
    assert not compatible((1,), (1, 0))
    assert not compatible((2, 0, 0), (1, 0))


def combinations() -> object:
    return (
        begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).one_or_more()
        .allow_combinations().followed_by("c").where(is_type("c"))
    )  # fmt: skip


def test_worked_example_from_the_research_notes() -> None:
    # a b+ (allowCombinations) c over a b b b c: the four matches that start with b2
    got = sorted(seqs(feed(combinations().build("p"), "abbbc")))  # type: ignore[attr-defined]
    assert got == sorted([(0, 1, 2, 3, 4), (0, 1, 4), (0, 1, 3, 4), (0, 1, 2, 4)])


def test_each_event_is_stored_once_and_everything_is_released() -> None:
    p = combinations().within(10).build("p")  # type: ignore[attr-defined]
    h = NFATestHarness(NFAMatcher(p, specialise=False))  # the shared-buffer mode
    for i, t in enumerate("abbbb"):
        h.feed({"type": t, "time": i})
    state = h.state(None)
    assert len(state.buffer.events) == 5  # 5 events, many partial matches sharing them
    assert len(state.runs) > 5
    h.advance(100)  # every partial match times out
    assert not state.runs
    assert state.buffer.events == {}
    assert state.buffer.nodes == {}


def test_matched_events_released_after_emission() -> None:
    p = begin("a").where(is_type("a")).followed_by("b").where(is_type("b")).build("p")
    h = NFATestHarness(NFAMatcher(p, specialise=False))  # the shared-buffer mode
    for i, t in enumerate("ab"):
        h.feed({"type": t, "time": i})
    assert h.state(None).buffer.events == {}


def test_buffer_pickles() -> None:
    buf = SharedBuffer()
    from workbench.engine.events import Event

    node = buf.put("a", Event("a", 1, None, {}, 0), (1, 0), None, (1, 0))
    copy = pickle.loads(pickle.dumps(buf))
    assert copy.extract(node, (1, 0)) == [[("a", (1, 0))]]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.sampled_from("abcx"), min_size=2, max_size=14),
    st.data(),
    st.sampled_from(["no_skip", "skip_to_next"]),
    st.booleans(),
)
def test_snapshot_restore_at_a_random_event_gives_identical_detections(
    types: list[str], data: st.DataObject, skip: str, flink_order: bool
) -> None:
    p = combinations().within(6).skip(skip).build("p", flink_order=flink_order)  # type: ignore[attr-defined]
    events = [{"type": t, "time": i, "key": i % 2} for i, t in enumerate(types)]
    cut = data.draw(st.integers(0, len(events)))

    def key(d: object) -> tuple[object, ...]:
        return (d.kind, d.key, d.time, d.seqs, d.channels)  # type: ignore[attr-defined]

    straight = Engine([p])
    for e in events:
        straight.process(e)
    straight.finish()

    first = Engine([p])
    for e in events[:cut]:
        first.process(e)
    blob = first.snapshot()
    second = Engine([p])
    second.restore(blob)
    for e in events[cut:]:
        second.process(e)
    second.finish()
    assert [key(d) for d in first.detections + second.detections] == [key(d) for d in straight.detections]
