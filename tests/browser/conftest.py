"""The one JupyterLab server of the browser tests (started on first use, for the whole session)."""

from __future__ import annotations

import secrets
from collections.abc import Iterator

import pytest

from tests.browser.lab import Lab, run_lab


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    yield from run_lab(tmp_path_factory.mktemp("lab"), secrets.token_hex(16))
