"""Near misses between patterns and their input: event types (``lgin`` events for a ``login``
pattern) and fields (``e.pric`` when the input has ``price``).

A replay where a pattern listens to an event type that the input spells slightly differently does
not fail: it just never matches. :func:`type_mismatches` finds those near misses so that ``%cep run``
and ``workbench run`` can say so. Types that are simply unrelated are not reported (most inputs
carry events no pattern cares about), but a type a pattern waits for and no event has is.

>>> from workbench.engine.nfa import SequencePattern, Stage
>>> p = SequencePattern("s", (Stage("a", types=("login",)),))
>>> type_mismatches([p], ["lgin", "logout"])
["the patterns listen to event type 'login', which the input does not have (did you mean 'lgin'?)"]
>>> type_mismatches([p], ["trade"])
["the patterns listen to event type 'login', which the input does not have"]
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping, Sequence

from workbench.engine.expr import ir
from workbench.engine.matcher import Pattern
from workbench.engine.shape import elements, event_types, fields_read

__all__ = [
    "attribute_columns",
    "date_text_comparisons",
    "field_mismatches",
    "input_mismatches",
    "pattern_fields",
    "pattern_types",
    "type_mismatches",
]


def pattern_types(pattern: object) -> set[str] | None:
    """The event types ``pattern`` listens to; ``None`` when some part of it takes any type."""
    types = event_types(pattern)
    return None if types is None else set(types)


def type_mismatches(patterns: Sequence[object], input_types: Iterable[str]) -> list[str]:
    """One sentence per event type the patterns listen to that no input event has.

    With a near spelling in the input, the sentence asks whether that was meant.
    """
    seen = {str(t) for t in input_types}
    wanted: set[str] = set()
    for p in patterns:
        wanted |= pattern_types(p) or set()
    out = []
    for t in sorted(wanted - seen):
        close = difflib.get_close_matches(t, sorted(seen - wanted), n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        out.append(f"the patterns listen to event type {t!r}, which the input does not have{hint}")
    return out


def pattern_fields(pattern: object) -> dict[str, set[str]]:
    """Stage or channel name -> the event fields its conditions (and channel matches) read."""
    return {name: set(fields) for name, fields in fields_read(pattern).items()}


_BUILT_IN_FIELDS = frozenset({"type", "time", "key", "seq", "fields", "t"})


def field_mismatches(
    patterns: Sequence[Pattern], columns: Iterable[str], attributes: Mapping[str, str] | None = None
) -> list[str]:
    """One sentence per field a pattern reads that no input column holds (with the nearest column).

    ``attributes`` names the input's columns that became an event attribute (``{"event": "type"}``
    for ``--type event``): a pattern reading such a column as a field is told to read the attribute.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> p = SequencePattern("s", (Stage("a", where="e.pric > 1"),))
    >>> field_mismatches([p], ["type", "time", "price"])
    ["'a' of pattern 's' reads field 'pric', which no input event has (did you mean 'price'?)"]
    """
    have = {str(c) for c in columns}
    out: list[str] = []
    if not have:  # no input, or events without fields: nothing to compare with
        return out
    moved = dict(attributes or {})
    for p in patterns:
        for element, fields in pattern_fields(p).items():
            for f in sorted(fields - have - _BUILT_IN_FIELDS):
                close = difflib.get_close_matches(f, sorted(have), n=1, cutoff=0.6)
                hint = f" (did you mean {close[0]!r}?)" if close else f"; columns: {', '.join(sorted(have))}"
                if f in moved:  # why: the column is there, as the events' attribute, not a field
                    hint = f" (column {f!r} is the events' {moved[f]}: read it as e.{moved[f]})"
                out.append(
                    f"{element!r} of pattern {p.name!r} reads field {f!r}, which no input event has{hint}"
                )
    return out


_ORDERING = frozenset({"==", "!=", "<", "<=", ">", ">="})


def date_text_comparisons(patterns: Sequence[object], dated: Iterable[str]) -> list[str]:
    """One sentence per comparison of a datetime field (one of ``dated``: epoch milliseconds in
    conditions) with text, such as ``e.created_at > '2024-05-01'``: a runtime error on every event
    it meets (``==`` is never true); ``timestamp('2024-05-01')`` is the text as such a time.

    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> p = SequencePattern("s", (Stage("a", where="e.created_at > '2024-05-01'"),))
    >>> date_text_comparisons([p], ["created_at"])[0][:60]
    "'a' of pattern 's' compares the datetime field 'created_at' "
    """
    fields = set(dated)
    out: list[str] = []
    for p in patterns:
        for element in elements(p):
            for tree in element.conditions:
                for node in ir.walk(tree):
                    text = _date_against_text(node, fields)
                    if text is not None:
                        field, literal = text
                        out.append(
                            f"{element.name!r} of pattern {getattr(p, 'name', '?')!r} compares the datetime "
                            f"field {field!r} with the text {literal!r}; datetime fields are epoch "
                            f"milliseconds in conditions, so write timestamp({literal!r}) (UTC unless "
                            "the text gives an offset)"
                        )
    return out


def _date_against_text(node: ir.Node, fields: set[str]) -> tuple[str, str] | None:
    """``(field, text)`` when ``node`` compares a datetime field with a text literal."""
    if not isinstance(node, ir.Compare) or node.op not in _ORDERING:
        return None
    for one, other in ((node.left, node.right), (node.right, node.left)):
        if (
            isinstance(one, ir.Attr)
            and one.name in fields
            and isinstance(other, ir.Literal)
            and isinstance(other.value, str)
        ):
            return one.name, other.value
    return None


def text_number_comparisons(patterns: Sequence[object], frame: object) -> list[str]:
    """One sentence per field compared with a number (``e.qty == 5``, ``e.qty in [7, 8]``) whose
    input column is text: the comparison is never true (``'5' == 5``) or an error on every event,
    silently. A CSV column becomes text when one cell is not a number (``?``, ``n/a!``): the first
    such row is named.

    >>> import pandas as pd
    >>> from workbench.engine.nfa import SequencePattern, Stage
    >>> p = SequencePattern("s", (Stage("a", where="e.qty == 5"),))
    >>> text_number_comparisons([p], pd.DataFrame({"qty": ["5", "?"]}))[0][-61:]
    "input column 'qty' is text (event #1 holds '?', not a number)"
    """
    import pandas as pd

    if not isinstance(frame, pd.DataFrame):
        return []
    out: list[str] = []
    said: set[str] = set()
    for p in patterns:
        for element in elements(p):
            for tree in element.conditions:
                for node in ir.walk(tree):
                    field = _number_compared(node)
                    if field is None or field in said or field not in frame.columns:
                        continue
                    column = frame[field]
                    if column.dtype.kind in "biufcmM":  # why: numbers, bools and times compare as such
                        continue
                    text = [(i, v) for i, v in enumerate(column) if isinstance(v, str)]
                    if not text:
                        continue
                    said.add(field)
                    bad = next(((i, v) for i, v in text if not _is_number(v)), None)
                    why = f"event #{bad[0]} holds {bad[1]!r}, not a number" if bad else "numbers as text"
                    out.append(
                        f"{element.name!r} of pattern {getattr(p, 'name', '?')!r} compares the field "
                        f"{field!r} with a number, but the input column {field!r} is text ({why})"
                    )
    return out


def _number_compared(node: ir.Node) -> str | None:
    """The field of ``e`` that ``node`` compares with a number literal (or a list of them)."""
    if not isinstance(node, ir.Compare):
        return None
    for one, other in ((node.left, node.right), (node.right, node.left)):
        numbers = other.items if isinstance(other, ir.ListOf) else (other,)
        if (
            isinstance(one, ir.Attr)
            and one.obj == ir.Name("e")
            and numbers
            and all(
                isinstance(n, ir.Literal)
                and isinstance(n.value, int | float)
                and not isinstance(n.value, bool)
                for n in numbers
            )
        ):
            return one.name
    return None


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def attribute_columns(type_column: str | None, time_column: str | None) -> dict[str, str]:
    """The input columns given as the events' ``type`` and ``time`` (``--type``, ``--time``), which
    are then no fields: for :func:`field_mismatches`.

    >>> attribute_columns("event", None)
    {'event': 'type'}
    """
    given = ((type_column, "type"), (time_column, "time"))
    return {column: attr for column, attr in given if column is not None and column != attr}


def input_mismatches(
    patterns: Sequence[Pattern],
    types: Iterable[str],
    fields: Iterable[str],
    dated: Iterable[str],
    type_column: str | None = None,
    time_column: str | None = None,
    frame: object = None,
) -> list[str]:
    """What every front end says after a replay about the patterns against their input: event
    types and fields they read that it lacks (:func:`type_mismatches`, :func:`field_mismatches`,
    ``--type``/``--time`` columns read as fields included), datetime fields compared with text
    (:func:`date_text_comparisons`; ``dated`` as :meth:`TimeFormat.dated` gives them) and, for a
    DataFrame input (``frame``), text columns compared with numbers (:func:`text_number_comparisons`)."""
    return [
        *type_mismatches(patterns, types),
        *field_mismatches(patterns, fields, attribute_columns(type_column, time_column)),
        *date_text_comparisons(patterns, dated),
        *text_number_comparisons(patterns, frame),
    ]
