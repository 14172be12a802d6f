"""``%cep diff`` and ``%cep explain --event`` through IPython's testing shell."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError

from tests.jupyter.shell import cep_shell
from tests.session.diffcase import PATTERNS, orders


@pytest.fixture
def ip() -> Any:
    shell = cep_shell()
    shell.user_ns["orders"] = orders()
    return shell


def test_diff_prints_and_returns_the_differences(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "-q", PATTERNS)
    frame = ip.run_line_magic("cep", "diff big bigger --on orders")
    out = capsys.readouterr().out
    assert out.startswith("diff big -> bigger on 3 events: 0 added, 0 removed, 1 changed, 0 unchanged")
    assert "`e.amount > last(o).amount * 2`: 15.0 > 20.0 is false" in out
    assert list(frame.change) == ["changed"]
    assert list(frame.old_events[0]) == [0, 1]
    assert list(frame.new_events[0]) == [0, 2]
    assert ip.run_line_magic("cep", "diff big bigger --on orders -o d") is None
    assert ip.user_ns["d"].equals(frame)


def test_explain_event(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "-q", PATTERNS)
    ip.run_line_magic("cep", "run bigger --on orders -o r")
    capsys.readouterr()
    ip.run_line_magic("cep", "explain bigger --event 1")
    out = capsys.readouterr().out
    assert "key='anna' instance 1: t=5: rejected p <- event #1" in out
    assert "15.0 > 20.0 is false" in out
    with pytest.raises(UsageError):
        ip.run_line_magic("cep", "diff big")
