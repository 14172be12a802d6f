"""The %%cep / %cep magics through IPython's testing shell."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

from tests.jupyter.shell import cep_shell
from workbench.jupyter.extension import load_ipython_extension, unload_ipython_extension
from workbench.jupyter.magics import CepCellError, CepMagics

DATA = Path(__file__).parent.parent / "data" / "language"
BLOG = (DATA / "prova_blog.cep").read_text(encoding="utf-8")


@pytest.fixture
def ip() -> Any:
    shell = cep_shell()
    shell.user_ns["logins"] = pd.read_csv(DATA / "logins.csv")
    return shell


def magics(ip: Any) -> CepMagics:
    m = ip.magics_manager.registry["CepMagics"]
    assert isinstance(m, CepMagics)
    return m


def test_define_list_and_show(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert ip.run_cell_magic("cep", "", BLOG) is None
    out = capsys.readouterr().out
    assert "defined 'and_not': @and group with 2 member(s)" in out
    listing = ip.run_line_magic("cep", "list")
    assert {"and_not", "or_stop", "or_paused", "or_not_count"} <= set(listing["name"])
    ip.run_line_magic("cep", "show and_not")
    shown = capsys.readouterr().out
    assert "@not c_logout: logout(user = User, ip = IP)" in shown
    assert "AND and_not  timeout 400ms" in shown


def test_event_declarations_persist_across_cells(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "", "event payment(card, amount: float)")
    assert "payment" in capsys.readouterr().out
    result = ip.run_cell("%%cep\nsequence big begin p: payment where p.amont > 10")
    assert isinstance(result.error_in_exec, CepCellError)
    assert "unknown field 'amont' (did you mean 'amount'?)" in str(result.error_in_exec)


def test_cell_name_names_an_unnamed_definition(ip: Any) -> None:
    ip.run_cell_magic(
        "cep", "rise -q", "sequence\n  begin low where e.p < 10\n  next high where e.p > last(low).p"
    )
    assert "rise" in magics(ip).session.definitions


def test_cell_name_must_match_a_named_definition(ip: Any) -> None:
    with pytest.raises(CepCellError, match="the cell is called 'alpha' but defines 'beta'"):
        ip.run_cell_magic("cep", "alpha", "sequence beta begin a")


def test_run_returns_detections(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", BLOG)
    frame = ip.run_line_magic("cep", "run and_not or_stop --on logins")
    assert isinstance(frame, pd.DataFrame)
    got = sorted(
        (p, k, tuple(ev)) for p, k, ev in zip(frame["pattern"], frame["key"], frame["events"], strict=True)
    )
    # the Prova blog: and_not fires for user3 (event 3); or_stop for user3, user1 (logout) and user2
    assert got == [
        ("and_not", "user3", (3,)),
        ("or_stop", "user1", (4,)),
        ("or_stop", "user2", (6,)),
        ("or_stop", "user3", (3,)),
    ]


def test_results_to_variables(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", BLOG)
    assert ip.run_line_magic("cep", "res << run or_paused --on logins") is None
    assert isinstance(ip.user_ns["res"], pd.DataFrame)
    assert ip.run_line_magic("cep", f"run or_not_count --on {DATA / 'logins.csv'} -o res2") is None
    assert len(ip.user_ns["res2"]) == len(magics(ip).session.detections("or_not_count"))
    assert ip.run_cell_magic("cep", "--on logins -o res3", BLOG) is None
    assert set(ip.user_ns["res3"]["pattern"]) <= {"and_not", "or_stop", "or_paused", "or_not_count"}


def test_matches_and_explain(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "-q", BLOG)
    ip.run_line_magic("cep", "run and_not --on logins")
    frame = ip.run_line_magic("cep", "matches and_not")
    assert list(frame["key"]) == ["user3"]
    capsys.readouterr()
    ip.run_line_magic("cep", "explain and_not")
    out = capsys.readouterr().out
    assert "key='user3' instance" in out
    assert "fired" in out
    ip.run_line_magic("cep", "explain and_not --key user1 --instance 1")
    detail = capsys.readouterr().out
    assert "key='user1' instance 1" in detail
    assert "t=" in detail


def test_syntax_error_shows_caret_without_traceback(ip: Any) -> None:
    result = ip.run_cell("%%cep\nsequence s\n  begin a wthin 10s")
    assert not result.success
    err = result.error_in_exec
    assert isinstance(err, CepCellError)
    lines = err._render_traceback_()
    assert lines[0].startswith("CepSyntaxError: line 3, column 11: unexpected 'wthin'")
    assert lines[1] == "      begin a wthin 10s"
    assert lines[2] == "              ^"
    assert not any("Traceback" in line for line in lines)


def test_compile_error_in_cell_coordinates(ip: Any) -> None:
    result = ip.run_cell("%%cep\nsequence s\n  begin down\n  next up where e.x > last(donw).x")
    err = result.error_in_exec
    assert isinstance(err, CepCellError)
    assert err._render_traceback_()[0] == (
        "CepCompileError: line 4, column 28: unknown variable or stage 'donw' (did you mean 'down'?)"
    )


def test_user_errors_and_usage_errors(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", BLOG)
    with pytest.raises(CepCellError, match=r"no pattern named 'and_nto'.*did you mean 'and_not'"):
        ip.run_line_magic("cep", "run and_nto --on logins")
    with pytest.raises(CepCellError, match="no such file"):
        ip.run_line_magic("cep", "run and_not --on nowhere.csv")
    with pytest.raises(UsageError, match="did you mean 'run'"):
        ip.run_line_magic("cep", "rnu and_not")
    with pytest.raises(UsageError):
        ip.run_line_magic("cep", "run and_not")  # --on is required
    with pytest.raises(UsageError):
        ip.run_cell_magic("cep", "--nope", "sequence s begin a")


def test_help_is_printed_once_and_is_no_error(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    for line in ("help", "--help", "-h"):
        assert ip.run_line_magic("cep", line) is None
        out = capsys.readouterr().out
        assert "%cep help SUBCOMMAND" in out
        assert "  explain   why instances did or did not fire\n" in out
    for line in ("run --help", "help run"):
        assert ip.run_line_magic("cep", line) is None
        out = capsys.readouterr().out
        assert out.count("usage: %cep run") == 1
        assert "--on" in out
    assert ip.run_cell_magic("cep", "--help", "sequence not_defined begin a") is None
    assert "usage: %%cep" in capsys.readouterr().out
    assert "not_defined" not in ip.run_line_magic("cep", "list").to_string()
    with pytest.raises(UsageError, match="unknown %cep subcommand 'rnu'"):
        ip.run_line_magic("cep", "help rnu")


def test_live_feed(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "group live\n  on login(user as U)\n  @or { lo: logout(user = U) }")
    ip.user_ns["batch"] = [
        {"type": "login", "key": "u1", "user": "u1"},
        {"type": "logout", "key": "u1", "user": "u1"},
    ]
    assert ip.run_line_magic("cep", "feed live --start") is None
    frame = ip.run_line_magic("cep", "feed --from batch")
    assert list(frame["pattern"]) == ["live"]
    ip.run_line_magic("cep", "feed --stop")
    assert len(ip.run_line_magic("cep", "matches live")) == 1


def test_a_feed_with_its_own_clock_fires_timers_by_that_clock(
    ip: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    ip.run_cell_magic(
        "cep", "-q", "group hot\n  on reading\n  @or @timeout(100ms) @timeout_channel { again: reading }"
    )
    now = [1000]
    ip.user_ns["plant_clock"] = lambda: now[0]
    ip.user_ns["one"] = [{"type": "reading", "key": "m"}]
    ip.run_line_magic("cep", "feed hot --start --clock plant_clock")
    assert "stamped by plant_clock()" in capsys.readouterr().out
    ip.run_line_magic("cep", "feed --from one")  # starts an instance at 1000
    now[0] = 1099
    assert ip.run_line_magic("cep", "feed --tick").empty  # however long the wall clock took
    now[0] = 1101
    frame = ip.run_line_magic("cep", "feed --tick")
    assert list(frame["kind"]) == ["timeout"]
    assert list(frame["emit_time"]) == [1100]  # the clock's numbers, not wall-clock dates
    ip.run_line_magic("cep", "feed --stop")
    ip.user_ns["not_callable"] = 5
    with pytest.raises(CepCellError, match="--clock needs a variable holding a callable returning ms"):
        ip.run_line_magic("cep", "feed hot --start --clock not_callable")
    with pytest.raises(CepCellError, match="--clock goes with --start only"):
        ip.run_line_magic("cep", "feed --tick --clock plant_clock")
    ip.user_ns["bad_clock"] = lambda: "soon"
    ip.run_line_magic("cep", "feed hot --start --clock bad_clock")
    with pytest.raises(CepCellError, match="the processing-time clock returned 'soon'"):
        ip.run_line_magic("cep", "feed --from one")
    ip.run_line_magic("cep", "feed --stop")


def test_a_misspelt_on_variable_defines_nothing(ip: Any) -> None:
    with pytest.raises(CepCellError, match="--on nosuch: no variable 'nosuch'"):
        ip.run_cell_magic("cep", "--on nosuch", "sequence never_defined begin a")
    assert "never_defined" not in ip.run_line_magic("cep", "list").to_string()


def test_stopping_a_feed_that_does_not_run_says_so(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    frame = ip.run_line_magic("cep", "feed --stop")
    assert frame.empty
    assert "no live feed is running" in capsys.readouterr().out


def test_live_feed_notes_dropped_partial_matches(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    text = "sequence s max partial matches 2\n  begin a: login\n  followed by b: logout"
    ip.run_cell_magic("cep", "-q", text)
    ip.user_ns["batch"] = [{"type": "login", "key": "u"} for _ in range(5)]
    ip.run_line_magic("cep", "feed s --start")
    capsys.readouterr()
    with pytest.warns(RuntimeWarning, match="max_partial_matches"):
        ip.run_line_magic("cep", "feed --from batch")
    assert "note: 3 partial match(es) or group instance(s) dropped" in capsys.readouterr().out
    ip.run_line_magic("cep", "feed --tick")
    assert "dropped" not in capsys.readouterr().out  # a note for what this call dropped only
    ip.run_line_magic("cep", "feed --stop")


def test_live_feed_records_condition_errors_as_a_replay_does(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "event A(x)\nsequence bad\n  begin a: A where a.x > 1")
    ip.user_ns["batch"] = [{"type": "A", "key": "k", "x": "text"}, {"type": "A", "key": "k", "x": 5}]
    ip.run_line_magic("cep", "feed bad --start")
    frame = ip.run_line_magic("cep", "feed --from batch")
    assert len(frame) == 1  # the string did not match; the number did
    errors = ip.run_line_magic("cep", "errors")
    assert list(errors["pattern"]) == ["bad"]
    assert list(errors["count"]) == [1]
    ip.run_line_magic("cep", "feed --stop")
    ip.run_line_magic("cep", "feed bad --start --strict")
    with pytest.raises(CepCellError, match="bad"):
        ip.run_line_magic("cep", "feed --from batch")
    ip.run_line_magic("cep", "feed --stop")
    with pytest.raises(CepCellError, match="--strict goes with --start only"):
        ip.run_line_magic("cep", "feed --tick --strict")


def test_progress_bar_for_long_inputs(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    m = magics(ip)
    m.progress_threshold = 5
    try:
        ip.run_cell_magic("cep", "-q", BLOG)
        ip.run_line_magic("cep", "run and_not --on logins")
    finally:
        m.progress_threshold = 10_000
    assert "7/7 events" in capsys.readouterr().err


def test_remove_and_unload(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "sequence gone begin a")
    ip.run_line_magic("cep", "remove gone")
    assert "gone" not in magics(ip).session.definitions
    unload_ipython_extension(ip)
    assert "cep" not in ip.magics_manager.magics["line"]
    load_ipython_extension(ip)
    assert "cep" in ip.magics_manager.magics["cell"]


GROUP_CELL = """sequence retries
    begin first_miss: login where e.ok == False
    followed by (
        begin miss: login where e.ok == False
        next retry: login where e.ok == True
    ) times 2
"""


def test_group_of_stages_defines_shows_and_runs(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "", GROUP_CELL)
    assert "defined 'retries': sequence with 2 stage(s)" in capsys.readouterr().out
    ip.run_line_magic("cep", "show retries")
    shown = capsys.readouterr().out
    assert "states: first_miss ~> (miss retry){2} -> (match)" in shown
    # the group's first stage starts the group (its contiguity is moot)
    rows = [line.split()[:2] for line in shown.splitlines() if line.startswith("  miss")]
    assert rows == [["miss", "begin"]]
    ip.user_ns["attempts"] = pd.DataFrame(
        {"type": ["login"] * 5, "time": [0, 1, 2, 3, 4], "ok": [False, False, True, False, True]}
    )
    frame = ip.run_line_magic("cep", "run retries --on attempts")
    assert [tuple(ev) for ev in frame["events"]] == [(0, 1, 3, 2, 4)]


def test_run_order_by_orders_equal_time_rows(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "sequence rise\n  begin a: tick\n  next b: tick where e.v > a.v")
    ip.user_ns["ticks"] = pd.DataFrame(
        {"type": "tick", "time": [1, 1, 2, 2], "key": "k", "v": [5, 1, 7, 6], "rank": [2, 1, 2, 1]}
    )
    frame = ip.run_line_magic("cep", "run rise --on ticks --order-by rank")
    assert [tuple(ev) for ev in frame["events"]] == [(1, 0), (0, 3), (3, 2)]
    plain = ip.run_line_magic("cep", "run rise --on ticks")
    assert [tuple(ev) for ev in plain["events"]] == [(1, 2)]


def test_run_notes_dropped_partial_matches(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.user_ns["piles"] = pd.DataFrame(
        {"type": ["login"] * 5 + ["logout"], "time": [0, 1, 2, 3, 4, 10], "user": ["u"] * 6}
    )
    text = "sequence s partition by user max partial matches 2\n  begin a: login\n  followed by b: logout"
    ip.run_cell_magic("cep", "", text)
    capsys.readouterr()
    with pytest.warns(RuntimeWarning, match="max_partial_matches"):
        frame = ip.run_line_magic("cep", "run s --on piles")
    assert len(frame) == 2
    out = capsys.readouterr().out
    assert "note: 3 partial match(es) or group instance(s) dropped" in out
    with pytest.warns(RuntimeWarning, match="max_partial_matches"):  # every run warns once
        again = magics(ip).session.replay(["s"], ip.user_ns["piles"])
    assert again.outcome.dropped == 3


@pytest.mark.parametrize("name", ["__builtins__", "a b", "1x", "class", "x-y"])
def test_a_result_is_stored_only_under_a_plain_variable_name(ip: Any, name: str) -> None:
    ip.run_cell_magic("cep", "-q", "sequence s begin a")
    ip.user_ns["df"] = pd.DataFrame({"type": ["a"], "time": [1]})
    with pytest.raises(UsageError, match="cannot store the result as"):
        ip.run_line_magic("cep", f"run s --on df -o '{name}'")
    assert not isinstance(ip.user_ns["__builtins__"], pd.DataFrame)


def test_a_live_feed_keys_events_by_the_patterns_partition(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "sequence funnel partition by user\n  begin v: view\n  followed by b: buy")
    ip.user_ns["batch"] = [
        {"type": "view", "user": "ann", "key": "req-1"},  # a field named key stays a field
        {"type": "buy", "user": "bob"},
        {"type": "buy", "user": "ann"},
    ]
    ip.run_line_magic("cep", "feed funnel --start")
    frame = ip.run_line_magic("cep", "feed --from batch")
    assert list(frame["key"]) == ["ann"]  # not bob's buy: a live feed keys as a replay does
    assert list(frame["events"]) == [(0, 2)]
    ip.user_ns["nokey"] = [{"type": "view"}]
    with pytest.raises(CepCellError, match="event 0 of this feed has no value for its partition key 'user'"):
        ip.run_line_magic("cep", "feed --from nokey")
    ip.run_line_magic("cep", "feed --stop")
    ip.run_cell_magic("cep", "-q", "sequence other partition by ip\n  begin v: view")
    with pytest.raises(CepCellError, match="partitioned differently cannot share a live feed"):
        ip.run_line_magic("cep", "feed funnel other --start")


def test_errors_says_so_when_there_are_none(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    ip.run_cell_magic("cep", "-q", "sequence s begin a")
    ip.user_ns["df"] = pd.DataFrame({"type": ["a"], "time": [1]})
    ip.run_line_magic("cep", "run s --on df -o hits")
    capsys.readouterr()
    assert ip.run_line_magic("cep", "errors").empty
    assert "no condition errors in the last run" in capsys.readouterr().out


def test_a_live_feed_takes_a_dataframes_rows(ip: Any) -> None:
    ip.run_cell_magic("cep", "-q", "sequence pair partition by user\n  begin v: view\n  followed by b: buy")
    ip.user_ns["rows"] = pd.DataFrame({"type": ["view", "buy"], "user": ["ann", "ann"]})
    ip.run_line_magic("cep", "feed pair --start")
    frame = ip.run_line_magic("cep", "feed --from rows")
    assert list(frame["key"]) == ["ann"]  # the rows, not the column names
    ip.run_line_magic("cep", "feed --stop")


def test_a_misspelt_subcommand_gets_the_nearest_name(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(UsageError, match=r"unknown %cep subcommand 'hlep' \(did you mean 'help'\?\)") as err:
        ip.run_line_magic("cep", "hlep")
    assert str(err.value).endswith("errors, remove, help")  # help is one of the subcommands listed
    with pytest.raises(UsageError, match=r"unknown %cep subcommand 'explian' \(did you mean 'explain'\?\)"):
        ip.run_line_magic("cep", "help explian")
    with pytest.raises(UsageError, match=r"unknown %cep subcommand 'zzz'; subcommands: run, feed"):
        ip.run_line_magic("cep", "zzz")  # nothing close: no guess
    assert ip.run_line_magic("cep", "help help") is None  # the overview, as the hint leads to it
    assert "%cep help SUBCOMMAND" in capsys.readouterr().out
