"""Compile a :class:`~workbench.engine.nfa.pattern.SequencePattern` into an immutable NFA graph.

The construction follows Flink's ``NFACompiler`` (see ``docs/sequences.md``): the stages are walked
from the last to the first, each producing states with ``TAKE`` / ``IGNORE`` / ``PROCEED`` edges
that lead to the states built for the stages after it. Internal state names are the stage name for
the first state created for a stage and ``stage:0``, ``stage:1``... for later ones; which states get
a previous-to-current window depends on those names exactly as in Flink.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from workbench.engine.faults import FaultSink
from workbench.engine.nfa.conditions import TRUE, And, Cond, Not
from workbench.engine.nfa.elements import DELIM, END, ElementReader, Info
from workbench.engine.nfa.graph import Action, CompiledNFA, Kind, StateDef, Transition, original_name
from workbench.engine.nfa.pattern import Element, GroupStage, SequencePattern, stage_names
from workbench.errors import PatternError

__all__ = ["compile_nfa"]


#: the base name of the state in front of an alternation's branches
CHOICE = "$choice$"


@dataclass(slots=True, eq=False)
class _S:
    """A mutable state during construction."""

    name: str
    kind: Kind
    trans: list[_T] = field(default_factory=list)

    def add(self, action: Action, target: _S, cond: Cond) -> None:
        self.trans.append(_T(action, target, cond))


@dataclass(slots=True, eq=False)
class _T:
    """A mutable edge during construction (greedy guards rewrite conditions in place)."""

    action: Action
    target: _S
    cond: Cond


def compile_nfa(
    pattern: SequencePattern, aggregate_names: frozenset[str] = frozenset(), faults: FaultSink | None = None
) -> CompiledNFA:
    """Validate ``pattern`` and build its NFA (raises :class:`PatternError` naming the stage).

    The conditions' runtime errors go to ``faults`` (``None``: they raise).
    """
    return _Compiler(pattern, aggregate_names, faults).run()


class _Compiler:
    def __init__(
        self, pattern: SequencePattern, aggregate_names: frozenset[str], faults: FaultSink | None
    ) -> None:
        self.pattern = pattern
        self.aggs = aggregate_names
        self.faults = faults
        self.used: set[str] = set()
        self.all: list[_S] = []
        self.stops: dict[str, _S] = {}
        self.window_times: dict[str, int | float] = {}
        self.window: int | float | None = None
        self.original: dict[str, _S] = {}
        self.names: list[str] = []
        self.cur: Info = Info("", "strict", TRUE, None)
        self.following: Info | None = None
        self.cur_group: Info | None = None
        self.first_of_loop: dict[int, bool] = {}

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
        p = self.cur
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

    def _error(self, msg: str, stage: str | None = None) -> PatternError:
        return PatternError(msg, pattern=self.pattern.name, element=stage)

    def _head_of_group(self, p: Info) -> bool:
        return self.cur_group is not None and p.prev is None

    def _head_of_optional_group(self, p: Info) -> bool:
        """``p`` heads an optional group, in the group's first iteration (Flink 2's
        ``isHeadOfOptionalGroupPattern``): its ignore edge leads to a state without the group's
        PROCEED, so the group can be skipped only before its first event, not after every ignored one."""
        g = self.cur_group
        return g is not None and p.prev is None and g.optional and self._is_first_of_loop()

    def _is_first_of_loop(self) -> bool:
        g = self.cur_group
        return True if g is None else self.first_of_loop.get(id(g), True)

    def _set_first_of_loop(self, value: bool) -> None:
        if self.cur.group:
            self.first_of_loop[id(self.cur)] = value

    def _group_until(self, cond: Cond | None, is_take: bool) -> Cond | None:
        g = self.cur_group
        return cond if g is None or g.until is None else _with_until(cond, g.until, is_take)

    def _proceeds(self, cond: Cond | None = None) -> Cond:
        """A PROCEED edge's condition: ``cond`` (else true), and, inside a group with ``until``,
        not the until (Flink's ``getTrueFunction``: no PROCEED on the event that ends the group)."""
        g = self.cur_group
        if g is None or g.until is None:
            return TRUE if cond is None else cond
        guard = Not(g.until)
        return guard if cond is None else And(guard, cond)

    def _take_cond(self, p: Info) -> Cond:
        out = self._group_until(p.where, True)
        assert out is not None
        return out

    def _ignore_cond(self, p: Info) -> Cond | None:
        strategy = p.strategy
        if self._head_of_group(p):
            assert self.cur_group is not None
            strategy = self.cur_group.strategy
            if not self._is_first_of_loop():
                strategy = self.cur_group.inner
        return self._group_until(_ign(strategy, p.where), False)

    def _inner_ignore_cond(self, p: Info) -> Cond | None:
        strategy = p.inner
        if self._head_of_group(p):
            assert self.cur_group is not None
            strategy = self.cur_group.inner
        return self._group_until(_ign(strategy, p.where), False)

    def _not_conditions(self) -> list[tuple[Cond, str]]:
        out: list[tuple[Cond, str]] = []
        p = self.cur
        while p.prev is not None and (p.prev.optional or p.prev.strategy == "not_follow"):
            p = p.prev
            if p.strategy == "not_follow":
                out.append((self._take_cond(p), p.name))
        return out

    def _add_stop_states(self, st: _S) -> None:
        for cond, name in self._not_conditions():
            st.add(Action.PROCEED, self._stop(cond, name), cond)

    def _add_stop_to_looping(self, st: _S) -> None:
        f = self.following
        if f is not None and f.strategy == "not_follow":
            cond = self._take_cond(f)
            st.add(Action.PROCEED, self._stop(cond, f.name), cond)

    def _copy_without_nots(self, sink: _S) -> _S:
        nots = self._not_conditions()
        if not nots or not self.cur.optional:
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
        reader = ElementReader(self.pattern.name, self.aggs, self.faults)
        last = reader.chain(self.pattern.stages, "a sequence pattern", set())
        self.names = reader.names
        skip = self.pattern.skip
        if skip.stage is not None and skip.stage not in self.names:
            msg = f"the skip strategy names stage {skip.stage!r}, which does not exist"
            raise self._error(msg, skip.stage)
        if skip.stage is not None and skip.stage in _grouped_names(self.pattern.stages):
            msg = (
                f"the skip strategy names stage {skip.stage!r}, which is inside a group; as in Flink, "
                "its target is one of the pattern's own stages"
            )
            raise self._error(msg, skip.stage)
        self.cur = last
        final = self._new(END, Kind.FINAL)
        self.window = _min_window(self.pattern.within_ms, last.within)
        sink = self._middle(final)
        start = self._convert(sink)
        start.kind = Kind.START
        window = self.window if self.window is not None and self.window > 0 else None
        # why self.window, 0 included: Flink compares with within(0) too, which disables the window
        if self.window is not None and any(v > self.window for v in self.window_times.values()):
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
        return CompiledNFA(states, start.name, window, dict(self.window_times), tuple(self.names))

    def _middle(self, sink: _S) -> _S:
        """Flink's ``createMiddleStates``: every element of the current chain but its first."""
        while self.cur.prev is not None:
            p = self.cur
            if p.strategy == "not_follow":
                if (p.within_prev is not None or self._window_now() > 0) and sink.kind == Kind.FINAL:
                    pending = self._new_cur(Kind.PENDING, True)
                    cond = self._take_cond(p)
                    stop = self._stop(cond, p.name)
                    pending.add(Action.PROCEED, stop, cond)
                    pending.add(Action.IGNORE, pending, Not(cond))
                    sink = pending
            elif p.strategy == "not_next":
                nn = self._new_cur(Kind.NORMAL, True)
                cond = self._take_cond(p)
                stop = self._stop(cond, p.name)
                if sink.kind == Kind.FINAL:
                    nn.add(Action.IGNORE, sink, Not(cond))
                else:
                    nn.add(Action.PROCEED, sink, Not(cond))
                nn.add(Action.PROCEED, stop, cond)
                sink = nn
            else:
                sink = self._convert(sink)
            self.following = self.cur
            self.cur = self.cur.prev
            w = self.cur.within
            if w is not None and w < (self.window if self.window is not None else float("inf")):
                self.window = w
        return sink

    def _convert(self, sink: _S) -> _S:
        p = self.cur
        if p.branches is not None:
            return self._alternation(p, sink)
        if p.looping:
            assert p.times is not None
            self._set_first_of_loop(False)
            looping = self._looping(self._copy_without_nots(sink))
            self._set_first_of_loop(True)
            last = self._times(looping, sink, p.times)
        elif p.times is not None:
            last = self._times(sink, sink, p.times)
        else:
            last = self._singleton(sink, sink, self._take_cond(p), self._ignore_cond(p), p.optional)
        self._add_stop_states(last)
        return last

    def _times(self, sink: _S, proceed: _S, times: tuple[int, int]) -> _S:
        p = self.cur
        self._set_first_of_loop(False)
        inner_ign = _with_until(self._inner_ignore_cond(p), p.until, False)
        take = _with_until(self._take_cond(p), p.until, True)
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
        self._set_first_of_loop(True)
        return self._singleton(last, proceed, take, self._ignore_cond(p), p.optional)

    def _singleton(self, sink: _S, proceed: _S | None, take: Cond, ignore: Cond | None, optional: bool) -> _S:
        p = self.cur
        if p.group:
            return self._group_state(p, sink, proceed, optional)
        st = self._new_cur(Kind.NORMAL, True)
        target = self._copy_without_nots(sink)
        st.add(Action.TAKE, target, take)
        if optional:
            assert proceed is not None
            if p.greedy and p.until is not None:
                st.add(Action.PROCEED, self.original.get(proceed.name, proceed), self._proceeds(p.until))
                st.add(Action.PROCEED, proceed, self._proceeds(Not(p.until)))
            else:
                st.add(Action.PROCEED, proceed, self._proceeds())
        if ignore is not None:
            if optional or self._head_of_optional_group(p):
                ign_state = self._new_cur(Kind.NORMAL, False)
                ign_state.add(Action.TAKE, target, take)
                ign_state.add(Action.IGNORE, ign_state, ignore)
                self._add_stop_states(ign_state)
            else:
                ign_state = st
            st.add(Action.IGNORE, ign_state, ignore)
        return st

    def _looping(self, sink: _S) -> _S:
        p = self.cur
        if p.group:
            return self._looping_group(p, sink)
        ignore = _with_until(self._inner_ignore_cond(p), p.until, False)
        take = _with_until(self._take_cond(p), p.until, True)
        assert take is not None
        proceed_cond = self._proceeds()
        st = self._new_cur(Kind.NORMAL, True)
        if p.greedy:
            if p.until is not None:
                copy = self._copy(sink)
                st.add(Action.PROCEED, copy, self._proceeds(p.until))
                self.original[sink.name] = copy
            # why the stage's own condition, not ``take``: Flink guards the next stage with it, so
            # an event that meets ``until`` and the condition can neither leave nor stay in the loop
            self._greedy(sink, self._take_cond(p))
            if p.until is not None:
                proceed_cond = self._proceeds(Not(p.until))
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

    def _alternation(self, alt: Info, sink: _S) -> _S:
        """Each branch built in front of ``sink``; a state whose PROCEED edges enter them, the
        left branch's followed first (the run steps pop PROCEED targets last-in first-out)."""
        assert alt.branches is not None
        saved = (self.cur, self.following, self.cur_group)
        heads: list[_S] = []
        for last in alt.branches:
            self.cur, self.following, self.cur_group = last, saved[1], None
            self.window = _min_window(self.window, last.within)
            heads.append(self._convert(self._middle(sink)))
        self.cur, self.following, self.cur_group = saved
        choice = self._new(CHOICE, Kind.NORMAL)
        for head in reversed(heads):
            choice.add(Action.PROCEED, head, TRUE)
        return choice

    def _enter(self, group: Info) -> tuple[Info, Info | None, Info | None]:
        saved = (self.cur, self.following, self.cur_group)
        self.cur_group = group
        assert group.last is not None
        self.cur = group.last
        return saved

    def _leave(self, saved: tuple[Info, Info | None, Info | None]) -> None:
        self.cur, self.following, self.cur_group = saved

    def _group_state(self, group: Info, sink: _S, proceed: _S | None, optional: bool) -> _S:
        """Inline one iteration of a group in front of ``sink``."""
        past = self._proceeds()  # why before entering: the enclosing group's until guards it
        saved = self._enter(group)
        last = self._convert(self._middle(sink))
        if optional:
            assert proceed is not None
            last.add(Action.PROCEED, proceed, past)
        self._leave(saved)
        return last

    def _looping_group(self, group: Info, sink: _S) -> _S:
        """A looping group: the inlined group, a dummy state after it leading back to its head."""
        dummy = self._new_cur(Kind.NORMAL, True)
        past = self._proceeds()  # why before entering: the enclosing group's until guards them
        saved = self._enter(group)
        last = self._convert(self._middle(dummy))
        last.add(Action.PROCEED, sink, past)
        dummy.add(Action.PROCEED, last, past)
        self._leave(saved)
        return last


def _grouped_names(elements: Sequence[Element]) -> set[str]:
    """The names of the stages inside groups (at any depth) of ``elements``."""
    return {name for el in elements if isinstance(el, GroupStage) for name in stage_names(el.stages)}


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
