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

import datetime as dt
import decimal
import enum
import hashlib
import json
import math
import sys
from collections import deque
from collections.abc import Iterator, Sequence

from workbench.engine.snapclasses import MAX_DEPTH, Json, allowed, fail, lookup, register, slot_names
from workbench.engine.snapread import Reader

__all__ = ["FORMAT", "VERSION", "allowed", "dump", "load", "register"]

FORMAT = "cep-workbench-snapshot"
VERSION = 1

# ---------------------------------------------------------------------------------- writing
#: the bits of the largest int written as a JSON number (about 4,000 decimal digits)
_DECIMAL_BITS = 13_000


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
            fail(f"snapshot: state nested deeper than {MAX_DEPTH} levels")
        ref = self.ids.get(id(obj))
        if ref is not None:
            return {"$r": ref}
        if id(obj) in self.open:
            fail(f"snapshot: the state refers to itself (a cycle through a {type(obj).__name__})")
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
    names = [n for n in slot_names(type(obj)) if hasattr(obj, n)]
    names.extend(getattr(obj, "__dict__", {}))
    return names


def _name(cls: type) -> str:
    name = f"{cls.__module__}:{cls.__qualname__}"
    if lookup(name) is not cls:
        msg = f"snapshot: cannot store a {cls.__module__}.{cls.__qualname__} (not engine state data)"
        fail(msg)
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
        fail(f"a snapshot is bytes, got {type(blob).__name__}")
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
            fail(f"not a snapshot: {kind} or not CEP Workbench snapshot data ({exc})")
        _check_envelope(envelope, patterns)
        return Reader().read(envelope["state"])
    except RecursionError:
        fail(f"snapshot: nested deeper than {MAX_DEPTH} levels")
    finally:
        sys.setrecursionlimit(limit)


def _check_envelope(envelope: object, patterns: Sequence[tuple[str, str]]) -> None:
    if not isinstance(envelope, dict) or envelope.get("format") != FORMAT:
        fail(f"not a snapshot: the data is not in the {FORMAT} format")
    if envelope.get("version") != VERSION:
        version = envelope.get("version")
        msg = f"snapshot format version {version!r} is not supported (this engine reads {VERSION})"
        fail(msg)
    taken = envelope.get("patterns")
    if not isinstance(taken, list) or not all(
        isinstance(p, list) and len(p) == 2 and all(isinstance(x, str) for x in p) for p in taken
    ):
        fail("snapshot: its pattern list is malformed")
    names = tuple(p[0] for p in taken)
    mine = tuple(p[0] for p in patterns)
    if names != mine:
        fail(f"snapshot was taken with patterns {names}, this engine has {mine}")
    for (name, theirs), (_, ours) in zip(taken, patterns, strict=True):
        if theirs != ours:
            msg = (
                f"snapshot of pattern {name!r} was taken from a different definition "
                f"(fingerprint {theirs}, this engine has {ours})"
            )
            fail(msg)
    if "state" not in envelope:
        fail("snapshot: no state in it (truncated?)")
    try:
        intact = envelope.get("digest") == _digest(envelope["state"])
    except ValueError:  # NaN or infinity written as a bare number: never by dump()
        intact = False
    if not intact:
        fail("snapshot is damaged: its state does not match its checksum")
