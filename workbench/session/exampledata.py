"""The alphabet of :mod:`workbench.session.examples`: candidate events synthesised from a pattern.

A pattern object (sequence, reaction group, receive) is walked as data: its event types (stage
``types``, channel and initiator ``type``, ``e.type == 'x'`` tests), and, from the closed
expression IR of its conditions, every comparison of an event field with a constant. Each such
comparison gives a value that satisfies it and one that violates it (``e.price > 100``: 101 and
100). A field that conditions compare only with other fields or variables (joins such as
``e.ip != IP`` or ``b.price < a.price * 0.9``) cannot be solved from constants: it gets a small pool
of values and a note saying so, and the search (verified by the engine) finds what works, if any.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from workbench.engine.expr import as_tree, ir
from workbench.engine.expr.printer import print_expr

__all__ = ["Alphabet", "Candidate", "alphabet_of"]

Scalar = str | int | float | bool

#: the type an event gets when no part of the pattern names one
ANY_TYPE = "event"
_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True)
class Candidate:
    """A value for a field and what it does: ``why`` says which comparison it satisfies or violates."""

    value: Scalar
    why: str


@dataclass
class Alphabet:
    """Event types, candidate values per field, and the conditions that could not be solved."""

    types: list[str] = field(default_factory=list)
    values: dict[str, list[Candidate]] = field(default_factory=dict)
    unsolved: list[str] = field(default_factory=list)
    callables: list[str] = field(default_factory=list)

    def base(self) -> dict[str, Scalar]:
        """Every field at its first candidate (one satisfying its first comparison)."""
        return {f: cands[0].value for f, cands in self.values.items() if cands}

    def events(self) -> Iterator[tuple[str, dict[str, Scalar], str]]:
        """Each candidate event ``(type, fields, what differs from the base)``: per type the base
        event, then the base with one field changed to each other candidate."""
        base = self.base()
        for typ in self.types or [ANY_TYPE]:
            yield typ, dict(base), ""
            for f, cands in self.values.items():
                for c in cands[1:]:
                    yield typ, {**base, f: c.value}, f"{f}={c.value!r} ({c.why})"

    def add(self, name: str, value: Scalar, why: str) -> None:
        """Add a candidate value of field ``name`` (the first of a value wins)."""
        cands = self.values.setdefault(name, [])
        if all(c.value != value or type(c.value) is not type(value) for c in cands):
            cands.append(Candidate(value, why))


def alphabet_of(pattern: object) -> Alphabet:
    """The candidate events of ``pattern`` (any pattern family; see the module docstring)."""
    out = Alphabet()
    joined: set[str] = set()
    for element, obj in _parts(pattern, "pattern"):
        _read_part(obj, element, out, joined)
    for name in sorted(joined):
        numeric = any(isinstance(c.value, int | float) for c in out.values.get(name, []))
        pool: list[Scalar] = [0, 1, 2, 50, 200] if numeric else ["v1", "v2"]
        if numeric:
            pool += [c.value * 2 for c in out.values[name] if isinstance(c.value, int | float)]
        for v in pool:
            out.add(name, v, "a value for a join")
    return out


def _parts(obj: object, element: str, depth: int = 0) -> Iterator[tuple[str, object]]:
    """Every dataclass inside ``obj`` (the pattern's stages, channels, initiator, ...)."""
    if depth > 12:
        return
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type | ir.Node):
        name = getattr(obj, "name", None) or getattr(obj, "id", None) or element
        yield str(name), obj
        for f in dataclasses.fields(obj):
            yield from _parts(getattr(obj, f.name), str(name), depth + 1)
    elif isinstance(obj, tuple | list):
        for item in obj:
            yield from _parts(item, element, depth + 1)


def _read_part(obj: object, element: str, out: Alphabet, joined: set[str]) -> None:
    typ = getattr(obj, "type", None)
    if isinstance(typ, str) and typ not in out.types:
        out.types.append(typ)
    for t in getattr(obj, "types", ()) or ():
        if isinstance(t, str) and t not in out.types:
            out.types.append(t)
    for key, value in _pairs(getattr(obj, "match", None)):
        if isinstance(value, str | int | float):
            out.add(str(key), value, f"{element}: {key} = {value!r}")
        else:  # why: a shared variable joins this field with another event's
            joined.add(str(key))
    joined.update(str(f) for _var, f in _pairs(getattr(obj, "bind", None)))
    for attr in ("where", "until"):
        cond = getattr(obj, attr, None)
        if cond is not None:
            _read_condition(cond, element, out, joined)


def _pairs(value: object) -> list[tuple[object, object]]:
    """A mapping, or a tuple of pairs (the frozen patterns' form), as pairs."""
    if isinstance(value, Mapping):
        return list(value.items())
    if isinstance(value, tuple) and all(isinstance(p, tuple) and len(p) == 2 for p in value):
        return list(value)
    return []


def _read_condition(cond: object, element: str, out: Alphabet, joined: set[str]) -> None:
    parts = getattr(cond, "parts", None) or getattr(cond, "conditions", None)
    if isinstance(parts, tuple | list):
        for p in parts:
            _read_condition(p, element, out, joined)
        return
    if callable(cond) and not isinstance(cond, str | ir.Node):
        out.callables.append(f"{element}: a Python callable (its values cannot be synthesised)")
        return
    try:
        tree = as_tree(cond, element)
    except Exception:
        out.unsolved.append(f"{element}: {cond!r}")
        return
    if isinstance(tree, ir.Node):
        for node in _walk(tree):
            if isinstance(node, ir.Compare):
                _read_compare(node, element, out, joined)


def _walk(node: ir.Node) -> Iterator[ir.Node]:
    yield node
    for f in dataclasses.fields(node):
        value = getattr(node, f.name)
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ir.Node):
                yield from _walk(item)


def _event_field(node: ir.Node) -> str | None:
    """``e.NAME`` (or a stage's ``a.NAME``, which is also an event field) -> ``NAME``."""
    if isinstance(node, ir.Attr) and isinstance(node.obj, ir.Name | ir.Stage):
        return node.name
    return None


def _read_compare(node: ir.Compare, element: str, out: Alphabet, joined: set[str]) -> None:
    left, right, op = node.left, node.right, str(node.op)
    if _event_field(left) is None and _event_field(right) is not None and op in _FLIP:
        left, right, op = right, left, _FLIP[op]  # why: read every comparison as `field OP value`
    name = _event_field(left)
    if name is None:
        return
    text = print_expr(node)
    consts = _constants(right)
    if consts is None:
        if name != "type":
            joined.add(name)
            out.unsolved.append(
                f"{element}: `{text}` compares {name} with a non-constant (searched, not solved)"
            )
        return
    for value in consts:
        if name == "type":
            if op in ("==", "in") and isinstance(value, str) and value not in out.types:
                out.types.append(value)
            continue
        for v, ok in _solve(op, value):
            out.add(name, v, f"`{text}` is {'true' if ok else 'false'}")


def _constants(node: ir.Node) -> list[Scalar] | None:
    if isinstance(node, ir.Literal) and node.value is not None:
        return [node.value]
    if isinstance(node, ir.ListOf) and all(isinstance(i, ir.Literal) for i in node.items):
        return [i.value for i in node.items if isinstance(i, ir.Literal) and i.value is not None]
    if isinstance(node, ir.Unary) and node.op == "-" and isinstance(node.operand, ir.Literal):
        v = node.operand.value
        return [-v] if isinstance(v, int | float) and not isinstance(v, bool) else None
    return None


def _solve(op: str, value: Scalar) -> list[tuple[Scalar, bool]]:
    """A value satisfying ``field OP value`` and one violating it (first the satisfying one)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        other: Scalar = not value if isinstance(value, bool) else f"{value}_other"
        if op in ("==", "in"):
            return [(value, True), (other, False)]
        if op in ("!=", "not in"):
            return [(other, True), (value, False)]
        return [(value, op in ("<=", ">="))]
    step = 1 if isinstance(value, int) else max(abs(value) * 0.01, 0.01)
    table: dict[str, list[tuple[Scalar, bool]]] = {
        ">": [(value + step, True), (value, False)],
        ">=": [(value, True), (value - step, False)],
        "<": [(value - step, True), (value, False)],
        "<=": [(value, True), (value + step, False)],
        "==": [(value, True), (value + step, False)],
        "in": [(value, True), (value + step, False)],
        "!=": [(value + step, True), (value, False)],
        "not in": [(value + step, True), (value, False)],
    }
    return table[op]
