"""JSON (lines) event files keep every value as written, ragged records and empty files included."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest

from workbench.cli import main
from workbench.errors import CepError
from workbench.session.inputs import load_events, read_frame
from workbench.session.session import CepSession

PATTERN = "sequence s partition by key within 10ms\n    begin a: a\n    followed by b: b\n"


def lines_file(tmp_path: Path, *records: str, name: str = "events.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(r + "\n" for r in records), encoding="utf-8")
    return path


def field(path: Path, name: str) -> list[object]:
    """Column ``name`` of the file as read, NaN given back as None (NaN != NaN)."""
    return [None if isinstance(v, float) and math.isnan(v) else v for v in read_frame(path)[name].tolist()]


def test_a_ragged_int_field_stays_int(tmp_path: Path) -> None:
    # (pandas made the column float64: the record that had n = 1 came back with 1.0)
    path = lines_file(tmp_path, '{"type":"a","time":1,"key":"k","n":1}', '{"type":"b","time":2,"key":"k"}')
    values = read_frame(path)["n"].tolist()
    assert values[0] == 1
    assert type(values[0]) is int
    assert pd.isna(values[1])  # missing reads as missing (NULL)
    events = load_events(read_frame(path), key="key")
    assert type(events[0].fields["n"]) is int
    assert "n" not in events[1].fields or events[1].fields["n"] is None


@pytest.mark.parametrize("suffix", [".jsonl", ".json"])
def test_ints_beside_a_null_a_gap_or_a_float_keep_their_type(tmp_path: Path, suffix: str) -> None:
    rows = [
        '{"type":"a","time":1,"n":null,"m":1}',
        '{"type":"a","time":2,"n":3,"m":2.5}',
        '{"type":"a","time":3,"m":7}',
    ]
    path = tmp_path / f"e{suffix}"
    path.write_text("\n".join(rows) if suffix == ".jsonl" else "[" + ",".join(rows) + "]")
    assert field(path, "n") == [None, 3, None]
    assert [type(v) for v in field(path, "n")] == [type(None), int, type(None)]
    assert [type(v) for v in field(path, "m")] == [int, float, int]


def test_big_ints_keep_every_digit_with_gaps_and_beyond_64_bits(tmp_path: Path) -> None:
    # (2**64 was refused: "Value is too big!")
    path = lines_file(
        tmp_path,
        '{"type":"a","time":1,"id":9007199254740993,"huge":18446744073709551616,"max":9223372036854775807}',
        '{"type":"a","time":2,"huge":1,"max":1}',
        '{"type":"a","time":3,"id":4,"huge":-18446744073709551617,"max":2}',
    )
    assert field(path, "id") == [9007199254740993, None, 4]
    assert field(path, "huge") == [18446744073709551616, 1, -18446744073709551617]
    assert read_frame(path)["max"].tolist() == [9223372036854775807, 1, 2]


def test_floats_bools_strings_and_nested_values_in_ragged_columns_keep_type_and_value(
    tmp_path: Path,
) -> None:
    path = lines_file(
        tmp_path,
        '{"type":"a","time":1,"f":2.1060533511106927,"b":true,"s":"02134","d":{"x":1},"l":[1,2]}',
        '{"type":"a","time":2}',
        '{"type":"a","time":3,"f":1e308,"b":false,"s":"7","d":{"x":[2]},"l":[]}',
    )
    assert field(path, "f") == [2.1060533511106927, None, 1e308]
    assert field(path, "b") == [True, None, False]
    assert [type(v) for v in field(path, "b")] == [bool, type(None), bool]
    assert field(path, "s") == ["02134", None, "7"]
    assert field(path, "d") == [{"x": 1}, None, {"x": [2]}]
    assert field(path, "l") == [[1, 2], None, []]


def test_complete_columns_keep_their_numpy_types(tmp_path: Path) -> None:
    path = lines_file(
        tmp_path, '{"type":"a","time":1,"f":0.5,"b":true}', '{"type":"b","time":2,"f":1.0,"b":false}'
    )
    frame = read_frame(path)
    assert [str(frame[c].dtype) for c in ("time", "f", "b")] == ["int64", "float64", "bool"]
    assert list(frame.columns) == ["type", "time", "f", "b"]


@pytest.mark.parametrize("text", ["", "\n\n", "  \n\t\r\n"])
def test_an_empty_json_lines_file_is_an_empty_frame(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text, encoding="utf-8")
    frame = read_frame(path)
    assert frame.empty
    assert len(frame) == 0


def test_a_header_only_csv_is_zero_events(tmp_path: Path) -> None:
    # (the comparison: a CSV with its header and no rows runs with no events)
    path = tmp_path / "empty.csv"
    path.write_text("type,time,key\n", encoding="utf-8")
    assert load_events(read_frame(path), key="key") == []
    session = CepSession()
    session.define(PATTERN)
    assert session.replay(["s"], path).outcome.detections == []


@pytest.mark.parametrize("text", ["", "\n\n"])
def test_a_run_on_an_empty_json_lines_file_has_no_detections(tmp_path: Path, text: str) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text(text, encoding="utf-8")
    session = CepSession()
    session.define(PATTERN)
    assert session.replay(["s"], path).outcome.detections == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", r"cannot read \S*e\.json: the file is empty; a \.json file holds a list of events"),
        ("  \n", "the file is empty"),
        ('[{"type": "a", "time": 1},\n 5]', r"item 1 of its list is a JSON number, not an object"),
        ('[{"type": "a",\n "time": }]', r"cannot read \S*e\.json: line 2 column 10: Expecting value"),
        ("7", "it holds a JSON number; a .json file holds a list of events"),
    ],
)
def test_a_bad_json_file_is_named(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "e.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CepError, match=message):
        read_frame(path)


@pytest.mark.parametrize(
    ("second", "message"),
    [
        ('{"type": "b",', r"line 3 column 14: Expecting property name"),
        ("[1, 2]", r"line 3 is a JSON array, not an object \(one event object a line\)"),
        ('{"type": "b", "time": 2} {"type": "c"}', r"line 3 column 26: more after its object"),
    ],
)
def test_a_malformed_line_is_named_with_the_file(tmp_path: Path, second: str, message: str) -> None:
    path = lines_file(tmp_path, '{"type": "a", "time": 1}', "", second)
    with pytest.raises(CepError, match=rf"cannot read \S*events\.jsonl: {message}"):
        read_frame(path)


def test_a_json_object_of_columns_is_read_as_pandas_writes_it(tmp_path: Path) -> None:
    path = tmp_path / "e.json"
    pd.DataFrame({"type": ["a", "b"], "time": [1, 2]}).to_json(path)  # {"type": {"0": "a", ...}}
    assert read_frame(path).to_dict("list") == {"type": ["a", "b"], "time": [1, 2]}
    path.write_text(json.dumps({"type": ["a", "b"], "time": [1, 2], "n": [1, None]}))
    assert field(path, "n") == [1, None]
    path.write_text(json.dumps({"type": {"0": "a", "1": "b"}, "time": {"0": 1, "1": 2}, "n": {"0": 1}}))
    assert field(path, "n") == [1, None]


def test_a_run_keeps_the_ints_of_a_ragged_field_in_its_detections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # (the detection's measure came out as 1.0: "n":1.0 in the output file)
    cep = tmp_path / "p.cep"
    cep.write_text(
        "sequence s partition by key within 10ms\n"
        "    measures n = first(a).n, m = first(b).n, f = first(b).f, g = first(a).g\n"
        "    begin a: a\n"
        "    followed by b: b\n",
        encoding="utf-8",
    )
    events = lines_file(
        tmp_path,
        '{"type":"a","time":1,"key":"k","n":1,"g":9007199254740993}',
        '{"type":"b","time":2,"key":"k","f":true}',
    )
    out = tmp_path / "out.jsonl"
    assert main(["run", str(cep), str(events), "-o", str(out)]) == 0
    capsys.readouterr()
    (row,) = [json.loads(line) for line in out.read_text().splitlines()]
    assert (row["n"], row["m"], row["f"], row["g"]) == (1, None, True, 9007199254740993)
    assert type(row["n"]) is int
    assert '"n":1,' in out.read_text()
