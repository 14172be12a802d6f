"""``workbench run`` shows dates when the time column held datetimes, or ``--time-unit`` says so."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from tests.test_cli import cli

PATTERN = "sequence s\n    partition by user\n    begin a: login\n    next b: logout\n"


def _files(tmp_path: Path, times: list[object]) -> tuple[str, str]:
    cep = tmp_path / "p.cep"
    cep.write_text(PATTERN)
    events = tmp_path / "e.csv"
    pd.DataFrame({"time": times, "type": ["login", "logout"], "user": ["a", "a"]}).to_csv(events, index=False)
    return str(cep), str(events)


def test_iso_text_with_time_unit_date_comes_out_as_dates(tmp_path: Path) -> None:
    cep, events = _files(tmp_path, ["2024-01-01T00:00:00+01:00", "2024-01-01T00:00:01+01:00"])
    out = tmp_path / "out.csv"
    done = cli("run", cep, events, "--time-unit", "date", "-o", str(out))
    assert done.returncode == 0, done.stderr
    frame = pd.read_csv(out)
    assert frame.loc[0, "emit_time"] == "2024-01-01 00:00:01+01:00"
    assert frame.loc[0, "first_time"] == "2024-01-01 00:00:00+01:00"


def test_epoch_seconds_print_as_dates_and_plain_numbers_stay_numbers(tmp_path: Path) -> None:
    cep, events = _files(tmp_path, [1704067200, 1704067201])
    dated = cli("run", cep, events, "--time-unit", "s")
    assert dated.returncode == 0, dated.stderr
    assert "2024-01-01 00:00:01" in dated.stdout
    plain = cli("run", cep, events)
    assert plain.returncode == 0, plain.stderr
    assert "1704067201" in plain.stdout
    assert "2024-01-01" not in plain.stdout


def test_a_bad_time_unit_value_is_a_clear_error(tmp_path: Path) -> None:
    cep, events = _files(tmp_path, ["2024-01-01", "soon"])
    done = cli("run", cep, events, "--time-unit", "date")
    assert done.returncode == 1
    assert "row 1: 'soon' is not an ISO 8601 date" in done.stderr
    assert "Traceback" not in done.stderr


def test_late_events_and_debugging_commands_keep_date_input_as_dates(tmp_path: Path) -> None:
    patterns = tmp_path / "p.cep"
    patterns.write_text("sequence vc partition by user\n  begin v: view\n  followed by c: cart\n")
    events = tmp_path / "e.csv"
    events.write_text(
        "type,time,user\nview,2024-03-10T06:00:00-04:00,1\ncart,2024-03-10T06:02:00-04:00,1\n"
        "view,2024-03-10T06:01:00-04:00,1\n"
    )
    late = tmp_path / "late.csv"
    done = cli("run", str(patterns), str(events), "--late", str(late), "-q")
    assert done.returncode == 0, done.stderr
    assert pd.read_csv(late)["time"].tolist() == ["2024-03-10 06:01:00-04:00"]
    explained = cli("explain", str(patterns), "vc", "--on", str(events))  # it refused the text times
    assert explained.returncode == 0, explained.stderr
    assert "2024-03-10" in explained.stdout
