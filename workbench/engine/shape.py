"""What the frontends read of any pattern, for every family in one walk: its elements.

An *element* is a stage of a sequence, a channel of a reaction group (nested groups flattened), a
group's initiator, or a receive. For each: the event types it accepts, the event fields its
conditions (and a channel's match, bind and vars tables) read, whether it takes events into a match,
and its conditions as IR. Type checks, explain, the outline and completion read these instead of
testing a pattern's attributes.

>>> from workbench.engine.nfa import SequencePattern, Stage
>>> p = SequencePattern("s", (Stage("a", where="e.price > 1", types=("t",)), Stage("x", negated=True)))
>>> [(e.name, e.types, sorted(e.fields), e.taking) for e in elements(p)]
[('a', frozenset({'t'}), ['price'], True), ('x', None, [], False)]
>>> event_types(p) is None  # the negated stage takes any type
True
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from workbench.engine.expr import ir
from workbench.engine.expr.parse import parse_expr
from workbench.engine.nfa.pattern import (
    AllOf,
    Alternation,
    AnyOf,
    Condition,
    GroupStage,
    Permute,
    SequencePattern,
)
from workbench.engine.nfa.pattern import Element as NFAElement
from workbench.engine.reactions.patterns import Channel, Fields, ReactionGroup, Receive
from workbench.errors import ExpressionError

__all__ = ["Element", "condition_fields", "elements", "event_types", "fields_read", "taking_elements"]


@dataclass(frozen=True, slots=True)
class Element:
    """One element of a pattern (see the module doc).

    Attributes:
        name: the stage name, channel id, ``initiator``, or the receive's name.
        types: the event types it accepts (``None``: any type).
        fields: the event fields it reads.
        taking: whether its events become part of a match (not negated, stop, optional, pause or
            resume channels; not negated stages; not an initiator).
        conditions: its conditions as IR trees (text conditions parsed; callables left out).
    """

    name: str
    types: frozenset[str] | None
    fields: frozenset[str]
    taking: bool
    conditions: tuple[ir.Node, ...] = ()


def elements(pattern: object) -> tuple[Element, ...]:
    """The elements of a sequence, a reaction group or a receive (``()`` for anything else)."""
    if isinstance(pattern, SequencePattern):
        return tuple(_stages(pattern.stages))
    if isinstance(pattern, ReactionGroup):
        return tuple(_group(pattern))
    if isinstance(pattern, Receive):
        trees = _trees(pattern.where)
        fields = _fields(trees) | _names(pattern.match)
        types = frozenset({pattern.type}) if pattern.type is not None else None
        return (Element(pattern.name, types, frozenset(fields), True, trees),)
    return ()


def event_types(pattern: object) -> frozenset[str] | None:
    """The event types ``pattern`` listens to; ``None`` when some element takes any type."""
    out: set[str] = set()
    for e in elements(pattern):
        if e.types is None:
            return None
        out |= e.types
    return frozenset(out)


def fields_read(pattern: object) -> dict[str, frozenset[str]]:
    """Element name -> the event fields it reads."""
    out: dict[str, frozenset[str]] = {}
    for e in elements(pattern):
        out[e.name] = out.get(e.name, frozenset()) | e.fields
    return out


def taking_elements(pattern: object) -> list[str]:
    """The names of the elements whose events become part of a match, in pattern order."""
    return [e.name for e in elements(pattern) if e.taking]


def condition_fields(condition: Condition | None) -> set[str]:
    """The ``e.FIELD`` names a condition (an expression, or an ``AllOf``/``AnyOf`` of them) reads."""
    return _fields(_trees(condition))


def _stages(stages: tuple[NFAElement, ...]) -> Iterator[Element]:
    for s in stages:
        if isinstance(s, Alternation):  # why: every branch's stages, once each
            for branch in s.branches:
                yield from _stages(branch)
            continue
        if isinstance(s, Permute):
            yield from _stages(s.elements)
            continue
        if isinstance(s, GroupStage):
            yield from _stages(s.stages)
            until = _trees(s.until)
            if until:  # the group's own stop condition, under the group's name
                yield Element(s.name, frozenset(), frozenset(_fields(until)), False, until)
            continue
        trees = _trees(s.where) + _trees(s.until)
        types = frozenset(s.types) if s.types else None
        yield Element(s.name, types, frozenset(_fields(trees)), not s.negated, trees)


def _group(group: ReactionGroup) -> Iterator[Element]:
    initiator = group.initiator
    if initiator is not None:
        trees = _trees(initiator.where)
        fields = _fields(trees) | _names(initiator.match) | _values(initiator.bind)
        types = frozenset({initiator.type}) if initiator.type is not None else frozenset()
        yield Element("initiator", types, frozenset(fields), False, trees)
    for member in group.channels:
        if isinstance(member, ReactionGroup):
            yield from _group(member)
            continue
        yield _channel(member)


def _channel(c: Channel) -> Element:
    trees = _trees(c.where)
    fields = _fields(trees) | _names(c.match) | _values(c.binds) | _values(c.vars)
    taking = not (c.negated or c.stop or c.optional or c.pause_ids or c.resume_ids)
    types = frozenset({c.type}) if c.type is not None else None
    return Element(c.id, types, frozenset(fields), taking, trees)


def _trees(condition: Condition | None) -> tuple[ir.Node, ...]:
    if condition is None:
        return ()
    if isinstance(condition, AllOf | AnyOf):
        return tuple(t for part in condition.parts for t in _trees(part))
    if isinstance(condition, ir.Node):
        return (condition,)
    if isinstance(condition, str):
        try:
            return (parse_expr(condition),)
        except ExpressionError:
            return ()
    return ()  # a Python callable: opaque


def _fields(trees: tuple[ir.Node, ...]) -> set[str]:
    return {
        n.name for tree in trees for n in ir.walk(tree) if isinstance(n, ir.Attr) and n.obj == ir.Name("e")
    }


def _pairs(table: Fields) -> list[tuple[str, object]]:
    return list(table.items()) if isinstance(table, Mapping) else list(table)


def _names(table: Fields) -> set[str]:
    """The field names of a match table (``field -> value``)."""
    return {name for name, _ in _pairs(table)}


def _values(table: Fields) -> set[str]:
    """The fields a bind or vars table reads (``variable -> field``)."""
    return {str(field) for _, field in _pairs(table)}
