"""The collector settings a feed or a record build runs under, and that they always come back."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from tests.engine.oracle import is_type
from workbench.engine import Engine, Event
from workbench.engine.gcpause import RELAX_FROM, RELAXED_GEN0, gc_paused, gc_relaxed
from workbench.engine.nfa import begin
from workbench.errors import CepError


@pytest.fixture(autouse=True)
def _default_thresholds() -> Iterator[None]:
    before, enabled = gc.get_threshold(), gc.isenabled()
    gc.set_threshold(700, 10, 10)
    gc.enable()
    yield
    gc.set_threshold(*before)
    if not enabled:
        gc.disable()


def test_relaxed_raises_the_young_threshold_and_restores_it() -> None:
    with gc_relaxed():
        assert gc.get_threshold() == (RELAXED_GEN0, 10, 10)
        assert gc.isenabled()  # why: unlike gc_paused, collections still happen
    assert gc.get_threshold() == (700, 10, 10)


def test_relaxed_restores_after_an_error() -> None:
    with pytest.raises(ZeroDivisionError), gc_relaxed():
        _ = 1 / 0
    assert gc.get_threshold() == (700, 10, 10)


def test_relaxed_keeps_a_higher_user_setting() -> None:
    gc.set_threshold(RELAXED_GEN0 * 2, 5, 5)
    with gc_relaxed():
        assert gc.get_threshold() == (RELAXED_GEN0 * 2, 5, 5)
    assert gc.get_threshold() == (RELAXED_GEN0 * 2, 5, 5)


def test_paused_restores_the_enabled_state() -> None:
    with gc_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    with gc_paused():
        pass
    assert not gc.isenabled()


def test_process_many_relaxes_only_while_it_feeds() -> None:
    seen: list[tuple[int, int, int]] = []
    pattern = begin("a").where(is_type("a")).next("b").where(is_type("b")).build("p")
    engine = Engine([pattern], on_detection=lambda d: seen.append(gc.get_threshold()))
    many = [Event("x", t, "k") for t in range(RELAX_FROM)]
    out = engine.process_many([*many, Event("a", RELAX_FROM, "k"), Event("b", RELAX_FROM + 1, "k")])
    assert len(out) == 1
    assert seen == [(RELAXED_GEN0, 10, 10)]
    assert gc.get_threshold() == (700, 10, 10)
    bad = [Event("a", t, "k") for t in range(RELAX_FROM + 2, 2 * RELAX_FROM + 2)]
    with pytest.raises(CepError):  # why: an event without a time is refused mid-feed
        engine.process_many([*bad, {"type": "a"}])
    assert gc.get_threshold() == (700, 10, 10)


def test_a_few_events_keep_the_collector_as_it_is() -> None:
    # one process() call: changing and restoring the thresholds would cost more than it saves
    seen: list[tuple[int, int, int]] = []
    pattern = begin("a").where(is_type("a")).next("b").where(is_type("b")).build("p")
    engine = Engine([pattern], on_detection=lambda d: seen.append(gc.get_threshold()))
    engine.process(Event("a", 1, "k"))
    assert len(engine.process(Event("b", 2, "k"))) == 1
    assert seen == [(700, 10, 10)]
