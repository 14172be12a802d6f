"""Reading a snapshot's state back: tagged JSON into values and engine state objects, nothing else.

Every node is checked as it is read (its tag, its class, each slot's type, sizes and depth), so a
forged or damaged blob is a :class:`~workbench.errors.CepError` naming where it is wrong; no
``__init__``, ``__setstate__`` or ``__reduce__`` runs (see :mod:`workbench.engine.snapshot`).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import re
from collections import deque
from collections.abc import Callable

from workbench.engine.slotcheck import check_slots
from workbench.engine.slotcheck import short_repr as _short
from workbench.engine.snapclasses import MAX_DEPTH, MAX_EXPANDED, Json, fail, lookup

__all__ = ["Reader"]


class Reader:
    """Build the value a snapshot's state node describes (:meth:`read`)."""

    def __init__(self) -> None:
        self.table: dict[int, object] = {}
        self.path: list[str] = ["state"]  # where the reader is, for messages
        #: object number -> its size counted as a tree (what a hash or repr of it walks)
        self.sizes: dict[int, int] = {}
        #: the tree size read so far inside each value being built, innermost last
        self.sizing: list[int] = [0]

    def read(self, node: Json, depth: int = 0) -> object:
        if node is None or isinstance(node, bool | int | float | str):
            self.sizing[-1] += 1
            return node
        if depth > MAX_DEPTH:
            fail(f"snapshot: nested deeper than {MAX_DEPTH} levels")
        if not isinstance(node, dict):
            fail(f"snapshot: unexpected {type(node).__name__} where a tagged value belongs")
        if "$r" in node:
            ref = node["$r"]
            if not isinstance(ref, int) or ref not in self.table:
                fail(f"snapshot: reference {ref!r} to nothing written before it")
            self.sizing[-1] += self.sizes[ref]
            return self.table[ref]
        self.sizing.append(0)
        value = self._untag(node, depth + 1)
        size = self.sizing.pop() + 1
        if "$o" in node:  # why: a state object hashes by identity, or by value up to a dict field
            size = 1
        self.sizing[-1] += size
        number = node.get("#")
        if number is not None:
            if not isinstance(number, int) or number in self.table:
                fail(f"snapshot: bad object number {number!r}")
            self.table[number] = value
            self.sizes[number] = size
        return value

    def _hashed(self, node: dict[str, Json], tag: str, depth: int) -> list[object]:
        """The items of a tuple, set or frozenset, refused when hashing them would walk too much."""
        items = self._items(node, tag, depth)
        if self.sizing[-1] > MAX_EXPANDED:
            where = "".join(self.path)
            fail(
                f"snapshot: the {_KINDS[tag]} at {where} holds more than {MAX_EXPANDED:,} values "
                "counting each shared reference again"
            )
        return items

    def _items(self, node: dict[str, Json], tag: str, depth: int) -> list[object]:
        items = node[tag]
        if not isinstance(items, list):
            fail(f"snapshot: {tag} holds {type(items).__name__}, not a list")
        path = self.path
        out = []
        for i, v in enumerate(items):
            path.append(f"[{i}]")
            out.append(self.read(v, depth))
            path.pop()
        return out

    def _untag(self, node: dict[str, Json], depth: int) -> object:
        tag = next((k for k in node if k.startswith("$")), None)
        build = _BUILDERS.get(tag or "")
        if build is None:
            fail(f"snapshot: unknown tag {tag!r}")
        try:
            return build(self, node, depth)
        except (TypeError, ValueError, ArithmeticError) as exc:  # unhashable key, bad date, ...
            fail(f"snapshot: malformed {tag} value ({exc})")

    def _dict(self, node: dict[str, Json], depth: int) -> dict[object, object]:
        pairs = node["$d"]
        if not isinstance(pairs, list):
            fail("snapshot: a dict is not a list of pairs")
        out: dict[object, object] = {}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                fail("snapshot: a dict entry is not a [key, value] pair")
            self.sizing.append(0)
            self.path.append("{key}")
            key = self.read(pair[0], depth)
            if self.sizing.pop() > MAX_EXPANDED:
                fail(f"snapshot: a key at {''.join(self.path)} is too large to hash")
            self.path[-1] = f"[{_short(key)}]"
            out[key] = self.read(pair[1], depth)
            self.path.pop()
        return out

    def _class(self, node: dict[str, Json], tag: str) -> type:
        name = node[tag]
        cls = lookup(name) if isinstance(name, str) else None
        if cls is None:
            fail(f"snapshot: {name!r} is not an engine state class")
        return cls

    def _enum(self, node: dict[str, Json], depth: int) -> object:
        cls = self._class(node, "$e")
        if not issubclass(cls, enum.Enum):
            fail(f"snapshot: {node['$e']!r} is not an enumeration")
        return cls(self.read(node.get("v"), depth))

    def _named_tuple(self, node: dict[str, Json], depth: int) -> object:
        cls = self._class(node, "$n")
        if not issubclass(cls, tuple):
            fail(f"snapshot: {node['$n']!r} is not a named tuple")
        return tuple.__new__(cls, self._hashed(node, "v", depth))

    def _object(self, node: dict[str, Json], depth: int) -> object:
        cls = self._class(node, "$o")
        fields = node.get("v")
        if not isinstance(fields, dict):
            fail(f"snapshot: {node['$o']!r} has no field table")
        if issubclass(cls, BaseException | tuple | enum.Enum) or cls.__new__ is not object.__new__:
            fail(f"snapshot: {node['$o']!r} is not a state class")
        obj = object.__new__(cls)
        path = self.path
        for key, raw in fields.items():
            path.append(f".{key}")
            value = self.read(raw, depth)
            path.pop()
            try:
                object.__setattr__(obj, key, value)
            except AttributeError:
                fail(f"snapshot: {node['$o']!r} has no field {key!r}")
        if dataclasses.is_dataclass(cls):  # why: a blob written before a field was added lacks it
            for f in dataclasses.fields(cls):
                if f.default is not dataclasses.MISSING and not _has(obj, f.name):
                    object.__setattr__(obj, f.name, f.default)
        check_slots(obj, "".join(path))  # each slot of the type its class declares
        return obj


def _has(obj: object, name: str) -> bool:
    try:
        object.__getattribute__(obj, name)
    except AttributeError:
        return False
    return True


def _maxlen(value: Json) -> int | None:
    if value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0):
        return value
    fail(f"snapshot: a deque's maxlen is {value!r}")


_Node = dict[str, Json]
_KINDS = {"$t": "tuple", "$s": "set", "$z": "frozenset", "v": "named tuple"}
#: how each tag is read back (built once, not per node)
_BUILDERS: dict[str, Callable[[Reader, _Node, int], object]] = {
    "$l": lambda r, n, d: r._items(n, "$l", d),
    "$t": lambda r, n, d: tuple(r._hashed(n, "$t", d)),
    "$s": lambda r, n, d: set(r._hashed(n, "$s", d)),
    "$z": lambda r, n, d: frozenset(r._hashed(n, "$z", d)),
    "$q": lambda r, n, d: deque(r._items(n, "$q", d), maxlen=_maxlen(n.get("m"))),
    "$d": lambda r, n, d: r._dict(n, d),
    "$f": lambda r, n, d: _float(n["$f"]),
    "$i": lambda r, n, d: _big(n["$i"]),
    "$e": lambda r, n, d: r._enum(n, d),
    "$o": lambda r, n, d: r._object(n, d),
    "$n": lambda r, n, d: r._named_tuple(n, d),
    "$dt": lambda r, n, d: dt.datetime.fromisoformat(_text(n["$dt"])),
    "$da": lambda r, n, d: dt.date.fromisoformat(_text(n["$da"])),
    "$td": lambda r, n, d: dt.timedelta(*r._items(n, "$td", d)),  # type: ignore[arg-type]
    "$dec": lambda r, n, d: decimal.Decimal(_text(n["$dec"])),
}


def _big(text: Json) -> int:
    if not isinstance(text, str) or not re.fullmatch(r"-?[0-9a-f]+", text):
        fail(f"snapshot: {text!r} is not a hexadecimal integer")
    return int(text, 16)


def _float(text: Json) -> float:
    if not isinstance(text, str) or text not in ("nan", "inf", "-inf"):
        fail(f"snapshot: {text!r} is not a non-finite float")
    return float(text)


def _text(value: Json) -> str:
    if not isinstance(value, str):
        fail(f"snapshot: expected text, got {type(value).__name__}")
    return value
