"""The error hierarchy of the workbench, rooted in :class:`CepError`.

Every error a user can cause (a malformed event, a malformed pattern, bad pattern text, a failing
condition) is a :class:`CepError`. Subclasses also derive from the builtin they refine, so callers may
catch ``ValueError`` too. None derives from ``SyntaxError``: IPython routes those to a different
handler that would hide our caret excerpts.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "CepError",
    "CepRuntimeError",
    "CepSyntaxError",
    "EventError",
    "ExpressionError",
    "PatternError",
    "SkipStrategyError",
    "SourceSpan",
]


@dataclass(frozen=True, slots=True)
class SourceSpan:
    """A 1-based position range in a text (a ``%%cep`` cell, a condition string)."""

    line: int
    column: int
    end_line: int
    end_column: int


class CepError(Exception):
    """Root of every error raised by the workbench."""


def _located(message: str, sep: str, where: tuple[str | None, ...]) -> str:
    """``message`` behind the known parts of where it happened (``None``: unknown), joined by ``sep``."""
    known = [part for part in where if part is not None]
    return f"{sep.join(known)}: {message}" if known else message


class EventError(CepError, ValueError):
    """An input event is malformed: it names the event's position and the offending field.

    Attributes:
        position: 0-based arrival index of the event in the input (or ``None`` when unknown).
        field: the field that is missing or invalid (``"type"``, ``"time"``, ``"key"``, ...).
    """

    def __init__(self, message: str, *, position: int | None = None, field: str | None = None) -> None:
        where = (
            f"event #{position}" if position is not None else None,
            f"field {field!r}" if field is not None else None,
        )
        super().__init__(_located(message, ", ", where))
        self.position = position
        self.field = field


class PatternError(CepError, ValueError):
    """A pattern is malformed; the message names the stage or channel at fault.

    Attributes:
        pattern: name of the pattern, when known.
        element: the stage or channel name at fault, when there is one.
    """

    def __init__(self, message: str, *, pattern: str | None = None, element: str | None = None) -> None:
        where = (
            f"pattern {pattern!r}" if pattern is not None else None,
            repr(element) if element is not None else None,
        )
        super().__init__(_located(message, " ", where))
        self.pattern = pattern
        self.element = element


class ExpressionError(PatternError):
    """A condition expression is invalid (syntax or a construct outside the allowed subset).

    A :class:`PatternError` (a pattern with a bad condition is malformed) that carries the
    ``span`` (line and column) of what is wrong in ``source``.
    """

    def __init__(self, message: str, *, source: str | None = None, span: SourceSpan | None = None) -> None:
        text = message
        if span is not None and not message.startswith("line "):
            text = f"line {span.line}, column {span.column}: {message}"
        if source is not None and span is not None:
            lines = source.splitlines()
            line = lines[span.line - 1] if 0 < span.line <= len(lines) else ""
            text = f"{text}\n  {line}\n  {' ' * (span.column - 1)}^"
        CepError.__init__(self, text)
        self.message = message
        self.pattern: str | None = None
        self.element: str | None = None
        self.source = source
        self.span = span


class CepSyntaxError(CepError, ValueError):
    """Pattern text does not parse. Carries the span in the caller's coordinates and the source text."""

    def __init__(self, message: str, span: SourceSpan, source: str) -> None:
        self.message = message
        self.span = span
        self.source = source
        super().__init__(self.render())

    def render(self) -> str:
        """The message, the offending line, and a caret under the column."""
        lines = self.source.splitlines()
        head = f"line {self.span.line}, column {self.span.column}: {self.message}"
        if 1 <= self.span.line <= len(lines):
            text = lines[self.span.line - 1]
            return f"{head}\n    {text}\n    {' ' * (self.span.column - 1)}^"
        return head


class CepRuntimeError(CepError, RuntimeError):
    """A user callback or condition failed while processing an event (raised ``from`` the cause)."""


class SkipStrategyError(CepRuntimeError):
    """An after-match skip strategy with ``throw_on_miss`` could not find its target."""
