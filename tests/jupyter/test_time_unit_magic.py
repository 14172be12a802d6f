"""``%cep run --time-unit`` and ``%%cep --on ... --time-unit``: dates out of a numeric or text time column."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tests.jupyter.shell import cep_shell

CELL = "sequence tu partition by user\n  begin a: login\n  next b: logout"


@pytest.fixture
def ip() -> Any:
    shell = cep_shell()
    shell.user_ns["tu_events"] = pd.DataFrame(
        {"type": ["login", "logout"], "time": [1704067200, 1704067201], "user": ["u", "u"]}
    )
    return shell


def test_run_with_time_unit_gives_timestamps_and_dated_explain(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.run_cell_magic("cep", "-q", CELL)
    frame = ip.run_line_magic("cep", "run tu --on tu_events --time-unit s")
    assert frame.loc[0, "emit_time"] == pd.Timestamp("2024-01-01 00:00:01")
    ip.run_line_magic("cep", "explain tu")
    assert "2024-01-01 00:00:01.000" in capsys.readouterr().out
    assert ip.user_ns["tu_events"]["time"].tolist() == [1704067200, 1704067201]  # the input is unchanged


def test_cell_on_with_time_unit(ip: Any) -> None:
    ip.run_cell_magic("cep", "--on tu_events --time-unit s -o tu_out", CELL)
    assert ip.user_ns["tu_out"].loc[0, "first_time"] == pd.Timestamp("2024-01-01 00:00:00")
