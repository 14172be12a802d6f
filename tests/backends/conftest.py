"""Backend fixtures: the backend matrix, and PyFlink set-up for tests marked ``flink``."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from workbench.backends import Backend, get_backend

ROOT = Path(__file__).resolve().parents[2]
HAVE_PYFLINK = importlib.util.find_spec("pyflink") is not None

# Flink's Python workers import the test matchers by module name (``tests.backends.matchers``);
# they inherit this environment when the JVM gateway starts, which happens after collection.
if HAVE_PYFLINK:
    _path = os.environ.get("PYTHONPATH", "")
    if str(ROOT) not in _path.split(os.pathsep):
        os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), _path) if p)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip ``flink`` tests where PyFlink is not installed (the main environment)."""
    if HAVE_PYFLINK:
        return
    skip = pytest.mark.skip(reason="PyFlink is not installed here; run them in .venv-flink (make test-flink)")
    for item in items:
        # the marker itself: ``item.keywords`` also holds the names of the directories above the
        # test, so a checkout in a folder called "flink" would skip every test
        if item.get_closest_marker("flink") is not None:
            item.add_marker(skip)


@pytest.fixture(
    params=[
        "local",
        pytest.param("flink-1", marks=pytest.mark.flink),
        pytest.param("flink-2", marks=pytest.mark.flink),
    ]
)
def backend(request: pytest.FixtureRequest) -> Backend:
    """Every execution backend: local, and Flink at parallelism 1 and 2."""
    name, _, parallelism = str(request.param).partition("-")
    return get_backend(name, parallelism=int(parallelism or 1))
