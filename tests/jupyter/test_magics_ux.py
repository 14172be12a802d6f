"""UX regressions of the magics: user mistakes get a CepError with a hint, never silent data loss."""

from __future__ import annotations

import importlib.util
from typing import Any

import pandas as pd
import pytest

from tests.jupyter.shell import cep_shell
from workbench.jupyter import current_session
from workbench.jupyter.magics import CepCellError

CELL = "sequence s partition by user\n  begin a: login where e.x > 0\n  followed by b: logout"


@pytest.fixture
def ip() -> Any:
    shell = cep_shell()
    shell.run_cell_magic("cep", "-q", CELL)
    shell.user_ns["events"] = pd.DataFrame(
        {
            "type": ["login", "logout", "login", "logout"],
            "time": [0, 1000, 500, 3000],
            "user": ["u"] * 4,
            "x": [1] * 4,
        }
    )
    return shell


def cell_error(ip: Any, source: str) -> CepCellError:
    result = ip.run_cell(source)
    err = result.error_in_exec
    assert isinstance(err, CepCellError), err
    rendered = "\n".join(err._render_traceback_())
    assert "Traceback" not in rendered
    return err


def test_late_events_are_reported_and_listed(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_line_magic("cep", "run s --on events")
    out = capsys.readouterr().out
    assert "note: 1 late event(s) were not matched" in out
    assert "event #2, type 'login', time 500" in out
    assert "see them with %cep late" in out
    late = ip.run_line_magic("cep", "late")
    assert list(late["seq"]) == [2]
    assert list(late["time"]) == [500]
    # allowing out-of-order input takes them in: no note, nothing late
    ip.run_line_magic("cep", "run s --on events --out-of-orderness 1000")
    assert "late" not in capsys.readouterr().out
    assert ip.run_line_magic("cep", "late").empty


def test_missing_partition_key_column(ip: Any) -> None:
    ip.user_ns["no_user"] = pd.DataFrame({"type": ["login"], "time": [0], "usr": ["u"], "x": [1]})
    err = cell_error(ip, "%cep run s --on no_user")
    assert "no partition key column 'user' (did you mean 'usr'?)" in str(err)
    assert "'partition by user'" in str(err)


def test_missing_partition_key_in_a_list_of_events(ip: Any) -> None:
    ip.user_ns["rows"] = [{"type": "login", "time": 0, "x": 1}]
    err = cell_error(ip, "%cep run s --on rows")
    assert "the events have no partition key column 'user'" in str(err)


def test_on_names_an_unknown_variable(ip: Any) -> None:
    err = cell_error(ip, "%cep run s --on evnts")
    assert "no variable 'evnts' (did you mean 'events'?) and no such file" in str(err)


def test_event_type_near_miss_is_noted(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.user_ns["typo"] = pd.DataFrame(
        {"type": ["lgin", "logout"], "time": [0, 1], "user": ["u", "u"], "x": [1, 1]}
    )
    frame = ip.run_line_magic("cep", "run s --on typo")
    assert frame.empty
    assert "listen to event type 'login', which the input does not have (did you mean 'lgin'?)" in (
        capsys.readouterr().out
    )


def test_datetime_time_column_and_empty_input(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.user_ns["stamped"] = pd.DataFrame(
        {
            "type": ["login", "logout"],
            "time": pd.to_datetime(["2024-01-01 00:00:00", "2024-01-01 00:00:05"]),
            "user": ["u", "u"],
            "x": [1, 1],
        }
    )
    frame = ip.run_line_magic("cep", "run s --on stamped")
    assert [tuple(e) for e in frame["events"]] == [(0, 1)]
    capsys.readouterr()
    ip.run_line_magic("cep", "explain s")  # times read as the dates they were given as
    assert "fired at t=2024-01-01 00:00:05.000" in capsys.readouterr().out
    ip.user_ns["nothing"] = pd.DataFrame({"type": [], "time": [], "user": []})
    assert ip.run_line_magic("cep", "run s --on nothing").empty


def test_explain_fired_and_never_fired(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_line_magic("cep", "run s --on events")
    capsys.readouterr()
    ip.run_line_magic("cep", "explain s")
    fired = capsys.readouterr().out
    assert "1 detection(s)" in fired
    ip.user_ns["no_logout"] = pd.DataFrame({"type": ["login"], "time": [0], "user": ["u"], "x": [0]})
    ip.run_line_magic("cep", "run s --on no_logout")
    ip.run_line_magic("cep", "explain s")
    assert "no instance was started" in capsys.readouterr().out


def test_explain_for_a_key_without_instances_lists_the_keys_that_have_some(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.user_ns["numbered"] = pd.DataFrame(
        {"type": ["login", "logout"], "time": [0, 1], "user": ["1", "1"], "x": [1, 1]}
    )
    ip.run_line_magic("cep", "run s --on numbered")
    capsys.readouterr()
    ip.run_line_magic("cep", "explain s --key 2")
    out = capsys.readouterr().out
    assert "no instance was started for key 2" in out
    assert "keys with instances: '1'" in out
    ip.run_line_magic("cep", "explain s --key 1")  # the text '1' is the data's key: that one
    assert capsys.readouterr().out.startswith("s key='1': 1 instance")


@pytest.mark.skipif(importlib.util.find_spec("pyflink") is not None, reason="PyFlink is installed here")
def test_flink_backend_without_pyflink(ip: Any) -> None:
    err = cell_error(ip, "%cep run s --on events --backend flink")
    assert type(err.error).__name__ == "BackendError"
    assert "needs PyFlink" in str(err)


def test_unknown_backend(ip: Any) -> None:
    err = cell_error(ip, "%cep run s --on events --backend flnk")
    assert "unknown backend 'flnk'; known: local, flink, flink-sql" in str(err)


def test_local_backend_by_name(ip: Any) -> None:
    frame = ip.run_line_magic("cep", "run s --on events --backend local --out-of-orderness 1000")
    # in event time the late-arriving login (#2, t=500) comes before the logout (#1, t=1000)
    assert [tuple(e) for e in frame["events"]] == [(0, 1), (2, 1)]


def test_duration_mistake_in_a_cell(ip: Any) -> None:
    err = cell_error(ip, "%%cep\nsequence t\n  begin a\n  followed by b within 5 mins")
    assert str(err).startswith("line 4, column 24: unexpected '5'")
    assert "(did you mean '5min'?" in str(err)


def test_cell_on_takes_out_of_orderness_and_backend(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    frame = ip.run_cell_magic("cep", "--on events --out-of-orderness 1000 --backend local", CELL)
    assert [tuple(e) for e in frame["events"]] == [(0, 1), (2, 1)]
    assert "late" not in capsys.readouterr().out
    err = cell_error(ip, f"%%cep --on events --backend flnk\n{CELL}")
    assert "unknown backend 'flnk'" in str(err)


def test_strict_runtime_error_points_at_the_stage_definition(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "sequence r\n  begin a: login\n  followed by b: logout where e.x > 'y'")
    err = cell_error(ip, "%cep run r --on events --out-of-orderness 1000 --strict")
    assert type(err.error).__name__ == "CepRuntimeError"
    lines = str(err).splitlines()
    assert lines[0].startswith("pattern 'r', stage 'b' where \"e.x > 'y'\" failed on event #1")
    assert lines[1:] == [
        "  'b' of pattern 'r' is defined at line 4, column 15:",
        "      followed by b: logout where e.x > 'y'",
        "                  ^",
    ]


def test_condition_errors_are_noted_and_listed_and_the_run_goes_on(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.run_cell_magic(
        "cep", "-q", "sequence r\n  begin a: login\n  followed by b: logout where e.x > 'y' or e.x == 1"
    )
    assert ip.run_line_magic("cep", "run r --on events --out-of-orderness 1000").empty
    out = capsys.readouterr().out
    assert "note: 1 kind(s) of condition error on 2 event(s)" in out
    assert "see them with %cep errors" in out
    table = ip.run_line_magic("cep", "errors")
    assert table[["pattern", "kind", "count", "first_seq"]].values.tolist() == [["r", "TypeError", 2, 1]]
    # a missing field is NULL, not an error: the same run with a field no event has is clean
    ip.run_cell_magic("cep", "-q", "sequence r\n  begin a: login\n  followed by b: logout where e.nope > 1")
    assert ip.run_line_magic("cep", "run r --on events --out-of-orderness 1000").empty
    assert ip.run_line_magic("cep", "errors").empty


def test_field_near_miss_is_noted(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # 'b' is never reached (no login has x > 5), so the typo would otherwise pass unnoticed
    ip.run_cell_magic(
        "cep", "-q", "sequence f\n  begin a: login where e.x > 5\n  followed by b: logout where e.usr == 'u'"
    )
    assert ip.run_line_magic("cep", "run f --on events --out-of-orderness 1000").empty
    out = capsys.readouterr().out
    assert (
        "note: 'b' of pattern 'f' reads field 'usr', which no input event has (did you mean 'user'?)" in out
    )


def test_patterns_partitioned_differently_run_each_by_its_own_key(ip: Any) -> None:
    ip.run_cell_magic(
        "cep",
        "-q",
        "sequence by_user partition by user\n  begin a: login\n  followed by b: logout\n"
        "sequence by_ip partition by ip\n  begin a: login\n  followed by b: logout\n"
        "sequence global\n  begin a: login\n  followed by b: logout",
    )
    ip.user_ns["mixed"] = pd.DataFrame(
        {
            "type": ["login", "logout", "logout"],
            "time": [0, 1, 2],
            "user": ["u1", "u2", "u1"],
            "ip": ["ip1", "ip1", "ip2"],
        }
    )
    frame = ip.run_line_magic("cep", "run by_user by_ip global --on mixed")
    got = sorted(
        (p, k, tuple(e)) for p, k, e in zip(frame["pattern"], frame["key"], frame["events"], strict=True)
    )
    # each pattern keyed by its own field; 'global' is not keyed: its login takes the first logout
    assert got == [("by_ip", "ip1", (0, 1)), ("by_user", "u1", (0, 2)), ("global", None, (0, 1))]


def test_a_dataframe_with_nan_cells_replays_with_correct_detections(ip: Any) -> None:
    ip.run_cell_magic(
        "cep",
        "-q",
        "sequence dip\n  partition by symbol\n  begin low: tick where e.price < 10\n"
        "  next high: tick where e.price > last(low).price and e.volume is not None",
    )
    ip.user_ns["ticks"] = pd.DataFrame(
        {
            "type": ["tick"] * 6,
            "time": [0, 1, 2, 3, 4, 5],
            "symbol": ["A"] * 6,
            "price": [5.0, float("nan"), 8.0, 12.0, 4.0, 9.0],
            "volume": [1.0, 1.0, 1.0, 1.0, 1.0, float("nan")],
        }
    )
    hits = ip.run_line_magic("cep", "run dip --on ticks")
    assert [tuple(e) for e in hits["events"]] == [(2, 3)]
    shown = current_session(ip).show("dip")  # %cep show: the text compiles back, partition included
    assert shown.startswith("sequence dip\n    partition by symbol\n")
    assert ip.run_line_magic("cep", "errors").empty


@pytest.mark.parametrize("value", ["500ms", "0.5s", "500", "1min"])
def test_out_of_orderness_takes_a_duration(ip: Any, capsys: pytest.CaptureFixture[str], value: str) -> None:
    """The late login (#2, t=500) is 500 ms behind the logout at 1000: taken in from 500 ms on."""
    frame = ip.run_line_magic("cep", f"run s --on events --out-of-orderness {value}")
    assert [tuple(e) for e in frame["events"]] == [(0, 1), (2, 1)]
    assert "late" not in capsys.readouterr().out
    frame = ip.run_cell_magic("cep", f"--on events --out-of-orderness {value}", CELL)
    assert [tuple(e) for e in frame["events"]] == [(0, 1), (2, 1)]
    assert "late" not in capsys.readouterr().out


def test_a_bad_out_of_orderness_names_the_option_and_what_it_takes(ip: Any) -> None:
    expected = (
        "--out-of-orderness '2secs': give a number of milliseconds >= 0 (such as 500) or a duration "
        "such as 2s, 500ms or 1.5min (units: ms, s, sec, min, h, d)"
    )
    err = cell_error(ip, "%cep run s --on events --out-of-orderness 2secs")
    assert str(err) == expected
    err = cell_error(ip, "%%cep --on events --out-of-orderness 2secs\nsequence not_defined begin a")
    assert str(err) == expected
    assert "not_defined" not in current_session().definitions  # refused before the cell is defined


@pytest.mark.parametrize(
    "options",
    [
        "--on events --time-unit bogus",
        "--on events --backend nope",
        "--on events -o class",
        "--on events --key nope",
    ],
)
def test_a_cell_whose_run_fails_leaves_the_patterns_as_they_were(ip: Any, options: str) -> None:
    # (the error was shown, but the cell had already replaced 's' and defined 't')
    before = current_session().sources["s"]
    result = ip.run_cell(f"%%cep {options}\nsequence s\n  begin a: logout\nsequence t\n  begin b: login")
    assert result.error_in_exec is not None
    assert current_session().sources["s"] == before
    assert "t" not in current_session().definitions
