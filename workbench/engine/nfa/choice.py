"""Read an alternation or permutation into the compiler's :class:`~.elements.Info` (validation too).

An alternation is compiled as a state with one ``PROCEED`` edge per branch (the left branch's edge
followed first) in front of each branch's own states, all leading to what follows the
alternation; a permutation is the alternation of its orders. Only the general plan runs such an
NFA (:func:`has_choice` routes it there).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from workbench.engine.nfa.conditions import TRUE
from workbench.engine.nfa.elements import STRATEGY, Info
from workbench.engine.nfa.pattern import (
    Alternation,
    Contiguity,
    Element,
    GroupStage,
    Permute,
    SequencePattern,
)
from workbench.errors import PatternError

__all__ = ["has_choice", "read_choice", "set_head_strategy"]

#: reads one chain of elements: (elements, what it is, names seen) -> the chain's last info
ChainReader = Callable[[tuple[Element, ...], str, set[str]], Info]


def has_choice(elements: Iterable[object]) -> bool:
    """Whether an alternation or permutation occurs anywhere in ``elements``."""
    for e in elements:
        if isinstance(e, Alternation | Permute):
            return True
        if isinstance(e, GroupStage) and has_choice(e.stages):
            return True
    return False


def pattern_has_choice(pattern: SequencePattern) -> bool:
    """Whether ``pattern`` alternates (the fast plans and the columnar replay refuse it)."""
    return has_choice(pattern.stages)


def set_head_strategy(info: Info, strategy: str) -> None:
    """Give a chain's first element (and a leading alternation's branch heads) ``strategy``."""
    head = info
    while head.prev is not None:
        head = head.prev
    head.strategy = strategy
    for last in head.branches or ():
        set_head_strategy(last, strategy)


def read_choice(
    read: ChainReader, elem: Alternation | Permute, first: bool, before: tuple[Element, ...], seen: set[str],
    error: Callable[[str, str | None], PatternError],
) -> Info:  # fmt: skip
    """The info of an alternation (a permutation is read as the alternation of its orders)."""
    _check_before(before, error)
    alt = _as_alternation(elem, error)
    if len(alt.branches) < 2:
        msg = "an alternation needs at least two branches"
        raise error(msg, alt.name)
    strategy = "strict" if first else STRATEGY[Contiguity(alt.contiguity)]
    info = Info(alt.name, strategy, TRUE, None)
    base = set(seen)
    lasts: list[Info] = []
    for i, branch in enumerate(alt.branches):
        names = set(base) if isinstance(elem, Permute) else seen
        last = read(branch, f"branch {i + 1} of {alt.name}", names)
        if last.strategy in ("not_follow", "not_next"):
            msg = "a negated stage cannot end an alternation branch"
            raise error(msg, last.name)
        if _can_be_empty(last):
            msg = f"branch {i + 1} of {alt.name} can match no event (every element optional)"
            raise error(msg, alt.name)
        set_head_strategy(last, strategy)
        lasts.append(last)
        if isinstance(elem, Permute):
            seen |= names
    info.branches = tuple(lasts)
    return info


def _as_alternation(
    elem: Alternation | Permute, error: Callable[[str, str | None], PatternError]
) -> Alternation:
    if isinstance(elem, Alternation):
        return elem
    if len(elem.elements) < 2:
        msg = "permute needs at least two elements"
        raise error(msg, elem.name)
    for e in elem.elements:
        if e.negated or e.quantifier.optional:
            msg = "an element of permute cannot be negated or optional (two orders would give one match)"
            raise error(msg, e.name)
    return elem.alternation()


def _check_before(before: tuple[Element, ...], error: Callable[[str, str | None], PatternError]) -> None:
    """A negated stage (possibly behind optional ones) cannot come right before an alternation."""
    for e in reversed(before):
        if e.negated:
            msg = "a negated stage cannot come right before an alternation or permute"
            raise error(msg, e.name)
        if not e.quantifier.optional:
            return


def _can_be_empty(last: Info) -> bool:
    p: Info | None = last
    while p is not None:
        if not p.optional and p.strategy not in ("not_follow", "not_next"):
            return False
        p = p.prev
    return True
