"""get_backend, the local backend's script handling, and errors."""

from __future__ import annotations

import importlib.util

import pytest

from tests.backends.matchers import PairWithin
from workbench.backends import AdvanceTime, Backend, BackendError, LocalBackend, get_backend
from workbench.errors import CepError, EventError


def test_get_backend_local() -> None:
    backend = get_backend("local")
    assert isinstance(backend, LocalBackend)
    assert isinstance(backend, Backend)


def test_unknown_backend_names_the_known_ones() -> None:
    with pytest.raises(BackendError, match="unknown backend 'spark'; known: local, flink, flink-sql"):
        get_backend("spark")


@pytest.mark.skipif(importlib.util.find_spec("pyflink") is not None, reason="PyFlink is installed here")
def test_flink_without_pyflink_says_how_to_install() -> None:
    with pytest.raises(BackendError, match=r"apache-flink==2\.3\.0.*\.venv-flink"):
        get_backend("flink")


def test_script_marks_make_later_events_late(backend: Backend) -> None:
    script = [{"type": "a", "time": 1}, AdvanceTime(5), {"type": "b", "time": 4}, {"type": "b", "time": 6}]
    result = backend.run([PairWithin(window=10)], script)
    assert [e.seq for e in result.late] == [1]
    assert [(d.kind, d.seqs) for d in result.detections] == [("match", (0, 2))]


def test_no_finish_leaves_timers_pending(backend: Backend) -> None:
    script = [{"type": "a", "time": 1}]
    assert backend.run([PairWithin(window=10)], script, finish=False).detections == []
    assert [d.kind for d in backend.run([PairWithin(window=10)], script).detections] == ["timeout"]


def test_until_needs_finish() -> None:
    with pytest.raises(CepError, match="until=5 needs finish=True"):
        LocalBackend().run([], [], until=5, finish=False)


def test_bad_event_is_an_event_error() -> None:
    with pytest.raises(EventError, match="missing event time"):
        LocalBackend().run([PairWithin()], [{"type": "a"}])
