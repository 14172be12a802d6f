"""The values expressions compute with: NULL cleaning, field reads, operators with their limits.

Everything here works on plain values (``None`` is NULL); :mod:`workbench.engine.expr.evaluate`
composes these into the closures of a compiled expression.

A value is typed ``object``: NULL (``None``), a bool, int, float or str, a list or tuple of values,
a mapping, an :class:`~workbench.engine.events.Event`, or whatever an event's field holds or a
registered function returns. Every operation here tests the type it needs (``isinstance``) or
hands the values to Python's own operator (:mod:`operator`), which raises ``TypeError`` for a
value it cannot use.
"""

from __future__ import annotations

import numbers
import operator
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any, NoReturn, Protocol

from workbench.engine.events import Event
from workbench.engine.expr.ir import Target
from workbench.engine.expr.limits import MAX_EXPONENT_BITS, MAX_SIZE

__all__ = [
    "ARITH",
    "COMPARE",
    "EMPTY_FRAME",
    "EVENT_ATTRIBUTES",
    "PLAIN",
    "Frame",
    "Locals",
    "MappingFrame",
    "Run",
    "bind",
    "call_method",
    "clean",
    "contains",
    "field_of",
    "index_of",
    "is_null",
    "items_of",
    "plain",
    "truth",
]

#: the names a comprehension or ``let`` bound (``None`` outside of one).
Locals = dict[str, object] | None

#: a compiled node: ``run(e, frame, local)`` is its value for the event ``e`` (or NULL/any value).
Run = Callable[[object, "Frame", Locals], object]

#: attributes of an event itself; ``e.NAME`` for any other name reads the field ``NAME``.
EVENT_ATTRIBUTES = frozenset({"type", "time", "t", "key", "seq", "fields"})


class Frame(Protocol):
    """What an expression reads besides the event: stages' events and named values."""

    def matched(self, stage: str) -> Sequence[object]:
        """The events ``stage`` has taken so far (never the event being tested)."""
        ...

    def lookup(self, name: str) -> object:
        """The value of a variable or aggregate; ``KeyError`` when there is none."""
        ...


class MappingFrame:
    """A :class:`Frame` over a mapping of names (``matched`` may be a mapping or a callable)."""

    __slots__ = ("values",)

    def __init__(self, values: Mapping[str, object]) -> None:
        self.values = values

    def matched(self, stage: str) -> Sequence[object]:
        source = self.values.get("matched")
        if source is None:
            return []
        if callable(source):
            return list(_iterable(source(stage)))
        if isinstance(source, Mapping):
            return list(_iterable(source.get(stage, ())))
        msg = f"'matched' is a mapping of stage names or a callable, not a {type(source).__name__}"
        raise TypeError(msg)

    def lookup(self, name: str) -> object:
        return self.values[name]


EMPTY_FRAME = MappingFrame({})

PLAIN = frozenset({int, str, bool})
_NULL_TYPES = frozenset({"NAType", "NaTType"})


def _iterable(value: object) -> Iterable[object]:
    if not isinstance(value, Iterable):
        msg = f"{type(value).__name__!r} object is not iterable"
        raise TypeError(msg)
    return value


def clean(value: object) -> object:
    """A value as expressions see it: ``None``, NaN and pandas' NA/NaT are NULL (``None``), and a
    numpy number is the Python number it equals (numpy's fixed-width integers wrap around silently:
    ``np.int64(2**62) * 2`` is negative, so sums, averages and comparisons would go wrong).

    >>> clean(float("nan")) is None, clean(3)
    (True, 3)
    """
    t = value.__class__
    if t is float:
        return None if value != value else value
    if value is None or t in PLAIN:
        return value
    if t.__name__ in _NULL_TYPES:
        return None
    if t.__module__ == "numpy":
        return plain(value)
    try:
        if value != value:
            return None
    except Exception:
        pass
    return value


def plain(value: object) -> object:
    """A numpy scalar's Python number (exactly: a float32 widens, an int64 stays the integer it is;
    NaN is NULL), and a numpy array the list of its elements (so ``==``, ``in`` and truth are a
    list's: an array's ``==`` is elementwise, and its truth an error). Other numpy values
    (datetime64) stay as they are."""
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        return None if number != number else number
    name = value.__class__.__name__
    if name in ("bool", "bool_"):
        return bool(value)  # numpy's bool, not a Number
    if name == "ndarray":
        return _cleaned(value.tolist())  # type: ignore[attr-defined]  # an ndarray
    return value


def _cleaned(items: object) -> object:
    """An array's ``tolist()`` with each element as expressions see it (NaN as NULL), at any depth."""
    return [_cleaned(x) for x in items] if isinstance(items, list) else clean(items)


def is_null(value: object) -> bool:
    """Whether ``value`` is NULL: ``None``, a NaN, or pandas' NA/NaT (what an empty cell holds).

    >>> is_null(float("nan")), is_null(None), is_null(0), is_null("")
    (True, True, False, False)
    """
    return clean(value) is None


def field_of(obj: object, name: str) -> object:
    """``obj.name``: an event's attribute or field, a mapping's entry, or each list element's."""
    if obj is None:
        return None
    if isinstance(obj, Event):
        if name in EVENT_ATTRIBUTES:
            if name == "fields":
                return MappingProxyType(dict(obj.fields))
            return obj.time if name == "t" else getattr(obj, name)
        return clean(obj.fields.get(name))
    if isinstance(obj, list | tuple):
        return [field_of(x, name) for x in obj]
    if isinstance(obj, Mapping):
        return clean(obj.get(name))
    msg = f"a {type(obj).__name__} has no field {name!r}"
    raise TypeError(msg)


def _sized(value: object) -> object:
    if isinstance(value, str | list | tuple) and len(value) > MAX_SIZE:
        msg = f"a value of {len(value)} elements or characters; the limit is {MAX_SIZE}"
        raise ValueError(msg)
    return value


def _mul(a: object, b: object) -> object:
    for seq, n in ((a, b), (b, a)):
        if isinstance(seq, str | list | tuple) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_SIZE:
            msg = f"repeating {len(seq)} elements {n} times passes the limit of {MAX_SIZE}"
            raise ValueError(msg)
    return operator.mul(a, b)


def _pow(a: object, b: object) -> object:
    if isinstance(a, int) and isinstance(b, int) and b > 0 and abs(a) > 1:
        bits = a.bit_length() * b
        if bits > MAX_EXPONENT_BITS:
            msg = f"{a} ** {b} has about {bits} bits; the limit is {MAX_EXPONENT_BITS}"
            raise ValueError(msg)
    out = operator.pow(a, b)
    if isinstance(out, complex):
        msg = f"{a} ** {b} is not a real number"
        raise ValueError(msg)
    return out


_FORMAT_SPEC = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d+))?")


def _mod(a: object, b: object) -> object:
    if isinstance(a, str):
        for m in _FORMAT_SPEC.finditer(a):
            for part in m.groups():
                if part == "*" or (part is not None and int(part) > 1000):
                    msg = "a % format width or precision above 1000 (or '*') is not allowed"
                    raise ValueError(msg)
        return _sized(a % b)
    return operator.mod(a, b)


#: Python's own operators: which values they accept is decided when they run (TypeError otherwise).
BinaryOperator = Callable[[Any, Any], object]

ARITH: dict[str, BinaryOperator] = {
    "+": lambda a, b: _sized(operator.add(a, b)),
    "-": operator.sub,
    "*": lambda a, b: _sized(_mul(a, b)),
    "/": operator.truediv,
    "//": operator.floordiv,
    "%": _mod,
    "**": _pow,
}


def contains(item: object, container: Any) -> bool:  # Python's ``in``: any container, checked when it runs
    if isinstance(container, Event):
        return item in container.fields
    return item in container


COMPARE: dict[str, BinaryOperator] = {
    "==": operator.eq,
    "!=": operator.ne,
    "<": operator.lt,
    "<=": operator.le,
    ">": operator.gt,
    ">=": operator.ge,
    "in": contains,
    "not in": lambda a, b: not contains(a, b),
}


def index_of(obj: object, idx: object) -> object:
    if obj is None or idx is None:
        return None
    if isinstance(obj, Event):
        return (
            field_of(obj, idx) if isinstance(idx, str) else _type_error("an event is indexed by a field name")
        )
    if isinstance(obj, Mapping):
        return clean(obj.get(idx))
    if isinstance(obj, list | tuple | str):
        if isinstance(idx, bool) or not isinstance(idx, int):
            return _type_error(f"a list is indexed by an integer, not a {type(idx).__name__}")
        # Why NULL and not an error: a stage with no events yet has no first or last element.
        return obj[idx] if -len(obj) <= idx < len(obj) else None
    return _type_error(f"a {type(obj).__name__} cannot be indexed")


def _type_error(message: str) -> NoReturn:
    raise TypeError(message)


def call_method(obj: object, name: str, args: list[object]) -> object:
    if obj is None:
        return None
    if name == "get" and isinstance(obj, Event | Mapping):
        if not args or len(args) > 2:
            return _type_error("get() takes a field name and an optional default")
        key = args[0]
        if isinstance(obj, Event):  # a name that is not text names no field
            value = field_of(obj, key) if isinstance(key, str) else None
        else:
            value = clean(obj.get(key))
        return value if value is not None or len(args) == 1 else args[1]
    if not isinstance(obj, str):
        return _type_error(f"{name}() is a string method; the value is a {type(obj).__name__}")
    if (
        name == "replace"
        and len(args) >= 2
        and isinstance(args[1], str)
        and len(obj) * (len(args[1]) + 1) > MAX_SIZE
    ):
        msg = f"replace() could pass the limit of {MAX_SIZE} characters"
        raise ValueError(msg)
    if any(a is None for a in args):
        return None
    # Why the type's function and not getattr(obj, name): the value's own attributes are never read.
    return getattr(str, name)(obj, *args)


def items_of(value: object) -> Iterable[object]:
    if isinstance(value, list | tuple | str):
        return value
    if isinstance(value, Mapping):
        return list(value)
    if isinstance(value, set | frozenset):
        return list(value)
    msg = f"cannot iterate over a {type(value).__name__}"
    raise TypeError(msg)


def bind(target: Target, value: object, local: dict[str, object]) -> None:
    if isinstance(target, str):
        local[target] = value
        return
    items = list(items_of(value))
    if len(items) != len(target):
        msg = f"cannot unpack {len(items)} values into {len(target)} names"
        raise ValueError(msg)
    for t, v in zip(target, items, strict=True):
        bind(t, v, local)


def truth(value: object) -> bool:
    return value is not None and bool(value)
