"""One owner per engine: concurrent feeders and a ticking thread give exactly a serial run's detections."""

from __future__ import annotations

import threading
from collections import Counter
from typing import Any

import pytest

from workbench.engine import Detection, Engine
from workbench.engine.nfa import Quantifier, SequencePattern, Stage
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.sharding import ShardedEngine

KEYS = 64


def _patterns() -> list[Any]:
    seq = SequencePattern(
        "ab",
        (
            Stage("a", "e.n % 3 == 0", types=("a",)),
            Stage("b", types=("b",), quantifier=Quantifier.times(1, 2)),
            Stage("c", types=("c",)),
        ),
        within_ms=10**12,  # why: results must not depend on the wall clock of a processing-time run
    )
    grp = ReactionGroup(
        "grp", "and", channels=(Channel("a", "a"), Channel("c", "c")), initiator=Initiator("b")
    )
    return [seq, grp]


def _stream(keys: range, n: int) -> list[dict[str, Any]]:
    kinds = "abbcab"
    return [{"type": kinds[i % 6], "key": f"k{keys[(i // 6) % len(keys)]}", "n": i} for i in range(n)]


def _signature(detections: list[Detection]) -> Counter[tuple[object, ...]]:
    return Counter((d.pattern, d.key, d.kind, tuple(e.fields.get("n") for e in d.events)) for d in detections)


def _with_times(stream: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{**e, "time": 0} for e in stream]


def test_two_feeders_and_a_ticker_give_the_serial_detections() -> None:
    half = KEYS // 2
    streams = [_with_times(_stream(range(0, half), 50_000)), _with_times(_stream(range(half, KEYS), 50_000))]
    serial = Engine(_patterns(), time_mode="processing", clock=lambda: 0.0)
    for s in streams:
        serial.process_many(s)
    expected = _signature(serial.detections)
    assert sum(expected.values()) > 1000

    engine = Engine(_patterns(), time_mode="processing")
    returned: list[list[Detection]] = [[], [], []]
    errors: list[BaseException] = []
    done = threading.Event()

    def feed(i: int) -> None:
        try:
            for start in range(0, len(streams[i]), 1000):
                chunk = streams[i][start : start + 1000]
                if start % 2000:
                    returned[i].extend(engine.process_many(chunk))
                else:
                    for e in chunk:
                        returned[i].extend(engine.process(e))
        except BaseException as exc:  # pragma: no cover - the failure this test exists to catch
            errors.append(exc)

    def tick() -> None:
        try:
            while not done.wait(0.0002):  # why: a live feed ticks periodically, not in a busy loop
                returned[2].extend(engine.tick())
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    feeders = [threading.Thread(target=feed, args=(i,)) for i in range(2)]
    ticker = threading.Thread(target=tick)
    for t in (*feeders, ticker):
        t.start()
    for t in feeders:
        t.join()
    done.set()
    ticker.join()
    assert errors == []
    assert _signature(engine.detections) == expected
    assert _signature([d for r in returned for d in r]) == expected


@pytest.mark.parametrize("shards", [1, 3])
def test_sharded_engine_feeders_give_the_serial_detections(shards: int) -> None:
    streams = [_with_times(_stream(range(0, 8), 6000)), _with_times(_stream(range(8, 16), 6000))]
    serial = Engine(_patterns())
    for s in streams:
        for e in s:
            serial.process(e)
    engine = ShardedEngine(_patterns(), shards)
    returned: list[list[Detection]] = [[], []]

    def feed(i: int) -> None:
        for e in streams[i]:
            returned[i].extend(engine.process(e))

    threads = [threading.Thread(target=feed, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    expected = _signature(serial.detections)
    assert _signature(engine.detections) == expected
    assert _signature([d for r in returned for d in r]) == expected
