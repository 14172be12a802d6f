"""Duration literals in expressions: ``b.time - a.time < 5min`` reads as ``< 300000``.

Engine times are milliseconds, so a duration literal is a number of milliseconds. ``5min`` is not
Python syntax: :func:`duration_marks` finds each number followed by a unit (directly, or after one
space or tab, as the language's ``within 5min`` is written) and blanks it to ``_`` and spaces of
the same length, so every span stays exact; the reader turns a ``_`` at a recorded place into the
literal (a ``_`` anywhere else is refused as before: names cannot start with ``_``).

A number followed by a name is never Python, so the rewrite cannot change the meaning of text
that was valid; strings are tokens of their own and are never rewritten.

>>> duration_marks("e.time - a.time < 5min")
('e.time - a.time < _   ', {(1, 18): 300000})
>>> duration_marks("x > 1.5 s and y == 'in 5min'")
("x > _     and y == 'in 5min'", {(1, 4): 1500})
"""

from __future__ import annotations

import io
import itertools
import tokenize
from collections.abc import Mapping

__all__ = ["UNITS", "DurationMarks", "duration_marks", "duration_ms", "python_tokens"]

#: milliseconds per duration unit (the ``%%cep`` language's units).
UNITS: Mapping[str, int] = {"ms": 1, "s": 1000, "sec": 1000, "min": 60_000, "h": 3_600_000, "d": 86_400_000}

#: (line, column of the literal's first character, 0-based) -> its milliseconds
DurationMarks = dict[tuple[int, int], int | float]


def duration_ms(number: str, unit: str) -> int | float | None:
    """``number`` ``unit`` in milliseconds (an int when whole), or ``None`` if it is no duration.

    >>> duration_ms("5", "min"), duration_ms("0.25", "s"), duration_ms("5", "m")
    (300000, 250, None)
    """
    if unit not in UNITS:
        return None
    try:
        value = float(number) * UNITS[unit]
    except ValueError:  # why: a hex or other literal float() does not read is no duration
        return None
    return int(value) if value.is_integer() else value


def python_tokens(text: str) -> list[tokenize.TokenInfo] | None:
    """Python's tokens of ``text`` without line breaks inside brackets, or ``None`` when Python
    cannot tokenise it (its parser then reports the problem where it is)."""
    try:
        return [t for t in tokenize.generate_tokens(io.StringIO(text).readline) if t.type != tokenize.NL]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return None


def duration_marks(text: str) -> tuple[str, DurationMarks]:
    """``text`` with each duration literal blanked (see the module), and where each was."""
    # why the test: every unit holds one of these letters
    tokens = python_tokens(text) if any(part in text for part in ("s", "h", "d", "min")) else None
    if tokens is None:
        return text, {}
    lines = text.split("\n")
    marks: DurationMarks = {}
    for number, unit in itertools.pairwise(tokens):
        if number.type != tokenize.NUMBER or unit.type != tokenize.NAME or number.end[0] != unit.start[0]:
            continue
        line, start, end = number.start[0], number.start[1], unit.end[1]
        row = lines[line - 1]
        gap = row[number.end[1] : unit.start[1]]
        ms = duration_ms(number.string, unit.string)
        if ms is None or gap not in ("", " ", "\t"):  # why: as the language's DURATION token
            continue
        lines[line - 1] = row[:start] + "_" + " " * (end - start - 1) + row[end:]
        marks[(line, start)] = ms
    return "\n".join(lines), marks
