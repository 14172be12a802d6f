"""``workbench run``/``check`` refuse bad input with a located message before any replay."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from workbench.cli import main

PATTERN = "sequence s partition by k within 10ms\n    begin a: a\n    followed by b: b\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    cep = tmp_path / "p.cep"
    cep.write_text(PATTERN, encoding="utf-8")
    events = tmp_path / "e.csv"
    pd.DataFrame({"type": ["a", "b"], "time": [1, 5], "k": ["x", "x"]}).to_csv(events, index=False)
    return cep, events


@pytest.mark.parametrize(
    ("option", "name", "expected"),
    [
        ("-o", "missing/out.csv", "-o/--out {}: no such folder"),
        ("-o", "out.txt", "-o/--out {}: cannot write a .txt file; use .csv"),
        ("-o", "out", "cannot write a suffix-less file"),
        ("--late", "nowhere/late.csv", "--late {}: no such folder"),
        ("--errors", "errors.xlsx", "--errors {}: cannot write a .xlsx file"),
    ],
)
def test_bad_output_paths_fail_before_the_events_are_read(
    tmp_path: Path,
    files: tuple[Path, Path],
    capsys: pytest.CaptureFixture[str],
    option: str,
    name: str,
    expected: str,
) -> None:
    cep, _ = files
    target = str(tmp_path / name)
    # the events file does not exist: the output check must come first, so its message is the one
    assert main(["run", str(cep), str(tmp_path / "absent.csv"), option, target]) == 1
    err = capsys.readouterr().err
    assert expected.format(target) in err
    assert "absent.csv" not in err
    assert not (tmp_path / "missing").exists()


def test_an_output_that_is_a_folder_is_refused(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, events = files
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    assert main(["run", str(cep), str(events), "-o", str(folder)]) == 1
    assert "is a folder, not a file" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["examples", "diff"])
def test_examples_and_diff_check_their_output_before_the_work(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], command: str
) -> None:
    cep, events = files
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    argv = [command, str(cep)] + (["s", "s", "--on", str(events)] if command == "diff" else [])
    assert main([*argv, "-o", str(folder)]) == 1
    assert f"-o/--out {folder}: is a folder, not a file" in capsys.readouterr().err
    assert main([*argv, "-o", str(tmp_path / "nowhere" / "x.csv")]) == 1
    assert "no such folder" in capsys.readouterr().err


def test_an_output_that_cannot_be_written_names_the_file(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, events = files
    full = Path("/dev/full")
    if not full.exists():
        pytest.skip("no /dev/full on this system")
    out = tmp_path / "out.csv"
    out.symlink_to(full)  # a disk that is full: the write fails after the replay
    assert main(["run", str(cep), str(events), "-o", str(out), "-q"]) == 1
    assert f"cannot write {out}: No space left on device" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "-2s", "2x", "2m", "2  s", "s", "1e999s", ""])
def test_out_of_orderness_must_be_a_finite_non_negative_number_or_duration(
    files: tuple[Path, Path], capsys: pytest.CaptureFixture[str], value: str
) -> None:
    cep, events = files
    assert main(["run", str(cep), str(events), f"--out-of-orderness={value}"]) == 1
    assert (
        f"--out-of-orderness {value!r}: give a number of milliseconds >= 0 (such as 500) or a duration "
        "such as 2s, 500ms or 1.5min (units: ms, s, sec, min, h, d)"
    ) in capsys.readouterr().err


@pytest.mark.parametrize(
    ("value", "late"),
    [("0", 1), ("999", 1), ("1000", 0), ("1s", 0), ("1000ms", 0), ("0.5s", 1), ("1 sec", 0)],
)
def test_out_of_orderness_is_milliseconds_or_a_duration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, late: int
) -> None:
    """``2s`` is read as the language reads a duration (it was refused as no float)."""
    cep = tmp_path / "p.cep"
    cep.write_text(PATTERN.replace("10ms", "10s"), encoding="utf-8")
    events = tmp_path / "e.csv"
    # the 'a' at 1000 arrives after the 'b' at 2000: late unless 1 s out of order is allowed
    pd.DataFrame({"type": ["b", "a", "b"], "time": [2000, 1000, 3000], "k": "x"}).to_csv(events, index=False)
    assert main(["run", str(cep), str(events), "--out-of-orderness", value]) == 0
    err = capsys.readouterr().err
    assert (f"{late} late event(s) were not matched" in err) == bool(late), err
    assert f"3 events, {1 - late} detection(s)" in err


@pytest.mark.parametrize(
    ("text", "ms"),
    [("2s", 2000), ("500ms", 500), ("1.5min", 90_000), ("1h", 3_600_000), ("2 d", 172_800_000), ("250", 250)],
)
def test_out_of_orderness_ms_reads_the_language_units(text: str, ms: int) -> None:
    from workbench.session.inputs import out_of_orderness_ms

    assert out_of_orderness_ms(text) == ms
    assert out_of_orderness_ms("0.5") == 0.5  # a fraction of a millisecond stays one


def test_a_pattern_file_with_a_byte_order_mark_is_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cep = tmp_path / "bom.cep"
    cep.write_bytes(b"\xef\xbb\xbf" + PATTERN.encode("utf-8"))
    assert main(["check", str(cep)]) == 0
    assert "1 pattern(s), OK" in capsys.readouterr().out


def test_a_pattern_file_in_another_encoding_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cep = tmp_path / "latin1.cep"
    cep.write_bytes(("# first\n# caf\xe9\n" + PATTERN).encode("latin-1"))
    assert main(["check", str(cep)]) == 1
    err = capsys.readouterr().err
    assert "latin1.cep: line 2, column 6: byte 0xe9 is not UTF-8" in err
    assert "save the file as UTF-8" in err
    assert "Traceback" not in err


def test_iso_dates_in_a_csv_time_column_are_read_as_dates(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, _ = files
    events = tmp_path / "dates.csv"
    times = ["2024-01-01T09:30:00.000Z", "2024-01-01T09:30:00.005Z", "2024-01-01T09:30:00.050Z"]
    pd.DataFrame({"type": ["a", "b", "b"], "time": times, "k": "x"}).to_csv(events, index=False)
    out = tmp_path / "out.csv"
    assert main(["run", str(cep), str(events), "-o", str(out), "-q"]) == 0
    frame = pd.read_csv(out)
    assert len(frame) == 1  # 5 ms apart: inside the 10 ms window; the 50 ms one is not
    assert frame["emit_time"].iloc[0].startswith("2024-01-01 09:30:00.005")


def test_text_times_that_are_not_dates_say_how_to_give_times(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, _ = files
    events = tmp_path / "bad.csv"
    pd.DataFrame({"type": ["a", "b"], "time": ["2024-01-01", "noon"], "k": "x"}).to_csv(events, index=False)
    assert main(["run", str(cep), str(events)]) == 1
    err = capsys.readouterr().err
    assert "column 'time', row 1: 'noon' is neither a number nor an ISO 8601 date" in err
    assert "--time-unit" in err


def test_one_bad_time_in_a_file_of_numeric_times_is_named(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, _ = files
    events = tmp_path / "bad.csv"
    pd.DataFrame({"type": ["a", "b", "b"], "time": ["1", "2", "abc"], "k": "x"}).to_csv(events, index=False)
    assert main(["run", str(cep), str(events)]) == 1
    assert "column 'time', row 2: 'abc' is not a number" in capsys.readouterr().err


def test_a_missing_partition_value_is_an_error_naming_the_row_unless_allowed(
    tmp_path: Path, files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    cep, _ = files
    events = tmp_path / "holes.csv"
    pd.DataFrame({"type": ["a", "a", "b", "b"], "time": [1, 2, 3, 4], "k": ["x", None, None, "x"]}).to_csv(
        events, index=False
    )
    assert main(["run", str(cep), str(events)]) == 1
    err = capsys.readouterr().err
    assert "EventError" in err
    assert "row 1 (index 1) has no value in the partition key column 'k' (2 row(s) in all)" in err
    assert "--allow-missing-key" in err
    out = tmp_path / "out.csv"
    assert main(["run", str(cep), str(events), "--allow-missing-key", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "2 event(s) had no value in the partition key column: they share the NULL key" in err
    frame = pd.read_csv(out)
    assert sorted(frame["events"]) == ["(0, 3)", "(1, 2)"], frame  # x with x, NULL with NULL


def test_run_warns_of_epoch_seconds_and_writes_late_rows_with_the_input_columns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cep = tmp_path / "p.cep"
    cep.write_text(
        "sequence s\n    partition by dev\n    begin a: r\n    followed by b: r\n", encoding="utf-8"
    )
    secs = tmp_path / "secs.csv"
    secs.write_text("type,time,dev,temp\nr,1714557600,a,1.5\nr,1714557660,a,2.5\nr,1714557000,a,\n")
    late = tmp_path / "late.csv"
    assert main(["run", str(cep), str(secs), "-q", "--late", str(late)]) == 0
    err = capsys.readouterr().err
    assert "warning: the times look like epoch seconds (1714557600 is 2024-05-01 10:00:00 in seconds)" in err
    frame = pd.read_csv(late)
    assert frame["seq"].tolist() == [2]
    assert "temp" in frame.columns  # the late row has no temp: the column stays, blank
    assert main(["run", str(cep), str(secs), "-q", "--time-unit", "s", "--late", str(late)]) == 0
    assert "epoch seconds" not in capsys.readouterr().err
