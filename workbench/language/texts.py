"""The text of the pieces of a pattern: durations, names, literals and conditions (for the printer
and for anything that shows a pattern to people)."""

from __future__ import annotations

import keyword
import math
from decimal import Decimal

from workbench.engine.expr import ir, print_expr
from workbench.engine.nfa import pattern as seq
from workbench.errors import PatternError
from workbench.language.grammar import DURATION_UNITS, keywords

__all__ = [
    "INDENT",
    "cond_text",
    "condition_text",
    "expr_name",
    "format_duration",
    "format_name",
    "ident_arg",
    "literal",
]

#: one level of indentation in printed pattern text
INDENT = "    "


def format_duration(ms: int | float) -> str:
    """The shortest exact duration literal for ``ms`` milliseconds.

    >>> format_duration(250), format_duration(10_000), format_duration(300_000), format_duration(1.5)
    ('250ms', '10s', '5min', '1.5ms')
    >>> format_duration(1e-10)
    '0.0000000001ms'
    """
    if isinstance(ms, bool) or ms < 0 or not math.isfinite(ms):
        msg = f"not a printable duration: {ms!r}"
        raise PatternError(msg)
    if float(ms).is_integer():
        whole = int(ms)
        for unit in ("d", "h", "min", "s"):
            size = DURATION_UNITS[unit]
            if whole and whole % size == 0:
                return f"{whole // size}{unit}"
        return f"{whole}ms"
    # why positional: repr writes 1e-10, which the duration grammar does not read
    return f"{format(Decimal(repr(float(ms))), 'f')}ms"


def format_name(name: str) -> str:
    """A stage, channel or pattern name as written in text (backquoted when needed).

    >>> format_name("down"), format_name("a or c"), format_name("next")
    ('down', '`a or c`', '`next`')
    """
    if name.isidentifier() and name not in keywords() and name.isascii():
        return name
    if "`" in name or "\n" in name or not name:
        msg = f"name {name!r} cannot be written in pattern text"
        raise PatternError(msg)
    return f"`{name}`"


def expr_name(name: str) -> bool:
    return name.isidentifier() and name.isascii() and not keyword.iskeyword(name)


def ident_arg(name: str) -> str:
    if expr_name(name) and name not in ("True", "False", "None"):
        return name
    return repr(name)


def literal(value: object) -> str:
    """A constant as written in text (an overflowing number as ``1e999``, which reads back as it).

    >>> literal(float("inf")), literal(-float("inf")), literal("a")
    ('1e999', '-1e999', "'a'")
    """
    if isinstance(value, float) and math.isinf(value):
        return "1e999" if value > 0 else "-1e999"
    if isinstance(value, float) and value != value:
        msg = f"constant {value!r} cannot be written in pattern text"
        raise PatternError(msg)
    return repr(value)


def condition_text(cond: object) -> str:
    """A condition for people to read: the expression as ``%%cep`` writes it, ``where``/``or where``
    chains as ``and``/``or``, a callable by its name.

    >>> from workbench.engine.expr import parse_expr
    >>> condition_text(seq.AnyOf((parse_expr("e.x > 1"), parse_expr("e.y < 2 or e.z"))))
    'e.x > 1 or (e.y < 2 or e.z)'
    """
    if isinstance(cond, ir.Node):
        return print_expr(cond, stages="names")
    if isinstance(cond, seq.AllOf | seq.AnyOf):
        word = " and " if isinstance(cond, seq.AllOf) else " or "
        parts = [condition_text(p) for p in cond.parts]
        return word.join(
            p if len(cond.parts) == 1 or _atomic(q) else f"({p})"
            for p, q in zip(parts, cond.parts, strict=True)
        )
    if isinstance(cond, str):
        return cond
    return getattr(cond, "__name__", repr(cond))


def _atomic(cond: object) -> bool:
    return isinstance(cond, ir.Node) and not isinstance(cond, ir.BoolOp | ir.IfElse)


def cond_text(c: object, what: str) -> str:
    if isinstance(c, ir.Node):
        return print_expr(c, stages="names")
    if isinstance(c, str):
        if "\n" in c:
            return " ".join(part.strip() for part in c.split("\n"))
        return c
    msg = f"{what}: a callable condition has no text form ({c!r}); write it as a string"
    raise PatternError(msg)
