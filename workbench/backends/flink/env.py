"""A PyFlink execution environment set up for the workbench (local mini-cluster by default)."""

from __future__ import annotations

import sys
from pathlib import Path

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

__all__ = ["ExecutionMode", "make_environment"]

ExecutionMode = str
"""PyFlink's ``python.execution-mode``: ``"process"`` (separate Python workers) or ``"thread"``."""


def make_environment(
    parallelism: int = 1,
    *,
    checkpoint_interval_ms: int | None = None,
    savepoint: str | Path | None = None,
    execution_mode: ExecutionMode = "process",
    config: dict[str, str] | None = None,
) -> StreamExecutionEnvironment:
    """A streaming environment whose Python workers run this interpreter (and so see ``workbench``).

    Without a cluster address in ``config`` PyFlink starts a local mini-cluster in this process's
    JVM gateway, which is what tests and notebooks use; a real cluster is reached through the usual
    Flink configuration (``rest.address``, ``execution.target``) or ``flink run -py``.

    Args:
        parallelism: default parallelism of the job's operators.
        checkpoint_interval_ms: enable checkpointing at this interval (``None``: off).
        savepoint: restore the job from this savepoint or retained checkpoint.
        execution_mode: ``"process"`` (default) or ``"thread"`` (Python embedded in the JVM; it
            finds packages only through a ``PYTHONPATH`` exported before this process started).
        config: further Flink configuration entries.
    """
    conf = Configuration()
    conf.set_string("python.executable", sys.executable)
    conf.set_string("python.client.executable", sys.executable)
    conf.set_string("python.execution-mode", execution_mode)
    if savepoint is not None:
        conf.set_string("execution.savepoint.path", str(savepoint))
    for name, value in (config or {}).items():
        conf.set_string(name, value)
    env = StreamExecutionEnvironment.get_execution_environment(conf)
    env.set_parallelism(parallelism)
    if checkpoint_interval_ms is not None:
        env.enable_checkpointing(checkpoint_interval_ms)
    return env
