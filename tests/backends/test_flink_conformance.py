"""Every replayable conformance case gives identical records on Flink (parallelism 1 and 2) and locally."""

from __future__ import annotations

import pytest

from tests.backends.conformance_scripts import CaseRun, case_runs
from workbench.backends import LocalBackend
from workbench.engine.runtime import RunResult
from workbench.errors import CepError

pytestmark = [
    # Beam's gRPC reader thread reports "Multiplexer hanging up" when a job ends; harmless.
    pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning"),
    pytest.mark.flink,
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]


#: Cases with more inputs are load tests (``cep005``: 750,000 events, ``last_a_fby_b_big``: 30,000);
#: the benchmark test covers Flink at that scale.
MAX_INPUTS = 1_000


def _local_runs() -> list[tuple[CaseRun, RunResult]]:
    out = []
    for run in case_runs(max_inputs=MAX_INPUTS):
        try:
            out.append((run, LocalBackend().run(run.matchers, run.inputs, **run.options)))
        except CepError:
            continue  # the case expects a runtime error (skip_throw_on_miss); a Flink job would fail
    return out


@pytest.fixture(scope="module")
def local_runs() -> list[tuple[CaseRun, RunResult]]:
    return _local_runs()


@pytest.mark.parametrize("parallelism", [1, 2])
def test_conformance_cases_identical_on_flink(
    parallelism: int, local_runs: list[tuple[CaseRun, RunResult]]
) -> None:
    from workbench.backends.flink import FlinkRun, run_many

    runs = [FlinkRun(run.matchers, run.inputs, **run.options) for run, _ in local_runs]
    results = run_many(runs, parallelism=parallelism)
    differing = [
        run.case_id
        for (run, expected), actual in zip(local_runs, results, strict=True)
        if expected.detections != actual.detections
        or expected.reactions != actual.reactions
        or expected.late != actual.late
    ]
    assert differing == []
    assert len(local_runs) > 150
