"""The examples in the backends' docstrings (the modules that need no PyFlink)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "workbench.backends",
    "workbench.backends.base",
    "workbench.backends.cases",
    "workbench.backends.keyed",
    "workbench.backends.local",
    "workbench.backends.replay",
    "workbench.backends.flink_sql",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
