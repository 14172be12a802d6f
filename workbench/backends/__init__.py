"""Execution backends: the same patterns run in this process or on Apache Flink.

>>> get_backend("local").name
'local'
"""

from __future__ import annotations

from workbench.backends.base import AdvanceTime, Backend, BackendError, Input
from workbench.backends.local import LocalBackend

__all__ = ["BACKENDS", "AdvanceTime", "Backend", "BackendError", "Input", "LocalBackend", "get_backend"]

#: Backend names :func:`get_backend` knows.
BACKENDS = ("local", "flink", "flink-sql")


def get_backend(name: str, *, parallelism: int = 1) -> Backend:
    """The backend called ``name``: ``"local"``, ``"flink"`` or ``"flink-sql"`` (PyFlink imported lazily).

    Args:
        name: the backend's name.
        parallelism: the Flink operator's parallelism (ignored by ``"local"``).

    Raises:
        BackendError: for an unknown name, or when the backend's dependencies are missing.
    """
    if name == "local":
        return LocalBackend()
    if name == "flink":
        from workbench.backends.flink import FlinkBackend

        return FlinkBackend(parallelism=parallelism)
    if name == "flink-sql":
        from workbench.backends.flink import require_pyflink
        from workbench.backends.flink.sql import FlinkSqlBackend

        require_pyflink()

        return FlinkSqlBackend(parallelism=parallelism)
    msg = f"unknown backend {name!r}; known: {', '.join(BACKENDS)}"
    raise BackendError(msg)
