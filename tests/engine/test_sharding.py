"""Sharding: a stable key hash, and the same detections for any number of shards."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter, defaultdict
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.detection import Detection, TraceKind
from workbench.engine.events import Event
from workbench.engine.matcher import Context, Matcher
from workbench.engine.reactions import Channel, Instance, ReactionGroup, Timer
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine, partition, run_sharded, shard_of, stable_hash
from workbench.errors import CepError, EventError

# ---------------------------------------------------------------------------------------- a test pattern
# A small pattern family with per-key state, instances and timers, so that sharding is tested
# independently of the NFA and the reaction groups: "n events of types a/b within `gap` ms of each
# other" matches; a burst that goes quiet for `gap` ms times out.


@dataclass
class BurstState:
    instance: int = 0
    events: list[Event] = field(default_factory=list)


@dataclass
class BurstMatcher:
    name: str
    n: int
    gap: int

    def event_types(self) -> frozenset[str] | None:
        return frozenset({"a", "b"})

    def new_state(self, key: Hashable) -> BurstState:
        return BurstState()

    def process(self, state: BurstState, event: Event, ctx: Context) -> None:
        if not state.events:
            state.instance = ctx.new_instance()
            ctx.trace(TraceKind.STARTED, state.instance, event_seq=event.seq)
        state.events.append(event)
        if len(state.events) == self.n:
            self._emit(state, ctx, "match")
        else:
            ctx.schedule(event.time + self.gap, event.seq)

    def on_timer(self, state: BurstState, time: int | float, token: Hashable, ctx: Context) -> None:
        if state.events and state.events[-1].seq == token:
            self._emit(state, ctx, "timeout")

    def _emit(self, state: BurstState, ctx: Context, kind: str) -> None:
        events = tuple(state.events)
        ctx.emit(Detection(self.name, ctx.key, state.instance, kind, ctx.now, events, ("x",) * len(events)))
        state.events = []

    def is_idle(self, state: BurstState) -> bool:
        return not state.events


@dataclass(frozen=True)
class Burst:
    name: str = "burst"
    n: int = 3
    gap: int = 10

    def compile(self) -> Matcher:
        return BurstMatcher(self.name, self.n, self.gap)


def make_patterns() -> list[Burst]:
    """The factory the worker processes import."""
    return [Burst("burst3", 3, 10), Burst("pair", 2, 4)]


def canon(d: Detection) -> tuple[Any, ...]:
    return (d.pattern, repr(d.key), d.instance, d.kind, d.time, d.seqs)


def per_key(detections: list[Detection]) -> dict[str, list[tuple[Any, ...]]]:
    out: dict[str, list[tuple[Any, ...]]] = defaultdict(list)
    for d in detections:
        out[repr(d.key)].append(canon(d))
    return dict(out)


def single(events: list[dict[str, Any]], b: int) -> Engine:
    engine = Engine(make_patterns(), out_of_orderness=b)
    for e in events:
        engine.process(e)
    engine.finish()
    return engine


keys = st.sampled_from(["k1", "k2", "k3", 4, 5.0, ("t", 1), None, "ü"])


@st.composite
def streams(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    t = 0
    for _ in range(draw(st.integers(0, 60))):
        t += draw(st.integers(0, 6))
        jitter = draw(st.integers(-8, 0))
        out.append({"type": draw(st.sampled_from("abc")), "time": t + jitter, "key": draw(keys)})
    return out


# ------------------------------------------------------------------------------------------------ properties


@given(events=streams(), shards=st.integers(1, 6), b=st.sampled_from([0, 3, 10]))
@settings(max_examples=150, deadline=None)
def test_same_detections_for_any_shard_count(events: list[dict[str, Any]], shards: int, b: int) -> None:
    ref = single(events, b)
    sharded = ShardedEngine(make_patterns(), shards, out_of_orderness=b)
    for e in events:
        sharded.process(e)
    sharded.finish()
    # Per key: the same detections in the same order; overall: the same multiset.
    assert per_key(sharded.detections) == per_key(ref.detections)
    assert Counter(map(canon, sharded.detections)) == Counter(map(canon, ref.detections))
    assert [e.seq for e in sharded.late] == [e.seq for e in ref.late]
    assert sharded.late_count == ref.late_count


@given(events=streams(), shards=st.integers(1, 5), b=st.sampled_from([0, 5]))
@settings(max_examples=60, deadline=None)
def test_partition_then_independent_engines(events: list[dict[str, Any]], shards: int, b: int) -> None:
    ref = single(events, b)
    detections, late = run_sharded(
        "tests.engine.test_sharding:make_patterns", events, shards, processes=0, out_of_orderness=b
    )
    assert per_key(detections) == per_key(ref.detections)
    assert [e.seq for e in late] == [e.seq for e in ref.late]


def make_windows() -> list[ReactionGroup]:
    """A group with declared instances (started at 0, before any event) and a recurring window."""
    channel = Channel("a", "a", timer=Timer(10, 10))
    return [ReactionGroup("w", "or", channels=(channel,), instances=(Instance("k1", 0), Instance(4, 0)))]


@given(events=streams(), shards=st.integers(1, 5), b=st.sampled_from([0, 3, 10]))
@settings(max_examples=40, deadline=None)
def test_declared_instances_start_once_in_the_shard_of_their_key(
    events: list[dict[str, Any]], shards: int, b: int
) -> None:
    ref = Engine(make_windows(), out_of_orderness=b)
    sharded = ShardedEngine(make_windows(), shards, out_of_orderness=b)
    for engine in (ref, sharded):
        engine.process_many(events)
        engine.finish()
    detections, _ = run_sharded(
        "tests.engine.test_sharding:make_windows", events, shards, processes=0, out_of_orderness=b
    )
    assert per_key(sharded.detections) == per_key(detections) == per_key(ref.detections)
    assert {d.key for d in ref.detections} <= {"k1", 4}


def test_worker_processes_give_the_same_detections() -> None:
    events = [
        {"type": "ab"[i % 2], "time": i * 3 + (i % 5), "key": f"u{i % 13}"} for i in range(400)
    ]  # slightly out of order (16 then 15 ...), within out_of_orderness=10
    ref = single(events, 10)
    detections, late = run_sharded(
        "tests.engine.test_sharding:make_patterns", events, 3, processes=2, out_of_orderness=10
    )
    assert per_key(detections) == per_key(ref.detections)
    assert len(detections) == len(ref.detections) > 0
    assert late == ref.late == []


def test_finish_until_closes_the_global_clock() -> None:
    sharded = ShardedEngine(make_patterns(), 3)
    ref = Engine(make_patterns())
    for engine in (sharded, ref):
        engine.process({"type": "a", "time": 1, "key": "x"})
        engine.finish(until=50)
        engine.process({"type": "a", "time": 50, "key": "y"})  # at the closed watermark: late
        engine.process({"type": "a", "time": 51, "key": "z"})
        engine.finish()
    assert [e.seq for e in sharded.late] == [e.seq for e in ref.late] == [1]
    assert sorted(map(canon, sharded.detections)) == sorted(map(canon, ref.detections))


def test_advance_time_is_broadcast() -> None:
    sharded = ShardedEngine(make_patterns(), 4)
    ref = Engine(make_patterns())
    for i, key in enumerate(["a", "b", "c", "d", "e"]):
        sharded.process({"type": "a", "time": i, "key": key})
        ref.process({"type": "a", "time": i, "key": key})
    got = sharded.advance_time(100)
    want = ref.advance_time(100)
    assert sorted(map(canon, got)) == sorted(map(canon, want))
    assert len(got) == 10  # every key's two bursts time out
    assert sharded.process({"type": "a", "time": 100, "key": "a"}) == []
    assert sharded.late_count == 1


# ------------------------------------------------------------------------------------------------ the hash


def test_stable_hash_is_fixed() -> None:
    # Fixed values: a change would move keys between shards of existing deployments (checkpoints).
    assert stable_hash("u0001") == 14194325905370549341
    assert [shard_of(f"u{i:04d}", 4) for i in range(8)] == [shard_of(f"u{i:04d}", 4) for i in range(8)]


def test_stable_across_processes_and_hash_seeds() -> None:
    code = "from workbench.engine.sharding import stable_hash; print(stable_hash(('u7', 3, None, 2.5)))"
    outs = set()
    for seed in ("1", "2", "random"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
        )
        outs.add(run.stdout.strip())
    assert outs == {str(stable_hash(("u7", 3, None, 2.5)))}


def test_equal_keys_share_a_shard() -> None:
    assert stable_hash(1) == stable_hash(1.0) == stable_hash(True)
    assert stable_hash(frozenset({"a", "b"})) == stable_hash(frozenset({"b", "a"}))
    assert stable_hash("1") != stable_hash(1)
    assert stable_hash(("a", "b")) != stable_hash(("ab",))


def test_keys_spread_over_shards() -> None:
    counts = Counter(shard_of(f"u{i:04d}", 4) for i in range(2_000))
    assert sorted(counts) == [0, 1, 2, 3]
    assert all(400 <= c <= 600 for c in counts.values())


def test_bad_keys_and_shard_counts() -> None:
    with pytest.raises(EventError, match="no stable hash"):
        stable_hash(object())
    sharded = ShardedEngine([], 2)
    with pytest.raises(EventError, match="field 'key'"):
        sharded.process({"type": "a", "time": 1, "key": object()})
    for bad in (0, -1, 1.5, True):
        with pytest.raises(CepError, match="shards must be a positive integer"):
            ShardedEngine([], bad)  # type: ignore[arg-type]
    with pytest.raises(CepError, match="module:function"):
        run_sharded("nonsense", [], 2)


def test_partition_keeps_global_positions_and_order() -> None:
    events = [{"type": "a", "time": t, "key": k} for t, k in [(1, "x"), (2, "y"), (0, "x"), (3, "x")]]
    p = partition(events, 2)
    assert [e.seq for e in p.late] == [2]
    assert sorted(e.seq for s in p.shards for e in s) == [0, 1, 3]
    for part in p.shards:
        assert [e.seq for e in part] == sorted(e.seq for e in part)
