"""Condition errors as the engine records them."""

from __future__ import annotations

from workbench.engine import Engine, Event
from workbench.engine.nfa import SequencePattern, Stage


def test_a_python_condition_reading_a_field_as_an_attribute_is_told_how_to_read_it() -> None:
    # Event has no attribute access to fields (a __getattr__ slows every attribute read of every
    # event): the recorded error says what to write instead
    pattern = SequencePattern("p", (Stage("a", where=lambda e: e.price > 1),))
    engine = Engine([pattern])
    engine.process_many([Event("t", 1, "k", {"price": 2.0}), Event("t", 2, "k", {"qty": 1})])
    [fault] = engine.errors
    assert fault.kind == "AttributeError"
    assert fault.message.endswith("(a field: read it with e['price'] or e.get('price'))")
    assert fault.count == 2  # the second event lacks the field: the same kind, counted, no hint needed

    pattern = SequencePattern("q", (Stage("a", where=lambda e: e["price"] > 1),))
    engine = Engine([pattern])
    engine.process_many([Event("t", 1, "k", {"price": 2.0})])
    assert engine.errors == []
    assert len(engine.detections) == 1
