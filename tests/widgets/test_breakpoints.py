"""Breakpoints in timeline replays: ``Timeline.replay(..., stop_when=...)``, ``resume``, ``explain_stop``."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from workbench.demo.examples import EXAMPLES
from workbench.engine import TraceKind, TraceRecord
from workbench.engine.runtime import Engine
from workbench.errors import CepError
from workbench.language.compile import compile_pattern
from workbench.widgets import Timeline
from workbench.widgets.breakpoints import breakpoint_of, describe

COUNTING = """group tries
    on login(user as U)
    @and @timeout(1s) {
        @count(3) failed: failed(user = U)
    }"""
EVENTS = [
    {"type": "login", "time": 0, "key": "ann", "user": "ann"},
    {"type": "failed", "time": 10, "key": "ann", "user": "ann"},
    {"type": "failed", "time": 20, "key": "ann", "user": "ann"},
    {"type": "failed", "time": 30, "key": "ann", "user": "ann"},
]


def _replay(pattern: Any, events: Any, **kw: Any) -> tuple[Timeline, Engine]:
    engine = Engine([pattern], trace=True)
    tl = Timeline.from_engine(engine)

    async def main() -> None:
        await tl.replay(engine, events, delay=0, **kw)

    asyncio.run(main())
    return tl, engine


def _resume(tl: Timeline) -> None:
    async def main() -> None:
        await tl.resume()

    asyncio.run(main())


def test_counted_stops_at_the_second_of_three_and_resume_goes_on() -> None:
    tl, engine = _replay(compile_pattern(COUNTING), EVENTS, stop_when="counted 2/3")
    stop = tl.stopped_at
    assert stop is not None
    assert stop.kind is TraceKind.COUNTED
    assert dict(stop.detail) == {"count": 2, "of": 3}
    assert stop.time == 20
    assert tl.time == 20, "the cursor sits at the breakpoint's moment"
    assert not engine.detections, "the replay stopped before the third failure"
    assert "stopped at counted 2/3 on failed" in tl.status.value
    assert tl.sources["highlight"].data["time"] == [20]
    story = tl.explain_stop()
    assert "key='ann' instance" in story
    assert "counted failed" in story
    assert "at the breakpoint (t=20)" in story
    assert "t=30" not in story, "explain shows the instance at that moment, not later"
    _resume(tl)
    assert tl.stopped_at is None
    assert len(engine.detections) == 1


def test_paused_held_back_and_violated_words() -> None:
    tl, _ = _replay(EXAMPLES["or_paused"].group, EXAMPLES["or_paused"].events, stop_when="resumed on id1")
    assert tl.stopped_at is not None
    assert tl.stopped_at.element == "id1"
    assert tl.stopped_at.time == 504
    logout = [
        {"type": "login", "time": 0, "key": "u", "fields": {"user": "u", "ip": "1"}},
        {"type": "logout", "time": 5, "key": "u", "fields": {"user": "u", "ip": "1"}},
    ]
    tl, _ = _replay(EXAMPLES["and_not"].group, logout, stop_when="violated")
    assert tl.stopped_at is not None
    assert tl.stopped_at.kind is TraceKind.VIOLATED
    assert breakpoint_of("held back")(TraceRecord(1, "p", "k", 1, TraceKind.HELD))
    assert breakpoint_of("paused")(TraceRecord(1, "p", "k", 1, TraceKind.PAUSED, "c"))
    assert not breakpoint_of("paused on d")(TraceRecord(1, "p", "k", 1, TraceKind.PAUSED, "c"))


def test_a_predicate_and_a_breakpoint_that_never_holds() -> None:
    tl, engine = _replay(compile_pattern(COUNTING), EVENTS, stop_when=lambda r: r.event_seq == 2)
    assert tl.stopped_at is not None
    assert tl.stopped_at.event_seq == 2
    tl, engine = _replay(compile_pattern(COUNTING), EVENTS, stop_when="timed out")
    assert tl.stopped_at is None
    assert len(engine.detections) == 1, "ran to the end"
    with pytest.raises(CepError, match="no replay is stopped"):
        tl.resume()
    with pytest.raises(CepError, match="no replay is stopped"):
        tl.explain_stop()


@pytest.mark.parametrize("bad", ["sleeping", "counted two", "counted 2/x", 42])
def test_bad_breakpoints_are_named(bad: Any) -> None:
    with pytest.raises(CepError, match="stop_when"):
        breakpoint_of(bad)


def test_describe() -> None:
    r = TraceRecord(5, "p", "k", 3, TraceKind.COUNTED, "c", 1, {"count": 2, "of": 3})
    assert describe(r) == "counted 2/3 on c: p#3 key=k at t=5"
