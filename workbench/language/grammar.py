"""The ``%%cep`` grammar, loaded once, and the lexical facts read from it.

``cep.lark`` ships in the package; :func:`lark_parser` loads it on first use into an LALR(1) parser
with lark's contextual lexer. :func:`keywords` lists the reserved words the grammar spells, and
:func:`parse_duration` reads a duration literal (``250ms``, ``1.5s``, ``5min``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from importlib import resources

from lark import Lark

from workbench.engine.expr.durations import UNITS

__all__ = ["DURATION_UNITS", "keywords", "lark_parser", "parse_duration"]

#: milliseconds per duration unit (the expressions' units: one table)
DURATION_UNITS: Mapping[str, int] = UNITS

_DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)\s?(ms|s|sec|min|h|d)$")


@functools.cache
def lark_parser() -> Lark:
    """The LALR(1) parser of ``cep.lark`` (built once)."""
    grammar = resources.files("workbench.language").joinpath("cep.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
    )


@functools.cache
def _keywords() -> frozenset[str]:
    out = set()
    for term in lark_parser().terminals:
        pat = term.pattern
        if pat.type == "str" and re.fullmatch(r"[a-z]+", pat.value):
            out.add(pat.value)
    return frozenset(out)


def keywords() -> frozenset[str]:
    """Every reserved word of the language (``within``, ``followed``, ``times``, ...)."""
    return _keywords()


def parse_duration(text: str) -> int | float:
    """Milliseconds in a duration literal.

    >>> parse_duration("250ms"), parse_duration("1.5s"), parse_duration("5min"), parse_duration("3d")
    (250, 1500, 300000, 259200000)
    """
    m = _DURATION_RE.match(text.strip())
    if m is None:
        msg = f"not a duration: {text!r} (write e.g. 250ms, 10s, 5min, 1h, 3d)"
        raise ValueError(msg)
    value = float(m.group(1)) * DURATION_UNITS[m.group(2)]
    return int(value) if value.is_integer() else value
