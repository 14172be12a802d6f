"""``Timeline.from_engine`` shows dates for a live feed on the wall clock, numbers otherwise."""

from __future__ import annotations

import itertools
import re

import pandas as pd

from workbench.session.session import CepSession
from workbench.session.times import NUMBERS, TimeFormat
from workbench.widgets import Timeline

TEXT = """
event reading(machine, celsius)
group hot
    on reading(machine as M) where e.celsius > 80
    @or @timeout(1500ms) @timeout_channel {
        @size(2) again: reading(machine = M) where e.celsius > 80
    }
"""
DATE = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}")


def test_a_wall_clock_feed_shows_dates() -> None:
    s = CepSession()
    s.define(TEXT)
    engine = s.start_feed(["hot"])
    s.feed([{"type": "reading", "machine": "m1", "celsius": 90}])
    tl = Timeline.from_engine(engine)
    assert tl.times.dates
    assert DATE.search(tl.time_label.value)


def test_a_test_clock_keeps_numbers_and_times_can_be_given() -> None:
    s = CepSession()
    s.define(TEXT)
    ticks = itertools.count()
    engine = s.start_feed(["hot"], clock=lambda: next(ticks) * 1000.0)
    s.feed([{"type": "reading", "machine": "m1", "celsius": 90}])
    tl = Timeline.from_engine(engine)
    assert tl.times == NUMBERS
    assert not DATE.search(tl.time_label.value)
    wall = s.start_feed(["hot"])
    assert Timeline.from_engine(wall, times=NUMBERS).times == NUMBERS


def test_step_buttons_are_never_squeezed_and_control_rows_wrap() -> None:
    """At 1280 px the controls did not fit one row; flexbox cut the buttons to "◀ st…"."""
    tl = Timeline([])
    for button in (tl.back, tl.forward):
        assert button.layout.flex == "0 0 auto"
        assert button.layout.width == "auto"
    rows = [c for c in tl.widget.children if tl.back in getattr(c, "children", ())]
    assert rows
    assert rows[0].layout.flex_flow == "row wrap"


def test_an_elapsed_time_axis_is_never_read_as_dates() -> None:
    s = CepSession()
    s.define("sequence s begin a: x")
    frame = pd.DataFrame({"time": pd.to_timedelta(["400D", "401D"]), "type": "x"})  # 3.5e10 ms and up
    done = s.replay(["s"], frame)
    assert s.times == TimeFormat(elapsed=True)
    tl = Timeline(done.outcome.trace, done.outcome.detections, times=s.times)
    assert tl.axis_dates() is False
    assert Timeline(times=NUMBERS).axis_dates() is None
    assert tl.time_label.value == "<b>t = 401 days 00:00:00.000</b>"
