"""``begin [every] not a for D ...`` through ``%%cep`` text: text, API and printer agree; errors point."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine import run
from workbench.engine.nfa.absence import AbsencePattern, Silence
from workbench.engine.nfa.pattern import SequencePattern, Stage
from workbench.errors import CepError
from workbench.language import compile_pattern, compile_text, format_pattern

LEADING = """\
sequence outage
    partition by host
    within 1min
    measures level = last(err).level
    begin not hb: heartbeat for 30s where e.ok
    followed by err: error where e.level > 2
    next again: error
"""


def test_leading_text_api_and_printer_agree() -> None:
    (d,) = compile_text(LEADING)
    pattern = d.pattern
    assert isinstance(pattern, AbsencePattern)
    assert format_pattern(pattern, partition=d.partition) == LEADING.rstrip("\n")
    then = pattern.then
    assert then is not None
    api = AbsencePattern(
        "outage",
        Silence("hb", 30_000, ("heartbeat",), "e.ok"),
        SequencePattern(
            "outage",
            (
                Stage("err", "e.level > 2", types=("error",)),
                Stage("again", types=("error",), contiguity="strict"),
            ),
            within_ms=60_000,
            measures=then.measures,
        ),
    )
    assert api == pattern
    assert d.partition == "host"


@pytest.mark.parametrize(
    "text",
    [
        "sequence quiet\n    begin every not hb: heartbeat | ping for 1500ms",
        "sequence quiet\n    begin not `my stage` for 250ms where e.x in (1, 2)",
        "sequence quiet\n    begin not hb for 2h\n    followed by (\n        begin a\n        next b\n    )",
        "sequence quiet\n    within 1min\n    begin every not hb for 1d\n"
        "    followed by a one or more\n    not followed by c",
        "sequence quiet\n    emit into silent\n    begin not hb: heartbeat for 10ms",
        "sequence quiet\n    measures n = count(a)\n    emit into outage\n"
        "    begin not hb: heartbeat for 1s\n    followed by a: error",
    ],
)
def test_printing_round_trips(text: str) -> None:
    pattern = compile_pattern(text)
    assert format_pattern(pattern) == text
    assert compile_pattern(format_pattern(pattern)) == pattern


names = st.sampled_from(["a", "hb", "quiet_1", "every", "for", "not"])


@settings(max_examples=80, deadline=None)
@given(
    names,
    st.integers(1, 10**9),
    st.lists(st.sampled_from(["heartbeat", "ping", "for"]), max_size=2, unique=True),
    st.sampled_from([None, "e.ok", "e.v > 1 and e.w is None"]),
    st.booleans(),
    st.sampled_from([None, (("b", None), ("c", "e.v > 2"))]),
    st.sampled_from([None, "derived", "for"]),
)
def test_api_patterns_print_and_compile_back(
    name: str, ms: int, types: list[str], where: str | None, every: bool, then: object, into: str | None
) -> None:
    cont = None
    if then is not None:
        stages = tuple(Stage(n, w) for n, w in then)  # type: ignore[attr-defined]
        cont = SequencePattern("p", stages)
    reads_into = not types or cont is not None or into in types  # why: reading what it emits is a cycle
    into = None if reads_into else into
    pattern = AbsencePattern("p", Silence(name, ms, tuple(types), where, every), cont, emit_into=into)
    assert compile_pattern(format_pattern(pattern)) == pattern


def test_the_language_detects_silences() -> None:
    text = "sequence quiet partition by host begin every not hb: heartbeat for 10s"
    events = [{"type": "heartbeat", "time": t, "host": "h"} for t in (0, 5_000, 40_000)]
    result = run([compile_pattern(text)], [{**e, "key": e["host"]} for e in events], until=45_000)
    assert [(d.measures["silence_start"], d.time) for d in result.detections] == [
        (5_000, 15_000),
        (15_000, 25_000),
        (25_000, 35_000),
    ]


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("sequence s begin not a for 0s", "an absence lasts longer than 0 ms", 28),
        ("sequence s begin not a for 0ms followed by b", "an absence lasts longer than 0 ms", 28),
        ("sequence s begin not a", "expected one of", 23),
        ("sequence s begin not a for -5s", "expected a duration", 28),
        ("sequence s begin not a for 5s next b", "goes on with 'followed by'", 31),
        ("sequence s begin not a for 5s not followed by b", "goes on with 'followed by'", 31),
        ("sequence s within 1s begin not a for 5s", "'within' needs stages after the silence", 19),
        ("sequence s measures m = 1 begin not a for 5s", "'measures' needs stages", 21),
        ("sequence s begin not a for 5s where x > 1", "unknown variable 'x'", 37),
        ("sequence s begin not a for 5s where matched('b')", "unknown stage 'b'", 45),
        ("sequence s begin not a for 5s followed by a", "stage 'a' is defined twice", 43),
        ("sequence s begin not e for 5s", "cannot be called 'e'", 22),
        ("event hb(ok)\nsequence s begin not h: hbb for 5s", "unknown event type 'hbb'", 25),
        ("event hb(ok)\nsequence s begin not h: hb for 5s where e.okk", "unknown field 'okk'", 43),
        ("sequence s begin not a for 5s followed by b measures silence_end = 1", "", 1),
    ],
)
def test_bad_absences_are_refused_with_a_position(text: str, message: str, column: int) -> None:
    with pytest.raises(CepError) as info:
        compile_text(text)
    assert message in str(info.value)
    if column > 1:
        assert str(info.value).startswith(f"line {text.count(chr(10)) + 1}, column {column}:"), str(
            info.value
        )


def test_emit_into_feeds_other_patterns_from_a_silence() -> None:
    text = """
sequence outage
    no timeouts
    measures lvl = first(err).level
    emit into outage_ev
    begin not hb: hb for 10ms
    followed by err: error

sequence quiet
    emit into silent
    begin not hb: hb for 10ms

sequence sink
    begin o: outage_ev | silent
"""
    events = [
        {"type": "hb", "time": 0, "key": "k"},
        {"type": "error", "time": 15, "key": "k", "level": 3},
        {"type": "x", "time": 35, "key": "k"},
    ]
    result = run([d.pattern for d in compile_text(text)], events)
    sink = [d.events[0] for d in result.detections if d.pattern == "sink"]
    assert [(e.type, e.time, e.seq) for e in sink] == [("silent", 10, -2), ("outage_ev", 15, -3)]
    assert sink[1].fields == {"silence_start": 0, "silence_end": 10, "lvl": 3}


def test_every_stays_a_name_except_right_after_begin() -> None:
    p = compile_pattern("sequence s begin `every` where e.every > 1 next b: every followed by `for`")
    assert isinstance(p, SequencePattern)
    assert [s.name for s in p.stages] == ["every", "b", "for"]
    assert p.stages[1].types == ("every",)  # type: ignore[union-attr]
    assert compile_pattern(format_pattern(p)) == p


def test_a_silences_derived_events_are_declared_with_its_own_columns() -> None:
    from workbench.language import compile_text

    text = (
        "event hb(host)\nevent x(host)\n"
        "sequence quiet partition by host emit into outage begin not hb: hb for 10ms\n"
        "sequence late partition by host begin o: outage where e.silence_end > e.silence_start\n"
    )
    definitions = compile_text(text)
    assert [d.pattern.name for d in definitions] == ["quiet", "late"]
    assert definitions[1].schema["outage"] == ("silence_start", "silence_end")
