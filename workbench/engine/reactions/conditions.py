"""Compile conditions and expressions (text, IR trees or callables) into ``f(event, env)`` callables.

Text is parsed once into the expression IR (cached); it sees ``e`` and every variable of ``env``
by name. Callables are called as ``f(e, env)``. A condition that raises on an event reports the
error to the group's :class:`~workbench.engine.faults.FaultSink` and evaluates to NULL (the event
does not match); without a sink the error is raised as a :class:`CepRuntimeError`.

>>> from workbench.engine.events import Event
>>> compile_condition("e.x > limit")(Event("a", 1, None, {"x": 3}), {"limit": 2})
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import lru_cache
from typing import cast

from workbench.engine.events import Event
from workbench.engine.expr import MappingFrame, Run, compile_expr, ir
from workbench.engine.faults import FaultSink
from workbench.errors import CepError, CepRuntimeError, ExpressionError, PatternError

__all__ = ["Compiled", "compile_condition"]

#: A compiled condition or expression: ``f(event, variables) -> value``.
Compiled = Callable[[Event, Mapping[str, object]], object]


@lru_cache(maxsize=1024)
def _compile(source: str | ir.Node) -> tuple[str, Run]:
    expr = compile_expr(source)
    return expr.source, expr.run


def _guarded(label: str, run: Compiled, where: str, faults: FaultSink | None) -> Compiled:
    def guarded(event: Event, env: Mapping[str, object]) -> object:
        try:
            return run(event, env)
        except CepError:
            raise
        except Exception as err:
            if faults is None:
                msg = (
                    f"{where + ': ' if where else ''}condition {label!r} failed on event "
                    f"{event.describe()}: {type(err).__name__}: {err}; bound variables: {sorted(env)}"
                )
                raise CepRuntimeError(msg) from err
            faults.report(f"{where} {label!r}".strip(), err, event)
            return None

    return guarded


def compile_condition(cond: object, where: str = "", faults: FaultSink | None = None) -> Compiled:
    """A callable ``f(e, env)`` for a condition (text, tree or callable); PatternError if none of these.

    ``where`` names the condition's place in messages (``group 'g', channel 'c'``); runtime errors
    go to ``faults`` (see the module docstring).
    """
    if isinstance(cond, str | ir.Node):
        try:
            label, run = _compile(cond)
        except ExpressionError as err:
            msg = f"{where}: {err}" if where else str(err)
            raise PatternError(msg) from None

        def evaluate(event: Event, env: Mapping[str, object]) -> object:
            return run(event, MappingFrame(env), None)

        return _guarded(label, evaluate, where, faults)
    if callable(cond):
        label = getattr(cond, "__name__", repr(cond))
        return _guarded(label, cast(Compiled, cond), where, faults)
    msg = f"{where}: a condition must be a string or a callable f(e, env), got {type(cond).__name__}"
    raise PatternError(msg)
