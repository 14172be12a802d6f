"""The Flink backend: the same compiled patterns, run by Apache Flink through PyFlink.

Needs the ``flink`` extra (``apache-flink``, Java 17), installed in its own environment because
PyFlink pins older pandas/numpy/pyarrow (see ``docs/flink.md``). Importing this package without
PyFlink raises :class:`~workbench.backends.base.BackendError` with the install command.

>>> from workbench.backends.flink import run_matchers  # doctest: +SKIP
>>> run_matchers([pattern], events, parallelism=2).detections  # doctest: +SKIP
"""

from __future__ import annotations

from workbench.backends.base import BackendError

try:
    import pyflink  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the environment
    msg = (
        "the flink backend needs PyFlink (apache-flink==2.3.0) and Java 17; install it into its own "
        'environment: python3 -m venv .venv-flink && .venv-flink/bin/pip install -e ".[flink,test]"'
    )
    raise BackendError(msg) from err

from workbench.backends.flink.env import make_environment
from workbench.backends.flink.pipeline import detect, watermark_strategy
from workbench.backends.flink.run import FlinkBackend, FlinkRun, results_of, run_many, run_matchers

__all__ = [
    "FlinkBackend",
    "FlinkRun",
    "detect",
    "make_environment",
    "results_of",
    "run_many",
    "run_matchers",
    "watermark_strategy",
]
