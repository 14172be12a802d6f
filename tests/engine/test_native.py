"""The native core (:mod:`workbench.engine._native`) against its pure-Python twins."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from workbench.engine import Engine, native
from workbench.engine.detection import NO_MEASURES, Detection, _new_match_python, new_match
from workbench.engine.events import Event

ROOT = Path(__file__).resolve().parents[2]
needs_native = pytest.mark.skipif(native.MODULE is None, reason="the native core is not in use here")

values = st.one_of(st.none(), st.integers(), st.floats(allow_nan=False), st.text(max_size=5))
events = st.lists(
    st.builds(Event, st.sampled_from(["a", "b"]), st.integers(0, 9), st.just("k"), st.just({})), max_size=3
).map(tuple)


@pytest.mark.skipif(
    os.environ.get(native.PURE_ENV, "") not in ("", "0") or shutil.which("cc") is None,
    reason="pure Python asked for, or no C compiler to build the native core with",
)
def test_the_build_made_the_native_core_where_it_can() -> None:
    # why: a build that silently fell back to pure Python would hide every native test below
    assert native.MODULE is not None
    assert native.describe() == "native"
    assert new_match is not _new_match_python


@needs_native
@given(
    pattern=st.text(max_size=5), key=values, instance=st.integers(),
    kind=st.sampled_from(["match", "timeout"]),
    time=st.one_of(st.integers(), st.floats(allow_nan=False)), evs=events,
    channels=st.lists(st.text(max_size=3), max_size=3).map(tuple),
)  # fmt: skip
def test_new_match_equals_its_twin(
    pattern: str, key: Hashable, instance: int, kind: str, time: float, evs: tuple[Event, ...],
    channels: tuple[str, ...],
) -> None:  # fmt: skip
    built = new_match(pattern, key, instance, kind, time, evs, channels)
    twin = _new_match_python(pattern, key, instance, kind, time, evs, channels)
    assert type(built) is Detection
    assert built == twin
    assert repr(built) == repr(twin)
    assert built == Detection(pattern, key, instance, kind, time, evs, channels)
    # the same objects, not copies; the defaults as the dataclass gives them
    assert built.events is evs
    assert built.channels is channels
    assert built.key is key
    assert built.negated == ()
    assert built.initiator is None
    assert built.measures is NO_MEASURES
    assert built.extra == {}
    assert built.extra is not new_match("p", 1, 1, "match", 0, (), ()).extra


@needs_native
def test_new_match_holds_one_reference_per_slot() -> None:
    probe = object()
    before = sys.getrefcount(probe)
    built = new_match(probe, probe, probe, probe, probe, probe, probe)  # type: ignore[arg-type]
    assert sys.getrefcount(probe) == before + 7
    del built
    assert sys.getrefcount(probe) == before


@needs_native
def test_a_detection_class_with_other_slots_is_refused() -> None:
    from dataclasses import dataclass

    assert native.MODULE is not None

    @dataclass(frozen=True, slots=True)
    class Other:
        pattern: str

    with pytest.raises(TypeError, match="slots"):
        native.MODULE.bind_detection(Other, NO_MEASURES)


@needs_native
def test_a_detection_is_still_frozen() -> None:
    import dataclasses

    built = new_match("p", "k", 1, "match", 5, (), ())
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.pattern = "q"  # type: ignore[misc]


_RUN = """
import sys
from benchmarks.patterns import api_patterns
from benchmarks.checksum import Checksum
from workbench.engine import Engine, native
from benchmarks.run import read_events
events = read_events(sys.argv[1])
for name, pattern in sorted(api_patterns().items()):
    engine = Engine([pattern])
    engine.process_many(events)
    engine.finish()
    ck = Checksum()
    for d in engine.detections:
        ck.add(d.seqs)
    print(native.describe(), name, ck.matches, ck.value, sum(d.instance for d in engine.detections))
"""


@needs_native
def test_every_benchmark_pattern_finds_the_same_with_and_without_the_native_core(tmp_path: Path) -> None:
    from benchmarks.workload import WorkloadSpec, write_csv

    data = tmp_path / "w.csv"
    write_csv(WorkloadSpec(n=3000), data)
    outputs = {}
    for pure in ("0", "1"):
        env = {**os.environ, native.PURE_ENV: pure, "PYTHONPATH": str(ROOT)}
        done = subprocess.run(
            [sys.executable, "-c", _RUN, str(data)], env=env, capture_output=True, text=True, check=True
        )
        outputs[pure] = done.stdout.splitlines()
    assert [line.split(" ", 1)[0] for line in outputs["0"]] == ["native"] * 8
    assert [line.split(" ", 1)[0] for line in outputs["1"]] == ["pure"] * 8
    assert [line.split(" ", 1)[1] for line in outputs["0"]] == [
        line.split(" ", 1)[1] for line in outputs["1"]
    ]


def _loop_step() -> tuple[Any, Any]:
    from benchmarks.patterns import api_patterns
    from workbench.engine.nfa.matcher import NFAMatcher

    matcher = NFAMatcher(api_patterns()["P5"])
    return matcher, matcher.plan.process


@needs_native
def test_the_loop_step_refuses_a_state_holding_something_else() -> None:
    from workbench.engine.nfa.loop import LoopState

    matcher, step = _loop_step()
    assert type(step).__name__ == "LoopStep"
    engine = Engine([matcher])
    engine.process(Event("login", 1, "k"))
    state = engine.state_of("P5", "k")
    assert isinstance(state, LoopState)
    state.cold.append(("not", "a", "run"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="not a partial match"):
        engine.process(Event("trade", 2, "k", {"price": 200.0}))


class _Context:
    """A context of another class than the engine's (the native step hands it to its twin)."""

    def __init__(self) -> None:
        self.tracing, self.key, self.out, self.timers, self.n = False, "k", [], [], 0

    def emit(self, d: Detection) -> None:
        self.out.append(d)

    def schedule(self, time: float, token: object) -> None:
        self.timers.append((time, token))

    def new_instance(self) -> int:
        self.n += 1
        return self.n


@needs_native
def test_the_loop_step_hands_objects_of_other_classes_to_its_python_twin() -> None:
    from workbench.engine.nfa.loop import LoopState
    from workbench.engine.nfa.loopgen import generate

    matcher, step = _loop_step()
    python = generate(matcher.plan)
    events = [
        Event("login", 1, "k", {}, 0),
        Event("trade", 2, "k", {"price": 200.0}, 1),
        Event("trade", 3, "k", {"price": 1.0}, 2),
        Event("logout", 4, "k", {}, 3),
    ]
    runs = []
    for process in (step, python):
        state, ctx = LoopState(), _Context()
        for e in events:
            process(state, e, ctx)
        runs.append(([d.seqs for d in ctx.out], ctx.timers, state.next_rid, len(state.cold), len(state.last)))
    assert runs[0] == runs[1]
    assert runs[0][0] == [(0, 1, 3)]  # the second trade lowers the average below the threshold


@needs_native
def test_native_detections_and_their_event_tuples_are_not_walked_by_the_collector() -> None:
    import gc

    evs = (Event("a", 1, "k", {}, 0),)
    built = new_match("p", "k", 1, "match", 5, evs, ("a",))
    assert not gc.is_tracked(built)
    assert not gc.is_tracked(evs)
    assert gc.is_tracked(_new_match_python("p", "k", 1, "match", 5, (Event("a", 1, "k", {}, 0),), ("a",)))
    matcher, _ = _loop_step()
    engine = Engine([matcher])
    events = [
        Event("login", 1, "k"),
        Event("trade", 2, "k", {"price": 200.0}),
        Event("logout", 3, "k"),
    ]
    [found] = engine.process_many(events)
    assert not gc.is_tracked(found)
    assert not gc.is_tracked(found.events)
    gc.collect()  # a collection with untracked detections around changes nothing
    assert found.seqs == (0, 1, 2)


@needs_native
def test_native_partial_matches_are_not_walked_by_the_collector() -> None:
    import gc

    matcher, _ = _loop_step()
    engine = Engine([matcher])
    engine.process_many(
        [Event("login", 1, "k"), Event("trade", 2, "k", {"price": 200.0}), Event("view", 3, "k")]
    )
    state = engine.state_of("P5", "k")
    runs = [*state.hot, *state.cold, *state.last]
    assert len(runs) == 2  # the partial match in the loop, and its wait for a logout
    assert not gc.is_tracked(state.hot)  # the step's new list (of untracked partial matches)
    for run in runs:
        assert not gc.is_tracked(run)
        assert not gc.is_tracked(run.start_id)
        assert not gc.is_tracked(run.aggs)
        assert not any(gc.is_tracked(a) for a in run.aggs)
    gc.collect()  # untracked partial matches live on through a collection
    [found] = engine.process_many([Event("logout", 4, "k")])
    assert found.seqs == (0, 1, 3)


@needs_native
def test_a_snapshot_taken_in_a_callback_leaves_the_native_loops_timers_as_without_it() -> None:
    """An image replaces the engine's timer counter; the native loop then pushes with the new one."""
    from workbench.engine import fused

    def feed(snapshots: bool) -> tuple[list[tuple[object, ...]], list[tuple[int, ...]]]:
        matcher, _ = _loop_step()
        holder: list[Engine] = []
        engine = Engine([matcher], on_detection=(lambda d: holder[0].snapshot()) if snapshots else None)
        holder.append(engine)
        events = []
        for r in range(12):  # rounds 20 s apart (the window: 30 s), three keys, prices above 105
            for j, typ in enumerate(("login", "trade", "trade", "logout")):
                for k in range(3):
                    events.append(Event(typ, 20_000 * r + 1_000 * j + k, f"k{k}", {"price": 110.0 + r}))
        assert type(fused.build_loop([matcher], tracing=False)).__name__ == "LoopFeed"  # the native loop
        found = engine.process_many(events)
        return sorted(engine._timers, key=lambda x: x[:2]), [d.seqs for d in found]

    timers, found = feed(snapshots=True)
    assert found  # the callback ran
    assert timers  # and timers are pending
    assert (timers, found) == feed(snapshots=False)
    assert len({x[1] for x in timers}) == len(timers)  # every timer's seq is its own


@needs_native
@pytest.mark.parametrize("start", [0, 7, 2**62 - 2, 2**62, 2**64 + 3])
def test_the_native_loop_numbers_events_on_from_any_position(start: int) -> None:
    """Positions past 2**62 stay Python ints; below, a C counter: the same numbers either way."""
    from workbench.engine import fused

    matcher, _ = _loop_step()
    assert type(fused.build_loop([matcher], tracing=False)).__name__ == "LoopFeed"
    engine = Engine([matcher])
    engine.event_clock.next_seq = start
    events = [
        Event("login", 1, "k"),
        Event("trade", 2, "k", {"price": 200.0}),
        Event("view", 3, "j"),
        Event("logout", 4, "k"),
        Event("trade", 2, "k", {"price": 200.0}),  # late: the engine's general path takes it
        Event("logout", 5, "k"),
    ]
    found = engine.process_many(events)
    assert [d.seqs for d in found] == [(start, start + 1, start + 3)]
    assert [e.seq for e in engine.late] == [start + 4]
    assert engine.event_clock.next_seq == start + 6


def _typed_step() -> Any:
    """A native loop step whose types are of every string kind (ASCII, Latin-1, two- and four-byte)."""
    from workbench.engine.nfa import AggregateSpec, Contiguity, Quantifier, SequencePattern, Stage
    from workbench.engine.nfa.matcher import NFAMatcher

    pattern = SequencePattern(
        "p",
        (
            Stage("a", types=("a", "trädé")),
            Stage("b", "avg_b > 1", Contiguity.RELAXED, types=("取引",), quantifier=Quantifier.one_or_more()),
            Stage("c", "e.v > 0", Contiguity.RELAXED, types=("\U0001f4c9", "ab")),
        ),
        within_ms=40,
        aggregates=(AggregateSpec("avg_b", "avg", "b", "v", include_current=True),),
    )
    step = NFAMatcher(pattern).plan.process
    assert type(step).__name__ == "LoopStep"
    return step


TYPE_NAMES = ["a", "ab", "b", "trädé", "trade", "取引", "取", "\U0001f4c9", "\U0001f4c8", "", "a\x00"]


@needs_native
@given(typ=st.one_of(st.sampled_from(TYPE_NAMES), st.text(max_size=3), st.integers(), st.none()))
def test_a_types_waking_says_what_its_wake_sets_and_type_tests_say(typ: object) -> None:
    step = _typed_step()
    # whichever way it is found (a few names by their bytes, or a dict), it is the record of the type
    got, want = step.waking(typ), step._wakes_of(typ)
    assert (got.starts, got.cold, got.last, got.by_code, got.typed) == (
        want.starts, want.cold, want.last, want.by_code, want.typed,
    )  # fmt: skip
    if isinstance(typ, str) and typ in ("a", "trädé", "取引", "\U0001f4c9", "ab"):
        assert got.starts or got.cold or got.last or any(got.by_code)


# ------------------------------------------------------------------------------ the timer heap
class _Odd:
    """A time of no number type: it compares by its value, through Python."""

    def __init__(self, v: int) -> None:
        self.v = v

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Odd) and self.v == other.v

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, _Odd):
            return NotImplemented
        return self.v < other.v

    def __hash__(self) -> int:
        return hash(self.v)

    def __repr__(self) -> str:
        return f"_Odd({self.v})"


NAN = float("nan")
times = st.one_of(
    st.integers(-3, 3),
    st.integers(2**40, 2**40 + 3),  # two 30-bit digits
    st.sampled_from([2**62, 2**63 - 1, -(2**63), 2**63, 2**64 + 1, -(2**64)]),  # at and past 64 bits
    st.sampled_from([0.5, -0.0, 0.0, 1.0, NAN, float("inf")]),
    st.integers(0, 3).map(_Odd),
)
timers = st.tuples(times, st.integers(0, 3), st.sampled_from(["k", "j"]), st.just(0), st.just("w"))
heap_ops = st.lists(st.one_of(timers, st.none()), max_size=40)  # None: a pop


@needs_native
@given(ops=heap_ops)
@example(ops=[(NAN, 2, "k", 0, "w"), (NAN, 1, "k", 0, "w"), None])  # one NaN object: equal to itself
@example(ops=[(2**64, 2, "k", 0, "w"), (2**64 - 1, 1, "k", 0, "w"), (-(2**63), 0, "j", 0, "w"), None, None])
def test_the_native_timer_heap_moves_items_exactly_as_heapq_does(
    ops: list[tuple[object, ...] | None],
) -> None:
    import heapq

    mine: list[tuple[object, ...]] = []
    theirs: list[tuple[object, ...]] = []
    for op in ops:
        if op is None:
            if not theirs:
                with pytest.raises(IndexError):
                    native.MODULE.heap_pop(mine)
                continue
            try:
                want: object = heapq.heappop(theirs)
            except TypeError:  # an _Odd beside a number: Python cannot order them
                with pytest.raises(TypeError):
                    native.MODULE.heap_pop(mine)
                return
            assert native.MODULE.heap_pop(mine) is want
        else:
            try:
                heapq.heappush(theirs, op)
            except TypeError:
                with pytest.raises(TypeError):
                    native.MODULE.heap_push(mine, op)
                return
            native.MODULE.heap_push(mine, op)
        # the same objects in the same places (identity: NaN times are equal to nothing)
        assert len(mine) == len(theirs)
        assert all(a is b for a, b in zip(mine, theirs, strict=True))


@needs_native
def test_the_native_timer_heap_refuses_a_list_changed_while_it_compares() -> None:
    heap: list[object] = []

    class Grows:
        def __init__(self, v: int) -> None:
            self.v = v

        def __lt__(self, other: Grows) -> bool:
            heap.append(Grows(99))
            return self.v < other.v

    native.MODULE.heap_push(heap, Grows(2))
    with pytest.raises(RuntimeError, match="changed size"):
        native.MODULE.heap_push(heap, Grows(1))


@needs_native
def test_the_native_timer_heap_holds_one_reference_per_item() -> None:
    items = [(t, i, "k", 0, "w") for i, t in enumerate([5, 3, 9, 1, 7, 3, 2**70, 4.5])]
    before = [sys.getrefcount(x) for x in items]
    heap: list[tuple[object, ...]] = []
    for item in items:
        native.MODULE.heap_push(heap, item)
    del item
    popped = [native.MODULE.heap_pop(heap) for _ in items]
    assert [x[1] for x in popped] == [3, 1, 5, 7, 0, 4, 2, 6]  # by time, then seq
    del popped
    assert [sys.getrefcount(x) for x in items] == before
