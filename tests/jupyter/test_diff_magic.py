"""``%cep diff`` and ``%cep explain --event`` through IPython's testing shell."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError
from IPython.testing import globalipapp

from workbench.jupyter.extension import load_ipython_extension

PATTERNS = """
sequence big
    partition by key
    begin o: order
    followed by p: payment where e.amount > last(o).amount
sequence bigger
    partition by key
    begin o: order
    followed by p: payment where e.amount > last(o).amount * 2
"""


@pytest.fixture
def ip() -> Any:
    globalipapp.start_ipython()  # type: ignore[no-untyped-call]  # once per process; then a no-op
    shell = globalipapp.get_ipython()  # type: ignore[no-untyped-call]
    if "cep" not in shell.magics_manager.magics["cell"]:
        load_ipython_extension(shell)
    shell.user_ns["orders"] = pd.DataFrame(
        [
            {"time": 0, "type": "order", "key": "anna", "amount": 10.0},
            {"time": 5, "type": "payment", "key": "anna", "amount": 15.0},
            {"time": 9, "type": "payment", "key": "anna", "amount": 25.0},
        ]
    )
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
