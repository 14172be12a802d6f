"""Compile conditions and expressions (strings or callables) into ``f(event, env)`` callables.

Strings are compiled once (cached) with :func:`workbench.engine.expr.compile_expr`; they see ``e``
and every variable of ``env`` by name. Callables are called as ``f(e, env)``.

>>> from workbench.engine.events import Event
>>> compile_condition("e.x > limit")(Event("a", 1, None, {"x": 3}), {"limit": 2})
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import Any, cast

from workbench.engine.events import Event
from workbench.engine.expr import compile_expr
from workbench.errors import ExpressionError, PatternError

__all__ = ["Compiled", "compile_condition"]

Compiled = Callable[[Event, Mapping[str, Any]], Any]


@lru_cache(maxsize=1024)
def _compile_string(source: str) -> Compiled:
    expr = compile_expr(source)

    def run(event: Event, env: Mapping[str, Any]) -> Any:
        variables = dict(env)
        variables["e"] = event
        try:
            return expr(variables)
        except NameError as err:
            msg = f"condition {source!r}: {err}; bound variables: {sorted(env)}"
            raise ExpressionError(msg) from None
        except (AttributeError, KeyError, TypeError, ValueError, ArithmeticError) as err:
            msg = f"condition {source!r} failed on event {event.describe()}: {err}"
            raise ExpressionError(msg) from None

    return run


def compile_condition(cond: object, where: str = "") -> Compiled:
    """A callable ``f(e, env)`` for a condition string or callable; raises PatternError if neither."""
    if isinstance(cond, str):
        try:
            return _compile_string(cond)
        except ExpressionError as err:
            msg = f"{where}: {err}" if where else str(err)
            raise PatternError(msg) from None
    if callable(cond):
        return cast(Compiled, cond)
    msg = f"{where}: a condition must be a string or a callable f(e, env), got {type(cond).__name__}"
    raise PatternError(msg)
