"""What a snapshot may hold: the engine's classes by name, the limits a blob must keep, the error.

Shared by the writer (:mod:`workbench.engine.snapshot`) and the reader
(:mod:`workbench.engine.snapread`).
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache
from typing import NoReturn

from workbench.errors import CepError

__all__ = ["MAX_DEPTH", "MAX_EXPANDED", "Json", "allowed", "fail", "lookup", "register", "slot_names"]

#: nesting allowed while reading or writing (state is shallow; this bounds hostile blobs)
MAX_DEPTH = 5_000

#: the most values a tuple, set or frozenset may hold counted as a tree, every shared reference
#: counted again: what hashing or printing it walks (a few bytes of back references could
#: otherwise make a key whose hash takes days)
MAX_EXPANDED = 2_000_000


Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]


def fail(message: str) -> NoReturn:
    """Refuse a snapshot: a :class:`CepError` saying why (no chained traceback into the reader)."""
    raise CepError(message) from None


@cache
def _classes() -> dict[str, type]:
    """Every class defined in :mod:`workbench.engine`, by ``module:qualname`` (all a blob may name)."""
    import workbench.engine as package

    table: dict[str, type] = {}
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        module = importlib.import_module(info.name)
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == info.name:
                table[f"{info.name}:{value.__qualname__}"] = value
    return table


_registered: dict[str, type] = {}


def register(cls: type) -> type:
    """Allow instances of ``cls`` in snapshots (the state class of a matcher defined outside the engine).

    Usable as a class decorator. The engine's own classes need no registration.
    """
    _registered[f"{cls.__module__}:{cls.__qualname__}"] = cls
    return cls


def lookup(name: str) -> type | None:
    """The class a blob names as ``module:qualname``, if a snapshot may hold it."""
    return _classes().get(name) or _registered.get(name)


def allowed(cls: type) -> bool:
    """Instances of ``cls`` may be in a snapshot (an engine class, or one :func:`register` allows)."""
    return lookup(f"{cls.__module__}:{cls.__qualname__}") is cls


def slot_names(cls: type) -> list[str]:
    """Every slot of ``cls`` and its bases, base first (no ``__dict__`` or ``__weakref__``)."""
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [n for n in dict.fromkeys(names) if n not in ("__dict__", "__weakref__")]
