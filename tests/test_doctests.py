"""Run the doctests of the engine, language-independent modules (the examples in docstrings)."""

from __future__ import annotations

import doctest
import importlib
import pkgutil

import pytest

import workbench.engine

MODULES = [
    *sorted(m.name for m in pkgutil.walk_packages(workbench.engine.__path__, "workbench.engine.")),
    "workbench.errors",
    "workbench.conformance.runner",
]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0
