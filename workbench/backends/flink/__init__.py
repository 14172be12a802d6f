"""The Flink backends: the same compiled patterns, run by Apache Flink through PyFlink.

Needs the ``flink`` extra (``apache-flink``, Java 17), installed in its own environment because
PyFlink pins older pandas/numpy/pyarrow (see ``docs/flink.md``). The runtime names of this package
(:class:`FlinkBackend`, :func:`run_matchers`, ...) are imported on first use; without PyFlink that
raises :class:`~workbench.backends.base.BackendError` with the install command. The SQL translation
(:mod:`workbench.backends.flink.sql`, ``backend="flink-sql"``) imports without PyFlink and needs it
only to run a query.

>>> from workbench.backends.flink import run_matchers  # doctest: +SKIP
>>> run_matchers([pattern], events, parallelism=2).detections  # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from workbench.backends.base import BackendError

if TYPE_CHECKING:
    from workbench.backends.flink.env import make_environment
    from workbench.backends.flink.pipeline import detect, watermark_strategy
    from workbench.backends.flink.run import FlinkBackend, FlinkRun, results_of, run_many, run_matchers

__all__ = [
    "FlinkBackend",
    "FlinkRun",
    "detect",
    "make_environment",
    "require_pyflink",
    "results_of",
    "run_many",
    "run_matchers",
    "watermark_strategy",
]

#: The module of this package that defines each runtime name.
_HOMES = {
    "FlinkBackend": "run",
    "FlinkRun": "run",
    "results_of": "run",
    "run_many": "run",
    "run_matchers": "run",
    "make_environment": "env",
    "detect": "pipeline",
    "watermark_strategy": "pipeline",
}


def require_pyflink() -> None:
    """Raise :class:`~workbench.backends.base.BackendError` with the install command without PyFlink."""
    try:
        import pyflink  # noqa: F401
    except ImportError as err:  # pragma: no cover - depends on the environment
        msg = (
            "the flink backend needs PyFlink (apache-flink==2.3.0) and Java 17; install it into its own "
            'environment: python3 -m venv .venv-flink && .venv-flink/bin/pip install -e ".[flink,test]"'
        )
        raise BackendError(msg) from err


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        msg = f"module {__name__!r} has no attribute {name!r}"
        raise AttributeError(msg)
    require_pyflink()
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)
