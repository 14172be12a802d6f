"""What ``%cep run`` says about its input besides the detections: times that look like epoch
seconds, condition errors (their times as dates), and late events that keep the input's columns."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest

from tests.jupyter.shell import cep_shell

CELL = "sequence tu partition by user within 10min\n  begin a: login\n  followed by b: logout"


@pytest.fixture
def ip() -> Any:
    shell = cep_shell()
    shell.run_cell_magic("cep", "-q", CELL)
    return shell


def test_times_in_epoch_seconds_get_a_note_and_time_unit_s_silences_it(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.user_ns["secs"] = pd.DataFrame(
        {"type": ["login", "logout"], "time": [1714557600, 1714557660], "user": ["u", "u"]}
    )
    ip.run_line_magic("cep", "run tu --on secs")
    out = capsys.readouterr().out
    assert "note: the times look like epoch seconds (1714557600 is 2024-05-01 10:00:00 in seconds)" in out
    assert "give --time-unit s" in out
    ip.run_line_magic("cep", "run tu --on secs --time-unit s")
    assert "epoch seconds" not in capsys.readouterr().out


def test_milliseconds_and_relative_times_get_no_note(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for times in ([1714557600000, 1714557660000], [0, 60_000]):
        ip.user_ns["ms"] = pd.DataFrame({"type": ["login", "logout"], "time": times, "user": ["u", "u"]})
        ip.run_line_magic("cep", "run tu --on ms")
        assert "epoch" not in capsys.readouterr().out


def test_condition_errors_show_dates_for_date_input(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "-q", "sequence bad partition by user\n  begin a: login where e.x > 1")
    ip.user_ns["dated"] = pd.DataFrame(
        {
            "type": ["login"],
            "time": pd.to_datetime(["2024-05-01 10:00"]).tz_localize("Europe/Berlin"),
            "user": ["u"],
            "x": ["text"],
        }
    )
    ip.run_line_magic("cep", "run bad --on dated")
    assert "at t=2024-05-01 10:00:00.000" in capsys.readouterr().out
    errors = ip.run_line_magic("cep", "errors")
    assert errors.loc[0, "first_time"] == pd.Timestamp("2024-05-01 10:00", tz="Europe/Berlin")


def test_late_events_keep_the_input_columns(ip: Any) -> None:
    ip.user_ns["iot"] = pd.DataFrame(
        {
            "type": ["login", "logout", "login"],
            "time": [0, 10_000, 5],
            "user": ["u", "u", "u"],
            "temp_c": [20.5, 21.0, None],
        }
    )
    ip.run_line_magic("cep", "run tu --on iot")
    late = ip.run_line_magic("cep", "late")
    assert late["seq"].tolist() == [2]
    assert "temp_c" in late.columns
    assert late["temp_c"].isna().all()


def test_a_datetime_field_compared_with_text_gets_a_note_and_timestamp_works(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.user_ns["orders"] = pd.DataFrame(
        {
            "type": ["order", "order"],
            "time": [0, 1],
            "user": ["u", "v"],
            "created_at": pd.to_datetime(["2024-05-01 09:00", "2024-05-01 11:00"]).tz_localize("UTC"),
        }
    )
    text = "sequence late_ones partition by user\n  begin o: order where e.created_at > '2024-05-01 10:00'"
    ip.run_cell_magic("cep", "-q", text)
    ip.run_line_magic("cep", "run late_ones --on orders")
    out = capsys.readouterr().out
    assert "compares the datetime field 'created_at' with the text '2024-05-01 10:00'" in out
    assert "write timestamp('2024-05-01 10:00')" in out
    fixed = text.replace("> '2024-05-01 10:00'", "> timestamp('2024-05-01 10:00')")
    ip.run_cell_magic("cep", "-q", fixed)
    found = ip.run_line_magic("cep", "run late_ones --on orders")
    assert "datetime field" not in capsys.readouterr().out
    assert found["key"].tolist() == ["v"]


def test_a_field_that_is_the_type_column_is_pointed_to_e_type(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.user_ns["typed"] = pd.DataFrame({"event": ["login", "logout"], "time": [0, 1], "user": ["u", "u"]})
    ip.run_cell_magic("cep", "-q", "sequence ev partition by user\n  begin a: login where e.event == 'login'")
    ip.run_line_magic("cep", "run ev --on typed --type event")
    out = capsys.readouterr().out
    assert "reads field 'event', which no input event has" in out
    assert "(column 'event' is the events' type: read it as e.type)" in out


def test_times_finer_than_a_millisecond_get_a_note(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # (they were cut to the millisecond without a word: joining detections back on time failed)
    times = pd.to_datetime(["2024-05-01 10:00:00.000250", "2024-05-01 10:00:01.000000"]).tz_localize("UTC")
    ip.user_ns["fine"] = pd.DataFrame({"type": ["login", "logout"], "time": times, "user": ["u", "u"]})
    ip.run_line_magic("cep", "run tu --on fine")
    assert (
        "note: column 'time' has times finer than a millisecond (row 0: 2024-05-01" in capsys.readouterr().out
    )
    ip.user_ns["whole"] = pd.DataFrame({"type": ["login"], "time": times[1:], "user": ["u"]})
    ip.run_line_magic("cep", "run tu --on whole")
    assert "finer than a millisecond" not in capsys.readouterr().out


def test_a_column_mixing_datetimes_and_text_gets_a_note(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    import datetime

    opened = [datetime.datetime(2024, 5, 1, 9), "unknown"]  # noqa: DTZ001  # naive, as a driver gives it
    ip.user_ns["mixed"] = pd.DataFrame(
        {"type": ["login", "logout"], "time": [0, 60_000], "user": ["u", "u"], "opened": opened}
    )
    ip.run_line_magic("cep", "run tu --on mixed")
    out = capsys.readouterr().out
    assert "note: column 'opened' mixes datetimes with values of another kind (row 1: 'unknown'" in out
    ip.user_ns["one_kind"] = ip.user_ns["mixed"].assign(opened=[opened[0], None])
    ip.run_line_magic("cep", "run tu --on one_kind")
    assert "mixes datetimes" not in capsys.readouterr().out
