"""Hypothesis strategies: pattern objects built from condition strings (sequences, groups, receives)."""

from __future__ import annotations

import functools
import keyword
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from workbench.engine.nfa.pattern import (
    AggregateSpec,
    AllOf,
    AnyOf,
    Contiguity,
    GroupStage,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.reactions.accumulators import MapCounter, SortedAccumulator
from workbench.engine.reactions.patterns import (
    Channel,
    Count,
    Exit,
    Initiator,
    Instance,
    ReactionGroup,
    Receive,
    Size,
    Timer,
    Var,
)
from workbench.language.arguments import never_open

KEYWORDS = ["next", "not", "begin", "times", "where", "or", "and", "within", "one", "skip", "first"]
PLAIN = st.builds(
    lambda head, tail: head + tail,
    st.sampled_from("abcdfghkmnopqrstuvwxyz"),
    st.text("abcdefghijklmnopqrstuvwxyz0123456789_", max_size=5),
)
NAMES = st.one_of(
    PLAIN,
    st.sampled_from(KEYWORDS),
    st.sampled_from(["a or c", "not c", "middle-first", "c*", "1", 'DOWN"', "Ünïcode"]),
)
FIELDS = st.sampled_from(["price", "name", "volume", "id", "ip", "user", "times", "within"])
DURATIONS = st.one_of(
    st.integers(1, 4 * 86_400_000),
    st.sampled_from([250, 1000, 60_000, 3_600_000, 86_400_000]),
    st.integers(0, 10_000).map(lambda n: n + 0.5),
)
WINDOWS = DURATIONS.filter(lambda ms: ms > 0)  # a 'within' window of 0 ms is refused (holds no match)
LITERALS = st.one_of(
    st.integers(-1000, 1000),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.text("abc xyz'\"\\", max_size=6),
    st.booleans(),
    st.none(),
)


def _atom(stages: list[str], variables: list[str]) -> st.SearchStrategy[str]:
    options: list[st.SearchStrategy[str]] = [
        st.builds(
            lambda f, op, v: f"e.{f} {op} {v!r}",
            FIELDS,
            st.sampled_from(["==", "!=", "<", ">=", "in"]),
            LITERALS,
        ),
        st.builds(lambda f, v: f"{v!r} in e.{f}", FIELDS, st.text("ab", min_size=1, max_size=2)),
        st.builds(lambda f, n: f"e.{f} % {n} == 0", FIELDS, st.integers(1, 9)),
        st.builds(lambda f: f"e.{f}.startswith('a-')", FIELDS),
        st.just("True"),
        st.builds(lambda f: f"e.{f} is None", FIELDS),
    ]
    if stages:
        s = st.sampled_from(stages)
        options += [
            st.builds(lambda a, f: f"e.{f} > matched({a!r})[-1].{f}", s, FIELDS),
            st.builds(lambda a: f"len(matched({a!r})) < 3", s),
            st.builds(lambda a: f"sum(x.price for x in matched({a!r})) + e.price <= 5.0", s),
            st.builds(
                lambda a: f"(lambda v: len(v) > 0 and sum(v) < 30)([x.price for x in matched({a!r}) + [e]])",
                s,
            ),
        ]
    if variables:
        options.append(st.builds(lambda f, v: f"e.{f} != {v}", FIELDS, st.sampled_from(variables)))
    return st.one_of(options)


def conditions(stages: Sequence[str] = (), variables: Sequence[str] = ()) -> st.SearchStrategy[str]:
    """A Python-syntax condition string over ``e``, earlier stages and bound variables (cached)."""
    return _conditions(tuple(stages), tuple(variables))


@functools.cache
def _conditions(stages: tuple[str, ...], variables: tuple[str, ...]) -> st.SearchStrategy[str]:
    atom = _atom(list(stages), list(variables))
    return st.recursive(
        atom,
        lambda inner: st.one_of(
            st.builds(lambda a, b: f"{a} and {b}", inner, inner),
            st.builds(lambda a, b: f"{a} or {b}", inner, inner),
            st.builds(lambda a: f"not ({a})", inner),
            st.builds(lambda a: f"({a})", inner),
        ),
        max_leaves=4,
    )


@functools.cache
def _where_cached(stages: tuple[str, ...]) -> st.SearchStrategy[Any]:
    return _where_build(list(stages))


def _where(stages: list[str]) -> st.SearchStrategy[Any]:
    return _where_cached(tuple(stages))


def _where_build(stages: list[str]) -> st.SearchStrategy[Any]:
    c = conditions(stages)
    all_of = st.lists(c, min_size=2, max_size=3).map(lambda xs: AllOf(tuple(xs)))
    return st.one_of(
        st.none(),
        c,
        all_of,
        st.builds(
            lambda head, rest: AnyOf((head, *rest)), st.one_of(c, all_of), st.lists(c, min_size=1, max_size=2)
        ),
    )


@st.composite
def quantifiers(draw: st.DrawFn, allow_count: bool = True) -> Quantifier:
    """A quantifier the language can write (``min >= 1``; inner/greedy/window only on counted stages)."""
    if not allow_count:
        return Quantifier()
    kind = draw(st.sampled_from(["one", "times", "range", "more"]))
    lo, hi = 1, 1
    if kind == "times":
        lo = hi = draw(st.integers(2, 5))
    elif kind == "range":
        lo = draw(st.integers(1, 4))
        hi = draw(st.integers(lo + 1, 6))
    elif kind == "more":
        lo, hi = draw(st.integers(1, 3)), None  # type: ignore[assignment]
    counted = kind != "one"
    return Quantifier(
        lo,
        hi,
        optional=draw(st.booleans()),
        greedy=counted and draw(st.booleans()),
        inner=draw(st.sampled_from(list(Contiguity))) if counted else Contiguity.RELAXED,
        window_ms=draw(st.one_of(st.none(), DURATIONS)) if counted else None,
    )


@st.composite
def sequences(draw: st.DrawFn) -> SequencePattern:
    """A sequence pattern built from condition strings."""
    names = draw(st.lists(NAMES, min_size=1, max_size=5, unique=True))
    stages = []
    for i, name in enumerate(names):
        first = i == 0
        negated = not first and draw(st.booleans()) and draw(st.booleans())
        contiguity = (
            Contiguity.RELAXED
            if first
            else draw(
                st.sampled_from([Contiguity.STRICT, Contiguity.RELAXED] if negated else list(Contiguity))
            )
        )
        quant = draw(quantifiers(allow_count=not negated))
        stages.append(
            Stage(
                name,
                draw(_where(names[:i])),
                contiguity,
                negated,
                quant,
                until=draw(st.one_of(st.none(), conditions(names[:i]))) if quant.max is None else None,
                types=tuple(draw(st.lists(PLAIN, max_size=2, unique=True))),
                within_ms=draw(st.one_of(st.none(), WINDOWS)),
                within_prev_ms=None if first else draw(st.one_of(st.none(), WINDOWS)),
            )
        )
    grouped = draw(_grouped(stages))
    skip_kind = draw(
        st.sampled_from(["no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last"])
    )
    target = draw(st.sampled_from(names)) if skip_kind in ("skip_to_first", "skip_to_last") else None
    plain_stages = [n for n in names if n.isidentifier() and n.isascii() and not keyword.iskeyword(n)]
    aggregates: list[AggregateSpec] = []
    if plain_stages:
        for j, (fn, stage, fld) in enumerate(
            draw(
                st.lists(
                    st.tuples(
                        st.sampled_from(["sum", "avg", "count", "max"]),
                        st.sampled_from(plain_stages),
                        st.one_of(st.none(), FIELDS),
                    ),
                    max_size=2,
                )
            )
        ):
            aggregates.append(AggregateSpec(f"agg{j}", fn, stage, fld, {}, draw(st.booleans())))
    members = draw(st.lists(st.sampled_from(names), unique=True, max_size=3))
    subsets = {"sub0": tuple(members)} if members and "sub0" not in names else {}
    return SequencePattern(
        draw(NAMES),
        grouped,
        within_ms=draw(st.one_of(st.none(), WINDOWS)),
        skip=SkipStrategy(skip_kind, target, target is not None and draw(st.booleans())),  # type: ignore[arg-type]
        aggregates=tuple(aggregates),
        max_partial_matches=draw(st.sampled_from([100_000, None, 50])),
        emit_timeouts=draw(st.booleans()),
        measures=draw(_measures(names + list(subsets))),
        subsets=subsets,
    )


def _measures(stages: list[str]) -> st.SearchStrategy[dict[str, str]]:
    """Measures over the stages (and subsets) and the whole match (``matched('*')``), named m0, m1, ..."""
    s = st.sampled_from(stages)
    one = st.one_of(
        st.builds(lambda a, f: f"first(matched({a!r})).{f}", s, FIELDS),
        st.builds(lambda a: f"count(matched({a!r}))", s),
        st.builds(lambda a, b: f"last(matched({a!r})).time - first(matched({b!r})).time", s, s),
        st.builds(lambda f: f"avg(matched('*').{f})", FIELDS),
        st.builds(lambda a, f: f"max(matched({a!r}).{f}) if count(matched({a!r})) > 1 else None", s, FIELDS),
        st.builds(lambda n: f"sum(matched('*').price) * {n}", st.integers(1, 9)),
    )
    return st.lists(one, max_size=3).map(lambda xs: {f"m{i}": x for i, x in enumerate(xs)})


@st.composite
def _grouped(draw: st.DrawFn, stages: list[Stage]) -> tuple[Stage | GroupStage, ...]:
    """``stages``, with (sometimes) a run of them made into a group of stages, as the language writes it.

    The language names a group after its stages (``(b c)``); the group's first stage starts with
    ``begin`` (relaxed, no ``within ... of previous``); a group is never negated, greedy or typed.
    """
    if not draw(st.booleans()):
        return tuple(stages)
    i = draw(st.integers(0, len(stages) - 1))
    j = draw(st.integers(i + 1, len(stages)))
    inner = list(stages[i:j])
    head = inner[0]
    if head.negated:
        return tuple(stages)
    inner[0] = replace(head, contiguity=Contiguity.RELAXED, within_prev_ms=None)
    quant = replace(draw(quantifiers()), greedy=False)
    names = [s.name for s in stages[:j]]
    group = GroupStage(
        "(" + " ".join(s.name for s in inner) + ")",
        tuple(inner),
        Contiguity.RELAXED if i == 0 else head.contiguity,
        quant,
        until=draw(st.one_of(st.none(), conditions(names))) if quant.max is None else None,
        within_ms=draw(st.one_of(st.none(), WINDOWS)),
    )
    return (*stages[:i], group, *stages[j:])


@functools.cache
def _counts() -> st.SearchStrategy[Count]:
    return st.one_of(
        st.integers(0, 4).map(lambda n: Count.of(n)),
        st.just(Count.of(-1)),
        st.integers(1, 3).map(lambda n: Count.of(n, -1)),
        st.builds(
            lambda n, d, m: Count.of(n, n + d, m),
            st.integers(0, 3),
            st.integers(0, 3),
            st.sampled_from(["ignore", "record", "strict"]),
        ),
    )


@functools.cache
def _accumulators(variables: tuple[str, ...]) -> st.SearchStrategy[Any]:
    c = conditions([], variables)
    return st.one_of(
        st.none(),
        st.builds(MapCounter, c),
        st.builds(SortedAccumulator, c, c, st.one_of(st.none(), st.integers(1, 5))),
    )


BINDS = st.lists(st.tuples(st.sampled_from(["Ba", "Bb", "Bc"]), FIELDS), max_size=2, unique_by=lambda t: t[0])
VARS = st.lists(st.tuples(st.sampled_from(["Va", "Vb", "Vc"]), FIELDS), max_size=2, unique_by=lambda t: t[0])
MAYBE_DURATION = st.one_of(st.none(), DURATIONS)
MAYBE_TYPE = st.one_of(PLAIN, st.none())


@functools.cache
def _id_lists(other: tuple[str, ...]) -> st.SearchStrategy[tuple[str, ...]]:
    if not other:
        return st.just(())
    return st.lists(st.sampled_from(other), max_size=2, unique=True).map(tuple)


@functools.cache
def _match(variables: tuple[str, ...]) -> st.SearchStrategy[list[tuple[str, Any]]]:
    values = st.one_of(LITERALS, st.sampled_from(variables).map(Var)) if variables else LITERALS
    return st.lists(st.tuples(FIELDS, values), max_size=2, unique_by=lambda t: t[0])


@functools.cache
def _size_timer(variables: tuple[str, ...]) -> tuple[st.SearchStrategy[Any], st.SearchStrategy[Any]]:
    acc = _accumulators(variables)
    size = st.one_of(
        st.none(), st.builds(Size, st.integers(1, 4), st.one_of(st.none(), st.integers(1, 3)), acc)
    )
    # the period (the delay when none is given) is at least 1 ms: a finer timer is refused
    period = st.one_of(st.none(), DURATIONS.filter(lambda d: d >= 1))
    timer = st.one_of(
        st.none(),
        st.tuples(DURATIONS, period, acc)
        .filter(lambda t: t[1] is not None or t[0] >= 1)
        .map(lambda t: Timer(*t)),
    )
    return size, timer


@st.composite
def _channels(draw: st.DrawFn, ids: list[str], variables: list[str], all_ids: list[str]) -> list[Channel]:
    out = []
    vs = tuple(variables)
    size_s, timer_s = _size_timer(vs)
    cond = st.one_of(st.none(), conditions((), vs))
    for ident in ids:
        id_lists = _id_lists(tuple(i for i in all_ids if i != ident))
        binds = [b for b in draw(BINDS) if b[0] not in variables]
        out.append(
            Channel(
                ident,
                draw(MAYBE_TYPE),
                tuple(draw(_match(vs))),
                draw(cond),
                negated=draw(st.booleans()),
                stop=draw(st.booleans()),
                stop_ids=draw(id_lists),
                pause_ids=draw(id_lists),
                resume_ids=draw(id_lists),
                paused=draw(st.booleans()),
                optional=draw(st.booleans()),
                count=draw(st.one_of(st.none(), _counts())),
                size=draw(size_s),
                timer=draw(timer_s),
                timeout_ms=draw(MAYBE_DURATION),
                vars=tuple(draw(VARS)),
                binds=tuple(binds),
                after=draw(id_lists),
            )
        )
    return out


@st.composite
def groups(draw: st.DrawFn) -> ReactionGroup:
    """A reaction group (with an initiator or start-up instances, maybe one nested group)."""
    variables = draw(st.lists(st.sampled_from(["User", "Ip", "N", "Limit", "X1"]), max_size=3, unique=True))
    ids = draw(st.lists(NAMES, min_size=1, max_size=4, unique=True))
    nested_ids = draw(st.lists(NAMES.filter(lambda n: n not in ids), max_size=2, unique=True))
    nested_ids = [n for n in nested_ids if n not in ids]
    all_ids = ids + nested_ids
    channels: list[Any] = draw(_channels(ids, variables, all_ids))
    if nested_ids:
        inner = ReactionGroup(
            draw(PLAIN.filter(lambda n: n not in all_ids)),
            draw(st.sampled_from(["and", "or"])),
            tuple(draw(_channels(nested_ids, variables, all_ids))),
            timeout_ms=draw(st.one_of(st.none(), DURATIONS)),
        )
        channels.insert(draw(st.integers(0, len(channels))), inner)
    members = [c for c in channels if isinstance(c, Channel)] + [
        c for g in channels if isinstance(g, ReactionGroup) for c in g.channels if isinstance(c, Channel)
    ]
    assume(not never_open({c.id: c.after for c in members if c.after}))  # such groups are refused
    use_initiator = draw(st.booleans())
    initiator = None
    instances: tuple[Instance, ...] = ()
    if use_initiator:
        initiator = Initiator(
            draw(st.one_of(PLAIN, st.none())),
            tuple(
                draw(
                    st.lists(
                        st.tuples(FIELDS, LITERALS.filter(lambda v: not isinstance(v, float))), max_size=1
                    )
                )
            ),
            draw(st.one_of(st.none(), conditions())),
            tuple((v, draw(FIELDS)) for v in variables),
            mult=draw(st.booleans()),
            template=draw(st.booleans()),
            state=(("Basket", []),) if draw(st.booleans()) else (),
            id=draw(st.sampled_from(["initiator", "first", "a b"])),
        )
    else:
        instances = tuple(
            Instance(k, t, tuple((v, 1) for v in variables))
            for k, t in draw(
                st.lists(
                    st.tuples(
                        st.one_of(st.text("qk", min_size=1, max_size=2), st.integers(0, 9)),
                        st.integers(0, 100),
                    ),
                    min_size=1,
                    max_size=2,
                )
            )
        )
    return ReactionGroup(
        draw(NAMES),
        draw(st.sampled_from(["and", "or"])),
        tuple(channels),
        timeout_ms=draw(st.one_of(st.none(), DURATIONS)),
        timeout_channel=draw(st.booleans()),
        initiator=initiator,
        instances=instances,
        exit=Exit(
            draw(st.one_of(st.none(), st.integers(1, 6))), draw(st.one_of(st.none(), st.integers(1, 2)))
        ),
        where=draw(st.one_of(st.none(), conditions([], variables))),
        constants=tuple(
            draw(
                st.lists(
                    st.tuples(st.sampled_from(["Ka", "Kb", "Kc"]), LITERALS),
                    max_size=2,
                    unique_by=lambda t: t[0],
                )
            )
        ),
    )


def receives() -> st.SearchStrategy[Receive]:
    """A plain reaction."""
    return st.builds(
        Receive,
        NAMES,
        st.one_of(PLAIN, st.none()),
        st.lists(st.tuples(FIELDS, LITERALS), max_size=2, unique_by=lambda t: t[0]).map(tuple),
        st.one_of(st.none(), conditions()),
        st.one_of(st.none(), st.just(-1), st.integers(1, 5)),
    )
