"""``Engine.process`` (one event per call, through the one-event step) against ``process_many``.

The step binds the engine's key table, timers and timer counter when it is made; a snapshot
replaces the counter and a restore replaces all three, so each must make the engine build another.
Hypothesis feeds random streams (late, out-of-order and equal-time events, several keys) to every
plan and family, one call per event with snapshots and a restore in between, and compares what
one ``process_many`` call over the same events gives.
"""

from __future__ import annotations

import warnings
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.test_snapshot_fuzz import patterns
from workbench.engine.detection import Detection
from workbench.engine.runtime import Engine

KINDS = "abcx"


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    """Mostly rising times, some equal, some going back (late); keys k0-k2; prices 0-10."""
    n = draw(st.integers(1, 60))
    t, out = 0, []
    for _ in range(n):
        t += draw(st.sampled_from((0, 1, 3, 9, 25, 41, -4)))
        out.append(
            {
                "type": draw(st.sampled_from(KINDS)),
                "time": t,
                "key": f"k{draw(st.integers(0, 2))}",
                "price": float(draw(st.integers(0, 10))),
            }
        )
    return out


def _engine() -> Engine:
    return Engine(patterns())  # type: ignore[arg-type]


def _quiet(engine: Engine, events: list[dict[str, Any]], per_event: bool) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if per_event:
            for e in events:
                engine.process(e)
        else:
            engine.process_many(events)


def _full(engine: Engine) -> list[tuple[object, ...]]:
    """Every detection with its instance id, in emission order, and the late events' positions."""
    return [
        *((d.pattern, d.key, d.instance, d.kind, d.time, d.seqs) for d in engine.detections),
        ("late", tuple(e.seq for e in engine.late)),
    ]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.data())
def test_one_call_per_event_gives_what_one_call_for_all_gives(
    events: list[dict[str, Any]], data: st.DataObject
) -> None:
    want = _engine()
    _quiet(want, events, per_event=False)
    want.finish()

    got = _engine()
    cuts = sorted(set(data.draw(st.lists(st.integers(0, len(events)), max_size=3))))
    done = 0
    for cut in cuts:  # why: snapshot() replaces the timer counter the step had bound
        _quiet(got, events[done:cut], per_event=True)
        got.snapshot()
        timers = got._timers
        assert len({seq for _, seq, *_ in timers}) == len(timers)
        done = cut
    _quiet(got, events[done:], per_event=True)
    got.finish()
    assert _full(got) == _full(want)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(streams(), st.data())
def test_a_restore_into_an_engine_that_already_stepped_rebinds_the_step(
    events: list[dict[str, Any]], data: st.DataObject
) -> None:
    cut = data.draw(st.integers(0, len(events)))
    first = _engine()
    _quiet(first, events[:cut], per_event=True)
    blob = first.snapshot()
    whole = _engine()
    _quiet(whole, events, per_event=True)
    whole.finish()

    second = _engine()
    _quiet(second, [{"type": "a", "time": 10**9, "key": "elsewhere", "price": 1.0}], per_event=True)
    before = len(second.detections)
    second.restore(blob)  # why: replaces the key table and the timers the step had bound
    _quiet(second, events[cut:], per_event=True)
    second.finish()
    # the restored run goes on exactly as the uninterrupted one went on from the cut
    assert _rows(second.detections[before:]) == _rows(whole.detections[len(first.detections) :])
    assert [e.seq for e in second.late] == [e.seq for e in whole.late]


def _rows(detections: list[Detection]) -> list[tuple[object, ...]]:
    return [(d.pattern, d.key, d.instance, d.kind, d.time, d.seqs) for d in detections]
