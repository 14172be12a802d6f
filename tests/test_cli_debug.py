"""``workbench explain`` and ``workbench diff``."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from tests.session.diffcase import PATTERNS, orders
from workbench.cli import main


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cep = tmp_path / "p.cep"
    cep.write_text(PATTERNS, encoding="utf-8")
    events = tmp_path / "e.csv"
    orders().to_csv(events, index=False)
    return cep, events


def test_explain_and_event(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    cep, events = files
    assert main(["explain", str(cep), "bigger", "--on", str(events)]) == 0
    assert capsys.readouterr().out.startswith("bigger: 1 instance (1 fired); 1 detection (1 match)")
    assert main(["explain", str(cep), "bigger", "--on", str(events), "--event", "1"]) == 0
    assert "rejected p <- event #1" in capsys.readouterr().out


def test_diff_writes_the_differences(
    files: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cep, events = files
    out = tmp_path / "d.csv"
    assert main(["diff", str(cep), "big", "bigger", "--on", str(events), "-o", str(out)]) == 0
    assert "1 changed" in capsys.readouterr().out
    frame = pd.read_csv(out)
    assert list(frame.change) == ["changed"]
    assert frame.new_events[0] == "[0, 2]"
    assert main(["diff", str(cep), "big", "nope", "--on", str(events)]) == 1
    assert "nope" in capsys.readouterr().err
