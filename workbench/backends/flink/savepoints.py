"""Stop a running job with a savepoint (PyFlink 2.3's own ``JobClient.stop_with_savepoint`` is broken).

PyFlink 2.3 calls the Java ``JobClient.stopWithSavepoint(boolean, String)``, which Flink 2 replaced by
``stopWithSavepoint(boolean, String, SavepointFormatType)``; the call fails with "method does not
exist". :func:`stop_with_savepoint` calls the Java method with the format.
"""

from __future__ import annotations

from pathlib import Path

from pyflink.common.job_client import JobClient
from pyflink.java_gateway import get_gateway

__all__ = ["stop_with_savepoint"]


def stop_with_savepoint(
    client: JobClient, directory: str | Path, *, drain: bool = False, timeout_s: float = 120.0
) -> str:
    """Take a savepoint into ``directory`` and stop the job; return the savepoint's path.

    Args:
        client: the job, as returned by ``env.execute_async()``.
        directory: where the savepoint goes.
        drain: emit the final watermark first (fires every timer: only for a job that ends for good).
        timeout_s: how long to wait for the savepoint.
    """
    gateway = get_gateway()
    canonical = gateway.jvm.org.apache.flink.core.execution.SavepointFormatType.CANONICAL
    future = client._j_job_client.stopWithSavepoint(drain, str(directory), canonical)
    seconds = gateway.jvm.java.util.concurrent.TimeUnit.SECONDS
    return str(future.get(int(timeout_s), seconds))
