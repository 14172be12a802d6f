"""The Flink backend refuses ``emit into`` with a reason (it has no second operator to feed)."""

from __future__ import annotations

import pytest

from workbench.backends.base import BackendError, RunOptions
from workbench.language import compile_patterns

pytestmark = [pytest.mark.flink, pytest.mark.filterwarnings("ignore::DeprecationWarning")]

TEXT = """
sequence burst measures n = count(f) emit into burst begin f: fail times 3
sequence attack begin b: burst times 2
"""


def test_the_backend_refuses_emit_into_before_any_job() -> None:
    pytest.importorskip("pyflink")
    from workbench.backends.flink import FlinkBackend, FlinkRun, run_many

    patterns = compile_patterns(TEXT)
    events = [{"type": "fail", "time": t, "key": "k"} for t in range(6)]
    with pytest.raises(
        BackendError, match=r"pattern 'burst' emits into 'burst', which the Flink backend does not"
    ):
        FlinkBackend(report=lambda line: None).execute(patterns, events, RunOptions())
    with pytest.raises(BackendError, match="second keyed operator"):
        run_many([FlinkRun(tuple(patterns), tuple(events))])
