"""``%cep examples NAME``: the examples as a DataFrame, stored with ``-o``, played with ``--play``."""

from __future__ import annotations

from typing import Any

import pandas as pd
import pytest
from IPython.core.error import UsageError

from tests.jupyter.test_magics import BLOG, ip  # noqa: F401  (the ip fixture)
from workbench.session.examples import Examples
from workbench.widgets import Timeline


def test_examples_magic(ip: Any, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: F811
    ip.run_cell_magic("cep", "", BLOG)
    frame = ip.run_line_magic("cep", "examples and_not --count 1")
    assert isinstance(frame, pd.DataFrame)
    assert "fires" in set(frame["kind"])
    assert "#1 fires" in capsys.readouterr().out
    assert ip.run_line_magic("cep", "examples and_not -o ex") is None
    assert isinstance(ip.user_ns["ex"], Examples)
    widget = ip.run_line_magic("cep", "examples and_not --play 1")
    assert isinstance(widget, Timeline)
    assert widget.model.detections
    with pytest.raises(UsageError):
        ip.run_line_magic("cep", "examples and_not --count 0")
