"""``%cep timeline``, ``%cep run --timeline`` and ``current_session()``."""

from __future__ import annotations

from typing import Any

import pytest
from IPython.core.error import UsageError

from tests.jupyter.test_magics import BLOG, ip  # noqa: F401  (the ip fixture)
from workbench.errors import CepError
from workbench.jupyter import current_session
from workbench.jupyter.commands.timeline import build as build_timeline
from workbench.widgets import Timeline


def test_run_with_timeline_returns_the_widget_of_that_run(ip: Any) -> None:  # noqa: F811
    ip.run_cell_magic("cep", "", BLOG)
    widget = ip.run_line_magic("cep", "run and_not --on logins -o hits --timeline")
    assert isinstance(widget, Timeline)
    session = current_session(ip)
    run = session.runs["and_not"]
    assert len(widget.model.detections) == len(run.detections) == len(ip.user_ns["hits"])
    assert widget.model.instances, "the run was traced: its instances are on the timeline"


def test_run_with_explain_prints_why_for_that_run(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    ip.run_cell_magic("cep", "", BLOG)
    frame = ip.run_line_magic("cep", "run and_not and_not --on logins --explain")
    printed = capsys.readouterr().out
    session = current_session(ip)
    assert printed.count("and_not: ") == 1  # a name given twice is one pattern, explained once
    assert session.explain("and_not") in printed  # the same words as %cep explain on that run
    assert len(frame) == len(session.runs["and_not"].detections)
    widget = ip.run_line_magic("cep", "run and_not and_not --on logins -o hits --timeline")
    assert len(widget.model.detections) == len(ip.user_ns["hits"])


def test_timeline_subcommand_filters_keys_and_names_unrun_patterns(ip: Any) -> None:  # noqa: F811
    ip.run_cell_magic("cep", "", BLOG)
    ip.run_line_magic("cep", "run or_stop --on logins -o hits")
    widget = ip.run_line_magic("cep", "timeline or_stop --key user1")
    assert isinstance(widget, Timeline)
    assert widget.keys == ["user1"]
    ip.run_cell_magic("cep", "", BLOG)  # redefining forgets the runs
    with pytest.raises(CepError, match="has not run yet"):
        build_timeline(current_session(ip), ["or_paused"])
    with pytest.raises(UsageError):
        ip.run_line_magic("cep", "timeline")


def test_current_session_without_magics_is_a_clear_error() -> None:
    class Shell:
        def find_line_magic(self, name: str) -> None:
            return None

    with pytest.raises(CepError, match="load_ext workbench"):
        current_session(Shell())
