"""The Flink backend's reducers for the engine's dataclasses: same values back, other classes untouched."""

from __future__ import annotations

import copyreg
import pickle
from dataclasses import dataclass, field
from typing import Any

from workbench.backends.flink.pickling import register, register_engine
from workbench.backends.keyed import KeyRecord
from workbench.engine.detection import MeasureValues
from workbench.engine.events import Event
from workbench.engine.host import KeyState


@dataclass(frozen=True, slots=True)
class Frozen:
    a: int
    b: Any = None


@dataclass(slots=True)
class Mutable:
    a: int
    b: list[int] = field(default_factory=list)
    later: int = field(init=False)


@dataclass(slots=True)
class OwnReduce:
    a: int

    def __reduce__(self) -> tuple[object, ...]:
        return (OwnReduce, (self.a + 1,))  # deliberately not the identity: shows which reducer ran


def test_engine_classes_round_trip_through_the_fast_reducer() -> None:
    register_engine()
    assert copyreg.dispatch_table.get(Event) is not None
    event = Event("login", 5, ("u", 1), {"price": 1.5, "ip": "10.0.0.1"}, 7)
    record = KeyRecord(KeyState({0: [event]}, {0: 2}, {}), [(5, 7, event)], [], 1, 2, None, ("u", 1))
    back = pickle.loads(pickle.dumps(record))
    assert back == record
    assert back.events[0][2] is back.host.states[0][0]  # shared objects stay shared
    assert type(back.key) is tuple


def test_frozen_and_mutable_slots_dataclasses_and_unset_slots() -> None:
    register([Frozen, Mutable])
    assert copyreg.dispatch_table[Frozen] is copyreg.dispatch_table[Mutable]
    assert pickle.loads(pickle.dumps(Frozen(1, [Frozen(2)]))) == Frozen(1, [Frozen(2)])
    m = Mutable(3, [4])
    back = pickle.loads(pickle.dumps(m))
    assert (back.a, back.b) == (3, [4])
    assert not hasattr(back, "later")  # unset stays unset
    m.later = 9
    assert pickle.loads(pickle.dumps(m)).later == 9


def test_classes_with_their_own_reducer_keep_it() -> None:
    register([OwnReduce, MeasureValues])
    assert OwnReduce not in copyreg.dispatch_table
    assert MeasureValues not in copyreg.dispatch_table
    assert pickle.loads(pickle.dumps(OwnReduce(1))).a == 2
