"""``prev(e, n)``, ``first/last(A, n)`` and sliding windows through ``%%cep`` text.

Text, the Python API and the printer agree (round trip); errors point into the cell; the words of
the window clause stay usable as names elsewhere.
"""

from __future__ import annotations

import pytest

from workbench.engine import run
from workbench.engine.expr.ir import Attr, Index, Literal, Name, Offset, Stage, Window
from workbench.engine.families import compile_matcher
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.nfa.pattern import Stage as SeqStage
from workbench.errors import CepError
from workbench.language import compile_pattern, format_pattern
from workbench.language.grammar import keywords

TEXT = """\
sequence spike
    begin a where e.price > 1.5 * avg(e.price over last 3 events) and prev(e, 1).price < e.price
    next b where last(a, 2).price > e.price and count(e over last 2min) >= 1 and first(a, 1).price > 0
"""


def test_text_api_and_printer_agree() -> None:
    pattern = compile_pattern(TEXT)
    assert isinstance(pattern, SequencePattern)
    text = format_pattern(pattern)
    assert compile_pattern(text) == pattern
    assert format_pattern(compile_pattern(text)) == text
    api = SequencePattern(
        "spike",
        (
            SeqStage("a", where=pattern.stages[0].where),
            SeqStage("b", where=pattern.stages[1].where, contiguity="strict"),
        ),
    )
    assert format_pattern(api) == text
    where = pattern.stages[0].where
    nodes = list(_walk(where))
    assert Window("avg", Attr(Name("e"), "price"), 3, "events") in nodes
    assert Attr(Offset(1), "price") in nodes


def _walk(node: object) -> list[object]:
    from workbench.engine.expr import ir

    assert isinstance(node, ir.Node)
    return list(ir.walk(node))


def test_stage_offsets_read_the_stage_list() -> None:
    pattern = compile_pattern(TEXT)
    nodes = _walk(pattern.stages[1].where)
    calls = [n for n in nodes if type(n).__name__ == "Call"]
    assert [c.func for c in calls] == ["last", "first"]  # type: ignore[attr-defined]
    assert calls[0].args == (Stage("a"), Literal(2))  # type: ignore[attr-defined]
    assert Index(Stage("a"), Literal(-1)) not in nodes


def test_text_runs_over_the_keys_stream() -> None:
    text = """\
sequence dip
    begin a where e.price < prev(e, 2).price
"""
    events = [{"type": t, "time": i, "key": "k", "price": p} for i, (t, p) in enumerate(
        [("tick", 5), ("news", None), ("tick", 4), ("tick", 9), ("tick", 3)])]  # fmt: skip
    found = [d.events[0].seq for d in run([compile_pattern(text)], events).detections]
    assert found == [2, 4]  # 4 < 5 (two back, over the news event); 3 < 4


@pytest.mark.parametrize(
    ("text", "message", "line", "column"),
    [
        ("sequence s\n  begin a where prev(e, 0).x > 1", r"prev\(e, n\)", 2, 25),
        ("sequence s\n  begin a where avg(a.x over last 5min) > 1", "current event only", 2, 21),
        ("sequence s\n  begin a where len(e.x over last 5min) > 1", "applies to one argument", 2, 17),
        ("sequence s\n  begin a where avg(e.x over last 5 parsecs) > 1", "", 2, 0),
    ],
)
def test_errors_point_into_the_text(text: str, message: str, line: int, column: int) -> None:
    with pytest.raises(CepError, match=message or None) as info:
        compile_pattern(text)
    span = getattr(info.value, "span", None)
    assert span is not None
    assert span.line == line
    if column:
        assert span.column == column


def test_the_window_words_stay_names() -> None:
    text = """\
sequence words
    begin last where e.over > 1 and e.events < 3
    next over where last(last).over < e.over
"""
    pattern = compile_pattern(text)
    assert compile_pattern(format_pattern(pattern)) == pattern
    assert not {"over", "events"} & keywords()  # the window words are no reserved words


def test_groups_refuse_the_stream() -> None:
    text = """\
group g
    on login(user as User)
    @or {
        c: logout(user = User) where prev(e, 1) is not None
    }
"""
    pattern = compile_pattern(text, validate=False)
    with pytest.raises(CepError, match="sequence patterns"):
        compile_matcher(pattern)
