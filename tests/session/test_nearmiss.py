"""Near misses: rejected records rebuilt from the condition IR, checked against a brute-force oracle."""

from __future__ import annotations

import random

import pandas as pd
import pytest

from workbench.engine.detection import TraceKind
from workbench.errors import CepError
from workbench.session.explain import event_story
from workbench.session.nearmiss import near_misses, spans
from workbench.session.session import CepSession

TEXT = """
sequence big
    partition by key
    begin o: order
    followed by p: payment where e.amount > last(o).amount * 1.5 and e.amount < 1000
group fulfilled
    on order(order as Order)
    @and @timeout(2s) {
        paid: payment(order = Order)
        shipped: shipment(order_id = Order)
    }
"""


def _orders(seed: int) -> pd.DataFrame:
    """One order per key, then payments with random amounts (some are enough, most are not)."""
    rng = random.Random(seed)
    rows, t = [], 0
    keys = ["anna", "ben", "cleo", "dan"]
    for k in keys:
        t += 10
        rows.append(
            {"time": t, "type": "order", "key": k, "order": f"{k}-1", "amount": rng.choice([10, 20, 40])}
        )
    for _ in range(30):
        t += rng.randint(1, 50)
        k = rng.choice(keys)
        rows.append(
            {"time": t, "type": "payment", "key": k, "order_id": f"{k}-1", "amount": rng.randint(1, 80)}
        )
    return pd.DataFrame(rows)


def _session(data: pd.DataFrame, name: str) -> CepSession:
    s = CepSession()
    s.define(TEXT)
    s.replay([name], data)
    return s


@pytest.mark.parametrize("seed", range(6))
def test_sequence_near_misses_are_the_payments_the_condition_rejected(seed: int) -> None:
    """Oracle: per key, the payments after the order and before the first big enough one."""
    data = _orders(seed)
    s = _session(data, "big")
    run = s.runs["big"]
    got = {
        (r.key, r.event_seq): r.detail
        for rs in spans(run.trace).values()
        for r in near_misses(s.get("big").pattern, rs, run.events)
    }
    want = {}
    for k, rows in data.groupby("key", sort=False):
        order = rows.iloc[0]
        for seq, row in rows.iloc[1:].iterrows():
            if row.amount > order.amount * 1.5:
                break
            want[(k, seq)] = (int(row.amount), float(order.amount * 1.5))
    assert set(got) == set(want)
    for ik, (amount, needed) in want.items():
        parts = got[ik]["parts"]
        assert parts[0]["left"] == amount
        assert parts[0]["right"] == pytest.approx(needed)
        assert parts[0]["holds"] is False
        assert parts[1]["holds"] is True
        assert f"{amount!r} > {needed!r} is false" in parts[0]["text"]
        assert got[ik]["failed"] == "e.amount > last(o).amount * 1.5"


def test_a_missing_field_in_a_channel_match_is_named() -> None:
    data = pd.DataFrame(
        [
            {"time": 0, "type": "order", "key": "anna", "order": "A-1"},
            {"time": 300, "type": "payment", "key": "anna", "order_id": "A-1"},
            {"time": 900, "type": "shipment", "key": "anna", "order_id": "A-1"},
        ]
    )
    s = _session(data, "fulfilled")
    run = s.runs["fulfilled"]
    story = event_story(s.get("fulfilled").pattern, run.trace, run.events, 1)
    assert "rejected paid" in story
    assert "`e.order == Order`: NULL (no field 'order') == 'A-1' is unknown (NULL)" in story
    taken = event_story(s.get("fulfilled").pattern, run.trace, run.events, 2)
    assert "accepted shipped" in taken
    assert "rejected" not in taken
    text = s.explain("fulfilled")
    assert "its nearest miss: event #1" in text
    detail = s.explain("fulfilled", key="anna", instance=1)
    assert "rejected paid <- event #1" in detail


def test_an_event_of_another_key_meets_no_instance() -> None:
    data = _orders(0)
    s = _session(data, "big")
    run = s.runs["big"]
    other = data.index[(data.type == "payment") & (data.key != data.key.iloc[0])][0]
    story = event_story(s.get("big").pattern, run.trace, run.events, int(other))
    assert f"key={data.key.iloc[0]!r}" not in story
    with pytest.raises(CepError, match="no event #999"):
        event_story(s.get("big").pattern, run.trace, run.events, 999)


def test_near_misses_are_never_in_the_engine_trace() -> None:
    """Tracing records what happened; near misses are rebuilt on demand (nothing costs when off)."""
    s = _session(_orders(1), "big")
    assert all(r.kind != TraceKind.REJECTED for r in s.runs["big"].trace)


@pytest.mark.parametrize(("current", "bound"), [("", "2"), (" including current", "2")])
def test_a_condition_reading_an_aggregate_shows_its_value(current: str, bound: str) -> None:
    # (the aggregate's name was unknown to the re-check: "<error: NameError: name 'lo' ...>")
    session = CepSession()
    session.define(
        f"sequence p within 1h\n    aggregate lo = min(b.x){current}\n    begin a: t\n"
        "    followed by b: t where e.x < 5 one or more\n    followed by c: t where e.x > lo * 5\n"
    )
    frame = pd.DataFrame({"time": [1, 2, 3, 4, 5], "key": "k", "type": "t", "x": [9, 3, 2, 7, 12]})
    session.replay(["p"], frame)
    story = session.explain("p", key="k", instance=1, details=True)
    assert f"rejected c <- event #3 t@4 (x=7): `e.x > lo * 5`: 7 > {int(bound) * 5} is false" in story
    assert "error" not in story
