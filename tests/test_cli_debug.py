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


#: not the default columns: times in epoch seconds under 'ts', types under 'kind', keys under 'who';
#: bob's 'a' (row 2) arrives 1 s after ann's 'b': late unless out-of-order input is allowed.
ODD_COLUMNS = "kind,ts,who\na,0,ann\nb,2,ann\na,1,bob\nb,3,bob\n"
UNKEYED = (
    "sequence s within 5s\n    begin x: a\n    followed by y: b\n"
    "sequence s2 within 1s\n    begin x: a\n    followed by y: b\n"
)
INPUT_OPTIONS = ("--time", "--time-unit", "--type", "--out-of-orderness", "--allow-missing-key", "--order-by")
READ_AS = ["--time", "ts", "--time-unit", "s", "--type", "kind", "--out-of-orderness", "2s"]


@pytest.fixture
def odd(tmp_path: Path) -> tuple[str, str]:
    cep = tmp_path / "p.cep"
    cep.write_text(UNKEYED, encoding="utf-8")
    events = tmp_path / "e.csv"
    events.write_text(ODD_COLUMNS, encoding="utf-8")
    return str(cep), str(events)


@pytest.mark.parametrize("command", ["run", "explain", "diff"])
def test_run_explain_and_diff_take_the_same_input_options(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([command, "--help"])
    usage = capsys.readouterr().out
    assert all(option in usage for option in INPUT_OPTIONS), usage
    assert "--key-column COLUMN" in usage  # the key column has one name in all three


def test_explain_reads_the_file_as_run_does(odd: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    cep, events = odd
    assert main(["run", cep, events, "--pattern", "s", "--key", "who", *READ_AS]) == 0
    assert "4 events, 2 detection(s)" in capsys.readouterr().err  # nothing late
    assert main(["explain", cep, "s", "--on", events, "--key-column", "who", *READ_AS]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("s: 2 instances (2 fired); 2 detections (2 matches)"), captured.out
    assert "fired at t=1970-01-01 00:00:03.000" in captured.out  # --time-unit s: epoch seconds as dates
    assert captured.err == ""
    # --key is the value to explain, --key-column the column it is in
    assert main(["explain", cep, "s", "--on", events, "--key-column", "who", "--key", "bob", *READ_AS]) == 0
    assert capsys.readouterr().out.startswith("s key='bob': 1 instance (1 fired)")


def test_explain_warns_about_late_events(odd: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    cep, events = odd
    options = ["--time", "ts", "--type", "kind", "--key-column", "who"]
    assert main(["explain", cep, "s", "--on", events, *options]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("s: 1 instance (1 fired)")  # bob's 'a' came late
    assert "warning: 1 late event(s) were not matched" in captured.err


@pytest.mark.parametrize("key_option", ["--key", "--key-column"])
def test_diff_reads_the_file_as_run_does(
    odd: tuple[str, str], capsys: pytest.CaptureFixture[str], key_option: str
) -> None:
    cep, events = odd
    assert main(["diff", cep, "s", "s2", "--on", events, key_option, "who", *READ_AS]) == 0
    captured = capsys.readouterr()
    assert "diff s -> s2 on 4 events: 0 added, 0 removed, 2 changed, 0 unchanged" in captured.out
    assert "changed key='bob'" in captured.out  # bob's late 'a' counts with --out-of-orderness 2s
    assert captured.err == ""


def test_explain_and_diff_allow_missing_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cep = tmp_path / "p.cep"
    cep.write_text(UNKEYED, encoding="utf-8")
    events = tmp_path / "e.csv"
    events.write_text("type,time,who\na,0,ann\nb,2,\n", encoding="utf-8")
    explain = ["explain", str(cep), "s", "--on", str(events), "--key-column", "who"]
    assert main(explain) == 1
    assert "no value in the partition key column 'who'" in capsys.readouterr().err
    assert main([*explain, "--allow-missing-key"]) == 0
    assert capsys.readouterr().out.startswith(
        "s: 1 instance (1 timed out)"
    )  # the 'b' has the NULL key, not ann's
    diff = ["diff", str(cep), "s", "s2", "--on", str(events), "--key", "who", "--allow-missing-key"]
    assert main(diff) == 0
    assert "diff s -> s2 on 2 events" in capsys.readouterr().out


def test_explain_refuses_a_bad_out_of_orderness_before_reading(
    odd: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, _ = odd
    assert main(["explain", cep, "s", "--on", "nowhere.csv", "--out-of-orderness", "2 mins"]) == 1
    assert "--out-of-orderness '2 mins': give a number of milliseconds >= 0" in capsys.readouterr().err
