"""Immutable events and their validation.

An :class:`Event` has a ``type``, a ``time`` (event time, in milliseconds), a partition ``key``
(Prova's conversation id, Flink's ``keyBy``) and a mapping of ``fields``. The engine stamps each
accepted event with ``seq``, its 0-based arrival position, which identifies it in detections, the
shared buffer and the trace.
"""

from __future__ import annotations

import datetime
import math
import numbers
from collections.abc import Hashable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from workbench.errors import EventError

__all__ = ["Event", "EventLike", "error_text", "make_event", "time_problem"]

_RESERVED = frozenset({"type", "time", "t", "key", "seq"})


@dataclass(frozen=True, slots=True)
class Event:
    """One immutable event.

    Fields are read with ``event["price"]`` or ``event.get("price")``; ``event.fields`` is the whole
    mapping. ``seq`` is ``-1`` until the engine accepts the event. (No ``event.price``: a class with
    ``__getattr__`` makes every attribute read of every event several times slower, the engine's
    own reads of ``type``, ``time`` and ``key`` included.)

    >>> e = Event("trade", 5, "k1", {"price": 101.5})
    >>> e["price"], e.key, e.time
    (101.5, 'k1', 5)
    """

    type: str
    time: int | float
    key: Hashable = None
    fields: Mapping[str, object] = field(default_factory=dict)
    seq: int = -1

    def __getitem__(self, name: str) -> Any:
        try:
            return self.fields[name]
        except KeyError:
            msg = f"event #{self.seq} ({self.type!r}) has no field {name!r}; fields: {sorted(self.fields)}"
            raise KeyError(msg) from None

    @property
    def t(self) -> int | float:
        """Alias of ``time``."""
        return self.time

    def get(self, name: str, default: object = None) -> Any:
        """The field's value, or ``default`` when the event has no such field."""
        return self.fields.get(name, default)

    def __contains__(self, name: object) -> bool:
        return name in self.fields

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def with_seq(self, seq: int) -> Event:
        """A copy stamped with arrival position ``seq``."""
        return Event(self.type, self.time, self.key, self.fields, seq)

    def with_time(self, time: int | float) -> Event:
        """A copy with another time (processing-time mode stamps arrival time this way)."""
        return Event(self.type, time, self.key, self.fields, self.seq)

    def describe(self) -> str:
        """A short human-readable form: ``login#3@120[user=u1, ip=1.2.3.4]``."""
        inner = ", ".join(f"{k}={v}" for k, v in self.fields.items())
        return f"{self.type}#{self.seq}@{self.time}[{inner}]"


EventLike = Event | Mapping[str, object]
"""What hosts accept as an event: an :class:`Event`, or a mapping that :func:`make_event` validates."""


def time_problem(value: object) -> tuple[int | float, str | None]:
    """A time in milliseconds as an ``int`` or ``float`` (another integer or real number type,
    numpy's from a DataFrame row, becomes the built-in one, exactly), and what is wrong with it:
    ``None``, or why a bool, text, NaN or infinity is no time (event times and clock readings alike).

    >>> time_problem(5), time_problem(float("nan"))[1]
    ((5, None), 'time must be finite, got nan')
    """
    if not isinstance(value, int | float) and not isinstance(value, bool):
        if isinstance(value, numbers.Integral):  # why: np.int64(5) is the time 5
            value = int(value)
        elif isinstance(value, numbers.Real):  # why: np.float32 widens exactly
            value = float(value)
    if isinstance(value, bool) or not isinstance(value, int | float):
        problem = f"time must be a number of milliseconds, got {type(value).__name__} {value!r}"
        if isinstance(value, str) and _is_date_text(value):
            problem += " (a date as text: read it as a date first, e.g. pd.to_datetime, or --time-unit date)"
        return 0, problem
    if isinstance(value, float) and not math.isfinite(value):
        return value, f"time must be finite, got {value!r}"
    return value, None


def _is_date_text(text: str) -> bool:
    """Whether ``text`` is an ISO 8601 date or date and time."""
    try:
        datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        return False
    return True


def _check_time(value: object, position: int | None, name: str = "time") -> int | float:
    """The time as an ``int`` or ``float`` (see :func:`time_problem`); an :class:`EventError` else."""
    time, problem = time_problem(value)
    if problem is not None:
        raise EventError(problem, position=position, field=name)
    return time


def inline_fields(raw: Mapping[str, object], *, keep_key: bool = False) -> dict[str, object]:
    """The fields of an event mapping that has no ``fields`` mapping: every item but ``type``,
    ``fields``, ``key`` (unless ``keep_key``: a field under ``partition by``) and the time
    (``time``, else ``t``). A ``seq`` or the other of ``time``/``t`` is data (``e.fields['seq']``;
    ``e.seq`` is the arrival position the engine stamps).

    >>> inline_fields({"type": "a", "time": 1, "t": 5, "seq": 7, "key": "k", "x": 2})
    {'t': 5, 'seq': 7, 'x': 2}
    """
    skip = {"type", "fields", "time" if "time" in raw else "t"}
    if not keep_key:
        skip.add("key")
    return {k: v for k, v in raw.items() if k not in skip}


def make_event(raw: object, position: int | None = None) -> Event:
    """Validate ``raw`` and build an :class:`Event`.

    ``raw`` is an :class:`Event` or a mapping with ``type``, ``time`` (or ``t``), optional ``key`` and
    either a ``fields`` mapping or the fields inline. Raises :class:`EventError` naming the position
    and the field for a missing type, a missing or non-numeric time, or an unhashable key; a NaN key
    is the key ``None``. The event is not numbered (``seq`` stays ``-1``;
    :func:`~workbench.engine.clock.stamp` numbers events); an :class:`Event` is returned unchanged
    unless its key is NaN.

    >>> make_event({"type": "a", "t": 3, "key": "k", "price": 2}).fields
    {'price': 2}
    """
    if isinstance(raw, Event):
        return check_built(raw, position)
    typ: object
    if isinstance(raw, Mapping):
        if "type" not in raw or raw["type"] is None:
            msg = "missing event type"
            raise EventError(msg, position=position, field="type")
        typ = raw["type"]
        if "time" in raw:
            time = raw["time"]
        elif "t" in raw:
            time = raw["t"]
        else:
            msg = "missing event time ('time' or 't')"
            raise EventError(msg, position=position, field="time")
        key = raw.get("key")
        if "fields" in raw:
            fields = raw["fields"]
            if not isinstance(fields, Mapping):
                msg = f"'fields' must be a mapping, got {type(fields).__name__}"
                raise EventError(msg, position=position, field="fields")
            inline = [k for k in raw if k not in _RESERVED and k != "fields"]
            if inline:  # why: they would be lost (the 'fields' mapping holds the fields)
                beside = ", ".join(map(repr, inline))
                msg = (
                    f"the event has a 'fields' mapping and fields beside it ({beside}); put them in one place"
                )
                raise EventError(msg, position=position, field=str(inline[0]))
        else:
            fields = inline_fields(raw)
    else:
        msg = f"an event must be a mapping or an Event, got {type(raw).__name__}"
        raise EventError(msg, position=position)
    if not isinstance(typ, str):  # any string is a type, the empty one too (Flink's test events)
        msg = f"event type must be a string, got {typ!r}"
        raise EventError(msg, position=position, field="type")
    if type(typ) is not str:  # why: a str subclass (numpy's str_ from an object column) is its text
        typ = str.__str__(typ)
    time = _check_time(time, position)
    return Event(typ, time, _check_key(key, position), dict(fields))


def _check_key(key: object, position: int | None) -> Hashable:
    """The event's key: hashable; a NaN (a missing value, as pandas writes one) is the key ``None``,
    as in a DataFrame replay (distinct NaN objects would otherwise be distinct keys)."""
    if isinstance(key, float) and key != key:
        return None
    try:
        hash(key)
    except TypeError:
        msg = f"key must be hashable, got {type(key).__name__} {key!r}"
        raise EventError(msg, position=position, field="key") from None
    return key


def check_built(event: Event, position: int | None) -> Event:
    """Validate an already-built :class:`Event` (:func:`~workbench.engine.clock.stamp` accepts the
    common case before calling this)."""
    time = event.time
    if (type(time) is not int and type(time) is not float) or (type(time) is float and time - time != 0):
        # why: a NaN or infinite time is as wrong as a text one; a numpy number becomes a built-in one
        checked = _check_time(time, position, "time")
        if checked is not time:
            event = Event(event.type, checked, event.key, event.fields, event.seq)
            time = checked
    kind: object = event.type  # why object: a built Event's type went unchecked so far
    if type(kind) is not str:
        if not isinstance(kind, str):
            msg = f"event type must be a string, got {event.type!r}"
            raise EventError(msg, position=position, field="type")
        # why: a str subclass (numpy's str_ from an object column) is its text
        event = Event(str.__str__(kind), event.time, event.key, event.fields, event.seq)
    fields: object = event.fields  # why object: a built Event's fields went unchecked so far
    if not isinstance(fields, Mapping):
        msg = f"event fields must be a mapping of names to values, got {type(fields).__name__}"
        raise EventError(msg, position=position, field="fields")
    key = event.key
    if (
        type(key) is not str
        and type(key) is not int
        and key is not None
        and _check_key(key, position) is None
    ):
        return Event(event.type, time, None, event.fields, event.seq)  # why: a NaN key is the key None
    return event


def error_text(error: BaseException) -> str:
    """The message of an error a user's Python function raised; one that read a field as an
    attribute (``e.price``) is told how to read it.

    >>> e = Event("trade", 1, fields={"price": 2.5})
    >>> try:
    ...     e.price
    ... except AttributeError as err:
    ...     error_text(err)
    "'Event' object has no attribute 'price' (a field: read it with e['price'] or e.get('price'))"
    """
    text = str(error)
    if isinstance(error, AttributeError) and isinstance(error.obj, Event):
        name = error.name
        if isinstance(name, str) and name in error.obj.fields:
            return f"{text} (a field: read it with e[{name!r}] or e.get({name!r}))"
    return text
