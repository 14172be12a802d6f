"""The examples in the benchmark modules' docstrings."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["benchmarks.checksum", "benchmarks.workload", "benchmarks.run", "benchmarks.patterns"]


@pytest.mark.parametrize("name", MODULES)
def test_doctests(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
