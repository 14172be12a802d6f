"""Leading and standalone absence (``not a for D``), against brute-force silence oracles."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import Engine, run
from workbench.engine.nfa import SequencePattern, Stage
from workbench.engine.nfa.absence import AbsencePattern, Silence
from workbench.errors import PatternError

Raw = dict[str, Any]


def _events(spec: list[tuple[str, int, str, int]]) -> list[Raw]:
    return [{"type": t, "time": time, "key": k, "v": v} for t, time, k, v in spec]


events_strategy = st.lists(
    st.tuples(st.sampled_from("ab"), st.integers(0, 6), st.sampled_from(["k1", "k2"]), st.integers(-1, 2)),
    max_size=25,
).map(
    lambda rows: _events([(t, sum(r[1] for r in rows[: i + 1]), k, v) for i, (t, _, k, v) in enumerate(rows)])
)


def _breaks(e: Raw) -> bool:
    return e["type"] == "a" and e["v"] > 0


def silence_oracle(events: list[Raw], d: int, every: bool) -> list[tuple[str, int, int]]:
    """(key, start, end) of each proved silence. The clock is the stream's (any key's event moves
    it); at one time events come before timers; the final flush proves each pending silence once."""
    out: list[tuple[str, int, int]] = []
    start: dict[str, float | None] = {}
    for e in events:
        for key, s in start.items():
            while s is not None and s + d < e["time"]:  # proofs strictly before the event
                out.append((key, int(s), int(s + d)))
                s = s + d if every else None
            start[key] = s
        if _breaks(e) or e["key"] not in start:
            start[e["key"]] = e["time"]
    out.extend((key, int(s), int(s + d)) for key, s in start.items() if s is not None)
    return sorted(out)


def leading_oracle(events: list[Raw], d: int, every: bool) -> list[tuple[str, int, int, int]]:
    """Per key: (key, start, end, seq of b) for ``not a for d followed by b where e.v >= 0``."""
    out: list[tuple[str, int, int, int]] = []
    for key in sorted({e["key"] for e in events}):
        start: float | None = None
        opened: tuple[float, float] | None = None
        seen = False
        for e in (e for e in events if e["key"] == key):
            if start is not None and start + d < e["time"]:
                opened, start = (start, start + d), None
            if _breaks(e):
                start, seen, opened = e["time"], True, None
                continue
            if not seen:
                start, seen = e["time"], True
            if opened is not None and e["type"] == "b" and e["v"] >= 0:
                out.append((key, int(opened[0]), int(opened[1]), e["seq"]))
                opened = None
                start = e["time"] if every else None
    return sorted(out)


def _silence(every: bool, d: int) -> Silence:
    return Silence("a", d, ("a",), "e.v > 0", every)


@settings(max_examples=150, deadline=None)
@given(events_strategy, st.integers(1, 8), st.booleans())
def test_standalone_silences_match_the_oracle(events: list[Raw], d: int, every: bool) -> None:
    result = run([AbsencePattern("q", _silence(every, d))], events)
    got = sorted(
        (str(x.key), x.measures["silence_start"], x.measures["silence_end"]) for x in result.detections
    )
    assert got == silence_oracle(events, d, every)
    assert all(
        x.events == () and x.negated == ("a",) and x.time == x.measures["silence_end"]
        for x in result.detections
    )


@settings(max_examples=150, deadline=None)
@given(events_strategy, st.integers(1, 8), st.booleans())
def test_leading_silences_match_the_oracle(events: list[Raw], d: int, every: bool) -> None:
    then = SequencePattern("q", (Stage("b", "e.v >= 0", types=("b",)),))
    result = run([AbsencePattern("q", _silence(every, d), then)], events)
    got = sorted(
        (str(x.key), x.measures["silence_start"], x.measures["silence_end"], x.events[0].seq)
        for x in result.detections
    )
    for i, e in enumerate(events):
        e["seq"] = i
    assert got == leading_oracle(events, d, every)


def test_a_long_silence_is_reported_every_period_with_every() -> None:
    events = _events([("a", 0, "k", 1), ("b", 100, "k", 0), ("a", 105, "k", 1)])
    once = run([AbsencePattern("q", _silence(False, 30))], events, until=200)
    again = run([AbsencePattern("q", _silence(True, 30))], events, until=200)
    assert [(x.measures["silence_start"], x.time) for x in once.detections] == [(0, 30), (105, 135)]
    assert [x.time for x in again.detections] == [30, 60, 90, 135, 165, 195]


def test_an_absent_event_exactly_at_the_end_breaks_the_silence() -> None:
    events = _events([("a", 0, "k", 1), ("a", 30, "k", 1), ("b", 61, "k", 0)])
    result = run([AbsencePattern("q", _silence(False, 30))], events, until=61)
    assert [(x.measures["silence_start"], x.time) for x in result.detections] == [(30, 60)]


def test_a_key_never_seen_has_no_silence_and_a_where_filters_the_absent_events() -> None:
    events = _events([("a", 0, "k1", 1), ("a", 20, "k1", 0), ("b", 50, "k1", 0)])
    result = run([AbsencePattern("q", _silence(False, 30))], events, until=1000)
    assert [(x.key, x.time) for x in result.detections] == [("k1", 30)]  # a with v=0 does not count


def test_the_continuation_must_happen_during_the_silence() -> None:
    then = SequencePattern("q", (Stage("b", types=("b",)), Stage("c", types=("c",))))
    p = AbsencePattern("q", _silence(False, 10), then)
    broken = _events([("b", 0, "k", 0), ("b", 20, "k", 0), ("a", 25, "k", 1), ("c", 26, "k", 0)])
    kept = _events([("b", 0, "k", 0), ("b", 20, "k", 0), ("c", 26, "k", 0)])
    assert run([p], broken).detections == []
    (d,) = run([p], kept).detections
    assert [e.seq for e in d.events] == [1, 2]
    assert dict(d.measures) == {"silence_start": 0, "silence_end": 10}


def test_continuation_measures_and_timeouts_follow_the_silence_columns() -> None:
    then = SequencePattern(
        "q",
        (Stage("b", types=("b",)), Stage("c", types=("c",))),
        within_ms=5,
        measures={"gap": "last(matched('c')).t - first(matched('b')).t"},
    )
    p = AbsencePattern("q", _silence(False, 10), then)
    result = run([p], _events([("x", 0, "k", 0), ("b", 11, "k", 0), ("c", 14, "k", 0), ("b", 40, "k", 0)]))
    (match,) = [d for d in result.detections if d.kind == "match"]
    assert list(match.measures) == ["silence_start", "silence_end", "gap"]
    assert match.measures["gap"] == 3
    assert match.measures.kinds["silence_end"] == "time"  # type: ignore[attr-defined]
    late = run([p], _events([("x", 0, "k", 0), ("b", 11, "k", 0), ("c", 17, "k", 0)]))
    (timeout,) = late.detections
    assert (timeout.kind, timeout.negated) == ("timeout", ("a",))
    assert (timeout.measures["silence_end"], [e.seq for e in timeout.events]) == (10, [1])


def test_processing_time_proves_a_silence_on_tick() -> None:
    now = [0.0]
    engine = Engine([AbsencePattern("q", _silence(True, 30))], time_mode="processing", clock=lambda: now[0])
    engine.process({"type": "a", "time": 0, "key": "k", "v": 1})
    now[0] = 29
    assert engine.tick() == []
    now[0] = 31
    (d,) = engine.tick()
    assert (d.measures["silence_start"], d.measures["silence_end"]) == (0, 30)
    now[0] = 45
    engine.process({"type": "a", "time": 0, "key": "k", "v": 1})  # breaks the re-armed silence
    now[0] = 70
    assert engine.tick() == []
    now[0] = 76
    assert [x.measures["silence_start"] for x in engine.tick()] == [45]


def test_a_snapshot_keeps_the_silence() -> None:
    p = AbsencePattern("q", _silence(False, 30), SequencePattern("q", (Stage("b", types=("b",)),)))
    engine = Engine([p])
    engine.process_many(_events([("a", 0, "k", 1), ("x", 40, "k", 0)]))
    again = Engine([p])
    again.restore(engine.snapshot())
    (d,) = again.process_many(_events([("b", 41, "k", 0)]))
    assert (d.measures["silence_end"], d.events[0].time) == (30, 41)


@pytest.mark.parametrize("bad", [0, -5, math.inf, math.nan, True, "5"])
def test_a_silence_needs_a_positive_finite_duration(bad: object) -> None:
    with pytest.raises(PatternError, match="finite duration > 0"):
        Silence("a", bad)  # type: ignore[arg-type]


def test_the_silence_condition_reads_only_the_event_and_measures_keep_their_names() -> None:
    with pytest.raises(PatternError, match="reads only the event"):
        AbsencePattern("q", Silence("a", 5, where="count(b) > 1")).compile()
    with pytest.raises(PatternError, match="silence's own column"):
        AbsencePattern(
            "q", Silence("a", 5), SequencePattern("q", (Stage("b"),), measures={"silence_end": "b.t"})
        )


def test_a_callable_condition_and_an_unnamed_continuation_work() -> None:
    p = AbsencePattern(
        "q", Silence("a", 10, ("a",), lambda e: e.v > 0), SequencePattern("other", (Stage("b"),))
    )
    assert p.then is not None
    assert p.then.name == "q"
    (d,) = run([p], _events([("a", 0, "k", 1), ("b", 11, "k", 0)])).detections
    assert d.pattern == "q"


def test_a_proved_silence_is_traced() -> None:
    result = run([AbsencePattern("q", _silence(False, 30))], _events([("a", 0, "k", 1)]), trace=True)
    (d,) = result.detections
    (rec,) = [r for r in result.trace if r.kind == "detected"]
    assert (rec.instance, rec.element, rec.time, dict(rec.detail)) == (
        d.instance,
        "a",
        30,
        {"silence_start": 0, "silence_end": 30},
    )


def test_a_key_keeps_one_pending_timer_however_many_absent_events_it_has() -> None:
    engine = Engine([AbsencePattern("q", _silence(True, 30))])
    engine.process_many(_events([("a", t, "k", 1) for t in range(0, 1000, 3)]))
    state = engine.state_of("q", "k")
    assert state.start == 999
    assert 999 - 30 < state.pending <= 999 + 30  # one timer, re-armed each time it fires early
    assert engine.keys["k"].timer_counts[0] == 1
    (d,) = engine.finish()
    assert (d.measures["silence_start"], d.time) == (999, 1029)


def test_one_event_completing_several_continuations_reports_the_silence_once() -> None:
    then = SequencePattern("q", (Stage("b", types=("b",)), Stage("c", types=("c",))))
    events = _events(
        [("a", 0, "k", 1), ("b", 11, "k", 0), ("b", 12, "k", 0), ("c", 13, "k", 0), ("c", 14, "k", 0)]
    )
    for every in (False, True):
        result = run([AbsencePattern("q", _silence(every, 10), then)], events)
        # the first match the continuation emits: of the two c@13 completes, the older partial match's
        assert [[e.seq for e in d.events] for d in result.detections] == [[1, 3]]


def test_a_timeout_before_the_first_match_is_kept_and_those_after_it_dropped() -> None:
    then = SequencePattern("q", (Stage("b", types=("b",)), Stage("c", types=("c",))), within_ms=5)
    events = _events([("a", 0, "k", 1), ("b", 11, "k", 0), ("b", 18, "k", 0), ("c", 19, "k", 0)])
    result = run([AbsencePattern("q", _silence(False, 10), then)], events)
    assert [(d.kind, [e.seq for e in d.events]) for d in result.detections] == [
        ("timeout", [1]),
        ("match", [2, 3]),
    ]


def test_the_continuation_reads_the_keys_whole_stream() -> None:
    # the key's events before the proof (the absent one too) are its stream: prev(e, n) and windows see them
    cond = "prev(e, 1).v == 7 and prev(e, 2).type == 'a' and count(e over last 100ms) == 2"
    then = SequencePattern("q", (Stage("b", cond, types=("b",)),))
    events = _events([("a", 0, "k", 1), ("b", 5, "k", 7), ("b", 20, "k", 0)])
    (d,) = run([AbsencePattern("q", _silence(False, 10), then)], events).detections
    assert ([e.seq for e in d.events], d.measures["silence_end"]) == ([2], 10)


def test_each_proof_opens_a_fresh_continuation_on_the_same_stream() -> None:
    then = SequencePattern(
        "q", (Stage("b", "count(e over last 3 events) == 3", types=("b",)), Stage("c", types=("c",)))
    )
    p = AbsencePattern("q", _silence(True, 10), then)
    events = _events(
        [("b", 0, "k", 0), ("b", 1, "k", 0), ("b", 11, "k", 0), ("a", 12, "k", 1), ("c", 13, "k", 0)]
    )
    events += _events([("b", 23, "k", 0), ("c", 24, "k", 0)])
    result = run([p], events)
    # b@11 opened a partial match the absent a@12 dropped; the proof at 22 starts afresh with b@23
    assert [[e.seq for e in d.events] for d in result.detections] == [[5, 6]]


def test_emit_into_turns_standalone_and_leading_silences_into_events() -> None:
    sink = SequencePattern("sink", (Stage("s", types=("quiet", "outage")),), emit_timeouts=False)
    quiet = AbsencePattern("quiet", _silence(False, 10), emit_into="quiet")
    then = SequencePattern("outage", (Stage("b", types=("b",)),), measures={"v": "first(matched('b')).v"})
    outage = AbsencePattern("outage", _silence(False, 10), then, emit_into="outage")
    events = _events([("a", 0, "k", 1), ("b", 15, "k", 3), ("x", 35, "k", 0)])
    result = run([quiet, outage, sink], events)
    derived = [d.events[0] for d in result.detections if d.pattern == "sink"]
    assert [(e.type, e.time, e.seq < -1, dict(e.fields)) for e in derived] == [
        ("quiet", 10, True, {"silence_start": 0, "silence_end": 10}),
        ("outage", 15, True, {"silence_start": 0, "silence_end": 10, "v": 3}),
    ]


def test_emit_into_is_the_patterns_and_its_continuations() -> None:
    then = SequencePattern("q", (Stage("b"),), emit_into="t")
    assert AbsencePattern("q", Silence("a", 5), then).emit_into == "t"
    given = AbsencePattern("q", Silence("a", 5), SequencePattern("q", (Stage("b"),)), emit_into="t")
    assert given.then is not None
    assert given.then.emit_into == "t"
    assert given == AbsencePattern("q", Silence("a", 5), then)
    with pytest.raises(PatternError, match="emits into 'u'"):
        AbsencePattern("q", Silence("a", 5), then, emit_into="u")
    with pytest.raises(PatternError, match="event type name"):
        AbsencePattern("q", Silence("a", 5), emit_into="")
