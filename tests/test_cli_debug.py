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


def test_explain_key_is_read_as_a_literal(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--key 5`` names the integer key a CSV's numbers give (it used to be the text '5': no
    instance), and the text '5' where the column holds text."""
    cep = tmp_path / "p.cep"
    cep.write_text(
        "sequence s\n    partition by user\n    begin x: a\n    followed by y: b\n", encoding="utf-8"
    )
    events = tmp_path / "e.csv"
    events.write_text("type,time,user\na,1,5\nb,2,5\na,3,6\nb,4,6\n", encoding="utf-8")
    assert main(["explain", str(cep), "s", "--on", str(events), "--key", "5"]) == 0
    assert capsys.readouterr().out.startswith("s key=5: 1 instance (1 fired)")
    texts = tmp_path / "t.csv"
    texts.write_text("type,time,user\na,1,5\nb,2,5\na,3,ann\nb,4,ann\n", encoding="utf-8")
    assert main(["explain", str(cep), "s", "--on", str(texts), "--key", "5"]) == 0
    assert capsys.readouterr().out.startswith("s key='5': 1 instance (1 fired)")
    assert main(["explain", str(cep), "s", "--on", str(texts), "--key", "7"]) == 0
    assert "no instance was started for key 7" in capsys.readouterr().out
