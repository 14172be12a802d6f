"""``@timer`` catch-up: empty windows close one by one up to a bound, then skip to the next event."""

from __future__ import annotations

import math
import warnings
from typing import Any

import pytest

from workbench.engine.reactions import Channel, Instance, MapCounter, ReactionGroup, Timer
from workbench.engine.reactions.timers import CATCH_UP_WINDOWS
from workbench.engine.runtime import Engine, run
from workbench.errors import CepError, PatternError
from workbench.language import compile_text


def ev(t: float, typ: str = "a", key: str = "k", **fields: Any) -> dict[str, Any]:
    return {"type": typ, "time": t, "key": key, "fields": fields}


def windows(delay: float = 10, period: float | None = 10) -> ReactionGroup:
    timer = Timer(delay, period, MapCounter("e.i % 2"))
    return ReactionGroup("w", "or", channels=(Channel("a", "a", timer=timer),), instances=(Instance("k", 0),))


def _grid(delay: float, period: float, events: list[float], until: float) -> list[tuple[float, int]]:
    """Brute force: every window boundary up to ``until`` and how many events it closes over.

    An event at a boundary is in the window that closes there (events come before timers).
    """
    out, start, b = [], -math.inf, delay
    while b <= until:
        out.append((b, sum(1 for t in events if start < t <= b)))
        start, b = b, b + period
    return out


def _windows(res: Any) -> list[tuple[float, int]]:
    return [(d.time, len(d.events)) for d in res.detections]


def test_a_gap_within_the_bound_closes_every_empty_window() -> None:
    times = [1.0, 5.0, 3_000.0, 3_004.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no catch-up warning below the bound
        res = run(windows(), [ev(t, i=int(t)) for t in times], until=3_020)
    assert _windows(res) == _grid(10, 10, times, 3_020)


def test_an_epoch_millisecond_gap_skips_to_the_next_event_and_warns_once() -> None:
    start = 1_700_000_000_000
    times = [1.0, start + 3, start + 12, start + 15, 2 * start + 7]
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        res = run(windows(), [ev(t, i=1) for t in times], until=2 * start + 40)
    assert len(seen) == 1
    assert "empty windows" in str(seen[0].message)
    got = _windows(res)
    # the first windows close one by one; the catch-up stops at the bound ...
    assert got[: CATCH_UP_WINDOWS + 1] == _grid(10, 10, times, 10 * (CATCH_UP_WINDOWS + 1))
    # ... and the windows that hold events close on Prova's grid, with their events
    tail = [w for w in got if w[0] > start]
    assert (start + 10, 1) in tail
    assert (start + 20, 2) in tail
    assert (2 * start + 10, 1) in tail
    assert tail[-1] == (2 * start + 40, 0)
    assert len(got) < 4 * CATCH_UP_WINDOWS  # not 10^11 windows


def test_no_event_can_come_after_an_infinite_watermark() -> None:
    engine = Engine([windows()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        engine.process(ev(1, i=1))
        engine.advance_time(math.inf)
    assert len(engine.detections) == CATCH_UP_WINDOWS + 1


@pytest.mark.parametrize(
    ("delay", "period"), [(0.001, 0.001), (10, 0.5), (0.5, None), (10, math.nan), (-1, 5)]
)
def test_periods_under_one_millisecond_are_rejected(delay: float, period: float | None) -> None:
    with pytest.raises(PatternError, match="@timer"):
        Timer(delay, period)


def test_zero_delay_with_a_real_period_is_fine() -> None:
    assert Timer(0, 5).period_ms == 5


@pytest.mark.parametrize(
    ("annotation", "bad"),
    [("@timer(0.001, 0.001)", "0.001"), ("@timer(10ms, 0.5)", "0.5"), ("@timer(0.5)", "0.5")],
)
def test_the_language_names_the_timer_argument(annotation: str, bad: str) -> None:
    text = f"group g\n    @or {{\n        {annotation} t1: c\n    }}\n"
    with pytest.raises(CepError, match="at least 1 ms") as info:
        compile_text(text)
    span = getattr(info.value, "span", None)
    assert span is not None
    assert span.line == 3
    assert span.column == 9 + annotation.rindex(bad)  # the period (or the lone delay) itself
