"""Snapshots as data: a versioned JSON image of an engine's state that cannot run code.

A snapshot holds plain values and instances of the engine's own state classes (``KeyState``,
each plan's ``...State`` and partial matches, reaction-group states, aggregates, events). It is
written as JSON with a small closed set of tags, so reading one back builds only:

* JSON values, lists, tuples, sets, frozensets, dicts (any hashable keys), non-finite floats,
  ``datetime``/``date``/``timedelta``/``Decimal`` values;
* instances of classes defined in :mod:`workbench.engine` (found by walking the package), filled
  slot by slot with ``object.__setattr__``: no ``__init__``, ``__setstate__`` or ``__reduce__`` runs.
  Each slot's value must fit the class's own type hints (:mod:`workbench.engine.slotcheck`), so a
  blob forged with a recomputed checksum is refused where it is wrong (class, slot and place in the
  blob), not deep inside the engine on the next event; what types cannot say is checked against
  each pattern's matcher when the engine adopts the image (:mod:`workbench.engine.imagecheck`).

Anything else, a wrong format or version, a truncated or garbage blob, or a pattern whose
fingerprint (:mod:`workbench.engine.fingerprint`: a hash of its canonical definition) differs
from the one the snapshot was taken with is refused with a :class:`~workbench.errors.CepError`
that says what.

>>> from workbench.engine.host import KeyState
>>> blob = dump(KeyState(states={0: [1, (2.5, float("nan"))]}), [("p", "f1")])
>>> load(blob, [("p", "f1")]).states[0][1][0]
2.5
>>> load(blob, [("p", "other")])  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
workbench.errors.CepError: snapshot of pattern 'p' was taken from a different definition ...
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import enum
import hashlib
import importlib
import json
import math
import pkgutil
import re
import sys
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from functools import cache
from typing import NoReturn

from workbench.engine.slotcheck import check_slots
from workbench.engine.slotcheck import short_repr as _short
from workbench.errors import CepError

__all__ = ["FORMAT", "VERSION", "allowed", "dump", "load", "register"]

FORMAT = "cep-workbench-snapshot"
VERSION = 1
#: nesting allowed while reading or writing (state is shallow; this bounds hostile blobs)
MAX_DEPTH = 5_000

#: the most values a tuple, set or frozenset may hold counted as a tree, every shared reference
#: counted again: what hashing or printing it walks (a few bytes of back references could
#: otherwise make a key whose hash takes days)
MAX_EXPANDED = 2_000_000

Json = None | bool | int | float | str | list["Json"] | dict[str, "Json"]


def _fail(message: str) -> NoReturn:
    raise CepError(message) from None


# ---------------------------------------------------------------------------------- the class table
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


def _lookup(name: str) -> type | None:
    return _classes().get(name) or _registered.get(name)


def allowed(cls: type) -> bool:
    """Instances of ``cls`` may be in a snapshot (an engine class, or one :func:`register` allows)."""
    return _lookup(f"{cls.__module__}:{cls.__qualname__}") is cls


def _slots(cls: type) -> list[str]:
    names: list[str] = []
    for klass in reversed(cls.__mro__):
        slots = klass.__dict__.get("__slots__", ())
        names.extend([slots] if isinstance(slots, str) else slots)
    return [n for n in dict.fromkeys(names) if n not in ("__dict__", "__weakref__")]


# ---------------------------------------------------------------------------------- writing
class _Writer:
    """Encode a value graph; objects reached twice are written once and referred to by number."""

    def __init__(self, root: object) -> None:
        self.shared = self._shared(root)
        self.ids: dict[int, int] = {}
        self.open: set[int] = set()

    @staticmethod
    def _shared(root: object) -> set[int]:
        seen: set[int] = set()
        twice: set[int] = set()
        stack = [root]
        while stack:
            obj = stack.pop()
            if obj is None or isinstance(obj, bool | int | float | str):
                continue
            if id(obj) in seen:
                twice.add(id(obj))
                continue
            seen.add(id(obj))
            stack.extend(_children(obj))
        return twice

    def write(self, obj: object, depth: int = 0) -> Json:
        if obj is None or isinstance(obj, bool | str):
            return obj
        if isinstance(obj, int):
            # why hex: JSON writes an int in decimal, which Python refuses past 4,300 digits
            return obj if obj.bit_length() <= _DECIMAL_BITS else {"$i": format(obj, "x")}
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"$f": repr(obj)}
        if depth > MAX_DEPTH:
            _fail(f"snapshot: state nested deeper than {MAX_DEPTH} levels")
        ref = self.ids.get(id(obj))
        if ref is not None:
            return {"$r": ref}
        if id(obj) in self.open:
            _fail(f"snapshot: the state refers to itself (a cycle through a {type(obj).__name__})")
        self.open.add(id(obj))
        out = self._tagged(obj, depth + 1)
        self.open.discard(id(obj))
        if id(obj) in self.shared:
            self.ids[id(obj)] = len(self.ids)
            out["#"] = self.ids[id(obj)]  # numbered after the children: references point backwards
        return out

    def _tagged(self, obj: object, depth: int) -> dict[str, Json]:
        w = self.write
        if isinstance(obj, list):
            return {"$l": [w(v, depth) for v in obj]}
        if isinstance(obj, tuple):
            items = [w(v, depth) for v in obj]
            return {"$t": items} if type(obj) is tuple else {"$n": _name(type(obj)), "v": items}
        if isinstance(obj, set | frozenset):
            tag = "$s" if isinstance(obj, set) else "$z"
            return {tag: [w(v, depth) for v in obj]}
        if isinstance(obj, dict) and type(obj) is dict:
            return {"$d": [[w(k, depth), w(v, depth)] for k, v in obj.items()]}
        if type(obj) is deque:  # windows and the key's recent events
            return {"$q": [w(v, depth) for v in obj], "m": obj.maxlen}
        if isinstance(obj, enum.Enum):
            return {"$e": _name(type(obj)), "v": w(obj.value, depth)}
        plain = _plain(obj)
        if plain is not None:
            return plain
        cls = type(obj)
        name = _name(cls)
        return {"$o": name, "v": {k: w(getattr(obj, k), depth) for k in _state_names(obj)}}


def _children(obj: object) -> Iterator[object]:
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield k
            yield v
    elif isinstance(obj, list | tuple | set | frozenset | deque):
        yield from obj
    elif (
        not isinstance(obj, enum.Enum)
        and _plain(obj) is None
        and type(obj).__module__.startswith("workbench.")
    ):
        for k in _state_names(obj):
            yield getattr(obj, k)


def _state_names(obj: object) -> list[str]:
    names = [n for n in _slots(type(obj)) if hasattr(obj, n)]
    names.extend(getattr(obj, "__dict__", {}))
    return names


def _name(cls: type) -> str:
    name = f"{cls.__module__}:{cls.__qualname__}"
    if _lookup(name) is not cls:
        msg = f"snapshot: cannot store a {cls.__module__}.{cls.__qualname__} (not engine state data)"
        _fail(msg)
    return name


def _plain(obj: object) -> dict[str, Json] | None:
    """Standard-library values written as text."""
    if isinstance(obj, dt.datetime):
        return {"$dt": obj.isoformat()}
    if isinstance(obj, dt.date):
        return {"$da": obj.isoformat()}
    if isinstance(obj, dt.timedelta):
        return {"$td": [obj.days, obj.seconds, obj.microseconds]}
    if isinstance(obj, decimal.Decimal):
        return {"$dec": str(obj)}
    return None


# ---------------------------------------------------------------------------------- reading
class _Reader:
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
            _fail(f"snapshot: nested deeper than {MAX_DEPTH} levels")
        if not isinstance(node, dict):
            _fail(f"snapshot: unexpected {type(node).__name__} where a tagged value belongs")
        if "$r" in node:
            ref = node["$r"]
            if not isinstance(ref, int) or ref not in self.table:
                _fail(f"snapshot: reference {ref!r} to nothing written before it")
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
                _fail(f"snapshot: bad object number {number!r}")
            self.table[number] = value
            self.sizes[number] = size
        return value

    def _hashed(self, node: dict[str, Json], tag: str, depth: int) -> list[object]:
        """The items of a tuple, set or frozenset, refused when hashing them would walk too much."""
        items = self._items(node, tag, depth)
        if self.sizing[-1] > MAX_EXPANDED:
            where = "".join(self.path)
            _fail(
                f"snapshot: the {_KINDS[tag]} at {where} holds more than {MAX_EXPANDED:,} values "
                "counting each shared reference again"
            )
        return items

    def _items(self, node: dict[str, Json], tag: str, depth: int) -> list[object]:
        items = node[tag]
        if not isinstance(items, list):
            _fail(f"snapshot: {tag} holds {type(items).__name__}, not a list")
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
            _fail(f"snapshot: unknown tag {tag!r}")
        try:
            return build(self, node, depth)
        except (TypeError, ValueError, ArithmeticError) as exc:  # unhashable key, bad date, ...
            _fail(f"snapshot: malformed {tag} value ({exc})")

    def _dict(self, node: dict[str, Json], depth: int) -> dict[object, object]:
        pairs = node["$d"]
        if not isinstance(pairs, list):
            _fail("snapshot: a dict is not a list of pairs")
        out: dict[object, object] = {}
        for pair in pairs:
            if not isinstance(pair, list) or len(pair) != 2:
                _fail("snapshot: a dict entry is not a [key, value] pair")
            self.sizing.append(0)
            self.path.append("{key}")
            key = self.read(pair[0], depth)
            if self.sizing.pop() > MAX_EXPANDED:
                _fail(f"snapshot: a key at {''.join(self.path)} is too large to hash")
            self.path[-1] = f"[{_short(key)}]"
            out[key] = self.read(pair[1], depth)
            self.path.pop()
        return out

    def _class(self, node: dict[str, Json], tag: str) -> type:
        name = node[tag]
        cls = _lookup(name) if isinstance(name, str) else None
        if cls is None:
            _fail(f"snapshot: {name!r} is not an engine state class")
        return cls

    def _enum(self, node: dict[str, Json], depth: int) -> object:
        cls = self._class(node, "$e")
        if not issubclass(cls, enum.Enum):
            _fail(f"snapshot: {node['$e']!r} is not an enumeration")
        return cls(self.read(node.get("v"), depth))

    def _named_tuple(self, node: dict[str, Json], depth: int) -> object:
        cls = self._class(node, "$n")
        if not issubclass(cls, tuple):
            _fail(f"snapshot: {node['$n']!r} is not a named tuple")
        return tuple.__new__(cls, self._hashed(node, "v", depth))

    def _object(self, node: dict[str, Json], depth: int) -> object:
        cls = self._class(node, "$o")
        fields = node.get("v")
        if not isinstance(fields, dict):
            _fail(f"snapshot: {node['$o']!r} has no field table")
        if issubclass(cls, BaseException | tuple | enum.Enum) or cls.__new__ is not object.__new__:
            _fail(f"snapshot: {node['$o']!r} is not a state class")
        obj = object.__new__(cls)
        path = self.path
        for key, raw in fields.items():
            path.append(f".{key}")
            value = self.read(raw, depth)
            path.pop()
            try:
                object.__setattr__(obj, key, value)
            except AttributeError:
                _fail(f"snapshot: {node['$o']!r} has no field {key!r}")
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
    _fail(f"snapshot: a deque's maxlen is {value!r}")


_Node = dict[str, Json]
_KINDS = {"$t": "tuple", "$s": "set", "$z": "frozenset", "v": "named tuple"}
#: how each tag is read back (built once, not per node)
_BUILDERS: dict[str, Callable[[_Reader, _Node, int], object]] = {
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


#: the bits of the largest int written as a JSON number (about 4,000 decimal digits)
_DECIMAL_BITS = 13_000


def _big(text: Json) -> int:
    if not isinstance(text, str) or not re.fullmatch(r"-?[0-9a-f]+", text):
        _fail(f"snapshot: {text!r} is not a hexadecimal integer")
    return int(text, 16)


def _float(text: Json) -> float:
    if not isinstance(text, str) or text not in ("nan", "inf", "-inf"):
        _fail(f"snapshot: {text!r} is not a non-finite float")
    return float(text)


def _text(value: Json) -> str:
    if not isinstance(value, str):
        _fail(f"snapshot: expected text, got {type(value).__name__}")
    return value


# ---------------------------------------------------------------------------------- the envelope
def dump(state: object, patterns: Sequence[tuple[str, str]]) -> bytes:
    """The snapshot of ``state`` taken with ``patterns`` (``(name, fingerprint)`` in engine order)."""
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 1_000))
    try:
        body = _Writer(state).write(state)
    finally:
        sys.setrecursionlimit(limit)
    envelope = {
        "format": FORMAT,
        "version": VERSION,
        "patterns": [list(p) for p in patterns],
        "digest": _digest(body),
        "state": body,
    }
    return json.dumps(envelope, separators=_SEPARATORS, allow_nan=False).encode("utf-8")


_SEPARATORS = (",", ":")


def _digest(body: Json) -> str:
    """A checksum of the state, so a damaged blob is refused before anything is built from it."""
    text = json.dumps(body, separators=_SEPARATORS, allow_nan=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def load(blob: bytes, patterns: Sequence[tuple[str, str]]) -> object:
    """Read a snapshot taken with the same ``patterns``; every problem is a :class:`CepError`."""
    if not isinstance(blob, bytes | bytearray | memoryview):
        _fail(f"a snapshot is bytes, got {type(blob).__name__}")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 4 * MAX_DEPTH + 1_000))
    try:
        try:
            envelope = json.loads(bytes(blob).decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError) as exc:
            kind = (
                "truncated"
                if isinstance(exc, json.JSONDecodeError) and exc.pos >= len(blob) - 1
                else "garbled"
            )
            _fail(f"not a snapshot: {kind} or not CEP Workbench snapshot data ({exc})")
        _check_envelope(envelope, patterns)
        return _Reader().read(envelope["state"])
    except RecursionError:
        _fail(f"snapshot: nested deeper than {MAX_DEPTH} levels")
    finally:
        sys.setrecursionlimit(limit)


def _check_envelope(envelope: object, patterns: Sequence[tuple[str, str]]) -> None:
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT:
        _fail(f"not a snapshot: the data is not in the {FORMAT} format")
    if envelope.get("version") != VERSION:
        version = envelope.get("version")
        msg = f"snapshot format version {version!r} is not supported (this engine reads {VERSION})"
        _fail(msg)
    taken = envelope.get("patterns")
    if not isinstance(taken, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in taken
    ):
        _fail("snapshot: its pattern list is malformed")
    names = tuple(p[0] for p in taken)
    mine = tuple(p[0] for p in patterns)
    if names != mine:
        _fail(f"snapshot was taken with patterns {names}, this engine has {mine}")
    for (name, theirs), (_, ours) in zip(taken, patterns, strict=True):
        if theirs != ours:
            msg = (
                f"snapshot of pattern {name!r} was taken from a different definition "
                f"(fingerprint {theirs}, this engine has {ours})"
            )
            _fail(msg)
    if "state" not in envelope:
        _fail("snapshot: no state in it (truncated?)")
    try:
        intact = envelope.get("digest") == _digest(envelope["state"])
    except ValueError:  # NaN or infinity written as a bare number: never by dump()
        intact = False
    if not intact:
        _fail("snapshot is damaged: its state does not match its checksum")
