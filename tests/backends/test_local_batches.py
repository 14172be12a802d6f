"""``LocalBackend`` hands the engine runs of events (``process_many``): the same as one at a time."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.backends.matchers import standard_matchers
from tests.backends.strategies import random_options, random_script
from workbench.backends import AdvanceTime, Input, LocalBackend
from workbench.backends import local as local_backend
from workbench.engine.runtime import Engine


def one_at_a_time(script: list[Input], options: dict[str, Any]) -> Engine:
    """What ``LocalBackend.run`` did before: ``process`` per event."""
    engine = Engine(standard_matchers(), out_of_orderness=options["out_of_orderness"], trace=options["trace"])
    for item in script:
        if isinstance(item, AdvanceTime):
            engine.advance_time(item.watermark)
        else:
            engine.process(item)
    if options["finish"]:
        engine.finish(options["until"])
    return engine


@pytest.mark.parametrize("seed", range(60))
def test_runs_of_events_give_what_one_at_a_time_gives(seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local_backend, "BATCH", 7)  # why: runs split by the bound, not only by marks
    rng = random.Random(seed)
    script = random_script(rng, rng.randint(0, 80))
    options = random_options(rng)
    expected = one_at_a_time(script, options)
    actual = LocalBackend().run(standard_matchers(), script, **options)
    assert list(map(repr, actual.detections)) == list(map(repr, expected.detections))
    assert list(map(repr, actual.reactions)) == list(map(repr, expected.reactions))
    assert actual.late == expected.late
    assert list(map(repr, actual.trace)) == list(map(repr, expected.trace_records))
