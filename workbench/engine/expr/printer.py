"""Print an IR tree back as expression text that parses to the same tree.

``stages="matched"`` prints a stage as ``matched('a')`` (the Python API's and conformance dialect);
``stages="names"`` prints the bare stage name, as ``%%cep`` text writes it (``last(low).price``).
Parentheses appear only where precedence needs them.

>>> from workbench.engine.expr.parse import parse_expr
>>> print(print_expr(parse_expr("(a + b) * c ** -1 if not x is None else last(matched('low')).price")))
(a + b) * c ** -1 if not x is None else last(matched('low')).price
"""

from __future__ import annotations

import keyword
import math
from typing import Literal as L

from workbench.engine.expr import ir
from workbench.engine.expr.stream import format_size

__all__ = ["print_expr"]

# Python's precedence levels, lowest first.
_IF, _OR, _AND, _NOT, _CMP, _ADD, _MUL, _UNARY, _POW, _PRIMARY, _ATOM = range(11)
_BIN_LEVEL = {"+": _ADD, "-": _ADD, "*": _MUL, "/": _MUL, "//": _MUL, "%": _MUL, "**": _POW}


def print_expr(node: ir.Node, *, stages: L["matched", "names"] = "matched") -> str:
    """The text of ``node`` (see the module docstring for ``stages``)."""
    return _Printer(stages).text(node, _IF)


class _Printer:
    def __init__(self, stages: str) -> None:
        self.stages = stages
        self.bound: list[frozenset[str]] = []  # names bound by enclosing lets and comprehensions

    def _bare(self, stage: str) -> bool:
        """Whether a stage can be written as its bare name (an identifier nothing rebinds here)."""
        return (
            self.stages == "names"
            and stage.isidentifier()
            and stage.isascii()
            and not keyword.iskeyword(stage)
            and not any(stage in b for b in self.bound)
        )

    def text(self, node: ir.Node, need: int) -> str:
        body, level = self._node(node)
        return f"({body})" if level < need else body

    def _node(self, node: ir.Node) -> tuple[str, int]:
        if isinstance(node, ir.Literal):
            return _literal(node.value)
        if isinstance(node, ir.Name):
            return node.name, _ATOM
        if isinstance(node, ir.Stage):
            if self._bare(node.stage):
                return node.stage, _ATOM
            return f"matched({node.stage!r})", _PRIMARY
        if isinstance(node, ir.ListOf):
            items = ", ".join(self.text(i, _IF) for i in node.items)
            if node.tuple_:
                return (f"({items},)" if len(node.items) == 1 else f"({items})"), _ATOM
            return f"[{items}]", _ATOM
        if isinstance(node, ir.Dict):
            pairs = ", ".join(
                f"{self.text(k, _IF)}: {self.text(v, _IF)}"
                for k, v in zip(node.keys, node.values, strict=True)
            )
            return "{" + pairs + "}", _ATOM
        if isinstance(node, ir.Attr):
            return f"{self._primary(node.obj)}.{node.name}", _PRIMARY
        if isinstance(node, ir.Index):
            return f"{self._primary(node.obj)}[{self.text(node.index, _IF)}]", _PRIMARY
        if isinstance(node, ir.Method):
            return f"{self._primary(node.obj)}.{node.name}({self._args(node.args)})", _PRIMARY
        if isinstance(node, ir.Call):
            return f"{node.func}({self._args(node.args)})", _PRIMARY
        if isinstance(node, ir.Offset):
            return f"prev(e, {node.n})", _PRIMARY
        if isinstance(node, ir.Window):
            size = format_size(node.size, node.unit)
            over = "over session" if node.unit == "session" else "over last"
            return f"{node.func}({self.text(node.value, _OR)} {over} {size})", _PRIMARY
        if isinstance(node, ir.Unary):
            if node.op == "not":
                return f"not {self.text(node.operand, _NOT)}", _NOT
            return f"{node.op}{self.text(node.operand, _UNARY)}", _UNARY
        if isinstance(node, ir.Binary):
            level = _BIN_LEVEL[node.op]
            if node.op == "**":  # right-associative, and binds tighter than a unary minus on its left
                return f"{self.text(node.left, _PRIMARY)} ** {self.text(node.right, _UNARY)}", _POW
            return f"{self.text(node.left, level)} {node.op} {self.text(node.right, level + 1)}", level
        if isinstance(node, ir.Compare):
            return f"{self.text(node.left, _CMP + 1)} {node.op} {self.text(node.right, _CMP + 1)}", _CMP
        if isinstance(node, ir.IsNull):
            op = "is not" if node.negated else "is"
            return f"{self.text(node.operand, _CMP + 1)} {op} None", _CMP
        if isinstance(node, ir.BoolOp):
            level = _OR if node.op == "or" else _AND
            return f" {node.op} ".join(self.text(i, level + 1) for i in node.items), level
        if isinstance(node, ir.IfElse):
            then = self.text(node.then, _OR)
            return f"{then} if {self.text(node.test, _OR)} else {self.text(node.orelse, _IF)}", _IF
        if isinstance(node, ir.Let):
            return self._let(node), _PRIMARY
        if isinstance(node, ir.Comprehension):
            return self._comprehension(node), _ATOM
        msg = f"cannot print a {type(node).__name__}"
        raise TypeError(msg)

    def _let(self, node: ir.Let) -> str:
        params = ", ".join(node.params)
        self.bound.append(frozenset(node.params))
        body = self.text(node.body, _IF)
        self.bound.pop()
        return f"(lambda {params}: {body})({self._args(node.args)})"

    def _comprehension(self, node: ir.Comprehension) -> str:
        clauses = []
        depth = len(self.bound)
        for clause in node.clauses:
            part = f"for {_target(clause.target, top=True)} in {self.text(clause.source, _OR)}"
            self.bound.append(ir.target_names(clause.target))
            part += "".join(f" if {self.text(c, _OR)}" for c in clause.conditions)
            clauses.append(part)
        inner = f"{self.text(node.element, _IF)} {' '.join(clauses)}"
        del self.bound[depth:]
        return f"({inner})" if node.generator else f"[{inner}]"

    def _primary(self, node: ir.Node) -> str:
        if (
            isinstance(node, ir.Literal)
            and isinstance(node.value, int | float)
            and not isinstance(node.value, bool)
        ):
            return f"({node.value!r})"  # 1.x would read as a number
        return self.text(node, _PRIMARY)

    def _args(self, args: tuple[ir.Node, ...]) -> str:
        if len(args) == 1 and isinstance(args[0], ir.Comprehension) and args[0].generator:
            body, _ = self._node(args[0])
            return body[1:-1]  # sum(x for x in ...), as Python writes a lone generator argument
        return ", ".join(self.text(a, _IF) for a in args)


def _target(target: ir.Target, *, top: bool = False) -> str:
    if isinstance(target, str):
        return target
    inner = ", ".join(_target(t) for t in target)
    if len(target) == 1:
        inner += ","
    return inner if top and len(target) > 1 else f"({inner})"


def _literal(value: object) -> tuple[str, int]:
    """A literal's text and level: a negative number binds as a unary minus."""
    if isinstance(value, bool) or value is None:
        return repr(value), _ATOM
    if isinstance(value, float) and not math.isfinite(value):
        # why 1e999: the text reads back as the float it overflows to (``inf`` would be a name)
        if value != value:
            return "(1e999 - 1e999)", _ATOM
        return ("1e999", _ATOM) if value > 0 else ("-1e999", _UNARY)
    if isinstance(value, int | float):
        return repr(value), (_UNARY if value < 0 or repr(value).startswith("-") else _ATOM)
    return repr(value), _ATOM
