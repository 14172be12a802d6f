"""A PyFlink execution environment set up for the workbench (local mini-cluster by default)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pyflink.common import Configuration
from pyflink.datastream import StreamExecutionEnvironment

__all__ = ["ExecutionMode", "expose_packages", "make_environment"]

ExecutionMode = str
"""PyFlink's ``python.execution-mode``: ``"process"`` (separate Python workers) or ``"thread"``."""


def make_environment(
    parallelism: int = 1,
    *,
    checkpoint_interval_ms: int | None = None,
    savepoint: str | Path | None = None,
    execution_mode: ExecutionMode = "thread",
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
        execution_mode: ``"thread"`` (default: Python embedded in the JVM, no worker processes to
            start, several times faster for small jobs) or ``"process"`` (separate Python workers).
            Embedded Python finds packages only through ``PYTHONPATH``, which this function extends
            with ``sys.path``; the JVM reads it when it starts, so the first PyFlink call of the
            process should be this function (a ``Configuration()`` made earlier starts the JVM).
        config: further Flink configuration entries.
    """
    expose_packages()
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


def expose_packages() -> None:
    """Thread mode embeds Python in the JVM, which finds packages only through ``PYTHONPATH``."""
    current = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    wanted = [p for p in sys.path if p and Path(p).is_dir() and p not in current]
    os.environ["PYTHONPATH"] = os.pathsep.join(current + wanted)
