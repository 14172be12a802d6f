"""flink-sql without Flink: which sequence patterns become MATCH_RECOGNIZE, and the query text."""

from __future__ import annotations

import dataclasses

import pytest

from benchmarks.patterns import api_patterns
from workbench.backends.flink.sql import SqlUnsupported, match_recognize, sql_reasons
from workbench.engine.nfa import Contiguity, Quantifier, SequencePattern, SkipStrategy, Stage

FIELDS = {"type": "type", "price": "f_price", "ip": "f_ip"}
EXPRESSIBLE = ("P1", "P2", "P4")


def test_which_benchmark_patterns_are_expressible() -> None:
    reasons = {name: sql_reasons(p) for name, p in api_patterns().items()}
    assert sorted(name for name, r in reasons.items() if not r) == sorted(EXPRESSIBLE)
    assert "'followed by any' (non-deterministic relaxed)" in " ".join(reasons["P2any"])
    assert "no_skip with a quantified stage" in " ".join(reasons["P3"])
    assert "a loop that skips events" in " ".join(reasons["P5"])


def test_strict_pattern_query() -> None:
    query = match_recognize(api_patterns()["P1"], "ev", FIELDS)
    assert "PATTERN (V0 V1) WITHIN INTERVAL '10' SECOND" in query
    assert "V1 AS (V1.`type` = 'trade') AND (V1.`f_price` > 110.0)" in query
    assert "AFTER MATCH SKIP TO NEXT ROW" in query
    assert "ORDER BY rt, seq" in query


def test_relaxed_and_negated_gaps_exclude_the_next_stage() -> None:
    query = match_recognize(api_patterns()["P4"], "ev", FIELDS)
    assert "PATTERN (V0 G1*? V1)" in query
    gap = "G1 AS NOT ((G1.`type` = 'trade') AND (G1.`f_price` > 110.0)) AND NOT ((G1.`type` = 'logout'))"
    assert gap in query
    p2 = match_recognize(api_patterns()["P2"], "ev", FIELDS)
    assert "PATTERN (V0 G1*? V1 G3*? V2)" in p2
    assert "G1 AS NOT ((G1.`type` = 'update'))" in p2
    assert "AFTER MATCH SKIP PAST LAST ROW" in p2


def test_conditions_translate_or_say_why_not() -> None:
    ok = SequencePattern(
        "ok",
        (
            Stage("a", "e.price >= 1 and not (e.ip == 'x' or -e.price < 2 * 3)"),
            Stage("b", "1 < e.price <= 5", Contiguity.STRICT),
        ),
        skip=SkipStrategy("skip_to_first", "b"),
    )
    query = match_recognize(ok, "ev", FIELDS)
    a = "V0 AS ((V0.`f_price` >= 1) AND (NOT ((V0.`f_ip` = 'x') OR ((-V0.`f_price`) < (2 * 3)))))"
    assert a in query
    assert "V1 AS ((1 < V1.`f_price`) AND (V1.`f_price` <= 5))" in query
    assert "AFTER MATCH SKIP TO FIRST V1" in query
    bad = SequencePattern(
        "bad",
        (Stage("a", "abs(e.price) > 1"), Stage("b", quantifier=Quantifier(2, 2)), Stage("c", negated=True)),
        within_ms=1500,
    )
    with pytest.raises(SqlUnsupported) as err:
        match_recognize(bad, "ev", FIELDS)
    message = str(err.value)
    for part in (
        "'abs(e.price)' has no SQL form",
        "no_skip with a quantified stage",
        "negation at the start or the end",
        "timed-out partial matches",
        "within 1500 ms",
    ):
        assert part in message


def variant(
    name: str, *, skip: str = "skip_past_last_event", inner: Contiguity | None = None
) -> SequencePattern:
    """Benchmark pattern ``name`` with another skip strategy and (optionally) stage b's inner contiguity."""
    pattern = api_patterns()[name]
    stages = list(pattern.stages)
    b = stages[1]
    assert isinstance(b, Stage)
    if inner is not None:
        stages[1] = dataclasses.replace(b, quantifier=dataclasses.replace(b.quantifier, inner=inner))
    label = f"{name}-{skip}-{inner or 'relaxed'}"
    return dataclasses.replace(pattern, name=label, stages=tuple(stages), skip=SkipStrategy(skip))


def test_a_loop_that_skips_events_is_a_region_checked_at_its_end() -> None:
    query = match_recognize(variant("P3"), "ev", FIELDS)
    assert "PATTERN (V0 G1*? V1+? G3*? V2) WITHIN INTERVAL '10' SECOND" in query
    assert "V1 AS (FIRST(V1.`type`) = 'trade')" in query
    count = "SUM(CASE WHEN (V1.`type` = 'trade') THEN 1 ELSE 0 END) >= 2"
    assert f"V2 AS (V2.`type` = 'logout') AND (LAST(V1.`type`) = 'trade') AND {count}" in query
    assert "LISTAGG(CASE WHEN (V1.`type` = 'trade') THEN CAST(V1.seq AS STRING) END) AS s1" in query
    assert "AFTER MATCH SKIP PAST LAST ROW" in query


def test_a_consecutive_loop_reads_its_running_aggregate() -> None:
    query = match_recognize(variant("P5", inner=Contiguity.STRICT), "ev", FIELDS)
    assert "PATTERN (V0 G1*? V1+? G3*? V2) WITHIN INTERVAL '30' SECOND" in query
    assert "V1 AS (V1.`type` = 'trade') AND (AVG(CAST(V1.`f_price` AS DOUBLE)) > 105.0037)" in query
    # The gap before b reads the aggregate as b's first event would: over that event alone.
    assert "G1 AS NOT ((G1.`type` = 'trade') AND (CAST(G1.`f_price` AS DOUBLE) > 105.0037))" in query
    assert "LISTAGG(CAST(V1.seq AS STRING)) AS s1" in query


@pytest.mark.parametrize(
    ("quantifier", "term"),
    [
        (Quantifier(2, 2, inner=Contiguity.STRICT), "V1{2}"),
        (Quantifier(1, 3, inner=Contiguity.STRICT), "V1{1,3}?"),
        (Quantifier(1, 3, optional=True, inner=Contiguity.STRICT), "V1{0,3}?"),
        (Quantifier(1, None, optional=True, inner=Contiguity.STRICT), "V1*?"),
        (Quantifier(3, None, greedy=True, inner=Contiguity.STRICT), "V1{3,}"),
        (Quantifier(1, 1, optional=True), "V1?"),
    ],
)
def test_quantifiers_of_consecutive_loops(quantifier: Quantifier, term: str) -> None:
    pattern = SequencePattern(
        "q",
        (
            Stage("a", types=("x",)),
            Stage("b", "e.price > 1", Contiguity.STRICT, quantifier=quantifier),
            Stage("c", types=("y",), contiguity=Contiguity.STRICT),
        ),
        skip=SkipStrategy("skip_past_last_event"),
    )
    assert f"PATTERN (V0 {term} V2)" in match_recognize(pattern, "ev", FIELDS)


def test_quantified_patterns_it_cannot_write_say_why() -> None:
    def reasons(quantifier: Quantifier, skip: str = "skip_past_last_event") -> str:
        stages = (Stage("a"), Stage("b", quantifier=quantifier), Stage("c"))
        return " ".join(sql_reasons(SequencePattern("q", stages, skip=SkipStrategy(skip))))

    assert "no_skip with a quantified stage" in reasons(Quantifier(2, None), "no_skip")
    assert "skip_to_next with a quantified stage" in reasons(Quantifier(2, None), "skip_to_next")
    assert "greedy loop before a 'followed by'" in reasons(
        Quantifier(2, None, greedy=True, inner=Contiguity.STRICT)
    )
    assert "optional with at least 2 events" in reasons(
        Quantifier(2, 3, optional=True, inner=Contiguity.STRICT)
    )
    assert "allow combinations" in reasons(Quantifier(2, 3, inner=Contiguity.NONDETERMINISTIC_RELAXED))
    assert "a loop that skips events, optional, greedy or last" in reasons(Quantifier(1, 3, optional=True))
    assert reasons(Quantifier(2, 3)) == ""
