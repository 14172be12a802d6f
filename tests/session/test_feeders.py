"""Sessions with ``emit into`` (feeders run with their consumers) and ``partition by user, ip``."""

from __future__ import annotations

import itertools

import pandas as pd
import pytest

from workbench.errors import CepError, EventError
from workbench.results import detections_to_frame
from workbench.session.inputs import load_events, missing_keys
from workbench.session.session import CepSession

BURST = """
sequence burst
    partition by user, ip
    within 10s
    no timeouts
    skip past last event
    measures fails = count(f)
    emit into burst
    begin f: fail times 3
"""
ATTACK = """
sequence attack
    partition by user, ip
    no timeouts
    measures total = sum(b.fails)
    begin b: burst times 2
"""


def logins(*rows: tuple[int, str | None, str | None]) -> pd.DataFrame:
    return pd.DataFrame([{"type": "fail", "time": t, "user": u, "ip": i} for t, u, i in rows])


def session() -> CepSession:
    s = CepSession()
    s.define(BURST)
    s.define(ATTACK)
    return s


def six(user: str, ip: str, start: int = 0) -> list[tuple[int, str | None, str | None]]:
    return [(start + t, user, ip) for t in range(6)]


def test_running_a_consumer_runs_its_feeders_under_the_composite_key() -> None:
    s = session()
    rows = sorted(six("ann", "10.0.0.1") + six("ann", "10.0.0.2", 1), key=lambda r: r[0])
    done = s.replay(["attack"], logins(*rows))
    found = {(d.pattern, d.key) for d in done.outcome.detections}
    assert found == {
        ("burst", ("ann", "10.0.0.1")),
        ("burst", ("ann", "10.0.0.2")),
        ("attack", ("ann", "10.0.0.1")),
        ("attack", ("ann", "10.0.0.2")),
    }
    attack = [d for d in done.outcome.detections if d.pattern == "attack"]
    assert {dict(d.measures)["total"] for d in attack} == {6}
    assert all(e.seq < -1 and e.type == "burst" for d in attack for e in d.events)
    assert s.detections("attack")
    assert s.detections("burst")
    frame = detections_to_frame(done.outcome.detections)
    assert set(frame.key) == {("ann", "10.0.0.1"), ("ann", "10.0.0.2")}  # one column of tuples


def test_the_same_fields_in_one_partition_only() -> None:
    s = session()
    rows = [
        (0, "ann", "a"),
        (1, "bob", "a"),
        (2, "ann", "a"),
        (3, "bob", "a"),
        (4, "ann", "a"),
        (5, "bob", "a"),
    ]
    done = s.replay(["burst"], logins(*rows))
    assert {d.key for d in done.outcome.detections} == {("ann", "a"), ("bob", "a")}


def test_a_row_missing_one_key_field_is_an_error_naming_row_and_field() -> None:
    s = session()
    with pytest.raises(EventError, match=r"row 1 \(index 1\) has no value in the partition key column 'ip'"):
        s.replay(["burst"], logins((0, "ann", "a"), (1, "ann", None), (2, "ann", "a")))
    done = s.replay(["burst"], logins((0, "ann", "a"), (1, "ann", None)), allow_missing_key=True)
    assert done.missing_keys == 1
    with pytest.raises(EventError, match="no partition key column 'ip'"):
        s.replay(["burst"], pd.DataFrame({"type": ["fail"], "time": [0], "user": ["ann"]}))


def test_events_as_mappings_get_tuple_keys() -> None:
    events = load_events(
        [
            {"type": "fail", "time": 0, "user": "ann", "ip": "a"},
            {"type": "fail", "time": 1, "user": "ann", "ip": "b"},
        ],
        key=("user", "ip"),
    )
    assert [e.key for e in events] == [("ann", "a"), ("ann", "b")]
    assert events[0].fields["user"] == "ann"  # the key fields stay readable
    with pytest.raises(EventError, match="event 1 has no value for the partition key field 'ip'"):
        load_events(
            [
                {"type": "fail", "time": 0, "user": "ann", "ip": "a"},
                {"type": "fail", "time": 1, "user": "ann"},
            ],
            key=("user", "ip"),
        )
    assert missing_keys([{"user": "ann"}, {"user": "ann", "ip": "a"}], ("user", "ip")) == 1
    assert missing_keys(logins((0, "ann", None), (1, None, "a"), (2, "b", "c")), ("user", "ip")) == 2


def test_a_feeder_partitioned_otherwise_is_refused() -> None:
    s = CepSession()
    s.define(BURST.replace("partition by user, ip", "partition by ip"))
    s.define(ATTACK)
    with pytest.raises(
        CepError, match=r"'attack' reads the 'burst' events that 'burst' emits, but they are partitioned"
    ):
        s.replay(["attack"], logins(*six("ann", "a")))
    done = s.replay(["attack"], logins(*six("ann", "a")).assign(key="k"), key="key")  # one key for all
    assert [d.pattern for d in done.outcome.detections].count("attack") == 1


def test_a_cycle_across_cells_is_refused_and_nothing_is_defined() -> None:
    s = session()
    with pytest.raises(CepError, match="cycle"):
        s.define(
            "sequence loop partition by user, ip emit into fail begin a: attack_free\n"
            "sequence x emit into attack_free begin q: burst"
        )
    assert sorted(s.definitions) == ["attack", "burst"]
    with pytest.raises(
        CepError, match="'burst' emits into 'burst', which 'echo' reads; 'echo' emits into 'fail'"
    ):
        s.define("sequence echo emit into fail begin b: burst")  # burst reads fail: echo -> burst -> echo
    assert "echo" not in s.definitions


def test_the_live_feed_derives_events_too() -> None:
    s = session()
    clock = itertools.count(0, 1000)
    s.start_feed(["attack"], clock=lambda: next(clock))
    out = s.feed([{"type": "fail", "key": ("ann", "a")} for _ in range(6)])
    assert [d.pattern for d in out] == ["burst", "burst", "attack"]
    assert s.show("burst").splitlines()[1:3] == ["    partition by user, ip", "    within 10s"]


def test_a_run_notes_no_missing_type_for_derived_events() -> None:
    s = session()
    done = s.replay(["attack"], logins(*six("ann", "a")))
    assert "burst" in done.types
    assert "fails" in done.fields
