"""The eight benchmark patterns of ``PATTERNS.md``, in the ``%%cep`` language and in the Python API.

:data:`CEP_TEXT` is the primary form (what a user writes in a ``%%cep`` cell);
:func:`api_patterns` builds the same patterns with the sequence API, and a test checks that both
give equal pattern objects. :func:`benchmark_patterns` returns the language form when
:mod:`workbench.language` is importable, else the API form.

Conventions shared by all eight: keyed by ``key``; windows are Flink's ``within`` (a partial match
dies when ``t - t_first >= W``); nothing is emitted on time-out; partial matches are not capped.
"""

from __future__ import annotations

from typing import TypeVar

from workbench.engine.nfa import (
    AggregateSpec,
    Contiguity,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.reactions.patterns import ReactionGroup

__all__ = [
    "CEP_TEXT",
    "GROUP_TEXT",
    "api_patterns",
    "benchmark_patterns",
    "group_patterns",
    "language_patterns",
    "named",
]

W = 10_000
W5 = 30_000
_P = TypeVar("_P", SequencePattern, ReactionGroup)
STRICT = Contiguity.STRICT
RELAXED = Contiguity.RELAXED
ANY = Contiguity.NONDETERMINISTIC_RELAXED
BIG = "e.price > 110.0"

_HEAD = "within {w} no timeouts max partial matches none"
CEP_TEXT: dict[str, str] = {
    "P1": f"""
sequence P1 {_HEAD.format(w="10s")}
    begin a: login
    next b: trade where e.price > 110.0
""",
    "P2": f"""
sequence P2 {_HEAD.format(w="10s")} skip past last event
    begin a: login
    followed by b: update
    followed by c: trade
""",
    "P2any": f"""
sequence P2any {_HEAD.format(w="10s")}
    begin a: login
    followed by any b: update
    followed by any c: trade
""",
    "P3": f"""
sequence P3 {_HEAD.format(w="10s")}
    begin a: login
    followed by b: trade times 2 or more
    followed by c: logout
""",
    "P3any": f"""
sequence P3any {_HEAD.format(w="10s")}
    begin a: login
    followed by any b: trade times 2..4 allow combinations
    followed by any c: logout
""",
    "P4": f"""
sequence P4 {_HEAD.format(w="10s")}
    begin a: login
    not followed by x: logout
    followed by c: trade where e.price > 110.0
""",
    "P4any": f"""
sequence P4any {_HEAD.format(w="10s")}
    begin a: login
    not followed by x: logout
    followed by any c: trade where e.price > 110.0
""",
    "P5": f"""
sequence P5 {_HEAD.format(w="30s")}
    aggregate avg_b = avg(b.price) including current
    begin a: login
    followed by b: trade where avg_b > 105.0037 one or more
    followed by c: logout
""",
}


#: Two Prova reaction groups over the same workload (not in ``PATTERNS.md``: no peer runs them),
#: for the backends that run groups (the local engine, Flink's Python path): every login starts an
#: instance that binds the login's ``ip``; the variable then filters the logout channel.
GROUP_TEXT: dict[str, str] = {
    # a trade over 110 with no logout from the login's address before the group's 10 s are up
    # (an @and with an @not channel succeeds at the time-out, by the absence)
    "G1": """
group G1
    on login(ip as IP)
    @and @timeout(10s) {
        big: trade where e.price > 110.0
        @not out: logout(ip = IP)
    }
""",
    # trades over 108 in pairs (a recurring OR: one detection per two such trades, with both), at
    # most three pairs, until a logout from the login's address or the group's 30 s are up
    "G2": """
group G2
    on login(ip as IP)
    @or @timeout(30s) @count(3) {
        @size(2, 2) big: trade where e.price > 108.0
        @stop out: logout(ip = IP)
    }
""",
}


def group_patterns() -> dict[str, ReactionGroup]:
    """The reaction groups of :data:`GROUP_TEXT`, compiled (needs :mod:`workbench.language`)."""
    return _compiled(GROUP_TEXT, ReactionGroup)


def _compiled(texts: dict[str, str], kind: type[_P]) -> dict[str, _P]:
    """Each text compiled by the language, checked to be a ``kind``."""
    from workbench.language import compile_pattern

    out: dict[str, _P] = {}
    for name, text in texts.items():
        pattern = compile_pattern(text)
        assert isinstance(pattern, kind), name
        out[name] = pattern
    return out


def _seq(
    name: str,
    *stages: Stage,
    within: int = W,
    skip: SkipStrategy | None = None,
    aggregates: tuple[AggregateSpec, ...] = (),
) -> SequencePattern:
    return SequencePattern(
        name,
        stages,
        within_ms=within,
        skip=skip or SkipStrategy(),
        aggregates=aggregates,
        max_partial_matches=None,
        emit_timeouts=False,
    )


def _login() -> Stage:
    return Stage("a", types=("login",))


def api_patterns() -> dict[str, SequencePattern]:
    """The eight patterns built with the Python sequence API."""
    trades = Stage("b", contiguity=RELAXED, types=("trade",), quantifier=Quantifier.times_or_more(2))
    any_trades = Stage(
        "b",
        contiguity=ANY,
        types=("trade",),
        quantifier=Quantifier(2, 4, inner=ANY),
    )
    rising = Stage(
        "b",
        contiguity=RELAXED,
        types=("trade",),
        where="avg_b > 105.0037",
        quantifier=Quantifier.one_or_more(),
    )
    return {
        "P1": _seq("P1", _login(), Stage("b", BIG, STRICT, types=("trade",))),
        "P2": _seq(
            "P2",
            _login(),
            Stage("b", contiguity=RELAXED, types=("update",)),
            Stage("c", contiguity=RELAXED, types=("trade",)),
            skip=SkipStrategy("skip_past_last_event"),
        ),
        "P2any": _seq(
            "P2any",
            _login(),
            Stage("b", contiguity=ANY, types=("update",)),
            Stage("c", contiguity=ANY, types=("trade",)),
        ),
        "P3": _seq("P3", _login(), trades, Stage("c", contiguity=RELAXED, types=("logout",))),
        "P3any": _seq("P3any", _login(), any_trades, Stage("c", contiguity=ANY, types=("logout",))),
        "P4": _seq(
            "P4",
            _login(),
            Stage("x", contiguity=RELAXED, negated=True, types=("logout",)),
            Stage("c", BIG, RELAXED, types=("trade",)),
        ),
        "P4any": _seq(
            "P4any",
            _login(),
            Stage("x", contiguity=RELAXED, negated=True, types=("logout",)),
            Stage("c", BIG, ANY, types=("trade",)),
        ),
        "P5": _seq(
            "P5",
            _login(),
            rising,
            Stage("c", contiguity=RELAXED, types=("logout",)),
            within=W5,
            aggregates=(AggregateSpec("avg_b", "avg", "b", field="price", include_current=True),),
        ),
    }


def language_patterns() -> dict[str, SequencePattern]:
    """The eight patterns compiled from :data:`CEP_TEXT` (needs :mod:`workbench.language`)."""
    return _compiled(CEP_TEXT, SequencePattern)


def benchmark_patterns() -> dict[str, SequencePattern]:
    """The patterns the benchmark runs: the language form when available, else the API form."""
    if CEP_TEXT:
        try:
            return language_patterns()
        except ImportError:
            pass
    return api_patterns()


def named(name: str, source: str = "auto") -> list[SequencePattern | ReactionGroup]:
    """``[pattern]`` by benchmark name: the factory worker processes call (``source``: auto/language/api;
    a group has its language form only)."""
    if name in GROUP_TEXT:
        return [group_patterns()[name]]
    table = {"api": api_patterns, "language": language_patterns}.get(source, benchmark_patterns)()
    return [table[name]]
