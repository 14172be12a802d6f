"""The headless CLI, run as a subprocess: ``workbench check`` and ``workbench run`` on CSV files."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

DATA = Path(__file__).parent / "data" / "language"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "workbench.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_check_lists_patterns() -> None:
    result = cli("check", str(DATA / "prova_blog.cep"))
    assert result.returncode == 0, result.stderr
    assert "and_not: @and group with 2 member(s)" in result.stdout
    assert "4 pattern(s), OK" in result.stdout


def test_check_reports_errors_with_caret(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cep"
    bad.write_text("sequence s\n  begin a wher e.x > 1\n", encoding="utf-8")
    result = cli("check", str(bad))
    assert result.returncode == 1
    assert "line 2, column 11: unexpected 'wher'" in result.stderr
    assert "(did you mean 'where'?)" in result.stderr
    assert result.stderr.rstrip().endswith("^")
    assert "Traceback" not in result.stderr


def test_run_on_a_csv_writes_detections(tmp_path: Path) -> None:
    out = tmp_path / "out.csv"
    result = cli("run", str(DATA / "prova_blog.cep"), str(DATA / "logins.csv"), "-o", str(out))
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(out)
    got = sorted(zip(frame["pattern"], frame["key"], frame["events"], strict=True))
    assert ("and_not", "user3", "(3,)") in got
    assert ("or_stop", "user1", "(4,)") in got
    assert "7 events" in result.stderr


def test_run_partition_by_and_skip(tmp_path: Path) -> None:
    # the W pattern keys by its 'partition by symbol' field; 'skip past last event' keeps one match
    result = cli(
        "run", str(DATA / "w_shape.cep"), "--on", str(DATA / "w_prices.csv"), "-o", str(tmp_path / "w.jsonl")
    )
    assert result.returncode == 0, result.stderr
    frame = pd.read_json(tmp_path / "w.jsonl", lines=True)
    assert list(frame["key"]) == ["ACME"]
    assert list(frame["events"]) == [[0, 2, 3, 4, 5]]


def test_run_selects_patterns_and_prints(tmp_path: Path) -> None:
    result = cli("run", str(DATA / "prova_blog.cep"), str(DATA / "logins.csv"), "--pattern", "and_not", "-q")
    assert result.returncode == 0, result.stderr
    assert "and_not" in result.stdout
    assert "or_stop" not in result.stdout


def test_bad_input_file() -> None:
    result = cli("run", str(DATA / "prova_blog.cep"), "missing.csv")
    assert result.returncode == 1
    assert "no such file" in result.stderr


def test_run_a_group_of_stages(tmp_path: Path) -> None:
    patterns = tmp_path / "retries.cep"
    patterns.write_text(
        "sequence retries\n"
        "    begin first_miss: login where e.ok == False\n"
        "    followed by (\n"
        "        begin miss: login where e.ok == False\n"
        "        next retry: login where e.ok == True\n"
        "    ) times 2\n",
        encoding="utf-8",
    )
    events = tmp_path / "attempts.csv"
    events.write_text(
        "type,time,ok\nlogin,0,False\nlogin,1,False\nlogin,2,True\nlogin,3,False\nlogin,4,True\n"
    )
    result = cli("run", str(patterns), str(events), "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 0, result.stderr
    frame = pd.read_json(tmp_path / "out.jsonl", lines=True)
    assert [tuple(ev) for ev in frame["events"]] == [(0, 1, 3, 2, 4)]


LATE_CEP = "sequence s partition by user\n  begin a: login\n  followed by b: logout\n"
LATE_CSV = "type,time,user\nlogin,0,u\nlogout,1000,u\nlogin,500,u\nlogout,3000,u\n"


def _late_files(tmp_path: Path) -> tuple[Path, Path]:
    patterns, events = tmp_path / "s.cep", tmp_path / "events.csv"
    patterns.write_text(LATE_CEP, encoding="utf-8")
    events.write_text(LATE_CSV, encoding="utf-8")
    return patterns, events


def test_late_events_are_reported_even_when_quiet(tmp_path: Path) -> None:
    patterns, events = _late_files(tmp_path)
    result = cli("run", str(patterns), str(events), "-q", "-o", str(tmp_path / "out.csv"))
    assert result.returncode == 0, result.stderr
    assert "warning: 1 late event(s) were not matched" in result.stderr
    assert "event #2, type 'login', time 500" in result.stderr
    assert "--late FILE" in result.stderr


def test_late_events_written_with_late(tmp_path: Path) -> None:
    patterns, events = _late_files(tmp_path)
    late = tmp_path / "late.csv"
    result = cli("run", str(patterns), str(events), "--late", str(late), "-o", str(tmp_path / "out.csv"))
    assert result.returncode == 0, result.stderr
    assert "warning" not in result.stderr
    assert f"1 late -> {late}" in result.stderr
    frame = pd.read_csv(late)
    assert list(frame["seq"]) == [2]
    assert list(frame["type"]) == ["login"]


def test_missing_partition_key_column(tmp_path: Path) -> None:
    patterns, events = _late_files(tmp_path)
    events.write_text("type,time,usr\nlogin,0,u\n", encoding="utf-8")
    result = cli("run", str(patterns), str(events))
    assert result.returncode == 1
    assert "no partition key column 'user' (did you mean 'usr'?)" in result.stderr
    assert "Traceback" not in result.stderr


def test_backends_go_through_get_backend(tmp_path: Path) -> None:
    patterns, events = _late_files(tmp_path)
    local = cli("run", str(patterns), str(events), "--backend", "local", "--out-of-orderness", "1000", "-q")
    assert local.returncode == 0, local.stderr
    bogus = cli("run", str(patterns), str(events), "--backend", "flnk")
    assert bogus.returncode == 1
    assert "BackendError: unknown backend 'flnk'; known: local, flink, flink-sql" in bogus.stderr


@pytest.mark.skipif(importlib.util.find_spec("pyflink") is not None, reason="PyFlink is installed here")
def test_flink_backend_without_pyflink(tmp_path: Path) -> None:
    patterns, events = _late_files(tmp_path)
    result = cli("run", str(patterns), str(events), "--backend", "flink")
    assert result.returncode == 1
    assert "BackendError: the flink backend needs PyFlink" in result.stderr
    assert "Traceback" not in result.stderr


def test_duration_typo_in_check(tmp_path: Path) -> None:
    bad = tmp_path / "bad.cep"
    bad.write_text("sequence s\n  within 10 mins\n  begin a\n", encoding="utf-8")
    result = cli("check", str(bad))
    assert result.returncode == 1
    assert result.stderr.startswith(f"{bad}:2:10: error: CepSyntaxError: line 2, column 10: unexpected '10'")
    assert "(did you mean '10min'?" in result.stderr


def test_near_miss_type_and_field_warnings(tmp_path: Path) -> None:
    patterns, events = _late_files(tmp_path)
    patterns.write_text("sequence s\n  begin a: lgin where e.usr == 'u'\n", encoding="utf-8")
    result = cli("run", str(patterns), str(events), "--out-of-orderness", "1000", "-q")
    assert result.returncode == 0, result.stderr
    assert "warning: the patterns listen to event type 'lgin', which the input does not have" in result.stderr
    assert "(did you mean 'login'?)" in result.stderr
    assert (
        "'a' of pattern 's' reads field 'usr', which no input event has (did you mean 'user'?)"
        in result.stderr
    )


def test_patterns_partitioned_differently(tmp_path: Path) -> None:
    patterns, events = tmp_path / "p.cep", tmp_path / "e.csv"
    patterns.write_text(
        "sequence by_user partition by user\n  begin a: login\n  followed by b: logout\n"
        "sequence by_ip partition by ip\n  begin a: login\n  followed by b: logout\n",
        encoding="utf-8",
    )
    events.write_text(
        "type,time,user,ip\nlogin,0,u1,ip1\nlogout,1,u2,ip1\nlogout,2,u1,ip2\n", encoding="utf-8"
    )
    result = cli("run", str(patterns), str(events), "-o", str(tmp_path / "out.jsonl"), "-q")
    assert result.returncode == 0, result.stderr
    frame = pd.read_json(tmp_path / "out.jsonl", lines=True)
    got = sorted(
        (p, k, tuple(e)) for p, k, e in zip(frame["pattern"], frame["key"], frame["events"], strict=True)
    )
    assert got == [("by_ip", "ip1", (0, 1)), ("by_user", "u1", (0, 2))]


NULLS_CEP = """sequence dip
    partition by symbol
    begin low: tick where e.price < 10
    next high: tick where e.price > last(low).price and e.volume is not None
"""


def _nan_ticks(tmp_path: Path) -> Path:
    """Ticks with empty (NaN) cells: a NULL price matches nothing, a NULL volume fails 'is not None'."""
    frame = pd.DataFrame(
        {
            "type": ["tick"] * 6,
            "time": [0, 1, 2, 3, 4, 5],
            "symbol": ["A"] * 6,
            "price": [5.0, float("nan"), 8.0, 12.0, 4.0, 9.0],
            "volume": [1.0, 1.0, 1.0, 1.0, 1.0, float("nan")],
        }
    )
    path = tmp_path / "ticks.csv"
    frame.to_csv(path, index=False)
    return path


def test_nan_cells_replay_as_nulls_with_correct_detections(tmp_path: Path) -> None:
    patterns = tmp_path / "dip.cep"
    patterns.write_text(NULLS_CEP, encoding="utf-8")
    out = tmp_path / "hits.csv"
    result = cli("run", str(patterns), str(_nan_ticks(tmp_path)), "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    hits = pd.read_csv(out)
    # 5 -> NaN breaks strict contiguity (NULL price is not > 5); 8 -> 12 matches; 4 -> 9 has no volume
    assert [(r.first_time, r.last_time) for r in hits.itertuples()] == [(2, 3)]


def test_condition_errors_are_reported_and_set_exit_status_3(tmp_path: Path) -> None:
    patterns = tmp_path / "bad.cep"
    patterns.write_text("sequence s begin a: tick where e.price > 'x' or e.price > 7\n", encoding="utf-8")
    errors = tmp_path / "errors.csv"
    result = cli("run", str(patterns), str(_nan_ticks(tmp_path)), "--errors", str(errors))
    assert result.returncode == 3, result.stderr
    assert "error in condition: pattern 's', stage 'a' where" in result.stderr
    assert "TypeError" in result.stderr
    assert "condition error(s) on 5 event(s)" in result.stderr  # the NaN price is NULL, not an error
    table = pd.read_csv(errors)
    assert table[["pattern", "kind", "count", "first_seq"]].values.tolist() == [["s", "TypeError", 5, 0]]
    strict = cli("run", str(patterns), str(_nan_ticks(tmp_path)), "--strict")
    assert strict.returncode == 1
    assert "CepRuntimeError" in strict.stderr


def test_one_partition_is_said_once_when_no_event_has_a_key(tmp_path: Path) -> None:
    patterns = tmp_path / "p.cep"
    patterns.write_text("sequence s begin a: login followed by b: trade\n")
    unkeyed = tmp_path / "unkeyed.csv"
    pd.DataFrame({"type": ["login", "trade"], "time": [1, 2]}).to_csv(unkeyed, index=False)
    result = cli("run", str(patterns), str(unkeyed), "-q", "-o", str(tmp_path / "out.csv"))
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("all events form one partition") == 1
    keyed = tmp_path / "keyed.csv"
    pd.DataFrame({"type": ["login", "trade"], "time": [1, 2], "key": ["u", "u"]}).to_csv(keyed, index=False)
    result = cli("run", str(patterns), str(keyed), "-q", "-o", str(tmp_path / "out.csv"))
    assert "one partition" not in result.stderr


def test_run_order_by_orders_equal_time_rows(tmp_path: Path) -> None:
    patterns = tmp_path / "rise.cep"
    patterns.write_text("sequence rise\n  begin a: tick\n  next b: tick where e.v > a.v\n", encoding="utf-8")
    events = tmp_path / "ticks.csv"
    events.write_text("type,time,key,v,rank\ntick,1,k,5,2\ntick,1,k,1,1\ntick,2,k,7,2\ntick,2,k,6,1\n")
    out = tmp_path / "out.csv"
    result = cli("run", str(patterns), str(events), "--order-by", "rank", "-o", str(out), "-q")
    assert result.returncode == 0, result.stderr
    assert list(pd.read_csv(out)["events"]) == ["(1, 0)", "(0, 3)", "(3, 2)"]
    bad = cli("run", str(patterns), str(events), "--order-by", "rnak", "-q")
    assert bad.returncode != 0
    assert "no field 'rnak' (did you mean 'rank'?)" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_dropped_partial_matches_are_reported_even_when_quiet(tmp_path: Path) -> None:
    patterns, events = tmp_path / "s.cep", tmp_path / "events.csv"
    patterns.write_text(LATE_CEP.replace("partition by user", "partition by user max partial matches 2"))
    events.write_text("type,time,user\n" + "".join(f"login,{t},u\n" for t in range(5)) + "logout,10,u\n")
    result = cli("run", str(patterns), str(events), "-q", "-o", str(tmp_path / "out.csv"))
    assert result.returncode == 0, result.stderr
    assert "warning: 3 partial match(es) or group instance(s) dropped" in result.stderr
    assert list(pd.read_csv(tmp_path / "out.csv")["instance"]) == [4, 5]  # the newest two were kept
    events.write_text("type,time,user\nlogin,0,u\nlogout,10,u\n")
    kept = cli("run", str(patterns), str(events), "-q")  # nothing dropped: no line
    assert kept.returncode == 0, kept.stderr
    assert "partial match(es)" not in kept.stderr


def test_python_dash_m_workbench_is_the_command_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "workbench", "check", str(DATA / "prova_blog.cep")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "4 pattern(s), OK" in result.stdout


def test_json_output_keeps_dates_and_names_what_json_cannot_hold(tmp_path: Path) -> None:
    # (pandas wrote datetime columns as epoch numbers, and infinite measures as null, silently)
    patterns, events = tmp_path / "m.cep", tmp_path / "e.csv"
    patterns.write_text(
        "sequence M within 10s\n    measures x = a.price\n    begin a: login\n    followed by b: trade\n",
        encoding="utf-8",
    )
    events.write_text(
        "time,key,type,price\n2024-01-01 00:00:01,k,login,inf\n2024-01-01 00:00:03,k,trade,120\n"
    )
    for name in ("out.jsonl", "out.json"):
        result = cli("run", str(patterns), str(events), "--time-unit", "date", "-o", str(tmp_path / name))
        assert result.returncode == 0, result.stderr
        assert "column 'x' has 1 infinite value(s); JSON has no infinity" in result.stderr
        text = (tmp_path / name).read_text()
        assert '"emit_time":"2024-01-01T00:00:03.000"' in text
        assert '"x":null' in text
    result = cli("run", str(patterns), str(events), "--time-unit", "date", "-o", str(tmp_path / "out.csv"))
    assert "infinite" not in result.stderr
    assert pd.read_csv(tmp_path / "out.csv")["x"].tolist() == [float("inf")]


def test_json_output_keeps_every_float_digit(tmp_path: Path) -> None:
    # (pandas' writer kept 10 significant digits: 2.1060533511106927 came back as 2.1060533511)
    patterns, events = tmp_path / "m.cep", tmp_path / "e.csv"
    patterns.write_text(
        "sequence M\n    measures f = a.price * 1, big = 1.7976931348623157e308\n"
        "    begin a: login\n    followed by b: trade\n",
        encoding="utf-8",
    )
    events.write_text("time,key,type,price\n1,k,login,2.1060533511106927\n2,k,trade,3\n")
    result = cli("run", str(patterns), str(events), "-o", str(tmp_path / "out.jsonl"))
    assert result.returncode == 0, result.stderr
    row = pd.read_json(tmp_path / "out.jsonl", lines=True, precise_float=True).iloc[0]
    assert (row["f"], row["big"]) == (2.1060533511106927, 1.7976931348623157e308)


@pytest.mark.skipif(importlib.util.find_spec("pyarrow") is not None, reason="pyarrow is installed")
def test_parquet_output_without_pyarrow_fails_before_the_run(tmp_path: Path) -> None:
    # (the whole replay ran, then pandas' ImportError ended it with a traceback)
    patterns, events = tmp_path / "m.cep", tmp_path / "e.csv"
    patterns.write_text("sequence M begin a: login\n", encoding="utf-8")
    events.write_text("time,key,type\n1,k,login\n")
    result = cli("run", str(patterns), str(events), "-o", str(tmp_path / "out.parquet"))
    assert result.returncode != 0
    assert "Parquet needs pyarrow (pip install pyarrow)" in result.stderr
    assert "Traceback" not in result.stderr
    assert "events" not in result.stdout  # nothing was replayed


def test_a_text_column_compared_with_a_number_is_named(tmp_path: Path) -> None:
    # (one '?' made the column text: 'e.qty == 5' was never true, and nothing said so)
    patterns, events = tmp_path / "eq.cep", tmp_path / "eq.csv"
    patterns.write_text("sequence hit partition by sym begin q: quote where e.qty == 5 or e.qty in [7, 8]\n")
    events.write_text("type,time,sym,qty\nquote,0,A,5\nquote,1,A,7\nquote,2,A,?\n")
    result = cli("run", str(patterns), str(events), "-o", str(tmp_path / "o.csv"))
    assert "compares the field 'qty' with a number, but the input column 'qty' is text" in result.stderr
    assert "(event #2 holds '?', not a number)" in result.stderr
    events.write_text("type,time,sym,qty\nquote,0,A,5\nquote,1,A,7\n")
    assert "is text" not in cli("run", str(patterns), str(events), "-o", str(tmp_path / "o.csv")).stderr


@pytest.mark.parametrize(
    ("outputs", "message"),
    [
        (["-o", "{events}"], "-o/--out {events} is the events file"),
        (["--late", "./{events}"], "is the events file"),
        (["-o", "{both}", "--late", "{both}"], "--late {both} is the -o/--out file"),
        (["-o", "{link}"], "-o/--out {link} is the events file"),  # a hard link to the events
    ],
)
def test_an_output_that_is_an_input_or_another_output_is_refused_before_the_run(
    tmp_path: Path, outputs: list[str], message: str
) -> None:
    # (the events file was overwritten by the detections, its data lost)
    patterns = tmp_path / "s.cep"
    patterns.write_text("sequence ab\n    begin a: a\n    followed by b: b\n", encoding="utf-8")
    events = tmp_path / "events.csv"
    events.write_text("type,time,key\na,1,k\nb,2,k\n", encoding="utf-8")
    (tmp_path / "link.csv").hardlink_to(events)
    names = {"events": "events.csv", "patterns": "s.cep", "both": "both.csv", "link": "link.csv"}
    args = [a.format(**names) for a in outputs]
    result = subprocess.run(
        [sys.executable, "-m", "workbench.cli", "run", "s.cep", "events.csv", "-q", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1
    assert message.format(**names) in result.stderr
    assert events.read_text(encoding="utf-8") == "type,time,key\na,1,k\nb,2,k\n"
    assert not (tmp_path / "both.csv").exists()
