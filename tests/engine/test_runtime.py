"""The keyed runtime: validation, routing, event time, watermarks, timers, late events, snapshots."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import pytest

from workbench.engine import Detection, Engine, Event
from workbench.engine import run as run_events
from workbench.engine.matcher import Context
from workbench.engine.snapshot import register
from workbench.errors import CepError, EventError


@register  # a matcher defined outside the engine declares its state class for snapshots
@dataclass
class EchoState:
    seen: list[int] = field(default_factory=list)
    timers: list[tuple[float, Hashable]] = field(default_factory=list)


@dataclass(frozen=True)
class Echo:
    """A test matcher: emits one detection per event; schedules a timer ``delay`` after each."""

    name: str = "echo"
    types: frozenset[str] | None = None
    delay: int | None = None

    def event_types(self) -> frozenset[str] | None:
        return self.types

    def new_state(self, key: Hashable) -> EchoState:
        return EchoState()

    def process(self, state: EchoState, event: Event, ctx: Context) -> None:
        state.seen.append(event.seq)
        inst = ctx.new_instance()
        ctx.emit(Detection(self.name, ctx.key, inst, "match", ctx.now, (event,), ("x",)))
        if self.delay is not None:
            ctx.schedule(event.time + self.delay, ("t", event.seq))

    def on_timer(self, state: EchoState, time: float, token: Hashable, ctx: Context) -> None:
        state.timers.append((time, token))
        ctx.emit(Detection(self.name, ctx.key, 0, "timeout", time, (), ()))

    def is_idle(self, state: EchoState) -> bool:
        return False

    def compile(self) -> Echo:
        return self


def ev(t: float, typ: str = "a", key: Any = "k", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, **fields}


def test_bad_events_name_position_and_field() -> None:
    eng = Engine([Echo()])
    eng.process(ev(1))
    with pytest.raises(EventError, match=r"event #1.*'type'"):
        eng.process({"time": 2})
    with pytest.raises(EventError, match=r"event #2.*'time'"):
        eng.process({"type": "a"})
    with pytest.raises(EventError, match=r"event #3.*'time'.*str"):
        eng.process({"type": "a", "time": "soon"})
    with pytest.raises(EventError, match=r"event #4.*'key'.*unhashable|event #4.*'key'"):
        eng.process({"type": "a", "time": 5, "key": ["x"]})
    assert isinstance(EventError("x"), CepError)


def test_routing_by_type_and_key() -> None:
    eng = Engine([Echo("only_b", frozenset({"b"})), Echo("all")])
    out = eng.process(ev(1, "a"))
    assert [d.pattern for d in out] == ["all"]
    out = eng.process(ev(2, "b", key="other"))
    assert [d.pattern for d in out] == ["only_b", "all"]
    assert set(eng.keys) == {"k", "other"}


def test_events_before_timers_at_equal_time() -> None:
    eng = Engine([Echo(delay=10)])
    eng.process(ev(0))
    eng.process(ev(10))  # same instant as the timer of the first event: event first
    kinds = [(d.kind, d.time) for d in eng.detections]
    assert kinds == [("match", 0), ("match", 10)]
    eng.process(ev(11))
    assert [(d.kind, d.time) for d in eng.detections][2:] == [("timeout", 10), ("match", 11)]
    eng.finish()
    assert [(d.kind, d.time) for d in eng.detections][-2:] == [("timeout", 20), ("timeout", 21)]


def test_out_of_order_within_bound_is_sorted_and_late_is_counted() -> None:
    eng = Engine([Echo()], out_of_orderness=5)
    eng.process(ev(10))
    eng.process(ev(7))  # within the bound: sorted into place
    eng.process(ev(20))  # releases events <= 15
    assert [d.events[0].time for d in eng.detections] == [7, 10]
    eng.process(ev(3))  # behind the watermark (15): late
    assert eng.late_count == 1
    assert [e.time for e in eng.late] == [3]
    eng.finish()
    assert [d.events[0].time for d in eng.detections] == [7, 10, 20]


def test_advance_time_fires_timers_at_watermark_and_makes_older_events_late() -> None:
    eng = Engine([Echo(delay=5)])
    eng.process(ev(1))
    assert [d.kind for d in eng.advance_time(6)] == ["timeout"]
    eng.process(ev(6))
    assert eng.late_count == 1


def test_processing_time_mode_uses_clock() -> None:
    now = [1000.0]
    eng = Engine([Echo(delay=50)], time_mode="processing", clock=lambda: now[0])
    eng.process({"type": "a"} | {"time": 0})
    assert eng.detections[0].time == 1000.0
    now[0] = 1051.0
    assert [d.kind for d in eng.tick()] == ["timeout"]


def test_processing_time_needs_no_event_time_and_checks_the_clock() -> None:
    now: list[object] = [2000]
    eng = Engine([Echo(delay=50)], time_mode="processing", clock=lambda: now[0])
    eng.process({"type": "a", "key": "k"})  # the clock stamps it: no time field to give
    assert [(d.time, d.events[0].time) for d in eng.detections] == [(2000, 2000)]
    for bad in ("soon", None, float("nan"), float("inf"), True):
        now[0] = bad
        with pytest.raises(CepError, match="the processing-time clock returned"):
            eng.process({"type": "a", "key": "k"})
    now[0] = 1500  # a clock that steps back never moves time back
    eng.process({"type": "a", "key": "k"})
    assert eng.detections[-1].events[0].time == 2000


def test_snapshot_restore_round_trip() -> None:
    a = Engine([Echo(delay=3)])
    b = Engine([Echo(delay=3)])
    events = [ev(t, key=f"k{t % 3}") for t in range(20)]
    for e in events[:10]:
        a.process(e)
    b.restore(a.snapshot())
    for e in events[10:]:
        a.process(e)
        b.process(e)
    a.finish()
    b.finish()
    assert [(d.key, d.kind, d.time) for d in a.detections[-20:]] == [
        (d.key, d.kind, d.time) for d in b.detections[-20:]
    ]


def test_duplicate_pattern_name_rejected() -> None:
    with pytest.raises(CepError, match="already"):
        Engine([Echo(), Echo()])


def test_engine_imports_no_jupyter_or_pandas() -> None:
    code = (
        "import sys, workbench.engine, workbench.engine.runtime\n"
        "import pkgutil, importlib\n"
        "for m in pkgutil.walk_packages(workbench.engine.__path__, 'workbench.engine.'):\n"
        "    importlib.import_module(m.name)\n"
        "bad = [m for m in ('IPython', 'pandas', 'bokeh', 'ipywidgets', 'numpy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_process_many_equals_process_per_event() -> None:
    events = [ev(t, key=f"k{t % 3}") for t in (1, 2, 2, 5, 3, 7, 7, 9)]  # 3 arrives late
    a = Engine([Echo(delay=2)])
    for e in events:
        a.process(e)
    b = Engine([Echo(delay=2)])
    b.process_many([Event(e["type"], e["time"], e["key"]) for e in events])
    assert [(d.kind, d.time, d.seqs) for d in a.detections] == [
        (d.kind, d.time, d.seqs) for d in b.detections
    ]
    assert [e.seq for e in a.late] == [e.seq for e in b.late] == [4]


def test_idle_keys_are_released_but_instance_ids_stay_unique() -> None:
    @dataclass(frozen=True)
    class Once(Echo):
        def is_idle(self, state: EchoState) -> bool:
            return True

    eng = Engine([Once(name="once")])
    eng.process(ev(1))
    eng.process(ev(2))
    assert not eng.keys  # released after each event
    assert [d.instance for d in eng.detections] == [1, 2]


def test_wrong_typed_arguments_are_cep_errors_naming_them() -> None:
    with pytest.raises(CepError, match="order_by names fields"):
        Engine([Echo()], order_by=5)  # type: ignore[arg-type]
    with pytest.raises(CepError, match="run\\(\\) takes an iterable of events"):
        run_events([Echo()], 5)  # type: ignore[arg-type]
    with pytest.raises(CepError, match="state_of\\(\\): a key is hashable"):
        Engine([Echo()]).state_of("echo", [1])
