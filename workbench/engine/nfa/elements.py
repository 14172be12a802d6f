"""Validate a pattern's stages and groups and derive what the NFA compiler needs of each.

:class:`ElementReader` walks the stages (and each group's inner chain) once, raising
:class:`~workbench.errors.PatternError` naming the stage at fault, and links one :class:`Info` per
element to the one before it. The compiler (:mod:`workbench.engine.nfa.compiler`) then builds the
graph from the infos, from the last element to the first.
"""

from __future__ import annotations

from workbench.engine.faults import FaultSink
from workbench.engine.nfa.conditions import TRUE, And, Cond, compile_condition, type_test
from workbench.engine.nfa.pattern import Alternation, Contiguity, Element, GroupStage, Permute, Stage
from workbench.errors import PatternError

__all__ = ["DELIM", "END", "ElementReader", "Info"]

END = "$endState$"
DELIM = ":"

STRATEGY = {
    Contiguity.STRICT: "strict",
    Contiguity.RELAXED: "relaxed",
    Contiguity.NONDETERMINISTIC_RELAXED: "any",
}


class Info:
    """Derived facts about one stage or group, linked to the previous element of its chain."""

    __slots__ = (
        "branches",
        "greedy",
        "group",
        "inner",
        "last",
        "looping",
        "name",
        "optional",
        "prev",
        "strategy",
        "times",
        "times_window",
        "until",
        "where",
        "within",
        "within_prev",
    )  # fmt: skip

    def __init__(self, name: str, strategy: str, where: Cond, until: Cond | None) -> None:
        self.name = name
        self.strategy = strategy  # strict | relaxed | any | not_next | not_follow
        self.where = where
        self.until = until
        self.optional = False
        self.looping = False
        self.times: tuple[int, int] | None = None  # (from, to) for quantified elements
        self.times_window: int | float | None = None
        self.greedy = False
        self.inner = "relaxed"  # strict | relaxed | any
        self.within: int | float | None = None
        self.within_prev: int | float | None = None
        self.prev: Info | None = None
        self.group = False
        self.last: Info | None = None  # groups: the last element of the inner chain
        self.branches: tuple[Info, ...] | None = None  # alternations: each branch's last element


class ElementReader:
    """Reads the elements of one pattern; ``names`` collects the stage names in pattern order."""

    def __init__(self, pattern: str, aggregate_names: frozenset[str], faults: FaultSink | None) -> None:
        self.pattern = pattern
        self.aggs = aggregate_names
        self.faults = faults
        self.names: list[str] = []

    def _error(self, msg: str, stage: str | None = None) -> PatternError:
        return PatternError(msg, pattern=self.pattern, element=stage)

    def chain(self, elements: tuple[Element, ...], where: str, seen: set[str]) -> Info:
        """Validate a chain of stages (top level or a group's inside) and link its infos."""
        if not elements:
            msg = f"{where} needs at least one stage"
            raise self._error(msg)
        prev: Info | None = None
        prev_elem: Element | None = None
        for i, elem in enumerate(elements):
            obj: object = elem
            if isinstance(obj, Alternation | Permute):
                info = self._choice(obj, i == 0, elements[:i], where, seen)
            elif not isinstance(obj, Stage | GroupStage):
                msg = f"a stage must be a Stage or GroupStage, got {type(obj).__name__}"
                raise self._error(msg)
            else:
                info = self._element(obj, first=i == 0, prev_elem=prev_elem, seen=seen)
            info.prev = prev
            prev, prev_elem = info, elem
        assert prev is not None
        return prev

    def _choice(
        self,
        elem: Alternation | Permute,
        first: bool,
        before: tuple[Element, ...],
        where: str,
        seen: set[str],
    ) -> Info:
        """An alternation or permutation (:mod:`~workbench.engine.nfa.choice`)."""
        from workbench.engine.nfa.choice import read_choice

        if where.startswith("group "):
            msg = f"an alternation or permute cannot be inside a group ({where}); put groups in its branches"
            raise self._error(msg, elem.name)
        return read_choice(self.chain, elem, first, before, seen, self._error)

    def _element(
        self, elem: Stage | GroupStage, first: bool, prev_elem: Element | None, seen: set[str]
    ) -> Info:
        name = self._check(elem, prev_elem, seen)
        q = elem.quantifier
        until = (
            None
            if elem.until is None
            else compile_condition(elem.until, name, self.aggs, self.faults, "until")
        )
        if isinstance(elem, GroupStage):
            info = Info(name, "strict" if first else STRATEGY[Contiguity(elem.contiguity)], TRUE, until)
            info.group = True
            info.last = self.chain(elem.stages, f"group {name!r}", seen)
            if info.last.strategy == "not_follow":
                msg = "notFollowedBy cannot be the last stage of a group"
                raise self._error(msg, info.last.name)
        else:
            if elem.negated:
                strategy = self._negated(elem, first, prev_elem)
            else:
                strategy = "strict" if first else STRATEGY[Contiguity(elem.contiguity)]
            where = compile_condition(elem.where, name, self.aggs, self.faults)
            if elem.types:
                test = type_test(tuple(elem.types), name)
                where = test if where is TRUE else And(test, where)
            info = Info(name, strategy, where, until)
            info.within_prev = elem.within_prev_ms
            if name not in self.names:  # why: a permuted stage is read once per order
                self.names.append(name)
        info.optional = q.optional
        info.looping = q.looping
        info.times = None if q.single else (q.min, q.min if q.max is None else q.max)
        info.times_window = q.window_ms
        info.greedy = q.greedy
        info.inner = STRATEGY[Contiguity(q.inner)]
        info.within = elem.within_ms
        return info

    def _check(self, elem: Element, prev_elem: Element | None, seen: set[str]) -> str:
        """The element's name, once its name and quantifier are valid."""
        name: object = elem.name
        if not isinstance(name, str) or not name:
            msg = "stage names must be non-empty strings"
            raise self._error(msg)
        if DELIM in name or name == END:
            msg = f"stage name {name!r} is reserved (no ':' and not {END!r})"
            raise self._error(msg, name)
        if name in seen:
            msg = "duplicate stage name (stage and group names must be unique)"
            raise self._error(msg, name)
        seen.add(name)
        q = elem.quantifier
        if q.min < 1 or (q.max is not None and q.max < q.min):
            msg = f"bad quantifier: min={q.min}, max={q.max} (need 1 <= min <= max)"
            raise self._error(msg, name)
        if elem.until is not None and not q.looping:
            msg = "The until condition is only applicable to looping states."
            raise self._error(msg, name)
        if q.greedy and (q.single or isinstance(elem, GroupStage)):
            msg = "greedy() is not applicable to a single-event stage or a group"
            raise self._error(msg, name)
        if q.greedy and q.inner is Contiguity.NONDETERMINISTIC_RELAXED:
            msg = "greedy() cannot be combined with allowCombinations()"
            raise self._error(msg, name)
        if q.optional and prev_elem is not None and prev_elem.quantifier.greedy:
            msg = "an optional stage cannot follow a greedy stage"
            raise self._error(msg, name)
        return name

    def _negated(self, elem: Stage, first: bool, prev_elem: Element | None) -> str:
        """``not_next`` or ``not_follow``, once the negated stage is valid where it stands."""
        name, q = elem.name, elem.quantifier
        if first:
            msg = "a pattern (or group) cannot begin with a negated stage"
            raise self._error(msg, name)
        if not q.single or q.optional or q.greedy or q.window_ms is not None:
            msg = "quantifier/optional not applicable to NOT pattern (notNext/notFollowedBy)"
            raise self._error(msg, name)
        if elem.contiguity is Contiguity.NONDETERMINISTIC_RELAXED:
            msg = "a negated stage is notNext (strict) or notFollowedBy (relaxed), not followedByAny"
            raise self._error(msg, name)
        if prev_elem is not None and prev_elem.quantifier.optional:
            msg = (
                "an optional stage cannot be followed by notNext/notFollowedBy (Flink: optional "
                "path to NOT condition is not supported)"
            )
            raise self._error(msg, prev_elem.name)
        return "not_next" if elem.contiguity is Contiguity.STRICT else "not_follow"
