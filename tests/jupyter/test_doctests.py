"""The examples in the docstrings of the magics' helper modules run."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["workbench.session.explain", "workbench.session.typecheck"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
