"""The ``%%cep`` language: one text syntax for reaction groups, sequence patterns and aggregates.

:func:`compile_pattern` turns text into the engine's pattern objects (the same frozen dataclasses
the Python API builds); :func:`format_pattern` prints a pattern object as text, so that
``compile_pattern(format_pattern(p)) == p``. The reference is ``docs/language.md``.

>>> p = compile_pattern('''
... sequence rise within 10s
...     begin low  where e.price < 10
...     next  high where e.price > last(low).price
... ''')
>>> print(format_pattern(p))
sequence rise
    within 10s
    begin low where e.price < 10
    next high where e.price > last(low).price
"""

from __future__ import annotations

from workbench.language.compile import Definition, compile_pattern, compile_patterns, compile_text
from workbench.language.errors import CepCompileError
from workbench.language.functions import register_function, registered_functions, unregister_function
from workbench.language.grammar import parse_duration
from workbench.language.parser import parse
from workbench.language.printer import format_pattern

__all__ = [
    "CepCompileError",
    "Definition",
    "compile_pattern",
    "compile_patterns",
    "compile_text",
    "format_pattern",
    "parse",
    "parse_duration",
    "register_function",
    "registered_functions",
    "unregister_function",
]
