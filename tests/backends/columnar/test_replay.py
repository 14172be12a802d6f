"""replay_frame gives exactly what a replay of every row's event gives, while it builds fewer events."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.patterns import benchmark_patterns
from benchmarks.workload import WorkloadSpec, iter_rows
from workbench.backends.columnar.frame import EventColumns
from workbench.backends.columnar.replay import replay_chunks, replay_frame, rows_to_feed
from workbench.engine.runtime import Engine, RunResult, run
from workbench.language import compile_text
from workbench.results import frame_to_events

PATTERNS = benchmark_patterns()

TEXTS = {
    "seq_timeouts": """
sequence s within 40ms
    begin a: a
    followed by b: b where e.x > 1
    followed by any c: c
""",
    "seq_skip": """
sequence s within 30ms skip past last event
    begin a: a
    followed by b: b times 2 or more
    followed by c: c
""",
    "seq_not": """
sequence s within 50ms
    begin a: a
    not followed by x: d
    followed by c: c where e.x < 3
""",
    "group_or": """
group g
    on a(x as X)
    @or @timeout(25ms) {
        one: b(x = X)
        two: c where e.x > X
    }
""",
    "group_and": """
group g
    on a(x as X)
    @and @timeout(60ms) {
        one: b
        two: c
    }
""",
}


def workload(spec: WorkloadSpec) -> pd.DataFrame:
    rows = list(iter_rows(spec))
    return pd.DataFrame(
        {
            "t": [r.t for r in rows],
            "key": [r.key for r in rows],
            "type": [r.type for r in rows],
            "price": [r.price for r in rows],
            "qty": [r.qty for r in rows],
            "ip": [r.ip for r in rows],
        }
    )


def reference(patterns: list[object], frame: pd.DataFrame, trace: bool = False) -> RunResult:
    return run(patterns, frame_to_events(frame), trace=trace)  # type: ignore[arg-type]


def same(got: RunResult, want: RunResult) -> None:
    assert got.detections == want.detections
    assert [d.seqs for d in got.detections] == [d.seqs for d in want.detections]
    assert got.trace == want.trace
    assert got.late == want.late
    assert got.errors == want.errors


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_benchmark_patterns_equal_the_full_replay(name: str) -> None:
    frame = workload(WorkloadSpec(n=3_000, seed=3))
    same(replay_frame([PATTERNS[name]], frame, time_column="t"), reference([PATTERNS[name]], frame))


def test_rows_of_unused_types_are_not_built() -> None:
    frame = workload(WorkloadSpec(n=2_000, seed=5))
    cols = EventColumns.from_frame(frame, time_column="t")
    rows = rows_to_feed(Engine([PATTERNS["P2"]]), cols)
    assert rows is not None
    assert set(frame["type"].iloc[rows]) == {"login", "update", "trade"}
    assert len(rows) < len(frame)
    rows = rows_to_feed(Engine([PATTERNS["P1"]]), cols)  # `next`: logins and the row after each
    assert rows is not None
    logins = frame.index[frame["type"] == "login"]
    assert set(logins) <= set(rows.tolist())
    assert len(rows) <= 2 * len(logins)


def test_times_going_backwards_feed_every_row() -> None:
    frame = pd.DataFrame({"type": ["a", "z", "c", "c"], "time": [1, 50, 10, 60], "key": "k", "x": 0})
    patterns = [d.pattern for d in compile_text(TEXTS["seq_timeouts"])]
    cols = EventColumns.from_frame(frame)
    assert rows_to_feed(Engine(patterns), cols) is None
    same(replay_frame(patterns, frame, trace=True), reference(patterns, frame, trace=True))


@st.composite
def frames(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(1, 40))
    gaps = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    times, t = [], 0
    for g in gaps:
        t += g
        times.append(t)
    return pd.DataFrame(
        {
            "type": draw(st.lists(st.sampled_from(["a", "b", "c", "d", "v", "w"]), min_size=n, max_size=n)),
            "time": times,
            "key": draw(st.lists(st.sampled_from(["k1", "k2", "k3"]), min_size=n, max_size=n)),
            "x": draw(st.lists(st.one_of(st.integers(0, 4), st.none()), min_size=n, max_size=n)),
        }
    )


@settings(max_examples=150, deadline=None)
@given(frames(), st.sampled_from(sorted(TEXTS)), st.booleans())
def test_random_inputs_equal_the_full_replay(frame: pd.DataFrame, text: str, trace: bool) -> None:
    patterns = [d.pattern for d in compile_text(TEXTS[text])]
    same(replay_frame(patterns, frame, trace=trace), reference(patterns, frame, trace=trace))


def test_bad_rows_raise_as_frame_to_events_does() -> None:
    frame = pd.DataFrame({"type": ["a", None], "time": [1, 2], "key": "k"})
    patterns = [d.pattern for d in compile_text(TEXTS["seq_timeouts"])]
    with pytest.raises(Exception, match="row 1") as got:
        replay_frame(patterns, frame)
    with pytest.raises(Exception, match="row 1") as want:
        frame_to_events(frame)
    assert str(got.value) == str(want.value)


def test_rows_left_out_at_the_end_still_move_the_time_a_recurring_window_ends_at() -> None:
    # (the last row, of a type no pattern reads, was left out: the final flush ended at the earlier
    # newest time, and the @timer window due at 8 never closed)
    from workbench.language import compile_pattern

    text = "group g\n    on b(grp as G)\n    @or @timeout(10) {\n        @timer(5, 3) w: c(grp = G)\n    }\n"
    rows = [
        {"type": "b", "time": 0, "key": "k", "grp": "k"},
        {"type": "d", "time": 8, "key": "k", "grp": "k"},
    ]
    engine = Engine([compile_pattern(text)])
    engine.process_many(rows)
    engine.finish()
    replayed = replay_frame([compile_pattern(text)], pd.DataFrame(rows)).detections
    assert [(d.kind, d.time) for d in replayed] == [(d.kind, d.time) for d in engine.detections]
    assert [d.time for d in replayed] == [5, 8]
    chunks = list(replay_chunks([compile_pattern(text)], [pd.DataFrame(rows[:1]), pd.DataFrame(rows[1:])]))
    assert [d.time for chunk in chunks for d in chunk] == [5, 8]
