"""The Timeline widget without a browser: sources, controls, selection, live deltas, save."""

from __future__ import annotations

import asyncio
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from bokeh.models import ColumnDataSource

from workbench.engine import Detection, Engine, Event, TraceKind, TraceRecord, run
from workbench.engine.matcher import Context
from workbench.widgets import Timeline

K = TraceKind


def rec(
    t: float, kind: TraceKind, element: str | None = None, seq: int | None = None, **kw: Any
) -> TraceRecord:
    key = kw.pop("key", "k")
    instance = kw.pop("instance", 1)
    return TraceRecord(t, "p", key, instance, kind, element, seq, kw)


TRACE = [
    rec(0, K.STARTED, seq=0),
    rec(1, K.ACCEPTED, "a", 1),
    rec(2, K.COUNTED, "c", 2, count=1, of=3),
    rec(3, K.PAUSED, "b"),
    rec(5, K.RESUMED, "b"),
    rec(8, K.NEGATED, "n"),
    rec(8, K.DETECTED),
    rec(9, K.STARTED, key="k2"),
    rec(12, K.TIMED_OUT, key="k2"),
]
DET = Detection("p", "k", 1, "match", 8, (Event("a", 1, "k", {"v": 7}, seq=1),), ("a",), ("n",))


def bands(tl: Timeline) -> set[tuple[Any, ...]]:
    # Tests run without a browser, so nothing echoes into the Python-side sources.
    d = tl.sources["bands"].data
    return set(zip(d["row"], d["start"], d["end"], d["state"], d["label"], strict=True))


def markers(tl: Timeline) -> set[tuple[Any, ...]]:
    d = tl.sources["markers"].data
    return set(zip(d["row"], d["time"], d["kind"], d["text"], strict=True))


def test_sources_hold_the_full_view_and_controls_the_steps() -> None:
    tl = Timeline(TRACE, [DET])
    assert tl.slider.max == len(tl.model.times) - 1 == 7
    assert tl.time == 12
    assert ("k · p#1 · c", 2, 8, "counted", "1/3") in bands(tl)
    assert ("k2 · p#1 · (instance)", 12, 12, "timed_out", "") in bands(tl)
    assert tl.sources["detections"].data["index"] == [0]
    assert tl._y_range.factors[0] == "k2 · p#1 · (instance)"  # factors run bottom to top
    assert list(tl.key_filter.options) == ["(all)", "k", "k2"]
    assert "live rows" not in tl.status.value  # both instances have ended by t=12
    tl.seek(9)
    assert "live rows: active 1, detected" not in tl.status.value
    assert "live rows: active 1" in tl.status.value


def test_scrubbing_cuts_the_figure_at_t() -> None:
    tl = Timeline(TRACE, [DET])
    tl.slider.value = 3  # times: 0 1 2 3 5 8 9 12
    assert tl.time == 3
    assert not tl.following
    assert all(e <= 3 for e in tl.sources["bands"].data["end"])
    assert ("k · p#1 · b", 3, 3, "paused", "") in bands(tl)
    assert all(t <= 3 for t in tl.sources["markers"].data["time"])
    assert tl.sources["detections"].data["index"] == []
    assert tl._span.location == 3
    assert "paused 1" in tl.status.value
    tl.step(1)
    assert tl.time == 5
    tl.step(-10)
    assert tl.time == 0
    tl.seek(8.5)
    assert tl.time == 8
    assert tl.sources["detections"].data["index"] == [0]
    tl.step(100)
    assert tl.following


def test_speed_sets_the_play_interval() -> None:
    tl = Timeline(TRACE)
    tl.speed.value = 4.0
    assert tl.play.interval == 100
    tl.speed.value = 0.125
    assert tl.play.interval == 3200


def test_selecting_a_detection_rings_its_events_and_shows_its_row() -> None:
    tl = Timeline(TRACE, [DET])
    tl.detection_select.value = 0
    assert tl.selected == 0
    assert tl.sources["highlight"].data == {"row": ["k · p#1 · a"], "time": [1]}
    assert "<table" in tl.detail.value
    assert "match" in tl.detail.value
    assert "<td>a</td><td>#1</td>" in tl.detail.value  # stage a took event #1 (issue 16: no reprs)
    assert "Event(" not in tl.detail.value
    tl.detection_select.value = -1
    assert tl.selected is None
    assert tl.sources["highlight"].data == {"row": [], "time": []}
    assert tl.detail.value == ""


def test_tapping_a_detection_star_selects_it() -> None:
    two = Detection("p", "k2", 1, "timeout", 12, (), ())
    tl = Timeline(TRACE[:7])
    tl.add(TRACE[7:], [two])  # streamed: the browser holds detection 0 first
    tl.add(detections=[DET])
    assert tl.deltas["reset"] == 1
    tl.sources["detections"].selected.indices = [1]  # what a tap in the browser sets
    assert tl.selected == 1
    assert tl.detection_select.value == 1
    assert tl.sources["highlight"].data["row"] == ["k · p#1 · a"]


def test_filters() -> None:
    tl = Timeline(TRACE, [DET])
    tl.key_filter.value = "k2"
    assert set(tl.sources["bands"].data["row"]) == {"k2 · p#1 · (instance)"}
    assert tl.sources["detections"].data["index"] == []
    tl.key_filter.value = "(all)"
    tl.pattern_filter.value = "p"
    assert len(set(tl.sources["bands"].data["row"])) == 6


def test_a_timeline_made_for_some_keys_shows_them_in_its_filter_until_all_is_chosen() -> None:
    two = Detection("p", "k2", 1, "timeout", 12, (), ())
    tl = Timeline(TRACE, [DET, two], keys=["k2"])
    assert tl.key_filter.value == "k2"
    assert set(tl.sources["bands"].data["row"]) == {"k2 · p#1 · (instance)"}
    assert [v for _, v in tl.detection_select.options] == [-1, 1]  # only k2's detection
    tl.key_filter.value = "(all)"
    assert tl.keys is None
    assert len(set(tl.sources["bands"].data["row"])) == 6  # both keys: five rows of k, one of k2
    assert [v for _, v in tl.detection_select.options] == [-1, 0, 1]
    several = Timeline(TRACE, [DET, two], keys={"k", "k2"}, patterns=["p"])
    assert several.key_filter.value == "(2 keys: k, k2)"
    assert several.pattern_filter.value == "p"
    several.key_filter.value = "k"
    assert several.keys == {"k"}
    several.key_filter.value = "(all)"
    assert several.keys is None
    assert list(several.key_filter.options) == ["(all)", "k", "k2"]
    several.select(1)  # a detection stays listed while selected, whatever the filter
    several.key_filter.value = "k"
    assert several.detection_select.value == 1
    assert [v for _, v in several.detection_select.options] == [-1, 0, 1]


def test_live_updates_are_deltas_equal_to_a_full_redraw() -> None:
    tl = Timeline()
    for r in TRACE[:7]:
        tl.add([r])
    tl.add(detections=[DET])
    for r in TRACE[7:]:
        tl.add([r])
    assert tl.deltas["reset"] == 1  # only the initial (empty) draw
    assert tl.deltas["stream"] > 0
    assert tl.deltas["patch"] > 0  # open bands grew
    full = Timeline(TRACE, [DET])
    assert bands(tl) == bands(full)
    assert markers(tl) == markers(full)
    assert tl.sources["detections"].data["index"] == [0]


def test_a_zero_length_bands_label_goes_above_its_row_until_the_band_grows(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tl = Timeline()
    tl.add(TRACE[:3])  # counted 1/3 at t=2, which is now: a zero-length band, a tick and a dot
    d = tl.sources["bands"].data
    i = d["label"].index("1/3")
    assert d["start"][i] == d["end"][i] == 2
    assert d["label_dy"][i] < 0  # above the tick, the event's dot and a breakpoint's ring
    assert [dy for j, dy in enumerate(d["label_dy"]) if j != i] == [0.0] * (len(d["label_dy"]) - 1)
    patches: list[dict[str, Any]] = []
    patch = ColumnDataSource.patch
    monkeypatch.setattr(ColumnDataSource, "patch", lambda s, p, *a: (patches.append(p), patch(s, p, *a)))
    tl.add([TRACE[3]])  # t=3: the band now has a width, and its label sits on it
    assert (i, 0.0) in [change for p in patches for change in p["label_dy"]]


def test_live_update_resets_when_the_layout_changes() -> None:
    tl = Timeline(max_rows=3, page_rows=None)  # the window of recent instances, aggregated
    tl.add([rec(0, K.STARTED), rec(1, K.ACCEPTED, "a", 1)])
    before = tl.deltas["reset"]
    tl.add([rec(2, K.ACCEPTED, "b", 2), rec(3, K.ACCEPTED, "c", 3)])  # 4 rows > 3: aggregate
    assert tl.view().level == "instance"
    assert tl.deltas["reset"] == before + 1


@dataclass
class CountState:
    open: dict[int, int] = field(default_factory=dict)  # instance -> events seen


@dataclass(frozen=True)
class Pairs:
    """A test matcher: every two events of a key make one detection; traces what it does."""

    name: str = "pairs"

    def event_types(self) -> frozenset[str] | None:
        return None

    def new_state(self, key: Hashable) -> CountState:
        return CountState()

    def process(self, state: CountState, event: Event, ctx: Context) -> None:
        if not state.open:
            inst = ctx.new_instance()
            state.open[inst] = 0
            ctx.trace(K.STARTED, inst, event_seq=event.seq)
        inst = next(iter(state.open))
        state.open[inst] += 1
        ctx.trace(K.COUNTED, inst, "x", event.seq, {"count": state.open[inst], "of": 2})
        if state.open[inst] == 2:
            del state.open[inst]
            ctx.trace(K.DETECTED, inst)
            ctx.emit(Detection(self.name, ctx.key, inst, "match", ctx.now, (event,), ("x",)))

    def on_timer(self, state: CountState, time: float, token: Hashable, ctx: Context) -> None:
        return None

    def is_idle(self, state: CountState) -> bool:
        return not state.open


def test_from_engine_and_replay_task() -> None:
    events = [{"type": "e", "time": t, "key": f"k{t % 3}"} for t in range(30)]
    engine = Engine([Pairs()], trace=True)
    tl = Timeline.from_engine(engine)
    assert tl.model.instances == {}

    async def main() -> None:
        task = tl.replay(engine, events, batch=4, delay=0)
        await task

    asyncio.run(main())
    assert len(tl.model.detections) == len(engine.detections) == 15
    assert tl.deltas["stream"] > 3
    full = Timeline.from_engine(engine)
    assert bands(tl) == bands(full)
    assert markers(tl) == markers(full)


def test_from_run() -> None:
    result = run([Pairs()], [{"type": "e", "time": t, "key": "a"} for t in range(4)], trace=True)
    tl = Timeline.from_run(result)
    assert [d.index for d in tl.view().detections] == [0, 1]
    assert tl.view().rows == [
        "a · pairs#1 · (instance)",
        "a · pairs#1 · x",
        "a · pairs#2 · (instance)",
        "a · pairs#2 · x",
    ]


def test_follow_task_can_be_stopped() -> None:
    engine = Engine([Pairs()], trace=True)
    tl = Timeline.from_engine(engine)

    async def main() -> None:
        task = tl.follow(engine, interval=0.01)
        engine.process_many([{"type": "e", "time": 1, "key": "a"}, {"type": "e", "time": 2, "key": "a"}])
        await asyncio.sleep(0.05)
        tl.stop()
        await asyncio.sleep(0)
        assert task.cancelled() or task.done()

    asyncio.run(main())
    assert len(tl.model.detections) == 1


def test_save_writes_standalone_html(tmp_path: Path) -> None:
    tl = Timeline(TRACE, [DET], title="my run")
    out = tl.save(tmp_path / "t.html")
    text = out.read_text(encoding="utf-8")
    assert "<title>my run</title>" in text
    assert "cdn.bokeh.org" not in text  # BokehJS inline: works offline
    assert "p#1" in text
    assert len(text) > 500_000
    fig = tl.standalone_figure()
    assert (fig.x_range.start, fig.x_range.end) == (-1.0, 13.0)  # the whole run, padded
    assert list(fig.y_range.factors)[-1] == "k · p#1 · (instance)"


def test_repr() -> None:
    assert repr(Timeline(TRACE, [DET])) == "Timeline(2 instances, 1 detections, 8 steps, t=12)"


def test_epoch_millisecond_times_get_a_date_axis() -> None:
    from bokeh.models import DatetimeTickFormatter

    t0 = 1_700_000_000_000  # 2023, in ms
    tl = Timeline([rec(t0, K.STARTED), rec(t0 + 60_000, K.DETECTED)])
    assert isinstance(tl.figure.xaxis[0].formatter, DatetimeTickFormatter)
    assert tl.figure.xaxis[0].formatter.milliseconds == "%H:%M:%S.%3N"  # not bokeh's "500ms"
    plain = Timeline(TRACE)
    assert not isinstance(plain.figure.xaxis[0].formatter, DatetimeTickFormatter)
    assert plain.figure.xaxis[0].axis_label == "event time (ms)"


def test_model_module_is_pure_python() -> None:
    import subprocess
    import sys

    code = (
        "import sys, workbench.widgets.model; "
        "bad = [m for m in ('bokeh', 'ipywidgets', 'jupyter_bokeh', 'IPython') if m in sys.modules]; "
        "assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_doctests() -> None:
    import doctest

    import workbench.widgets.timeline

    result = doctest.testmod(workbench.widgets.timeline)
    assert result.attempted > 0
    assert result.failed == 0


def legend_entries(fig: Any) -> set[str]:
    from bokeh.models import Legend

    return {
        str(item.label.value)
        for lg in fig.below
        if isinstance(lg, Legend)
        for item in lg.items
        if item.visible
    }


def test_the_legend_shows_only_what_the_view_draws_and_grows_with_it() -> None:
    tl = Timeline(TRACE, [DET])
    tl.seek(1)  # only the start and the first acceptance so far
    early = legend_entries(tl.figure)
    assert "active" in early
    assert "· started" in early
    assert "timed out" not in early
    assert "match detection" not in early
    tl.seek(12)  # everything: the pause, the negation, the detection, the timeout
    late = legend_entries(tl.figure)
    assert {"paused", "negated", "timed out", "match detection", "· counted", "· resumed"} <= late
    assert "stopped" not in late  # nothing was stopped
    assert "· late" not in late
    saved = legend_entries(tl.standalone_figure())
    assert saved == late
