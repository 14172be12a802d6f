"""Snapshots are data: round trips, refused mismatches, and fuzzed or hostile blobs give only CepError."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import pickle
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.engine.resume import finished, resumed, signature
from workbench.engine.fingerprint import fingerprint
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, Stage
from workbench.engine.reactions import Channel, Initiator, ReactionGroup
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine
from workbench.engine.snapshot import FORMAT, VERSION, _digest, dump, load
from workbench.errors import CepError


def _sequence(name: str = "seq", price: float = 10.0) -> SequencePattern:
    return SequencePattern(
        name,
        (
            Stage("a", types=("a",)),
            Stage(
                "b",
                f"e.price > {price}",
                Contiguity.RELAXED,
                types=("b",),
                quantifier=Quantifier.one_or_more(),
            ),
            Stage("c", contiguity=Contiguity.RELAXED, types=("c",)),
        ),
        within_ms=50,
    )


def _group() -> ReactionGroup:
    return ReactionGroup(
        "grp",
        "and",
        channels=(Channel("a", "a"), Channel("b", "b")),
        timeout_ms=40,
        timeout_channel=True,
        initiator=Initiator("c"),
    )


def _events(n: int = 60) -> list[dict[str, Any]]:
    kinds = "abcab"
    return [
        {"type": kinds[i % 5], "time": i * 3, "key": f"k{i % 3}", "price": float(i % 17)} for i in range(n)
    ]


def _patterns() -> list[object]:
    return [_sequence(), _group()]


def test_every_cut_point_restores_to_the_same_detections() -> None:
    events = _events()

    def make() -> Engine:
        return Engine(_patterns())  # type: ignore[arg-type]

    whole = finished(make, events)
    for cut in range(0, len(events), 7):
        assert signature(*resumed(make, events, cut)) == signature(whole)
    assert whole.detections


def test_a_snapshot_is_versioned_json_with_a_fingerprint_per_pattern() -> None:
    engine = Engine(_patterns())  # type: ignore[arg-type]
    engine.process_many(_events(20))
    envelope = json.loads(engine.snapshot())
    assert envelope["format"] == FORMAT
    assert envelope["version"] == VERSION
    assert [p[0] for p in envelope["patterns"]] == ["seq", "grp"]
    assert envelope["patterns"][0][1] == fingerprint(_sequence())


def test_a_snapshot_of_one_pattern_is_refused_by_another_with_the_same_name() -> None:
    blob = Engine([_sequence(price=10.0)]).snapshot()
    with pytest.raises(CepError, match="different definition"):
        Engine([_sequence(price=11.0)]).restore(blob)
    with pytest.raises(CepError, match="taken with patterns"):
        Engine([_sequence(name="other")]).restore(blob)


@pytest.mark.parametrize(
    "blob",
    [
        b"",
        b"\x80\x04K\x01.",  # a pickle
        pickle.dumps({"format": FORMAT}),
        b"not json at all",
        b'{"format": "something else"}',
        json.dumps({"format": FORMAT, "version": 99}).encode(),
        json.dumps({"format": FORMAT, "version": VERSION, "patterns": "x"}).encode(),
        b"\xff\xfe\x00garbage",
        b"[" * 100_000 + b"]" * 100_000,
    ],
)
def test_foreign_and_garbled_blobs_are_refused(blob: bytes) -> None:
    with pytest.raises(CepError):
        Engine([_sequence()]).restore(blob)


def test_a_truncated_blob_is_refused() -> None:
    engine = Engine([_sequence()])
    engine.process_many(_events(30))
    blob = engine.snapshot()
    for cut in (1, len(blob) // 2, len(blob) - 1):
        with pytest.raises(CepError):
            Engine([_sequence()]).restore(blob[:cut])


def _forged(state: object, patterns: list[tuple[str, str]]) -> bytes:
    """A blob whose checksum is right but whose state was written by hand (an attacker's)."""
    envelope = {
        "format": FORMAT,
        "version": VERSION,
        "patterns": patterns,
        "digest": _digest(state),
        "state": state,
    }
    return json.dumps(envelope).encode()


@pytest.mark.parametrize(
    "state",
    [
        {"$o": "os:system", "v": {}},
        {"$o": "builtins:eval", "v": {}},
        {"$o": "subprocess:Popen", "v": {"args": "echo hi"}},
        {"$e": "os:system", "v": 1},
        {"$n": "workbench.engine.runtime:Engine", "v": []},
        {"$o": "workbench.errors:CepError", "v": {}},
        {"$r": 5},
        {"$q": 1},
        {"$d": [[{"$l": []}, 1]]},  # an unhashable key
        {"$f": "1e999999"},
        {"$dt": 12},
        [1, 2],
    ],
)
def test_forged_blobs_build_nothing_but_engine_state(state: object) -> None:
    patterns = [("seq", fingerprint(_sequence()))]
    with pytest.raises(CepError):
        load(_forged(state, patterns), patterns)


def test_a_forged_state_of_the_wrong_class_is_refused_by_the_engine() -> None:
    patterns = [("seq", fingerprint(_sequence()))]
    empty = {"$d": []}
    fields = {"states": empty, "instances": empty, "timer_counts": empty}
    blob = _forged({"$o": "workbench.engine.host:KeyState", "v": fields}, patterns)
    with pytest.raises(CepError, match="not an engine's state"):
        Engine([_sequence()]).restore(blob)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fuzzed_snapshot_bytes_give_only_cep_error(data: st.DataObject) -> None:
    engine = Engine(_patterns())  # type: ignore[arg-type]
    engine.process_many(_events(40))
    blob = bytearray(engine.snapshot())
    for _ in range(data.draw(st.integers(1, 4))):
        op = data.draw(st.sampled_from(["flip", "cut", "insert", "delete"]))
        at = data.draw(st.integers(0, max(0, len(blob) - 1)))
        if op == "flip" and blob:
            blob[at] ^= data.draw(st.integers(1, 255))
        elif op == "cut":
            del blob[at:]
        elif op == "insert":
            blob[at:at] = data.draw(st.binary(min_size=1, max_size=8))
        elif blob:
            del blob[at : at + data.draw(st.integers(1, 16))]
    target = Engine(_patterns())  # type: ignore[arg-type]
    try:
        target.restore(bytes(blob))
    except CepError:
        return
    target.process_many(_events(10))  # a blob that still reads must leave a working engine
    target.finish()


def test_values_json_cannot_hold_survive_a_round_trip() -> None:
    values = [
        math.nan,
        math.inf,
        -math.inf,
        dt.datetime(2026, 12, 1, 16, 3, tzinfo=dt.UTC),
        dt.date(2026, 1, 2),
        dt.timedelta(days=1, seconds=2, microseconds=3),
        decimal.Decimal("1.10"),
        (1, "a"),
        frozenset({1, 2}),
        {3, 4},
        {(1, 2): "tuple key", 5: "int key", None: "none key"},
    ]
    back = load(dump(values, []), [])
    assert isinstance(back, list)
    assert math.isnan(back[0])
    assert back[1:3] == [math.inf, -math.inf]
    assert back[3:] == values[3:]
    assert [type(v) for v in back] == [type(v) for v in values]


def test_shared_objects_stay_shared_and_cycles_and_foreign_classes_are_refused() -> None:
    inner: list[int] = [1]
    back = load(dump([inner, inner], []), [])
    assert isinstance(back, list)
    assert back[0] is back[1]
    cyclic: list[object] = []
    cyclic.append(cyclic)
    with pytest.raises(CepError, match="refers to itself"):
        dump(cyclic, [])

    class Foreign:
        pass

    with pytest.raises(CepError, match="cannot store"):
        dump([Foreign()], [])


def test_the_sharded_engine_snapshots_too() -> None:
    events = _events()

    def make() -> ShardedEngine:
        return ShardedEngine(_patterns(), shards=3)  # type: ignore[arg-type]

    whole = finished(make, events)
    first, second = resumed(make, events, 25)
    assert signature(first, second) == signature(whole)
    assert second.late_count == whole.late_count
    with pytest.raises(CepError, match="3 shards, this engine has 2"):
        ShardedEngine(_patterns(), shards=2).restore(first.snapshot())  # type: ignore[arg-type]
    with pytest.raises(CepError, match="not a sharded engine"):
        ShardedEngine(_patterns(), shards=3).restore(Engine(_patterns()).snapshot())  # type: ignore[arg-type]


def _reforged(blob: bytes, edit: Callable[[dict[str, Any]], None]) -> bytes:
    """``blob`` with its engine image edited by hand and its checksum made right again (an attacker's)."""
    envelope = json.loads(blob)
    edit(envelope["state"]["v"])
    envelope["digest"] = _digest(envelope["state"])
    return json.dumps(envelope).encode()


def _swap(pairs: list[list[Any]]) -> None:
    pairs[0][0], pairs[1][0] = pairs[1][0], pairs[0][0]


_IMAGE_EDITS: dict[str, Callable[[dict[str, Any]], None]] = {
    "no keys table": lambda v: v.pop("keys"),
    "keys a list": lambda v: v.update(keys={"$l": []}),
    "a key's state a number": lambda v: v["keys"]["$d"][0].__setitem__(1, 5),
    "a state under a pattern index out of range": lambda v: v["keys"]["$d"][0][1]["v"]["states"]["$d"][
        0
    ].__setitem__(0, 7),
    "a pattern's state of another pattern's class": lambda v: _swap(
        v["keys"]["$d"][0][1]["v"]["states"]["$d"]
    ),
    "a negative instance counter": lambda v: v["keys"]["$d"][0][1]["v"]["instances"]["$d"][0].__setitem__(
        1, -3
    ),
    "a timer of text": lambda v: v["timers"]["$l"].append("soon"),
    "a timer of a pattern that is not there": lambda v: v["timers"]["$l"].append({"$t": [1, 1, "k0", 9, 0]}),
    "a timer that no key counts": lambda v: v["timers"]["$l"].append({"$t": [1, 1, "zz", 0, 0]}),
    "a budget without its released table": lambda v: v["budget"]["v"].pop("released"),
    "a buffered number": lambda v: v.update(buffer={"$l": [3]}),
    "a watermark of text": lambda v: v.update(watermark="later"),
    "a NaN clock": lambda v: v.update(max_seen={"$f": "nan"}),
    "a counter of text": lambda v: v.update(next_seq="7"),
    "late events that are numbers": lambda v: v.update(late={"$l": [1, 2]}),
    "no budget": lambda v: v.update(budget=None),
}


@pytest.mark.parametrize("what", sorted(_IMAGE_EDITS))
def test_a_forged_image_with_a_right_checksum_is_refused_before_it_is_used(what: str) -> None:
    engine = Engine(_patterns())  # type: ignore[arg-type]
    engine.process_many(_events(40))
    blob = _reforged(engine.snapshot(), _IMAGE_EDITS[what])
    target = Engine(_patterns())  # type: ignore[arg-type]
    with pytest.raises(CepError, match="snapshot"):
        target.restore(blob)
    target.process_many(_events(10))  # the refused blob left the engine as it was


def test_an_integer_too_long_for_json_decimals_survives_a_snapshot() -> None:
    from workbench.language import compile_pattern

    pattern = compile_pattern("sequence s within 1h begin a: a followed by b: b")
    a = Engine([pattern])
    a.process({"type": "a", "time": 0, "x": 10**5000, "y": -(7**9000)})
    b = Engine([pattern])
    b.restore(a.snapshot())
    (d,) = b.process({"type": "b", "time": 1})
    assert d.events[0].fields == {"x": 10**5000, "y": -(7**9000)}
