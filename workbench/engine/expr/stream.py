"""The key's own stream, for conditions that look beyond the partial match.

``prev(e, n)`` (:class:`~workbench.engine.expr.ir.Offset`) reads the key's ``n``-th previous event,
whatever stage took it (SQL's ``PREV``); ``avg(e.price over last 5min)`` and
``count(e over last 100 events)`` (:class:`~workbench.engine.expr.ir.Window`) read a sliding window
over the key's events of the current event's type, ``count(e over session 10min)`` the current
session of them (a gap of more than 10 minutes starts a new one). Both live in a
:class:`KeyStream`, part of the key's matcher state (released with it); the matcher points
:data:`CURSOR` at the key's stream while its conditions run, so the compiled closures read it
without a frame of their own.

The window clause is not Python syntax: :func:`window_marks` finds ``over last SIZE`` (or
``over session GAP``) at the end of
a call's only argument and blanks it to a trailing comma of the same length (spans stay exact);
the reader then builds the :class:`~workbench.engine.expr.ir.Window` from the recorded mark.

>>> text, marks = window_marks("avg(e.price over last 5min) > 1")
>>> text, marks
('avg(e.price ,             ) > 1', {(1, 12): (300000, 'ms')})
>>> window_marks("count(e over session 10min)")[1]
{(1, 8): (600000, 'session')}
"""

from __future__ import annotations

import threading
import tokenize
from collections import deque
from typing import Literal, Protocol

from workbench.engine.events import Event
from workbench.engine.expr.durations import UNITS, duration_ms, python_tokens

__all__ = [
    "CURSOR",
    "MAX_OFFSET",
    "MAX_WINDOW_EVENTS",
    "WINDOW_FUNCTIONS",
    "KeyStream",
    "Marks",
    "Unit",
    "WindowAggregate",
    "format_size",
    "reading",
    "window_marks",
]

#: aggregates a window clause may use (incremental: O(1) amortised per event).
WINDOW_FUNCTIONS = frozenset({"count", "sum", "avg", "min", "max", "var", "std"})
#: the deepest ``prev(e, n)``: the key keeps this many events at most.
MAX_OFFSET = 10_000
#: the longest count window.
MAX_WINDOW_EVENTS = 1_000_000


Unit = Literal["ms", "events", "session"]
#: a window mark: the (line, column) of the comma that stands for ``over last SIZE``, and the size.
Marks = dict[tuple[int, int], tuple[int | float, Unit]]


class WindowAggregate(Protocol):
    """What a window holds (a :class:`~workbench.engine.aggregates.Rolling` or ``TimeRolling``)."""

    def get(self) -> object:
        """The aggregate's current value."""
        ...


class KeyStream:
    """One key's stream as conditions see it: its last events and its window aggregates.

    Attributes:
        history: the key's last events (at most the deepest ``prev(e, n)``), oldest first.
        windows: per window (its printed text) and event type, the window's aggregate.
    """

    __slots__ = ("history", "windows")

    def __init__(self, depth: int) -> None:
        self.history: deque[Event] = deque(maxlen=depth)
        self.windows: dict[str, dict[str, WindowAggregate]] = {}

    def back(self, n: int) -> Event | None:
        """The ``n``-th event before the current one (``n >= 1``), or ``None`` (NULL)."""
        history = self.history
        return history[-n] if n <= len(history) else None

    def window(self, text: str, event_type: str) -> object:
        """The value of window ``text`` over the key's events of ``event_type`` (NULL: none yet)."""
        agg = self.windows.get(text, {}).get(event_type)
        return None if agg is None else agg.get()

    def holds(self) -> bool:
        """Whether anything is kept (else the key's state may be released)."""
        return bool(self.history) or any(self.windows.values())


class _Cursor(threading.local):
    """The stream of the key whose conditions run now (per thread; ``None``: no key)."""

    stream: KeyStream | None = None

    def __reduce__(self) -> str:
        # why: pickled as a reference to the module's one cursor (generated conditions hold it in
        # their namespace, and Flink ships them pickled); a thread's stream is never data to move
        return "CURSOR"


CURSOR = _Cursor()


class reading:
    """Point :data:`CURSOR` at ``stream`` for the body (restores the previous one after)."""

    __slots__ = ("previous", "stream")

    def __init__(self, stream: KeyStream | None) -> None:
        self.stream = stream
        self.previous: KeyStream | None = None

    def __enter__(self) -> KeyStream | None:
        self.previous, CURSOR.stream = CURSOR.stream, self.stream
        return self.stream

    def __exit__(self, *exc: object) -> None:
        CURSOR.stream = self.previous


def format_size(size: int | float, unit: Unit) -> str:
    """The window size as the language writes it: ``100 events``, ``5min``, ``250ms``.

    >>> format_size(300000, "ms"), format_size(1500, "ms"), format_size(7, "events")
    ('5min', '1500ms', '7 events')
    >>> format_size(600000, "session")
    '10min'
    """
    if unit == "events":
        return f"{size} events"
    for name in ("d", "h", "min", "s"):
        ms = UNITS[name]
        if size >= ms and size % ms == 0:
            return f"{int(size // ms)}{name}"
    return f"{size!r}ms"


def window_marks(text: str) -> tuple[str, Marks]:
    """``text`` with each ``over last SIZE)`` / ``over session GAP)`` blanked to ``,`` and spaces,
    and where each was.

    Only the exact shape ``NAME over`` ``last`` (``session``) ``NUMBER UNIT`` before a ``)`` on one
    line is rewritten; text Python cannot tokenise is returned as it is (its parser reports it).
    """
    tokens = python_tokens(text) if "over" in text else None
    if tokens is None:
        return text, {}
    lines = text.split("\n")
    marks: Marks = {}
    for i in range(len(tokens) - 4):
        over, last, number = tokens[i], tokens[i + 1], tokens[i + 2]
        if not (over.string == "over" and last.string in _KINDS and number.type == tokenize.NUMBER):
            continue
        unit, close = tokens[i + 3], tokens[i + 4]
        found = _size(number.string, unit.string)
        if found is not None and last.string == "session":
            found = (found[0], "session") if found[1] == "ms" else None  # a session's gap is a duration
        if found is None or close.string != ")" or over.start[0] != unit.end[0]:
            continue
        line, start, end = over.start[0], over.start[1], unit.end[1]
        row = lines[line - 1]
        lines[line - 1] = row[:start] + "," + " " * (end - start - 1) + row[end:]
        marks[(line, start)] = found
    return "\n".join(lines), marks


#: the words after ``over``: a sliding window, a session window.
_KINDS = frozenset({"last", "session"})


def _size(number: str, unit: str) -> tuple[int | float, Unit] | None:
    try:
        value = float(number)
    except ValueError:
        return None
    if unit == "events":
        return (int(value), "events") if value.is_integer() and "." not in number else None
    ms = duration_ms(number, unit)
    return None if ms is None else (ms, "ms")
