"""Run one scripted case on a backend chosen by name (for the conformance adapters).

The conformance adapters turn a case into patterns plus an input script (events and
:class:`~workbench.backends.base.AdvanceTime` marks) and call :func:`run_case_inputs`; the result
is the backend's :class:`~workbench.engine.runtime.RunResult`, compared like the engine's. A failing
backend job (Flink wraps the engine's error into a Java exception) comes back as a
:class:`~workbench.backends.base.BackendError` that names the engine's error class when it can.

>>> run_case_inputs("local", [], [{"type": "a", "time": 1}]).detections
[]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from workbench.backends import get_backend
from workbench.backends.base import BackendError, Input, PatternLike
from workbench.engine.runtime import RunResult
from workbench.errors import CepError

__all__ = ["BackendJobError", "run_case_inputs"]

#: The engine's error in a failed job's traceback, as Python prints it
#: (``workbench.errors.SkipStrategyError: message``) or as PyFlink forwards it
#: (``<class 'workbench.errors.SkipStrategyError'>: message``).
_ENGINE_ERROR = re.compile(r"workbench\.errors\.(\w+)(?:'>)?: ([^\n]*)")


class BackendJobError(BackendError):
    """A backend job failed.

    Attributes:
        engine_error: the engine's error class name found in the job's traceback (``None``: the
            job failed for another reason, for example in the cluster).
    """

    def __init__(self, message: str, engine_error: str | None) -> None:
        super().__init__(message)
        self.engine_error = engine_error


def run_case_inputs(
    backend: str,
    patterns: Sequence[PatternLike],
    inputs: Iterable[Input],
    *,
    out_of_orderness: int | float = 0,
    until: int | float | None = None,
    finish: bool = True,
    parallelism: int = 1,
) -> RunResult:
    """Run ``patterns`` over one input script on the backend called ``backend``.

    Args:
        backend: a name :func:`~workbench.backends.get_backend` knows (``"local"``, ``"flink"``, ...).
        patterns: pattern objects or compiled matchers.
        inputs: events in arrival order, optionally with ``AdvanceTime`` marks.
        out_of_orderness: see :meth:`~workbench.backends.base.Backend.run`.
        until: see :meth:`~workbench.backends.base.Backend.run`.
        finish: see :meth:`~workbench.backends.base.Backend.run`.
        parallelism: the backend's parallelism (ignored by ``"local"``).

    Raises:
        BackendError: the backend is unknown or missing.
        BackendJobError: the backend's job failed (naming the engine's error when it shows one).
        CepError: the local backend raises the engine's errors as they are.
    """
    runner = get_backend(backend, parallelism=parallelism)
    script = list(inputs)
    try:
        return runner.run(patterns, script, out_of_orderness=out_of_orderness, until=until, finish=finish)
    except CepError:
        raise
    except Exception as err:  # a failed job surfaces as Py4J/Java exceptions, not as CepError
        found = _ENGINE_ERROR.findall(str(err))
        engine_error = found[-1][0] if found else None
        cause = f"{found[-1][0]}: {found[-1][1]}" if found else type(err).__name__
        msg = f"the {backend} job failed: {cause}"
        raise BackendJobError(msg, engine_error) from err
