"""Functions that conditions may call, registered by name from Python.

Pattern text never runs arbitrary Python: a condition can only call the functions of
:data:`workbench.engine.expr.BUILTINS` (``len``, ``sum``, ``abs``, ...) and those registered here.
Registration adds the function to that table, so every pattern family (which compiles its condition
strings with :func:`workbench.engine.expr.compile_expr`) can call it.

>>> register_function("spread", lambda hi, lo: hi - lo, replace=True)
>>> from workbench.engine.expr import compile_expr
>>> compile_expr("spread(3, 1) == 2")({})
True
"""

from __future__ import annotations

import keyword
from collections.abc import Callable
from typing import Any

from workbench.engine.expr import BUILTINS
from workbench.errors import CepError

__all__ = ["register_function", "registered_functions"]

_RESERVED = frozenset({"e", "matched"})


def register_function(name: str, fn: Callable[..., Any], *, replace: bool = False) -> None:
    """Make ``fn`` callable as ``name(...)`` in conditions.

    Raises :class:`~workbench.errors.CepError` for a name that is not an identifier, is reserved
    (``e``, ``matched``, Python keywords, names starting with ``_``) or is taken (unless ``replace``).
    """
    if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_") or name in _RESERVED:
        msg = f"cannot register a condition function named {name!r}"
        raise CepError(msg)
    if not callable(fn):
        msg = f"register_function({name!r}, ...) needs a callable, got {type(fn).__name__}"  # type: ignore[unreachable]
        raise CepError(msg)
    if name in BUILTINS and not replace and BUILTINS[name] is not fn:
        msg = f"a condition function named {name!r} exists already; pass replace=True to replace it"
        raise CepError(msg)
    BUILTINS[name] = fn


def registered_functions() -> dict[str, Callable[..., Any]]:
    """A copy of the table of functions conditions may call."""
    return dict(BUILTINS)
