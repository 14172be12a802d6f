"""Detections as events (``emit into``): the engine's derived events, their order and numbering, cycles."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.derived import FIRST_DERIVED_SEQ, find_cycle
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.nfa import SequencePattern, Stage
from workbench.engine.nfa.pattern import Quantifier, SkipStrategy
from workbench.engine.runtime import Engine, run
from workbench.errors import PatternError

BURST = SequencePattern(
    "burst",
    (Stage("f", types=("fail",), quantifier=Quantifier(3, 3)),),
    within_ms=10,
    skip=SkipStrategy("skip_past_last_event"),
    measures={"n": "count(matched('f'))", "first_at": "first(matched('f')).time"},
    emit_into="burst",
)
ATTACK = SequencePattern(
    "attack",
    (Stage("b", types=("burst",), quantifier=Quantifier(2, 2)),),
    within_ms=100,
    emit_timeouts=False,
    measures={"fails": "sum(matched('b').n)"},
)


def fails(*times: int, key: str = "ip") -> list[dict[str, object]]:
    return [{"type": "fail", "time": t, "key": key} for t in times]


def test_a_detection_becomes_an_event_of_its_type_with_its_measures_key_and_time() -> None:
    result = run([BURST, ATTACK], fails(1, 2, 3, 20, 21, 22))
    attack = [d for d in result.detections if d.pattern == "attack"]
    assert len(attack) == 1
    (a,) = attack
    assert [e.type for e in a.events] == ["burst", "burst"]
    assert [dict(e.fields) for e in a.events] == [{"n": 3, "first_at": 1}, {"n": 3, "first_at": 20}]
    assert [e.time for e in a.events] == [3, 22]  # the time of each burst's last event
    assert {e.key for e in a.events} == {"ip"}
    assert [e.seq for e in a.events] == [FIRST_DERIVED_SEQ, FIRST_DERIVED_SEQ - 1]
    assert dict(a.measures) == {"fails": 6}
    assert a.time == 22


def test_the_consumer_sees_derived_events_right_after_the_event_that_completed_them() -> None:
    engine = Engine([BURST, ATTACK])
    out = engine.process_many(fails(1, 2, 3, 20, 21))
    assert [d.pattern for d in out] == ["burst"]
    out = engine.process_many(fails(22))
    assert [d.pattern for d in out] == ["burst", "attack"]  # the same call: before the next input


def test_derived_events_take_no_input_position() -> None:
    engine = Engine([BURST, ATTACK])
    for raw in fails(1, 2, 3, 20, 21, 22, 23):
        engine.process(raw)
    engine.finish()
    seqs = sorted({e.seq for d in engine.detections for e in d.events if e.type == "fail"})
    assert seqs == list(range(7))  # input positions are 0, 1, 2, ... unbroken by the derived events
    assert engine.event_clock.next_seq == 7
    burst = [d for d in engine.detections if d.pattern == "burst" and d.kind == "match"]
    assert [d.seqs for d in burst] == [(0, 1, 2), (3, 4, 5)]


def test_timeouts_are_not_emitted() -> None:
    result = run([BURST, ATTACK], fails(1, 2, 50, 51, 52, 200, 201))
    kinds = [(d.pattern, d.kind) for d in result.detections]
    assert ("burst", "timeout") in kinds
    assert [d for d in result.detections if d.pattern == "attack"] == []  # one burst match only


def test_keys_stay_apart() -> None:
    events = sorted(fails(1, 2, 3, key="a") + fails(4, 5, 6, key="b"), key=lambda e: e["time"])
    result = run([BURST, ATTACK], events)
    assert [d for d in result.detections if d.pattern == "attack"] == []


def test_processing_time_and_out_of_orderness_derive_the_same() -> None:
    clock = itertools.count(1)
    live = Engine([BURST, ATTACK], time_mode="processing", clock=lambda: next(clock))
    for raw in fails(0, 0, 0, 0, 0, 0):
        live.process(raw)
    live.finish()
    assert [d.pattern for d in live.detections if d.kind == "match"] == ["burst", "burst", "attack"]
    buffered = Engine([BURST, ATTACK], out_of_orderness=5)
    buffered.process_many(fails(2, 1, 3, 21, 20, 22))
    buffered.finish()
    assert [d.pattern for d in buffered.detections if d.kind == "match"] == ["burst", "burst", "attack"]


def test_a_cycle_is_refused_and_leaves_the_engine_as_it_was() -> None:
    echo = SequencePattern("echo", (Stage("b", types=("burst",)),), emit_into="fail")
    engine = Engine([BURST])
    with pytest.raises(PatternError, match=r"cycle \('burst' emits into 'burst', which 'echo' reads"):
        engine.add(echo)
    assert [m.name for m in engine.matchers] == ["burst"]
    assert engine.process_many(fails(1, 2, 3))[0].pattern == "burst"
    selfish = SequencePattern("selfish", (Stage("x", types=("x",)),), emit_into="x")
    with pytest.raises(PatternError, match="'selfish' reads 'x', its own"):
        Engine([selfish])
    anything = SequencePattern("anything", (Stage("x"),), emit_into="y")  # no types: reads every type
    with pytest.raises(PatternError, match="cycle"):
        Engine([anything])


def test_a_measure_named_like_an_event_attribute_is_refused() -> None:
    bad = SequencePattern("bad", (Stage("a", types=("a",)),), measures={"time": "a.time"}, emit_into="z")
    with pytest.raises(PatternError, match="measure 'time'"):
        Engine([bad])
    with pytest.raises(PatternError, match="emit_into must be an event type name"):
        SequencePattern("p", (Stage("a"),), emit_into="")


def test_engines_without_emitters_derive_nothing() -> None:
    engine = Engine([ATTACK])
    assert engine.derive is None
    assert run(
        [ATTACK], [{"type": "burst", "time": 1, "n": 1}, {"type": "burst", "time": 2, "n": 2}]
    ).detections


# ---- the two-level pipeline against running the levels one after the other ---------------------------


def _shape(d: Detection) -> tuple[object, ...]:
    return (
        d.pattern,
        d.key,
        d.kind,
        d.time,
        tuple((e.type, e.time, tuple(e.fields.items())) for e in d.events),
    )


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["a", "b"])), min_size=0, max_size=30),
)
def test_one_engine_equals_the_levels_run_one_after_the_other(rows: list[tuple[int, str]]) -> None:
    events = [{"type": "fail", "time": t, "key": k} for t, k in sorted(rows, key=lambda r: r[0])]
    both = run([BURST, ATTACK], events).detections
    first = run([BURST], events).detections
    derived = [
        Event("burst", d.time, d.key, dict(d.measures)) for d in first if d.kind == "match"
    ]  # in detection order, which is time order
    second = run([ATTACK], derived).detections
    want = sorted(map(_shape, first + second), key=repr)
    assert sorted(map(_shape, both), key=repr) == want


# ---- the cycle finder against a brute-force closure ------------------------------------------------


def _brute_cycle(reads: dict[str, frozenset[str] | None], emits: dict[str, str]) -> bool:
    names = list(reads)
    edge = {(p, q) for p in emits for q in names if reads[q] is None or emits[p] in reads[q]}  # type: ignore[operator]
    closure = set(edge)
    for k, i, j in itertools.product(names, names, names):
        if (i, k) in closure and (k, j) in closure:
            closure.add((i, j))
    return any((p, p) in closure for p in names)


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from("pqrst"),
        st.tuples(
            st.one_of(st.none(), st.frozensets(st.sampled_from("xyzw"), max_size=2)),
            st.one_of(st.none(), st.sampled_from("xyzw")),
        ),
        min_size=1,
    )
)
def test_find_cycle_agrees_with_the_transitive_closure(
    spec: dict[str, tuple[frozenset[str] | None, str | None]],
) -> None:
    reads = {p: r for p, (r, _) in spec.items()}
    emits = {p: t for p, (_, t) in spec.items() if t is not None}
    cycle = find_cycle(reads, emits)
    assert (cycle is not None) == _brute_cycle(reads, emits)
    if cycle is not None:  # a real cycle: each pattern feeds the next, back to the first
        assert cycle[0] == cycle[-1]
        for a, b in itertools.pairwise(cycle):
            assert reads[b] is None or emits[a] in reads[b]  # type: ignore[operator]


def test_shards_derive_within_the_key_s_shard() -> None:
    from workbench.engine.sharding import ShardedEngine

    keys = ["a", "b", ("u", "10.0.0.1"), ("u", "10.0.0.2")]
    events = [{"type": "fail", "time": t, "key": k} for t in range(8) for k in keys]
    sharded = ShardedEngine([BURST, ATTACK], 3)
    sharded.process_many(events)
    sharded.finish()
    want = run([BURST, ATTACK], events).detections
    assert sorted(map(_shape, sharded.detections), key=repr) == sorted(map(_shape, want), key=repr)
    assert {d.key for d in sharded.detections if d.pattern == "attack"} == set(keys)


def test_derived_events_of_one_time_keep_their_order_through_the_reorder_buffer() -> None:
    pair = SequencePattern("ab", (Stage("a", types=("a",)), Stage("b", types=("b",))), emit_into="ab")
    deep = SequencePattern("deep", (Stage("x", types=("ab",)), Stage("y", types=("ab",))))
    events = [{"type": t, "time": 1, "key": "k"} for t in ("a", "a", "b")]

    def deep_seqs(**options: int) -> list[tuple[int, ...]]:
        return [d.seqs for d in run([pair, deep], events, **options).detections if d.pattern == "deep"]

    in_order = deep_seqs()
    assert in_order == [(FIRST_DERIVED_SEQ, FIRST_DERIVED_SEQ - 1)]
    assert deep_seqs(out_of_orderness=2) == in_order


def test_derived_events_are_numbered_once_per_run_across_a_restore_and_shards() -> None:
    # (the counter was the emitter's own: a restored engine and each shard counted from -2 again,
    # so two derived events of one run shared a seq)
    from workbench.engine.sharding import ShardedEngine
    from workbench.language import compile_patterns

    pats = compile_patterns("sequence s\n    emit into z\n    begin a: a\nsequence r\n    begin z1: z\n")
    events = [{"type": "a", "time": 0, "key": "k0"}, {"type": "a", "time": 1, "key": "k2"}]

    def seqs(detections: list[Detection]) -> list[tuple[int, ...]]:
        return [d.seqs for d in detections if d.pattern == "r"]

    whole = Engine(pats)
    whole.process_many(events)
    whole.finish()
    assert seqs(whole.detections) == [(-2,), (-3,)]
    first = Engine(pats)
    first.process_many(events[:1])
    second = Engine(pats)
    second.restore(first.snapshot())
    second.process_many(events[1:])
    second.finish()
    assert seqs(first.detections + second.detections) == [(-2,), (-3,)]
    sharded = ShardedEngine(pats, shards=2)
    sharded.process_many(events)
    sharded.finish()
    assert seqs(sharded.detections) == [(-2,), (-3,)]


def burst_and_attack() -> list[SequencePattern]:
    """The factory :func:`~workbench.engine.sharding.run_sharded`'s workers call."""
    return [BURST, ATTACK]


def test_worker_shards_number_their_derived_events_apart() -> None:
    # (each worker's engine counted from -2: two derived events of one run shared a seq)
    from workbench.engine.sharding import run_sharded

    keys = ["a", "b", "c", "d", "e"]
    events = [{"type": "fail", "time": t, "key": k} for t in range(12) for k in keys]
    detections, _ = run_sharded("tests.engine.test_derived:burst_and_attack", events, 3, processes=0)
    derived: dict[int, tuple[object, ...]] = {}
    for d in detections:
        for e in d.events:
            if e.seq < 0:
                assert derived.setdefault(e.seq, (e.key, e.time, e.fields)) == (e.key, e.time, e.fields)
    want = run([BURST, ATTACK], events).detections
    assert len(derived) == sum(d.pattern == "burst" for d in want) > 3
