"""Bad inputs to a replay give an error naming the row/event and column, or the correct result."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from workbench.engine.events import Event
from workbench.errors import CepError, EventError
from workbench.session.inputs import load_events, read_frame
from workbench.session.session import CepSession

PATTERN = "sequence s partition by k within 10ms\n    begin a: a\n    followed by b: b\n"


def replay(data: object, **options: object) -> list[tuple[object, tuple[int, ...]]]:
    session = CepSession()
    session.define(PATTERN)
    done = session.replay(["s"], data, trace=False, **options)  # type: ignore[arg-type]
    found = [(d.key, tuple(e.seq for e in d.events)) for d in done.outcome.detections if d.kind == "match"]
    return sorted(found, key=repr)


def test_repeated_columns_are_refused_by_name() -> None:
    frame = pd.DataFrame([["a", 1, "x", 1], ["b", 2, "x", 2]], columns=["type", "time", "k", "k"])
    with pytest.raises(EventError, match="more than one column named 'k'") as err:
        replay(frame)
    assert err.value.field == "k"


def test_a_csv_header_that_names_a_column_twice_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "twice.csv"
    path.write_text("\ufefftype,time,k,k\na,1,x,y\nb,2,x,y\n", encoding="utf-8")
    with pytest.raises(CepError, match=r"its header names column 'k' twice \(columns 3 and 4\); rename one"):
        read_frame(path)
    path.write_text("type,time,k\na,1,x\nb,2,x\n", encoding="utf-8")
    assert replay(read_frame(path)) == [("x", (0, 1))]


def test_columns_not_named_by_text_are_refused_by_position() -> None:
    frame = pd.DataFrame([["a", 1, "x", 1], ["b", 2, "x", 2]], columns=["type", "time", "k", 5])
    with pytest.raises(EventError, match="column 3 is named 5, a int: name every column with text"):
        replay(frame)


def test_integer_times_beyond_int64_are_exact() -> None:
    base = 2**70
    events = [{"type": "a", "time": base, "k": "x"}, {"type": "b", "time": base + 9, "k": "x"}]
    assert replay(events) == [("x", (0, 1))]
    late = [{"type": "a", "time": base, "k": "x"}, {"type": "b", "time": base + 10, "k": "x"}]
    assert replay(late) == []  # the 10 ms window is exact at that size, not rounded to a float
    frame = pd.DataFrame({"type": ["a", "b"], "time": [base, base + 9], "k": ["x", "x"]})
    assert replay(frame) == [("x", (0, 1))]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_built_events_with_nan_or_infinite_times_are_refused(bad: float) -> None:
    with pytest.raises(EventError, match="time must be finite") as err:
        replay([Event("a", 1, "x", {}), Event("b", bad, "x", {})])
    assert err.value.position == 1


def test_a_missing_partition_value_names_the_row_of_a_frame() -> None:
    frame = pd.DataFrame({"type": ["a", "b", "b"], "time": [1, 2, 3], "k": ["x", "x", None]})
    with pytest.raises(EventError, match=r"row 2 .* no value in the partition key column 'k'") as err:
        replay(frame)
    assert err.value.field == "k"
    assert err.value.position == 2


def test_a_missing_partition_value_names_the_event_of_a_list() -> None:
    events = [
        {"type": "a", "time": 1, "k": "x"},
        {"type": "b", "time": 2, "k": math.nan},
        {"type": "b", "time": 3},
    ]
    with pytest.raises(
        EventError, match=r"event #1, field 'k': row 1 .* no value in the partition key"
    ) as err:
        replay(events)
    assert (err.value.position, err.value.field) == (1, "k")


def test_allowed_missing_partition_values_share_one_null_key() -> None:
    frame = pd.DataFrame({"type": ["a", "a", "b", "b"], "time": [1, 2, 3, 4], "k": ["x", None, None, "x"]})
    session = CepSession()
    session.define(PATTERN)
    done = session.replay(["s"], frame, trace=False, allow_missing_key=True)
    got = sorted(
        (d.key is None, tuple(e.seq for e in d.events)) for d in done.outcome.detections if d.kind == "match"
    )
    assert got == [(False, (0, 3)), (True, (1, 2))]
    assert done.missing_keys == 2
    events = frame.to_dict("records")
    assert replay(events, allow_missing_key=True) == replay(frame, allow_missing_key=True)


def test_an_explicit_key_option_is_checked_the_same_way() -> None:
    frame = pd.DataFrame({"type": ["a", "b"], "time": [1, 2], "user": ["u", None]})
    with pytest.raises(EventError, match=r"row 1 .*partition key column 'user'"):
        replay(frame, key="user")
    # an unkeyed pattern on a frame without the column is not affected
    assert load_events(pd.DataFrame({"type": ["a"], "time": [1]}))[0].key is None


@pytest.mark.parametrize("value", [math.nan, math.inf, -1, "5"])
def test_out_of_orderness_is_checked(value: object) -> None:
    with pytest.raises(CepError, match="out-of-orderness must be a number of milliseconds >= 0"):
        replay([{"type": "a", "time": 1, "k": "x"}], out_of_orderness=value)


def test_a_replay_of_no_pattern_is_an_error_and_one_name_may_be_a_string() -> None:
    session = CepSession()
    session.define(PATTERN)
    events = [{"type": "a", "time": 1, "k": "x"}, {"type": "b", "time": 2, "k": "x"}]
    with pytest.raises(CepError, match="replay: no pattern to run"):
        session.replay([], events)
    with pytest.raises(CepError, match="start_feed: no pattern to run"):
        session.start_feed([])
    done = session.replay("s", events, trace=False)  # not the patterns 's' ... one letter each
    assert len(done.outcome.detections) == 1


@pytest.mark.parametrize(("drop", "what"), [("type", "type"), ("time", "time")])
def test_a_missing_type_or_time_column_lists_the_users_columns_only(drop: str, what: str) -> None:
    frame = pd.DataFrame({"type": ["a"], "time": [1], "symbol": ["x"], "price": [1.0]}).drop(columns=drop)
    with pytest.raises(EventError, match=f"no {what} column") as caught:
        load_events(frame, key="symbol")  # why a key other than 'key': the engine keys by a copy
    assert caught.value.field == drop
    listed = str(caught.value).split("columns: ")[1]
    assert listed == str([c for c in ("type", "time", "symbol", "price") if c != drop])


@pytest.mark.parametrize("partition", ["user", "user, ip"])
def test_a_column_named_key_is_a_field_and_never_the_partition_key(partition: str) -> None:
    session = CepSession()
    session.define(
        f"sequence s partition by {partition}\n  begin a: login\n"
        "  next b: transfer where e.fields['key'] == 'req-2'"
    )
    frame = pd.DataFrame(
        {
            "type": ["login", "transfer", "login", "transfer"],
            "time": [0, 1, 2, 3],
            "user": ["ann", "ann", "bob", "ann"],
            "ip": ["1", "1", "1", "2"],
            "key": ["req-1", "req-2", "req-3", "req-4"],  # an API's request id, not a partition
        }
    )
    done = session.replay(["s"], frame, trace=False)
    keys = [d.key for d in done.outcome.detections]
    assert keys == (["ann"] if partition == "user" else [("ann", "1")])
    (d,) = done.outcome.detections
    assert [e.fields["key"] for e in d.events] == ["req-1", "req-2"]
    assert [e.fields["user"] for e in d.events] == ["ann", "ann"]  # the partition column stays a field


def test_columns_named_like_attributes_are_fields_when_others_are_the_attributes() -> None:
    frame = pd.DataFrame(
        {"action": ["view"], "ts": [5], "type": ["mobile"], "time": ["evening"], "t": [35.0], "seq": [9]}
    )
    (event,) = load_events(frame, type="action", time="ts")
    assert (event.type, event.time) == ("view", 5)
    # a 'seq' column is data too (it was dropped): e.fields['seq'] reads it, e.seq is the position
    assert event.fields == {"type": "mobile", "time": "evening", "t": 35.0, "seq": 9}
    session = CepSession()
    session.define("sequence s begin a: view where e.fields['type'] == 'mobile' and e.fields['t'] > 30")
    assert len(session.replay(["s"], frame, type="action", time="ts").outcome.detections) == 1


def test_a_composite_key_with_pandas_missing_values_shares_the_null_key() -> None:
    frame = pd.DataFrame(
        {"type": ["a", "a", "b"], "time": [1, 2, 3], "user": ["u", "v", "u"], "ip": [1, None, 1]}
    ).convert_dtypes()  # nullable Int64 and string columns hold pd.NA
    events = load_events(frame, key=("user", "ip"), allow_missing_key=True)
    assert [e.key for e in events] == [("u", 1), None, ("u", 1)]
    rows = [
        {"type": "a", "time": 1, "user": "u", "ip": pd.NA},
        {"type": "a", "time": 2, "user": "u", "ip": 1},
    ]
    assert [e.key for e in load_events(rows, key=("user", "ip"), allow_missing_key=True)] == [None, ("u", 1)]


def test_json_lines_keep_their_values_as_written(tmp_path: Path) -> None:
    path = tmp_path / "events.jsonl"
    path.write_text(
        '{"type": "a", "time": 1, "zip": "02134", "code": "1e3", "created_at": 1700000000}\n'
        '{"type": "a", "time": 2, "zip": "42", "code": "7", "created_at": 5}\n'
    )
    events = load_events(read_frame(path))
    assert [e.fields for e in events] == [
        {"zip": "02134", "code": "1e3", "created_at": 1700000000},
        {"zip": "42", "code": "7", "created_at": 5},
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_json_with_a_byte_order_mark_is_read(tmp_path: Path, suffix: str) -> None:
    # (pandas refused it: "Expected object or value at position 0")
    rows = ['{"type": "a", "time": 1, "v": 9007199254740993}', '{"type": "b", "time": 2}']
    text = "\n".join(rows) if suffix == ".jsonl" else "[" + ", ".join(rows) + "]"
    path = tmp_path / f"events{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    frame = read_frame(path)
    assert frame["type"].tolist() == ["a", "b"]
    assert frame["v"].tolist()[0] == 9007199254740993  # the exact re-read skips the mark too


def test_a_csv_column_with_a_zero_padded_number_stays_text(tmp_path: Path) -> None:
    # (keys 007 and 7 became one partition, 7, and the field 001 came back as 1.0)
    path = tmp_path / "events.csv"
    path.write_text('type,time,key,v,n,f\na,1,007,001,5,0.5\nb,2,7,,6,1.5\nc,3,"0042",x,7,2\n')
    frame = read_frame(path)
    assert frame["key"].tolist() == ["007", "7", "0042"]
    assert frame["v"].tolist()[0] == "001"
    assert frame["n"].tolist() == [5, 6, 7]  # no padded cell: numbers
    assert frame["f"].tolist() == [0.5, 1.5, 2.0]  # '0.5' is no padding
    assert len({e.key for e in load_events(frame, key="key")}) == 3


@pytest.mark.parametrize("source", ["frame", "csv", "mappings"])
def test_a_seq_column_is_a_field_in_every_input(source: str, tmp_path: Path) -> None:
    # (a market feed's 'seq' was silently dropped: e.fields['seq'] never matched)
    rows = [
        {"type": "quote", "time": 0, "sym": "A", "seq": 17},
        {"type": "quote", "time": 1, "sym": "A", "seq": 18},
    ]
    data: object = pd.DataFrame(rows)
    if source == "csv":
        data = tmp_path / "quotes.csv"
        pd.DataFrame(rows).to_csv(data, index=False)
    elif source == "mappings":
        data = rows
    session = CepSession()
    session.define("sequence s partition by sym begin a: quote where e.fields['seq'] == 18 and e.seq == 1")
    assert [d.seqs for d in session.replay(["s"], data).outcome.detections] == [(1,)]


def test_a_mapping_with_time_keeps_its_t_and_refuses_fields_beside_a_fields_mapping() -> None:
    (event,) = load_events([{"type": "a", "time": 5, "t": 35.0, "x": 1}])
    assert (event.time, event.fields) == (5, {"t": 35.0, "x": 1})
    with pytest.raises(EventError, match=r"a 'fields' mapping and fields beside it \('price'\)"):
        load_events([{"type": "a", "time": 0, "fields": {"a": 1}, "price": 5}])


def test_files_give_numbers_as_written(tmp_path: Path) -> None:
    # (a whole-number column with a blank, or with a fraction, is read as floats: 9007199254740993
    # became ...992; and pandas' JSON float parser was one unit in the last place off now and then)
    csv = tmp_path / "e.csv"
    csv.write_text("type,time,id,v\nq,0,9007199254740993,1.5\nq,1,,2.1060533511106927\nq,2,12,3\n")
    frame = read_frame(csv)
    assert [frame["id"][0], frame["id"][2]] == [9007199254740993, 12]
    assert math.isnan(frame["id"][1])
    assert frame["v"].tolist() == [1.5, 2.1060533511106927, 3.0]
    lines = tmp_path / "e.jsonl"
    lines.write_text(
        '{"type":"q","time":0,"id":9007199254740993,"v":2.1060533511106927}\n'
        '{"type":"q","time":1,"id":1.5,"v":1.7976931348623157e308}\n'
    )
    frame = read_frame(lines)
    assert frame["id"].tolist() == [9007199254740993, 1.5]
    assert frame["v"].tolist() == [2.1060533511106927, 1.7976931348623157e308]
    session = CepSession()
    session.define("sequence s begin a: q where e.id == 9007199254740993")
    assert len(session.replay(["s"], csv).outcome.detections) == 1


def test_a_csv_row_wider_than_its_header_is_named(tmp_path: Path) -> None:
    # (pandas made the extra field an index and shifted every column: "column 'time' ... 'A' is
    # neither a number nor an ISO 8601 date")
    path = tmp_path / "e.csv"
    path.write_text("type,time,sym,qty\nquote,0,A,5,9\nquote,1,A,7,9\n")
    with pytest.raises(CepError, match="its first row has 5 fields but the header names 4 columns"):
        read_frame(path)


def test_an_unhashable_part_of_a_composite_key_is_named_by_its_column() -> None:
    # (the message named the internal tuples column '\x00key')
    frame = pd.DataFrame({"type": "a", "time": [0, 1], "sym": "X", "v": [[1], [2]]})
    with pytest.raises(
        EventError, match=r"row 0 \(index 0\), column 'v': a partition key must be hashable"
    ) as info:
        load_events(frame, key=("sym", "v"))
    assert "\x00" not in str(info.value)
