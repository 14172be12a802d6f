"""Compile a :class:`~workbench.engine.nfa.pattern.SequencePattern` into an immutable NFA graph.

The construction follows Flink's ``NFACompiler`` (see ``docs/sequences.md``): the stages are walked
from the last to the first, each producing states with ``TAKE`` / ``IGNORE`` / ``PROCEED`` edges
that lead to the states built for the stages after it. Internal state names are the stage name for
the first state created for a stage and ``stage:0``, ``stage:1``... for later ones; which states get
a previous-to-current window depends on those names exactly as in Flink.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import IntEnum

from workbench.engine.nfa.conditions import TRUE, And, Cond, Not, compile_condition, type_test
from workbench.engine.nfa.pattern import Contiguity, GroupStage, SequencePattern, Stage
from workbench.errors import PatternError

__all__ = ["Action", "CompiledNFA", "Kind", "StateDef", "Transition", "compile_nfa", "original_name"]

END = "$endState$"
DELIM = ":"


class Action(IntEnum):
    """Edge actions."""

    TAKE = 0
    IGNORE = 1
    PROCEED = 2


class Kind(IntEnum):
    """State kinds."""

    START = 0
    NORMAL = 1
    FINAL = 2
    STOP = 3
    PENDING = 4


@dataclass(frozen=True, slots=True)
class Transition:
    """One edge: ``action`` from ``source`` to ``target`` when ``cond`` holds."""

    action: Action
    source: str
    target: str
    cond: Cond


@dataclass(frozen=True, slots=True)
class StateDef:
    """One NFA state; ``stage`` is the stage name its TAKE edges store events under."""

    name: str
    kind: Kind
    stage: str
    transitions: tuple[Transition, ...]


@dataclass(frozen=True, slots=True)
class CompiledNFA:
    """The immutable NFA graph shared by every key.

    Attributes:
        states: internal state name -> definition.
        start: name of the start state.
        window_ms: first-and-last window (``None``: none).
        window_times: internal state name -> previous-to-current window.
        stage_names: stage names in pattern order.
    """

    states: Mapping[str, StateDef]
    start: str
    window_ms: int | float | None
    window_times: Mapping[str, int | float]
    stage_names: tuple[str, ...]


def original_name(internal: str) -> str:
    """The stage name of an internal state name (text before ``:``)."""
    return internal.split(DELIM, 1)[0]


class _T:
    """A mutable edge during construction (greedy guards rewrite conditions in place)."""

    __slots__ = ("action", "cond", "target")

    def __init__(self, action: Action, target: _S, cond: Cond) -> None:
        self.action = action
        self.target = target
        self.cond = cond


class _S:
    """A mutable state during construction."""

    __slots__ = ("kind", "name", "trans")

    def __init__(self, name: str, kind: Kind) -> None:
        self.name = name
        self.kind = kind
        self.trans: list[_T] = []

    def add(self, action: Action, target: _S, cond: Cond) -> None:
        self.trans.append(_T(action, target, cond))


@dataclass(frozen=True, slots=True)
class _Info:
    """Derived facts about one (flat) stage."""

    name: str
    strategy: str  # strict | relaxed | any | not_next | not_follow
    optional: bool
    looping: bool
    times: tuple[int, int] | None  # (from, to) for quantified stages
    times_window: int | float | None
    greedy: bool
    inner: str  # strict | relaxed | any
    where: Cond
    until: Cond | None
    within: int | float | None
    within_prev: int | float | None


_STRATEGY = {
    Contiguity.STRICT: "strict",
    Contiguity.RELAXED: "relaxed",
    Contiguity.NONDETERMINISTIC_RELAXED: "any",
}


def compile_nfa(pattern: SequencePattern, aggregate_names: frozenset[str] = frozenset()) -> CompiledNFA:
    """Validate ``pattern`` and build its NFA (raises :class:`PatternError` naming the stage)."""
    return _Compiler(pattern, aggregate_names).run()


class _Compiler:
    def __init__(self, pattern: SequencePattern, aggregate_names: frozenset[str]) -> None:
        self.pattern = pattern
        self.aggs = aggregate_names
        self.used: set[str] = set()
        self.all: list[_S] = []
        self.stops: dict[str, _S] = {}
        self.window_times: dict[str, int | float] = {}
        self.window: int | float | None = None
        self.original: dict[str, _S] = {}
        self.infos: list[_Info] = []
        self.cur = 0
        self.following: int | None = None

    # ------------------------------------------------------------------ validation
    def _error(self, msg: str, stage: str | None = None) -> PatternError:
        return PatternError(msg, pattern=self.pattern.name, element=stage)

    def _flatten(self) -> list[Stage]:
        out: list[Stage] = []
        for s in self.pattern.stages:
            obj: object = s
            if isinstance(s, GroupStage):
                msg = "group stages are not supported by this compiler yet"
                raise self._error(msg, s.name)
            if not isinstance(obj, Stage):
                msg = f"a stage must be a Stage or GroupStage, got {type(obj).__name__}"
                raise self._error(msg)
            out.append(obj)
        return out

    def _validate(self, stages: list[Stage]) -> None:
        if not stages:
            msg = "a sequence pattern needs at least one stage"
            raise self._error(msg)
        seen: set[str] = set()
        for s in stages:
            name: object = s.name
            if not isinstance(name, str) or not name:
                msg = "stage names must be non-empty strings"
                raise self._error(msg)
            if DELIM in s.name or s.name == END:
                msg = f"stage name {s.name!r} is reserved (no ':' and not {END!r})"
                raise self._error(msg, s.name)
            if s.name in seen:
                msg = "duplicate stage name (stage names must be unique)"
                raise self._error(msg, s.name)
            seen.add(s.name)
        for i, s in enumerate(stages):
            q = s.quantifier
            if q.min < 1 or (q.max is not None and q.max < q.min):
                msg = f"bad quantifier: min={q.min}, max={q.max} (need 1 <= min <= max)"
                raise self._error(msg, s.name)
            if s.negated:
                if i == 0:
                    msg = "a pattern cannot begin with a negated stage"
                    raise self._error(msg, s.name)
                if not q.single or q.optional or q.greedy or q.window_ms is not None:
                    msg = "quantifier/optional not applicable to NOT pattern (notNext/notFollowedBy)"
                    raise self._error(msg, s.name)
                if s.contiguity is Contiguity.NONDETERMINISTIC_RELAXED:
                    msg = "a negated stage is notNext (strict) or notFollowedBy (relaxed), not followedByAny"
                    raise self._error(msg, s.name)
                if stages[i - 1].quantifier.optional:
                    msg = (
                        "an optional stage cannot be followed by notNext/notFollowedBy (Flink: optional "
                        "path to NOT condition is not supported)"
                    )
                    raise self._error(msg, stages[i - 1].name)
            if s.until is not None and not q.looping:
                msg = "The until condition is only applicable to looping states."
                raise self._error(msg, s.name)
            if q.greedy and q.single:
                msg = "greedy() is not applicable to a single-event stage"
                raise self._error(msg, s.name)
            if q.greedy and q.inner is Contiguity.NONDETERMINISTIC_RELAXED:
                msg = "greedy() cannot be combined with allowCombinations()"
                raise self._error(msg, s.name)
            if q.optional and i > 0 and stages[i - 1].quantifier.greedy:
                msg = "an optional stage cannot follow a greedy stage"
                raise self._error(msg, s.name)
        skip = self.pattern.skip
        if skip.stage is not None and skip.stage not in seen:
            msg = f"the skip strategy names stage {skip.stage!r}, which does not exist"
            raise self._error(msg, skip.stage)

    def _info(self, s: Stage, first: bool) -> _Info:
        if s.negated:
            strategy = "not_next" if s.contiguity is Contiguity.STRICT else "not_follow"
        else:
            strategy = "strict" if first else _STRATEGY[Contiguity(s.contiguity)]
        q = s.quantifier
        where = compile_condition(s.where, s.name, self.aggs)
        if s.types:
            where = (
                And(type_test(tuple(s.types), s.name), where)
                if where is not TRUE
                else type_test(tuple(s.types), s.name)
            )
        until = None if s.until is None else compile_condition(s.until, s.name, self.aggs)
        return _Info(
            name=s.name,
            strategy=strategy,
            optional=q.optional,
            looping=q.looping,
            times=None if q.single else (q.min, q.min if q.max is None else q.max),
            times_window=q.window_ms,
            greedy=q.greedy,
            inner=_STRATEGY[Contiguity(q.inner)],
            where=where,
            until=until,
            within=s.within_ms,
            within_prev=s.within_prev_ms,
        )

    # ------------------------------------------------------------------ state helpers
    def _unique(self, base: str) -> str:
        if base not in self.used:
            self.used.add(base)
            return base
        n = 0
        while f"{base}{DELIM}{n}" in self.used:
            n += 1
        name = f"{base}{DELIM}{n}"
        self.used.add(name)
        return name

    def _new(self, base: str, kind: Kind) -> _S:
        st = _S(self._unique(base), kind)
        self.all.append(st)
        return st

    def _new_cur(self, kind: Kind, is_take: bool) -> _S:
        p = self.infos[self.cur]
        st = self._new(p.name, kind)
        if is_take:
            if p.times is None and p.within_prev is not None:
                self.window_times[st.name] = p.within_prev
            elif p.times is not None and p.times_window is not None and DELIM in st.name:
                self.window_times[st.name] = p.times_window
        return st

    def _window_now(self) -> int | float:
        return self.window if self.window is not None else 0

    def _stop(self, cond: Cond, name: str) -> _S:
        st = self.stops.get(name)
        if st is None:
            st = self._new(name, Kind.STOP)
            st.add(Action.TAKE, st, cond)
            self.stops[name] = st
        return st

    def _ignore_cond(self, p: _Info) -> Cond | None:
        return _ign(p.strategy, p.where)

    def _inner_ignore_cond(self, p: _Info) -> Cond | None:
        return _ign(p.inner, p.where)

    def _not_conditions(self) -> list[tuple[Cond, str]]:
        out: list[tuple[Cond, str]] = []
        i = self.cur
        while i > 0 and (self.infos[i - 1].optional or self.infos[i - 1].strategy == "not_follow"):
            i -= 1
            if self.infos[i].strategy == "not_follow":
                out.append((self.infos[i].where, self.infos[i].name))
        return out

    def _add_stop_states(self, st: _S) -> None:
        for cond, name in self._not_conditions():
            st.add(Action.PROCEED, self._stop(cond, name), cond)

    def _add_stop_to_looping(self, st: _S) -> None:
        f = self.following
        if f is not None and self.infos[f].strategy == "not_follow":
            cond = self.infos[f].where
            st.add(Action.PROCEED, self._stop(cond, self.infos[f].name), cond)

    def _copy_without_nots(self, sink: _S) -> _S:
        nots = self._not_conditions()
        if not nots or not self.infos[self.cur].optional:
            return sink
        names = {n for _, n in nots}
        copy = self._new(sink.name, sink.kind)
        for tr in sink.trans:
            action, target, cond = tr.action, tr.target, tr.cond
            if action == Action.PROCEED:
                if target.kind == Kind.STOP:
                    if target.name in names:
                        continue
                    copy.add(Action.PROCEED, target, cond)
                else:
                    copy.add(Action.PROCEED, self._copy_without_nots(target), cond)
            else:
                copy.add(action, copy if target is sink else target, cond)
        return copy

    def _copy(self, st: _S) -> _S:
        copy = self._new(original_name(st.name), st.kind)
        for tr in st.trans:
            copy.add(tr.action, copy if tr.target is st else tr.target, tr.cond)
        return copy

    @staticmethod
    def _greedy(st: _S, take: Cond) -> None:
        for tr in st.trans:
            tr.cond = And(tr.cond, Not(take))

    # ------------------------------------------------------------------ construction
    def run(self) -> CompiledNFA:
        stages = self._flatten()
        self._validate(stages)
        self.infos = [self._info(s, i == 0) for i, s in enumerate(stages)]
        n = len(self.infos)
        self.cur = n - 1
        last = self.infos[-1]
        final = self._new(END, Kind.FINAL)
        self.window = _min_window(self.pattern.within_ms, last.within)
        sink = final
        while self.cur > 0:
            p = self.infos[self.cur]
            if p.strategy == "not_follow":
                if (p.within_prev is not None or self._window_now() > 0) and sink.kind == Kind.FINAL:
                    pending = self._new_cur(Kind.PENDING, True)
                    stop = self._stop(p.where, p.name)
                    pending.add(Action.PROCEED, stop, p.where)
                    pending.add(Action.IGNORE, pending, Not(p.where))
                    sink = pending
            elif p.strategy == "not_next":
                nn = self._new_cur(Kind.NORMAL, True)
                stop = self._stop(p.where, p.name)
                if sink.kind == Kind.FINAL:
                    nn.add(Action.IGNORE, sink, Not(p.where))
                else:
                    nn.add(Action.PROCEED, sink, Not(p.where))
                nn.add(Action.PROCEED, stop, p.where)
                sink = nn
            else:
                sink = self._convert(sink)
            self.following = self.cur
            self.cur -= 1
            w = self.infos[self.cur].within
            if w is not None and w < (self.window if self.window is not None else float("inf")):
                self.window = w
        start = self._convert(sink)
        start.kind = Kind.START
        window = self.window if self.window is not None and self.window > 0 else None
        if window is not None and any(v > window for v in self.window_times.values()):
            msg = (
                "The window length between the previous and current event cannot be larger than the "
                "window length between the first and last event for a Pattern."
            )
            raise self._error(msg)
        if last.strategy == "not_follow" and not (
            self.window_times.get(last.name, 0) > 0 or window is not None
        ):
            msg = "notFollowedBy is not supported as the last stage without a window (within)"
            raise self._error(msg, last.name)
        states = {
            s.name: StateDef(
                s.name,
                s.kind,
                original_name(s.name),
                tuple(Transition(tr.action, s.name, tr.target.name, tr.cond) for tr in s.trans),
            )
            for s in self.all
        }
        return CompiledNFA(
            states, start.name, window, dict(self.window_times), tuple(p.name for p in self.infos)
        )

    def _convert(self, sink: _S) -> _S:
        p = self.infos[self.cur]
        if p.looping:
            assert p.times is not None
            looping = self._looping(self._copy_without_nots(sink))
            last = self._times(looping, sink, p.times)
        elif p.times is not None:
            last = self._times(sink, sink, p.times)
        else:
            last = self._singleton(sink, sink, p.where, self._ignore_cond(p), p.optional)
        self._add_stop_states(last)
        return last

    def _times(self, sink: _S, proceed: _S, times: tuple[int, int]) -> _S:
        p = self.infos[self.cur]
        inner_ign = _with_until(self._inner_ignore_cond(p), p.until, False)
        take = _with_until(p.where, p.until, True)
        assert take is not None
        if p.greedy and times[0] != times[1]:
            self._greedy(sink, take)
        last = sink
        for _ in range(times[0], times[1]):
            last = self._singleton(last, proceed, take, inner_ign, True)
            self._add_stop_to_looping(last)
        for _ in range(1, times[0]):
            last = self._singleton(last, None, take, inner_ign, False)
            self._add_stop_to_looping(last)
        return self._singleton(last, proceed, take, self._ignore_cond(p), p.optional)

    def _singleton(self, sink: _S, proceed: _S | None, take: Cond, ignore: Cond | None, optional: bool) -> _S:
        p = self.infos[self.cur]
        st = self._new_cur(Kind.NORMAL, True)
        target = self._copy_without_nots(sink)
        st.add(Action.TAKE, target, take)
        if optional:
            assert proceed is not None
            if p.greedy:
                if p.until is not None:
                    st.add(Action.PROCEED, self.original.get(proceed.name, proceed), p.until)
                    st.add(Action.PROCEED, proceed, Not(p.until))
                else:
                    st.add(Action.PROCEED, proceed, TRUE)
            else:
                st.add(Action.PROCEED, proceed, TRUE)
        if ignore is not None:
            if optional:
                ign_state = self._new_cur(Kind.NORMAL, False)
                ign_state.add(Action.TAKE, target, take)
                ign_state.add(Action.IGNORE, ign_state, ignore)
                self._add_stop_states(ign_state)
            else:
                ign_state = st
            st.add(Action.IGNORE, ign_state, ignore)
        return st

    def _looping(self, sink: _S) -> _S:
        p = self.infos[self.cur]
        ignore = _with_until(self._inner_ignore_cond(p), p.until, False)
        take = _with_until(p.where, p.until, True)
        assert take is not None
        proceed_cond: Cond = TRUE
        st = self._new_cur(Kind.NORMAL, True)
        if p.greedy:
            if p.until is not None:
                copy = self._copy(sink)
                st.add(Action.PROCEED, copy, p.until)
                self.original[sink.name] = copy
            self._greedy(sink, take)
            if p.until is not None:
                proceed_cond = Not(p.until)
        st.add(Action.PROCEED, sink, proceed_cond)
        st.add(Action.TAKE, st, take)
        self._add_stop_to_looping(st)
        if ignore is not None:
            ign_state = self._new_cur(Kind.NORMAL, False)
            ign_state.add(Action.TAKE, st, take)
            ign_state.add(Action.IGNORE, ign_state, ignore)
            st.add(Action.IGNORE, ign_state, ignore)
            self._add_stop_to_looping(ign_state)
        return st


def _ign(strategy: str, where: Cond) -> Cond | None:
    if strategy == "relaxed":
        return Not(where)
    if strategy == "any":
        return TRUE
    return None


def _with_until(cond: Cond | None, until: Cond | None, is_take: bool) -> Cond | None:
    if until is not None and cond is not None:
        return And(Not(until), cond)
    if until is not None and is_take:
        return Not(until)
    return cond


def _min_window(a: int | float | None, b: int | float | None) -> int | float | None:
    vals = [v for v in (a, b) if v is not None]
    return min(vals) if vals else None
