"""Faster pickling of the engine's dataclasses, for the records and key states that cross Flink.

A Flink job pickles every record between its Python operators and, with durable state, every key's
record after each change. Python pickles a ``slots=True`` dataclass through the ``__getstate__``
that :mod:`dataclasses` generates, which walks ``fields()`` for every object; for the engine's
small state objects (events, partial matches, aggregates) that walk cost more than the matching.
:func:`register` gives those classes a reducer with the same content (every field's value, in
field order) built from a field list computed once per class; unpickling sets the same slots, as
the generated ``__setstate__`` does. Only classes that use the generated methods are registered,
so a class with its own ``__getstate__`` or ``__reduce__`` keeps it; a non-frozen slots dataclass,
which Python pickles as a dict of its set slots, gets the same reducer (an unset slot stays unset).
"""

from __future__ import annotations

import copyreg
import dataclasses
import types
from collections.abc import Callable, Iterable
from functools import cache
from operator import attrgetter

__all__ = ["Unset", "register", "register_engine"]


_NAMES: dict[type, tuple[str, ...]] = {}


def _names(cls: type) -> tuple[str, ...]:
    names = _NAMES.get(cls)
    if names is None:
        names = _NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


class Unset:
    """Stands for a slot that holds no value (a field without a default, never set)."""


#: per class with two or more fields, one C-level reader of all of them (a tuple, in field order)
_GETTERS: dict[type, Callable[[object], tuple[object, ...]]] = {}


def _reduce(obj: object) -> tuple[Callable[..., object], tuple[object, ...]]:
    cls = type(obj)
    getter = _GETTERS.get(cls)
    if getter is None:
        names = _names(cls)
        getter = _GETTERS[cls] = attrgetter(*names) if len(names) > 1 else _one_by_one
    try:
        values = getter(obj)
    except AttributeError:  # why: an unset slot (a field without a default, never set): one by one
        values = _one_by_one(obj)
    return _rebuild, (cls, values)


def _one_by_one(obj: object) -> tuple[object, ...]:
    return tuple([getattr(obj, name, Unset) for name in _names(type(obj))])


#: per class, each field's slot setter (the slot's own descriptor: frozen classes too, as the
#: generated ``__setstate__`` sets them, without a ``object.__setattr__`` lookup per field)
_SETTERS: dict[type, tuple[Callable[[object, object], None], ...]] = {}


def _setters(cls: type) -> tuple[Callable[[object, object], None], ...]:
    setters = _SETTERS.get(cls)
    if setters is None:
        slots = {
            name: member
            for klass in reversed(cls.__mro__)
            for name, member in vars(klass).items()
            if isinstance(member, types.MemberDescriptorType)
        }
        setters = _SETTERS[cls] = tuple(slots[name].__set__ for name in _names(cls))
    return setters


def _rebuild(cls: type, values: tuple[object, ...]) -> object:
    obj: object = object.__new__(cls)
    for setter, value in zip(_setters(cls), values, strict=True):
        if value is not Unset:  # why: an unset slot stays unset, as object's own pickling leaves it
            setter(obj, value)
    return obj


def _generated(cls: type) -> bool:
    """Whether ``cls`` is a slots dataclass pickled by generated or default methods (none of its own).

    The slots must be exactly the fields (no slot of a base class outside them), so the reducer
    carries all the state.
    """
    if not (dataclasses.is_dataclass(cls) and "__slots__" in cls.__dict__):
        return False
    if any(name in vars(klass) for klass in cls.__mro__[:-1] for name in ("__reduce__", "__reduce_ex__")):
        return False
    slots = {n for klass in cls.__mro__ for n in vars(klass).get("__slots__", ())}
    if slots - {"__weakref__", "__dict__"} != set(_names(cls)) or "__dict__" in slots:
        return False
    getstate = getattr(cls, "__getstate__", None)
    return getstate is object.__getstate__ or getattr(getstate, "__name__", "") == "_dataclass_getstate"


def register(classes: Iterable[type]) -> None:
    """Give each slots dataclass among ``classes`` that uses the generated pickling the fast reducer."""
    for cls in classes:
        if _generated(cls):
            copyreg.pickle(cls, _reduce)


@cache
def register_engine() -> None:
    """Register every such class of :mod:`workbench.engine` and the keyed driver's record (once)."""
    from workbench.backends.keyed import KeyRecord
    from workbench.engine.snapclasses import _classes  # the engine's own class table

    register([*_classes().values(), KeyRecord])
