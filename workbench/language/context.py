"""What every part of the ``%%cep`` compiler shares: the compile context and the definition record."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from workbench.engine.nfa import pattern as seq
from workbench.engine.nfa.absence import AbsencePattern
from workbench.engine.reactions import patterns as grp
from workbench.errors import SourceSpan
from workbench.language import ast
from workbench.language.errors import CepCompileError

__all__ = ["Context", "Definition", "Pattern"]

Pattern = seq.SequencePattern | grp.ReactionGroup | grp.Receive | AbsencePattern


@dataclass(frozen=True)
class Definition:
    """One compiled definition: the pattern plus what the text said around it.

    Attributes:
        pattern: the engine pattern object.
        partition: the ``partition by`` field, if any (the key column when loading events); a tuple
            of fields for a composite key (``partition by user, ip``: the key is the tuple of values).
        schema: the ``event`` declarations in force (type -> fields).
        field_types: declared field types (type -> field -> ``str``/``int``/``float``/``bool``/``number``).
        span: where the definition was written.
        elements: where each stage (sequence) or channel (group) is named, by name.
        source: the text the definition came from, in the caller's line coordinates.
    """

    pattern: Pattern
    partition: str | tuple[str, ...] | None
    schema: Mapping[str, tuple[str, ...]]
    span: SourceSpan
    field_types: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    elements: Mapping[str, SourceSpan] = field(default_factory=dict, compare=False)
    source: str = field(default="", compare=False, repr=False)


@dataclass
class Context:
    source: str
    schema: dict[str, tuple[str, ...]]
    functions: Mapping[str, Callable[..., object]]
    pattern: str | None = None
    field_types: dict[str, dict[str, str]] = field(default_factory=dict)

    def types_of(self, types: Sequence[str]) -> dict[str, str] | None:
        """Field types shared by every one of ``types`` (``None`` when unknown)."""
        if not types or not all(t in self.field_types for t in types):
            return None
        out = dict(self.field_types[types[0]])
        for t in types[1:]:
            out = {k: v for k, v in out.items() if self.field_types[t].get(k) == v}
        return out

    def fail(self, message: str, span: SourceSpan) -> CepCompileError:
        return CepCompileError(message, span, self.source, pattern=self.pattern)

    def check_type(self, name: ast.Name) -> None:
        """Reject an event type no ``event`` declaration names, while declarations are in force.

        The message suggests the nearest declared type (``lgin`` for ``login``), and says how to
        declare the type when it is meant.
        """
        if not self.schema or name.text in self.schema:
            return
        declared = sorted(self.schema)
        close = difflib.get_close_matches(name.text, declared, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        msg = (
            f"unknown event type {name.text!r}{hint}; declared: {', '.join(declared)}; "
            f"declare it with 'event {name.text}(...)' if it is meant"
        )
        raise self.fail(msg, name.span)

    def fields_of(self, types: Sequence[str]) -> frozenset[str] | None:
        if not types or not all(t in self.schema for t in types):
            return None  # an untyped stage may see any event type, declared or not
        return frozenset(f for t in types for f in self.schema[t])
