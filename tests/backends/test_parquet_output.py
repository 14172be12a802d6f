"""Result tables written to Parquet keep every value (runs where pyarrow is: the Flink environment)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workbench.engine.runtime import Engine
from workbench.language import compile_pattern
from workbench.results import detections_to_frame
from workbench.session.writing import write_frame

pytestmark = pytest.mark.flink


def test_detections_with_empty_mappings_and_lists_round_trip(tmp_path: Path) -> None:
    # (Arrow refused the all-{} 'extra' column of sequence detections, after the whole run)
    pytest.importorskip("pyarrow")
    engine = Engine([compile_pattern("sequence s\n begin a: login\n followed by b: trade\n")])
    engine.process_many([{"type": "login", "time": 1, "key": "k"}, {"type": "trade", "time": 2, "key": "k"}])
    engine.finish()
    frame = detections_to_frame(engine.detections)
    out = tmp_path / "d.parquet"
    assert write_frame(frame, str(out)) == []
    back = pd.read_parquet(out)
    assert back["extra"].tolist() == ["{}"]  # a mapping Arrow cannot type is JSON text
    assert [list(v) for v in back["events"]] == [[0, 1]]
    assert back["pattern"].tolist() == ["s"]


def test_an_int_beyond_64_bits_is_written_as_text_not_a_traceback(tmp_path: Path) -> None:
    # (pyarrow raised OverflowError, which the JSON-text fallback did not catch)
    pytest.importorskip("pyarrow")
    frame = pd.DataFrame({"id": pd.Series([2**64 + 1, 3], dtype=object), "n": [1, 2]})
    out = tmp_path / "big.parquet"
    write_frame(frame, str(out))
    back = pd.read_parquet(out)
    assert back["id"].tolist() == [str(2**64 + 1), "3"]
    assert back["n"].tolist() == [1, 2]
