"""Does a value read from a snapshot fit the slot it fills? A structural checker for type hints.

:func:`~workbench.engine.snapshot.load` fills instances of the engine's state classes slot by slot.
A blob forged with a recomputed checksum could put a ``str`` where a run id ``int`` belongs, a
``list`` where a tuple of events belongs, or a dict with keys of the wrong type: the engine would
then fail deep inside on the next event. :func:`check_slots` compares every slot's value with the
class's own annotations (``typing.get_type_hints``: dataclass fields and class-level ``__slots__``
annotations), for the subset the state classes use:

* ``int`` (not ``bool``), ``float`` (an ``int`` too, as for type checkers), ``bool``, ``str``,
  ``None``, engine classes (``isinstance``), ``Hashable`` (hashes), ``Any``/``object`` (anything);
* unions and ``Optional``; ``tuple[X, ...]`` and ``tuple[A, B]``; ``list[X]``, ``set[X]``,
  ``frozenset[X]``, ``deque[X]``, ``dict[K, V]``, ``Mapping[K, V]``, ``Sequence[X]``; ``Literal``;
* protocols (``Aggregate``): an instance of a class a snapshot may hold that has the methods.

Classes that annotate their slots only inside ``__init__`` (the aggregates, the budget, the shared
buffer) get their hints from :mod:`workbench.engine.statehints`.

>>> from workbench.engine.host import KeyState
>>> ks = KeyState(states={}, instances={0: "3"}, timer_counts={})
>>> check_slots(ks, "state.keys['k']")  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.errors.CepError: snapshot: KeyState.instances at state.keys['k'].instances[0] is str '3', ...
"""

from __future__ import annotations

import collections.abc as abc
import reprlib
import types
import typing
from collections import deque
from functools import cache
from typing import Any, NoReturn

from workbench.errors import CepError

__all__ = ["check_slots", "hints_of", "matches", "short_repr"]


class _Mismatch(Exception):
    """A value that does not fit (``at``: the path inside the checked value, innermost last)."""

    def __init__(self, value: object, hint: object) -> None:
        super().__init__()
        self.value, self.hint, self.at = value, hint, ""


@cache
def hints_of(cls: type) -> dict[str, object]:
    """The type hint of every slot of ``cls`` (slots without one are not checked)."""
    from workbench.engine.statehints import declared

    try:
        hints: dict[str, object] = dict(typing.get_type_hints(cls))
    except (NameError, TypeError, AttributeError):  # a hint only a type checker can resolve
        hints = {}
    for klass in reversed(cls.__mro__):
        hints.update(declared(klass))
    return {name: hint for name, hint in hints.items() if typing.get_origin(hint) is not typing.ClassVar}


def check_slots(obj: object, where: str) -> None:
    """Refuse ``obj`` (just read from a blob at ``where``) unless every hinted slot fits its hint.

    A slot that a hint names but the blob left out is refused too: the engine reads every slot.
    """
    cls: type = type(obj)
    for name, hint in hints_of(cls).items():
        if not _has_slot(cls, name):
            continue
        try:
            value = object.__getattribute__(obj, name)
        except AttributeError:
            _fail(f"snapshot: {cls.__name__} at {where} has no {name!r}")
        try:
            _check(value, hint)
        except _Mismatch as bad:
            got = _describe(bad.value)
            _fail(
                f"snapshot: {cls.__name__}.{name} at {where}.{name}{bad.at} is {got}, not {_name(bad.hint)}"
            )


def matches(value: object, hint: object) -> bool:
    """``value`` fits ``hint``.

    >>> matches((1, 2.5), tuple[int, float]), matches([1, "a"], list[int]), matches(True, int)
    (True, False, False)
    """
    try:
        _check(value, hint)
    except _Mismatch:
        return False
    return True


@cache
def _has_slot(cls: type, name: str) -> bool:
    return any(name in (getattr(k, "__slots__", ()) or ()) for k in cls.__mro__) or hasattr(cls, "__dict__")


def _fail(message: str) -> NoReturn:
    raise CepError(message) from None


# ---------------------------------------------------------------------------------- the checker
def _check(value: object, hint: object) -> None:
    if hint is Any or hint is object:
        return
    if hint is None or hint is types.NoneType:
        if value is not None:
            raise _Mismatch(value, hint)
        return
    origin, args = _parts(hint)
    if origin is None:
        _check_plain(value, hint)
    elif origin is typing.Union or origin is types.UnionType:
        if not any(matches(value, arm) for arm in args):
            raise _Mismatch(value, hint)
    elif origin is typing.Literal:
        if value not in args:
            raise _Mismatch(value, hint)
    else:
        _check_generic(value, hint, origin, args)


@cache
def _parts(hint: object) -> tuple[object, tuple[object, ...]]:
    """A hint's origin and arguments (asked once per hint: a snapshot checks thousands of values)."""
    return typing.get_origin(hint), typing.get_args(hint)


def _check_plain(value: object, hint: object) -> None:
    """A class (or an unparameterised generic) as the hint."""
    if isinstance(hint, typing.TypeVar):
        bound = hint.__bound__ or (typing.Union[hint.__constraints__] if hint.__constraints__ else object)  # noqa: UP007
        _check(value, bound)
        return
    if not isinstance(hint, type):
        return  # a hint form outside the subset (never on the engine's state classes)
    if hint is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif hint is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
    elif hint is abc.Hashable:
        ok = _hashable(value)
    elif getattr(hint, "_is_protocol", False):
        ok = _implements(value, hint)
    else:
        ok = isinstance(value, hint)
    if not ok:
        raise _Mismatch(value, hint)


def _check_generic(value: object, hint: object, origin: object, args: tuple[object, ...]) -> None:
    kinds: dict[object, type | tuple[type, ...]] = {
        abc.Mapping: abc.Mapping,
        abc.Sequence: abc.Sequence,
        abc.Set: abc.Set,
        abc.Iterable: (list, tuple, set, frozenset, deque),
    }
    kind = kinds.get(origin, origin)
    if not isinstance(kind, type | tuple) or not isinstance(value, kind):
        raise _Mismatch(value, hint)
    if origin is tuple:
        _check_tuple(value, hint, args)  # type: ignore[arg-type]
    elif isinstance(value, abc.Mapping):
        key_hint, value_hint = args if len(args) == 2 else (object, object)
        for k, v in value.items():
            _at(k, key_hint, f"{{{_short(k)}}} (a key)")
            _at(v, value_hint, f"[{_short(k)}]")
    elif args and isinstance(value, abc.Iterable) and not isinstance(value, str | bytes):
        for i, item in enumerate(value):
            _at(item, args[0], f"[{i}]" if isinstance(value, list | tuple | deque) else "{…}")


def _check_tuple(value: tuple[object, ...], hint: object, args: tuple[object, ...]) -> None:
    if len(args) == 2 and args[1] is Ellipsis:
        for i, item in enumerate(value):
            _at(item, args[0], f"[{i}]")
        return
    if args == ((),):  # tuple[()]
        args = ()
    if args and len(value) != len(args):
        raise _Mismatch(value, hint)
    for i, (item, arm) in enumerate(zip(value, args, strict=False)):
        _at(item, arm, f"[{i}]")


def _at(value: object, hint: object, step: str) -> None:
    try:
        _check(value, hint)
    except _Mismatch as bad:
        bad.at = step + bad.at
        raise


def _hashable(value: object) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _implements(value: object, protocol: type) -> bool:
    cls: type = type(value)
    return _implemented_by(cls, protocol)


@cache
def _implemented_by(cls: type, protocol: type) -> bool:
    """A class a snapshot may hold (not a builtin) with the protocol's methods."""
    from workbench.engine.snapshot import allowed

    if not allowed(cls):
        return False
    members = (n for n, v in vars(protocol).items() if callable(v) and not n.startswith("_"))
    return all(callable(getattr(cls, n, None)) for n in members)


# ---------------------------------------------------------------------------------- messages
def _name(hint: object) -> str:
    if isinstance(hint, type) and typing.get_origin(hint) is None:
        return hint.__name__
    text = str(hint).replace("typing.", "").replace("collections.abc.", "")
    for prefix in ("workbench.engine.",):
        while prefix in text:
            start = text.index(prefix)
            end = start + len(prefix)
            while end < len(text) and (text[end].isalnum() or text[end] in "._"):
                end += 1
            text = text[:start] + text[start:end].rsplit(".", 1)[-1] + text[end:]
    return text


def _describe(value: object) -> str:
    return f"{type(value).__name__} {_short(value)}"


_REPR = reprlib.Repr()
_REPR.maxlevel = 3
_REPR.maxtuple = _REPR.maxlist = _REPR.maxset = _REPR.maxfrozenset = _REPR.maxdict = 4
_REPR.maxstring = 36


def short_repr(value: object) -> str:
    """A repr of at most 40 characters, with bounded work however large or shared ``value`` is
    (containers are cut after a few items and levels; an engine object is asked for its own repr)."""
    text = _REPR.repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


_short = short_repr
