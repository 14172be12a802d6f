"""Errors of the language front end.

Parse errors are :class:`~workbench.errors.CepSyntaxError`. Errors found while compiling a parsed
text (an unknown stage, channel, variable or field, a bad annotation, a malformed quantifier) are
:class:`CepCompileError`, a :class:`~workbench.errors.PatternError` that also carries the span and
renders the offending line with a caret. Neither derives from ``SyntaxError``.
"""

from __future__ import annotations

from workbench.errors import PatternError, SourceSpan

__all__ = ["CepCompileError"]


class CepCompileError(PatternError):
    """Pattern text parses but does not make a valid pattern; carries the span and the source."""

    def __init__(self, message: str, span: SourceSpan, source: str, *, pattern: str | None = None) -> None:
        self.message = message
        self.span = span
        self.source = source
        super().__init__(self.render())
        self.pattern = pattern

    def render(self) -> str:
        """The message, the offending line, and a caret under the column."""
        lines = self.source.splitlines()
        head = f"line {self.span.line}, column {self.span.column}: {self.message}"
        if 1 <= self.span.line <= len(lines):
            return f"{head}\n    {lines[self.span.line - 1]}\n    {' ' * (self.span.column - 1)}^"
        return head
