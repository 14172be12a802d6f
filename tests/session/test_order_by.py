"""``--order-by`` of a replay: equal-time rows ordered by fields, unknown fields named."""

from __future__ import annotations

import pandas as pd
import pytest

from workbench.errors import CepError
from workbench.session.ordering import check_order_by, order_fields
from workbench.session.session import CepSession

PATTERN = """
sequence rise
  begin a: tick
  next b: tick where e.v > a.v
"""


def _frame() -> pd.DataFrame:
    # two ticks per time, arriving in the opposite order of their 'seq_no'
    return pd.DataFrame(
        {
            "type": ["tick"] * 4,
            "time": [1, 1, 2, 2],
            "key": ["k"] * 4,
            "v": [5, 1, 7, 6],
            "seq_no": [2, 1, 2, 1],
        }
    )


def _seqs(session: CepSession, **kw: object) -> list[tuple[int, ...]]:
    done = session.replay(["rise"], _frame(), **kw)  # type: ignore[arg-type]
    return [d.seqs for d in done.outcome.detections]


@pytest.fixture
def session() -> CepSession:
    s = CepSession()
    s.define(PATTERN)
    return s


def test_replay_orders_ties_by_the_field(session: CepSession) -> None:
    # arrival: 5 1 7 6 -> strict pairs (1,7) rises; sorted by seq_no: 1 5 6 7 -> three rises
    assert _seqs(session) == [(1, 2)]
    assert _seqs(session, order_by="seq_no") == [(1, 0), (0, 3), (3, 2)]
    assert _seqs(session, order_by=["seq_no", "v"]) == [(1, 0), (0, 3), (3, 2)]


def test_replay_of_events_orders_ties_too(session: CepSession) -> None:
    events = _frame().to_dict("records")
    done = session.replay(["rise"], iter(events), order_by="seq_no")
    assert [d.seqs for d in done.outcome.detections] == [(1, 0), (0, 3), (3, 2)]


def test_an_unknown_field_is_named(session: CepSession) -> None:
    with pytest.raises(CepError, match=r"no field 'seqno' \(did you mean 'seq_no'\?\)"):
        session.replay(["rise"], _frame(), order_by="seqno")


def test_order_by_is_local_only() -> None:
    with pytest.raises(CepError, match="local backend only"):
        check_order_by(["v"], ["v"], "flink")
    check_order_by([], [], "flink")  # no --order-by: any backend


@pytest.mark.parametrize("bad", ["", "a,,b", " , "])
def test_empty_names_are_an_error(bad: str) -> None:
    with pytest.raises(CepError, match="FIELD"):
        order_fields(bad)
