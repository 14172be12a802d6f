"""``measures`` and composite keys as ``MATCH_RECOGNIZE``: the SQL text (no Flink), and on Flink the
same detections and measure values as the local engine."""

from __future__ import annotations

import dataclasses
import math
import random
from typing import Any

import pytest

from workbench.backends import LocalBackend
from workbench.backends.flink.sql import SqlUnsupported, match_recognize, sql_reasons
from workbench.engine.detection import Detection
from workbench.engine.expr import parse_expr
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, SkipStrategy, Stage
from workbench.engine.nfa.measures import Measure
from workbench.language.compile import compile_pattern
from workbench.session.runs import to_frame

FIELDS = {"type": "type", "time": "t", "t": "t", "price": "f_price", "qty": "f_qty", "tag": "f_tag"}
STRICT = Contiguity.STRICT

#: measures over a pattern whose SQL match holds only its events (so matched('*') translates)
STRICT_MEASURES = {
    "entry": "first(matched('a')).price",
    "second_b": "first(matched('b'), 2).qty",
    "last_b_but_one": "last(matched('b'), 2).price",
    "gain": "last(matched('c')).price - first(matched('a')).price",
    "total_qty": "sum(matched('b').qty)",
    "mean_price": "avg(matched('*').price)",
    "mean_qty": "avg(matched('b').qty)",
    "low": "min(matched('*').qty)",
    "high": "max(matched('b').price)",
    "priced": "count(matched('*').price)",
    "n": "count(matched('*'))",
    "nb": "count(matched('b'))",
    "duration": "last(matched('c')).time - first(matched('a')).time",
    "at": "last(matched('*')).time",
    "ratio": "first(matched('c')).qty / first(matched('a')).qty",
    "label": "'up' if last(matched('c')).price > first(matched('a')).price * 1.5 else 'down'",
    "untagged": "first(matched('a')).tag is None or not (first(matched('c')).qty >= 3)",
    "first_tag": "first(matched('a')).tag",
}

#: measures over a pattern with 'followed by' gaps (stage variables only)
RELAXED_MEASURES = {
    "entry": "first(matched('a')).price",
    "spread": "last(matched('c')).price - first(matched('b')).price",
    "qty": "first(matched('a')).qty + first(matched('b')).qty * 2",
    "wait": "first(matched('c')).t - first(matched('a')).t",
    "big": "'big' if first(matched('b')).qty > 4 else ('no' if first(matched('b')).qty is None else 'small')",
}


#: the %%cep language's spelling: last event of a stage, the universal variable, a composite key
CEP_TEXT = """
sequence spell
    measures last_b = b.price, second = b[1].qty, opening = first(price), closing = last(qty),
             latest = max(time), n = count(price), mean = avg(qty), b_n = count(b),
             span = last(c).time - first(a).time
    partition by user, ip
    begin a where e.type == 'a'
    next b where e.type == 'b' and (e.qty is None or e.qty < 8) one or more consecutive
    next c where e.type == 'c'
"""


def _measures(measures: dict[str, str]) -> tuple[Measure, ...]:
    return tuple(Measure(name, parse_expr(text)) for name, text in measures.items())


def cep_pattern() -> SequencePattern:
    """:data:`CEP_TEXT` with skip past last event (SQL's exact strategy for a loop)."""
    pattern = compile_pattern(CEP_TEXT)
    assert isinstance(pattern, SequencePattern)
    return dataclasses.replace(pattern, skip=SkipStrategy("skip_past_last_event"))


def strict_pattern() -> SequencePattern:
    """a, then 1..3 consecutive b, then c right after."""
    return SequencePattern(
        "strict",
        (
            Stage("a", types=("a",)),
            Stage("b", types=("b",), contiguity=STRICT, quantifier=Quantifier(1, 3, inner=STRICT)),
            Stage("c", types=("c",), contiguity=STRICT),
        ),
        skip=SkipStrategy("skip_past_last_event"),
        measures=_measures(STRICT_MEASURES),
    )


def relaxed_pattern() -> SequencePattern:
    """a followed by b (with a condition) followed by c, not d in between."""
    return SequencePattern(
        "relaxed",
        (
            Stage("a", types=("a",)),
            Stage("b", "e.qty is None or e.qty > 1", types=("b",)),
            Stage("d", types=("d",), negated=True),
            Stage("c", types=("c",)),
        ),
        within_ms=30_000,
        emit_timeouts=False,
        skip=SkipStrategy("skip_to_next"),
        measures=_measures(RELAXED_MEASURES),
    )


# --- the SQL text (no Flink) -------------------------------------------------------------------


def test_measures_translate_to_sql_measures_named_by_position() -> None:
    query = match_recognize(strict_pattern(), "ev", FIELDS, ["k0", "k1"])
    assert query.startswith("SELECT `k0`, `k1`, s0, s1, s2, " + ", ".join(f"m{i}" for i in range(18)))
    assert "PARTITION BY `k0`, `k1`" in query
    for part in (
        "FIRST(V0.`f_price`) AS m0",
        "FIRST(V1.`f_qty`, 1) AS m1",
        "LAST(V1.`f_price`, 1) AS m2",
        "COALESCE(SUM(V1.`f_qty`), 0) AS m4",
        "AVG(CAST(`f_price` AS DOUBLE)) AS m5",
        "MIN(`f_qty`) AS m7",
        "COUNT(`seq`) AS m10",
        "COUNT(V1.`seq`) AS m11",
        "(LAST(V2.`t`) - FIRST(V0.`t`)) AS m12",
        "(CAST(FIRST(V2.`f_qty`) AS DOUBLE) / NULLIF(CAST(FIRST(V0.`f_qty`) AS DOUBLE), 0)) AS m14",
        "(CASE WHEN (LAST(V2.`f_price`) > (FIRST(V0.`f_price`) * CAST(1.5 AS DOUBLE))) "
        "THEN 'up' ELSE 'down' END) AS m15",
        "((FIRST(V0.`f_tag`) IS NULL) OR (NOT (FIRST(V2.`f_qty`) >= 3))) AS m16",
    ):
        assert part in query
    # measure names never reach the query: the columns are renamed back by position
    assert "entry" not in query
    assert "gain" not in query


def test_hostile_strings_and_columns_are_quoted_never_pasted() -> None:
    hostile = "x' END) AS m0 FROM ev; DROP TABLE ev; -- `"
    pattern = SequencePattern(
        "p",
        (Stage("a"), Stage("b", contiguity=STRICT)),
        measures=_measures(
            {"drop_table": f"first(matched('a')).tag == {hostile!r}", "col": "first(matched('b')).weird"}
        ),
    )
    fields = {**FIELDS, "weird": "f_we`ird; --"}
    query = match_recognize(pattern, "ev", fields)
    assert "(FIRST(V0.`f_tag`) = 'x'' END) AS m0 FROM ev; DROP TABLE ev; -- `') AS m0" in query
    assert "FIRST(V1.`f_we``ird; --`) AS m1" in query
    assert "drop_table" not in query


def test_measures_sql_cannot_express_say_why() -> None:
    relaxed = SequencePattern(
        "r",
        (Stage("a"), Stage("b"), Stage("c", quantifier=Quantifier(2, 2)), Stage("z")),
        skip=SkipStrategy("skip_past_last_event"),
        measures=_measures(
            {
                "everything": "count(matched('*'))",
                "floor": "first(matched('a')).price // 2",
                "now": "e.price",
                "spread": "stdev(matched('a').price)",
                "region": "first(matched('c')).price",
                "var_n": "first(matched('a'), first(matched('b')).qty).price",
                "inf": "first(matched('a')).price + 1e999",
            }
        ),
    )
    text = " ".join(sql_reasons(relaxed))
    for part in (
        "measure 'everything': matched('*') in a pattern with 'followed by' gaps",
        "measure 'floor': \"first(matched('a')).price // 2\" has no SQL form here",
        "measure 'now': 'e.price' has no SQL form here",
        "measure 'spread': \"stdev(matched('a').price)\"",
        "measure 'region': stage 'c' takes no events in SQL",
        "measure 'var_n': ",
        "measure 'inf': the literal inf",
    ):
        assert part in text
    with pytest.raises(SqlUnsupported, match="measure 'floor'"):
        match_recognize(relaxed, "ev", FIELDS)


def test_adding_text_is_refused_where_a_field_may_hold_text() -> None:
    pattern = SequencePattern(
        "p",
        (Stage("a"), Stage("b", contiguity=STRICT)),
        measures=_measures(
            {"both": "first(matched('a')).tag + last(matched('b')).tag", "n": "first(matched('a')).qty + 1"}
        ),
    )
    assert sql_reasons(pattern) == []  # the fields' types unknown: only 'type' holds text
    reasons = sql_reasons(pattern, strings=("type", "tag"))
    assert reasons == [
        "measure 'both': \"first(matched('a')).tag + last(matched('b')).tag\" may add text "
        "(which SQL's + cannot; the engine concatenates)"
    ]
    literal = dataclasses.replace(pattern, measures=_measures({"s": "first(matched('a')).qty + 'x'"}))
    assert "may add text" in " ".join(sql_reasons(literal))


def test_the_languages_measures_and_composite_key_translate() -> None:
    pattern = cep_pattern()
    assert sql_reasons(pattern) == []
    query = match_recognize(pattern, "ev", FIELDS, ["k0", "k1"])
    for part in (
        "LAST(V1.`f_price`) AS m0",
        "FIRST(V1.`f_qty`, 1) AS m1",
        "FIRST(`f_price`) AS m2",
        "LAST(`f_qty`) AS m3",
        "MAX(`t`) AS m4",
        "COUNT(`f_price`) AS m5",
        "PARTITION BY `k0`, `k1`",
    ):
        assert part in query
    as_written = compile_pattern(CEP_TEXT)
    assert isinstance(as_written, SequencePattern)
    assert "no_skip with a quantified stage" in " ".join(sql_reasons(as_written))


def test_the_relaxed_pattern_translates_but_not_the_universal_variable() -> None:
    assert sql_reasons(relaxed_pattern()) == []
    assert sql_reasons(strict_pattern()) == []
    query = match_recognize(relaxed_pattern(), "ev", FIELDS)
    assert "PARTITION BY `key_id`" in query
    assert "(FIRST(V2.`t`) - FIRST(V0.`t`)) AS m3" in query


# --- on Flink: the same detections and measures as the local engine ------------------------------


def events(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """In-order events over composite keys (user, ip), with missing prices, qty and tags."""
    out = []
    t = 1_000
    for _ in range(n):
        t += rng.choice((0, 1, 250, 1_000, 4_000))
        event: dict[str, Any] = {
            "type": rng.choice("aabbbccd"),
            "time": t,
            "key": (rng.choice(("ann", "bob")), rng.choice((1, 2))),
        }
        if rng.random() < 0.85:
            event["price"] = round(rng.uniform(1, 200), 2)
        if rng.random() < 0.9:
            event["qty"] = rng.randint(0, 9)
        if rng.random() < 0.3:
            event["tag"] = rng.choice(("x", "it's", "y"))
        out.append(event)
    return out


def _same(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9)  # type: ignore[arg-type]
    return a == b and type(a) is type(b)


def _view(d: Detection) -> tuple[object, ...]:
    return (d.pattern, d.key, d.time, d.seqs, d.channels)


def assert_equal_on_flink(patterns: list[SequencePattern], data: list[dict[str, Any]]) -> None:
    from workbench.backends import get_backend

    remote = get_backend("flink-sql").run(patterns, data).detections
    local = LocalBackend().run(patterns, data).detections
    assert local, "the data should give some detections"
    assert sorted(map(_view, remote)) == sorted(map(_view, local))
    by_view = {_view(d): d for d in local}
    for d in remote:
        expected = by_view[_view(d)].measures
        assert list(d.measures) == list(expected)
        for name in expected:
            assert _same(d.measures[name], expected[name]), (name, d.measures[name], expected[name])
    for pattern in patterns:
        mine = [d for d in local if d.pattern == pattern.name]
        theirs = [d for d in remote if d.pattern == pattern.name]
        local_frame, remote_frame = to_frame(mine), to_frame(theirs)
        assert list(remote_frame.columns) == list(local_frame.columns)
        assert dict(remote_frame.dtypes) == dict(local_frame.dtypes)
        assert list(remote_frame["key"]) == list(local_frame["key"])  # tuples, as locally


FIXED = [
    {"type": "a", "time": 1000, "key": ("ann", 1), "price": 10.0, "qty": 2, "tag": "it's"},
    {"type": "a", "time": 1000, "key": ("ann", 2), "price": 50.0, "qty": 0},
    {"type": "b", "time": 2000, "key": ("ann", 1), "price": 12.5, "qty": 3},
    {"type": "b", "time": 2000, "key": ("ann", 2), "qty": 5},
    {"type": "b", "time": 3000, "key": ("ann", 1), "qty": 4},
    {"type": "c", "time": 3000, "key": ("ann", 2), "price": 40.0, "qty": 1},
    {"type": "c", "time": 4000, "key": ("ann", 1), "price": 99.0, "qty": 7},
    {"type": "a", "time": 5000, "key": ("bob", 1), "price": 1.0},
    {"type": "d", "time": 6000, "key": ("bob", 1)},
    {"type": "b", "time": 7000, "key": ("bob", 1), "price": 2.0, "qty": 9},
    {"type": "c", "time": 8000, "key": ("bob", 1), "price": 3.0},
]


pytestmark_flink = [
    pytest.mark.flink,
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
]


def _flink(fn: Any) -> Any:
    for mark in reversed(pytestmark_flink):
        fn = mark(fn)
    return fn


@_flink
def test_measures_and_composite_keys_equal_the_local_engine_on_flink_sql() -> None:
    assert_equal_on_flink([strict_pattern(), relaxed_pattern(), cep_pattern()], FIXED)


@_flink
@pytest.mark.parametrize("seed", [7, 2026])
def test_random_data_measures_equal_the_local_engine_on_flink_sql(seed: int) -> None:
    assert_equal_on_flink(
        [strict_pattern(), relaxed_pattern(), cep_pattern()], events(random.Random(seed), 300)
    )


def test_a_subset_measure_is_refused_so_the_python_path_runs_it() -> None:
    stages = (Stage("a"), Stage("b", contiguity=Contiguity.STRICT))
    plain = SequencePattern("s", stages, measures=_measures({"n": "count(matched('a'))"}))
    assert sql_reasons(plain) == []
    subset = dataclasses.replace(
        plain,
        subsets={"ab": ("a", "b")},
        measures=_measures({"n": "count(matched('a'))", "mean": "avg(matched('ab').price)"}),
    )
    assert sql_reasons(subset) == ["measure 'mean': subset 'ab' (Flink SQL has no SUBSET)"]
    with pytest.raises(SqlUnsupported, match="no SUBSET"):
        match_recognize(subset, "ev", FIELDS)
