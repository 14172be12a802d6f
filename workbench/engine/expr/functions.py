"""The functions an expression may call by name: the built-ins (NULL-aware) and registered ones.

Built-ins follow SQL's NULL rules: a scalar function of NULL is NULL; an aggregate over a list
(``count sum avg min max var std any all``) skips NULLs, and over no values ``count`` and ``sum``
are 0 while the others are NULL. ``first`` and ``last`` are navigation: the first and last element
as they are (NULL too), and NULL for an empty list. :func:`register_function` is the one deliberate
door to user Python: the function runs as given, by name, and nothing else can be called.

>>> BUILTINS["sum"]([1, None, 2]), BUILTINS["avg"]([]), BUILTINS["count"]([None, 3])
(3, None, 1)
"""

from __future__ import annotations

import datetime
import difflib
import keyword
import math
from collections.abc import Callable, Iterable, Sized
from typing import Any

from workbench.engine.expr.limits import MAX_SIZE
from workbench.errors import ExpressionError

__all__ = [
    "BUILTINS",
    "BUILTIN_NAMES",
    "DATA_FUNCTIONS",
    "RESERVED_NAMES",
    "register_function",
    "registered_functions",
    "unregister_function",
]


def _values(arg: object) -> list[Any]:
    """The non-NULL values of a list argument (any other value, an event too, is a list of one).

    The items are dynamic: Python's ``sum``, ``min``, ``sorted`` and arithmetic take whatever the
    list holds, and raise ``TypeError`` for values they cannot add or order.
    """
    if isinstance(arg, list | tuple | set | frozenset):
        return [v for v in arg if v is not None]
    return [] if arg is None else [arg]


def _bounded_list(items: object) -> list[object]:
    if not isinstance(items, Iterable):
        msg = f"{type(items).__name__!r} object is not iterable"
        raise TypeError(msg)
    if isinstance(items, Sized) and len(items) > MAX_SIZE:
        msg = f"a list of {len(items)} elements; the limit is {MAX_SIZE}"
        raise ValueError(msg)
    out: list[object] = []
    for v in items:
        out.append(v)
        if len(out) > MAX_SIZE:
            msg = f"a list longer than the limit of {MAX_SIZE} elements"
            raise ValueError(msg)
    return out


def _scalar(fn: Callable[..., object]) -> Callable[..., object]:
    def run(*args: object) -> object:
        return None if any(a is None for a in args) else fn(*args)

    run.__name__ = getattr(fn, "__name__", "fn")
    run.__wrapped__ = fn  # type: ignore[attr-defined]  # why: its signature is fn's (arity checks)
    return run


_sqrt = _scalar(math.sqrt)
_rounded = _scalar(round)


def _sum(arg: object) -> object:
    return sum(_values(arg))


def _count(arg: object) -> int:
    return len(_values(arg))


def _avg(arg: object) -> object:
    vals = _values(arg)
    return sum(vals) / len(vals) if vals else None


def _extreme(pick: Callable[..., object]) -> Callable[..., object]:
    def run(*args: object) -> object:
        vals = _values(args[0]) if len(args) == 1 else [a for a in args if a is not None]
        return pick(vals) if vals else None

    return run


def _nth(arg: object, n: object, from_end: bool) -> object:
    """The ``n``-th element (1: the first or last one); NULL when there are fewer."""
    # Why no NULL skipping: first/last are navigation (the first event's value, NULL or not)
    if n is None:
        return None
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        msg = f"the position n of first(a, n) / last(a, n) is a whole number from 1, got {n!r}"
        raise ValueError(msg)
    vals = arg if isinstance(arg, list | tuple) else _values(arg)
    if n > len(vals):
        return None
    return vals[-n] if from_end else vals[n - 1]


def _first(arg: object, n: object = 1) -> object:
    return _nth(arg, n, from_end=False)


def _last(arg: object, n: object = 1) -> object:
    return _nth(arg, n, from_end=True)


def _var(arg: object) -> object:
    vals = _values(arg)
    if len(vals) < 2:
        return None
    mean = sum(vals) / len(vals)
    return sum((v - mean) ** 2 for v in vals) / (len(vals) - 1)


def _std(arg: object) -> object:
    return _sqrt(_var(arg))


def _len(arg: object) -> object:
    if arg is None:
        return None
    if not isinstance(arg, Sized):
        msg = f"object of type {type(arg).__name__!r} has no len()"
        raise TypeError(msg)
    return len(arg)


def _any(arg: object) -> bool:
    return any(bool(v) for v in _values(arg))


def _all(arg: object) -> bool:
    return all(bool(v) for v in _values(arg))


def _coalesce(*args: object) -> object:
    return next((a for a in args if a is not None), None)


def _isnan(x: object) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x))


def _sorted(arg: object) -> list[object]:
    return sorted(_values(arg))


def _list(arg: object) -> object:
    return None if arg is None else _bounded_list(arg)


def _range(*args: object) -> list[int]:
    ints = [a for a in args if isinstance(a, int) and not isinstance(a, bool)]
    if not args or len(args) > 3 or len(ints) != len(args):
        msg = "range() takes one to three integers"
        raise TypeError(msg)
    r = range(*ints)
    if len(r) > MAX_SIZE:
        msg = f"range() of {len(r)} elements; the limit is {MAX_SIZE}"
        raise ValueError(msg)
    return list(r)


def _enumerate(arg: object) -> list[tuple[int, object]]:
    return list(enumerate(_bounded_list(arg)))


def _zip(*args: object) -> list[tuple[object, ...]]:
    return list(zip(*(_bounded_list(a) for a in args), strict=False))


def _round(x: object, *rest: object) -> object:
    args = (x, *rest)
    if len(args) > 2:
        msg = "round() takes a number and an optional number of digits"
        raise TypeError(msg)
    if len(args) == 2:
        x, digits = args
        # why: Python rounds an int to -n digits by computing 10**n, which takes minutes for a huge
        # n; an int with fewer digits than n rounds to 0 anyway (bit_length * log10(2) bounds them)
        if (
            isinstance(x, int)
            and digits.__class__ is int
            and digits < 0
            and x.bit_length() * 0.30103 + 2 < -digits
        ):
            return 0
    return _rounded(*args)


def _str(x: object) -> object:
    if x is None:
        return None
    if isinstance(x, bool | int | float | str):
        return str(x)
    msg = f"str() of a {type(x).__name__} is not supported"
    raise TypeError(msg)


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def _timestamp(text: object) -> object:
    """ISO 8601 text as epoch milliseconds, the engine's time: ``timestamp('2024-05-01 10:00')``
    (a time without an offset is UTC; ``+02:00`` or ``Z`` say otherwise).

    >>> _timestamp("1970-01-01T00:00:01.5Z"), _timestamp("2024-05-01 12:00+02:00"), _timestamp(None)
    (1500, 1714557600000, None)
    """
    if text is None:
        return None
    if not isinstance(text, str):
        msg = f"timestamp() takes ISO 8601 text such as '2024-05-01 10:00', got {type(text).__name__}"
        raise TypeError(msg)
    try:
        moment = datetime.datetime.fromisoformat(text.strip())
    except ValueError:
        msg = f"timestamp() cannot read {text[:40]!r} as an ISO 8601 date and time such as '2024-05-01 10:00'"
        raise ValueError(msg) from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return (moment - _EPOCH) // datetime.timedelta(milliseconds=1)


BUILTINS: dict[str, Callable[..., object]] = {
    # aggregates over a list (a stage's events or values): NULLs skipped
    "count": _count,
    "sum": _sum,
    "avg": _avg,
    "mean": _avg,
    "min": _extreme(min),
    "max": _extreme(max),
    "first": _first,
    "last": _last,
    "prev": _last,
    "var": _var,
    "std": _std,
    "any": _any,
    "all": _all,
    "len": _len,
    "sorted": _sorted,
    "list": _list,
    # scalars: NULL in, NULL out
    "abs": _scalar(abs),
    "round": _round,
    "sqrt": _sqrt,
    "log": _scalar(math.log),
    "exp": _scalar(math.exp),
    "floor": _scalar(math.floor),
    "ceil": _scalar(math.ceil),
    "int": _scalar(int),
    "float": _scalar(float),
    "str": _str,
    "bool": _scalar(bool),
    "isnan": _isnan,
    "coalesce": _coalesce,
    "timestamp": _timestamp,
}

#: extra functions for data expressions (generated test events), never for conditions.
DATA_FUNCTIONS: dict[str, Callable[..., object]] = {"range": _range, "enumerate": _enumerate, "zip": _zip}

#: the names :data:`BUILTINS` starts with (a registration may replace them, never remove them).
BUILTIN_NAMES = frozenset(BUILTINS)

#: names a registered function cannot take: condition variables every pattern family binds.
RESERVED_NAMES = frozenset({"e", "matched", "True", "False", "None"})

_ORIGINAL = dict(BUILTINS)


def register_function(name: str, fn: Callable[..., object], *, replace: bool = False) -> None:
    """Make ``fn`` callable as ``name(...)`` in every expression compiled from now on.

    >>> register_function("spread_doc", lambda hi, lo: hi - lo, replace=True)
    >>> from workbench.engine.expr import compile_expr
    >>> compile_expr("spread_doc(3, 1) == 2")({})
    True
    >>> unregister_function("spread_doc")

    Args:
        name: an identifier, not a keyword, not starting with ``_``, not ``e``/``matched``.
        fn: any callable; it runs on every evaluation, so it should be fast and side-effect free.
            It receives NULL as ``None``.
        replace: allow replacing a function registered under ``name`` (or a built-in one).

    Raises:
        ExpressionError: for an invalid or reserved name, a non-callable ``fn``, or a name that is
            taken (without ``replace``).
    """
    given: object = name  # checked at run time: callers may pass anything
    if not isinstance(given, str) or not name.isidentifier() or keyword.iskeyword(name):
        msg = f"cannot register a condition function named {name!r}: the name must be a Python identifier"
        raise ExpressionError(msg)
    if name.startswith("_") or name in RESERVED_NAMES:
        msg = f"cannot register a condition function named {name!r}: the name is reserved"
        raise ExpressionError(msg)
    target: object = fn
    if not callable(target):
        msg = f"register_function({name!r}, ...) needs a callable, got {type(target).__name__}"
        raise ExpressionError(msg)
    if name in BUILTINS and BUILTINS[name] is not fn and not replace:
        what = "a built-in" if name in BUILTIN_NAMES else "a"
        msg = f"{what} condition function named {name!r} exists already; pass replace=True to replace it"
        raise ExpressionError(msg)
    BUILTINS[name] = fn


def unregister_function(name: str) -> None:
    """Remove a function registered with :func:`register_function` (built-in ones stay).

    Raises:
        ExpressionError: when no function called ``name`` was registered (with the nearest name).
    """
    registered = sorted(set(BUILTINS) - BUILTIN_NAMES)
    if name in BUILTIN_NAMES:
        if BUILTINS[name] is not _ORIGINAL[name]:
            BUILTINS[name] = _ORIGINAL[name]
            return
        msg = f"{name!r} is a built-in condition function and cannot be unregistered"
        raise ExpressionError(msg)
    if name not in BUILTINS:
        close = difflib.get_close_matches(name, registered, n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        msg = f"no condition function named {name!r} is registered{hint}"
        raise ExpressionError(msg)
    del BUILTINS[name]


def registered_functions() -> dict[str, Callable[..., object]]:
    """A copy of the table of functions expressions may call (built-in and registered)."""
    return dict(BUILTINS)
