"""The syntax tree of the ``%%cep`` language: frozen nodes, each with its source span.

The parser (:mod:`workbench.language.parser`) builds these nodes from lark's parse tree; the compiler
(:mod:`workbench.language.compile`) turns them into the engine's pattern objects. Spans are 1-based
and in the caller's coordinates (cell coordinates for a ``%%cep`` cell, whose body starts on line 2),
so every compile-time error can point at the offending text.

Conditions stay text: :class:`Expr` keeps the exact source of the expression (a restricted subset
of Python expression syntax) and its span; the compiler checks and rewrites it.
"""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import SourceSpan

__all__ = [
    "AggregateDecl",
    "Annotation",
    "Assignment",
    "Block",
    "Channel",
    "ChannelHead",
    "Duration",
    "EventDecl",
    "Expr",
    "GroupDef",
    "Initiator",
    "InstanceDecl",
    "MatchItem",
    "Name",
    "Quantifier",
    "ReceiveDef",
    "Script",
    "SequenceDef",
    "Skip",
    "Stage",
    "StageGroup",
    "SubsetDecl",
]


@dataclass(frozen=True, slots=True)
class Name:
    """An identifier (plain or written in backquotes) and where it was written."""

    text: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Expr:
    """A condition expression: its exact source text and span."""

    text: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Duration:
    """A duration literal such as ``250ms`` or ``5min``, converted to milliseconds."""

    ms: int | float
    text: str
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class EventDecl:
    """``event login(user, ip: str, n: int)``: the fields of an event type, optionally typed."""

    type: Name
    fields: tuple[Name, ...]
    span: SourceSpan
    types: tuple[str | None, ...] = ()


@dataclass(frozen=True, slots=True)
class Annotation:
    """``@name`` or ``@name(arg, ...)``; arguments are expressions or durations."""

    name: Name
    args: tuple[Expr | Duration, ...] | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class MatchItem:
    """``field = value`` (compare a payload field with a variable or a constant) or ``field as Var``
    (bind the field's value to a new variable)."""

    field: Name
    value: Expr | Name
    bind: bool
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Assignment:
    """``NAME = expr``: a constant, an instance variable, a per-instance state variable, a measure."""

    name: Name
    value: Expr
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class InstanceDecl:
    """``instance KEY [at TIME] [with VAR = value, ...]``: an instance created at start-up."""

    key: Expr
    at: Expr | None
    vars: tuple[Assignment, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ChannelHead:
    """``type(field = value, ...)``: an event type and the payload constraints."""

    type: Name
    items: tuple[MatchItem, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Channel:
    """A member reaction of a group: annotations, an optional label, a head and a ``where``."""

    annotations: tuple[Annotation, ...]
    label: Name | None
    head: ChannelHead
    where: Expr | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Block:
    """``@and(id) @timeout(..) { members }`` or ``@or ...``: a group operator and its members."""

    operator: str
    id: Name | None
    annotations: tuple[Annotation, ...]
    members: tuple[Channel | Block, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Initiator:
    """``[@template] on [once] type(field as Var, ...) [where cond]``: what starts a group instance."""

    annotations: tuple[Annotation, ...]
    once: bool
    head: ChannelHead
    where: Expr | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class GroupDef:
    """``group NAME ... { ... }``: a Prova-style reaction group."""

    name: Name | None
    initiator: Initiator | None
    partition: tuple[Name, ...]  # ``partition by user, ip``: the key fields (none: empty)
    constants: tuple[Assignment, ...]
    state: tuple[Assignment, ...]
    instances: tuple[InstanceDecl, ...]
    block: Block
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class ReceiveDef:
    """``receive NAME [const ...] [@count(n)] type(...) [where cond]``: one detection per event."""

    name: Name | None
    constants: tuple[Assignment, ...]
    annotations: tuple[Annotation, ...]
    head: ChannelHead
    where: Expr | None
    span: SourceSpan
    partition: tuple[Name, ...] = ()


@dataclass(frozen=True, slots=True)
class Quantifier:
    """One quantifier clause of a stage.

    ``kind`` is one of ``times`` (args ``(n,)``), ``range`` (``(n, m)``), ``or_more`` (``(n,)``),
    ``one_or_more``, ``optional``, ``greedy``, ``consecutive``, ``combinations``, ``window``
    (args ``(ms,)``).
    """

    kind: str
    args: tuple[int | float, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class StageGroup:
    """``( begin a ... )``: a group of stages used as one stage."""

    stages: tuple[Stage, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class StageChoice:
    """``(a next b) | c`` (``kind`` ``alternation``) or ``permute(a, b, c)`` (``permute``): each
    branch is a chain of stages whose first one has contiguity ``begin``."""

    kind: str
    branches: tuple[tuple[Stage, ...], ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Stage:
    """One stage of a sequence.

    ``contiguity`` is ``begin``, ``strict`` (next), ``relaxed`` (followed by), ``any`` (followed by
    any), ``not_next`` or ``not_followed``.
    """

    contiguity: str
    name: Name | None
    group: StageGroup | None
    types: tuple[Name, ...]
    where: tuple[tuple[str, Expr], ...]
    until: Expr | None
    quantifiers: tuple[Quantifier, ...]
    within: Duration | None
    within_previous: Duration | None
    span: SourceSpan
    choice: StageChoice | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    """The after-match skip strategy: ``kind`` is ``no_skip``, ``skip_to_next``, ..."""

    kind: str
    stage: Name | None
    or_fail: bool
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class AggregateDecl:
    """``aggregate NAME = fn(STAGE.field) [including current]``."""

    name: Name
    value: Expr
    include_current: bool
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class SubsetDecl:
    """``NAME = (STAGE, ...)`` in a ``subset`` clause."""

    name: Name
    members: tuple[Name, ...]
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class SequenceDef:
    """``sequence NAME [within D] [skip ...] begin ... next ...``: a Flink-CEP-style pattern."""

    name: Name | None
    within: Duration | None
    skip: Skip | None
    partition: tuple[Name, ...]  # ``partition by user, ip``: the key fields (none: empty)
    aggregates: tuple[AggregateDecl, ...]
    emit_timeouts: bool
    max_partial: int | str | None
    stages: tuple[Stage, ...]
    span: SourceSpan
    measures: tuple[Assignment, ...] = ()
    emit_into: Name | None = None  # ``emit into TYPE``
    absence: Absence | None = None
    subsets: tuple[SubsetDecl, ...] = ()
    flink_order: bool = False  # ``flink order``: Flink's order among equal-start partial matches


@dataclass(frozen=True, slots=True)
class Absence:
    """``begin [every] not NAME[: TYPES] for D [where COND]``: a leading or standalone silence."""

    every: bool
    name: Name
    types: tuple[Name, ...]
    duration: Duration
    where: Expr | None
    span: SourceSpan


@dataclass(frozen=True, slots=True)
class Script:
    """A whole text: event declarations and pattern definitions, in order."""

    items: tuple[EventDecl | SequenceDef | GroupDef | ReceiveDef, ...]
    source: str
    first_line: int
