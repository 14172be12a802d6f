"""The seed's W-shaped price pattern over real daily closes (bokeh-sampledata: AAPL, GOOG, IBM, MSFT).

A W is: falling days, then rising days, then falling, then rising again (each leg one or more
consecutive days, legs strictly adjacent), within 20 trading days. Each event is one trading day
with its close and its move versus the previous close. Expected results come from the brute-force
reference matcher (tests/engine/oracle.py), under each of the five skip strategies.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.oracle import Oracle, OStage
from workbench.engine.events import Event
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, SkipStrategy, Stage
from workbench.testing import NFATestHarness

DAYS = 800
LEGS = (("a", "down"), ("b", "up"), ("c", "down"), ("d", "up"))
SKIPS = ("no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first:b", "skip_to_last:c")


def days(symbol: str) -> list[Event]:
    from bokeh.sampledata import stocks

    data: dict[str, Any] = getattr(stocks, symbol)
    closes = data["close"][: DAYS + 1]
    out = []
    for i in range(1, len(closes)):
        move = "up" if closes[i] > closes[i - 1] else "down" if closes[i] < closes[i - 1] else "flat"
        fields = {"date": data["date"][i], "close": closes[i], "move": move}
        out.append(Event("day", i - 1, symbol, fields, i - 1))
    return out


def w_pattern(skip: str) -> SequencePattern:
    stages = tuple(
        Stage(
            name,
            f"e.move == {move!r}",
            Contiguity.STRICT,
            quantifier=Quantifier(1, None, inner=Contiguity.STRICT),
        )
        for name, move in LEGS
    )
    return SequencePattern("W", stages, within_ms=20, skip=SkipStrategy.parse(skip))


def reference(events: list[Event], skip: str) -> list[tuple[tuple[int, int], ...]]:
    ostages = [
        OStage(name, (lambda m: lambda e: e["move"] == m)(move), "strict", 1, None, False, "strict")
        for name, move in LEGS
    ]
    oracle = Oracle(ostages, events, [e.time for e in events], within=20)
    kind, _, target = skip.partition(":")
    return oracle.skip_matches(kind, target or None)


@pytest.mark.parametrize("skip", SKIPS)
@pytest.mark.parametrize("symbol", ["AAPL", "GOOG", "IBM", "MSFT"])
def test_w_pattern_on_daily_prices(symbol: str, skip: str) -> None:
    events = days(symbol)
    harness = NFATestHarness(w_pattern(skip))
    for e in events:
        harness.feed(e)
    names = [n for n, _ in LEGS]
    got = [
        tuple(sorted((e.seq, names.index(ch)) for e, ch in zip(d.events, d.channels, strict=True)))
        for d in harness.detections
        if d.kind == "match"
    ]
    want = reference(events, skip)
    assert want, "the data should contain W shapes"
    if skip == "no_skip":
        assert sorted(got) == sorted(want)
    else:
        assert got == want
