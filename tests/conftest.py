"""Suite-wide collection rules: the long fuzzer run is opt-in (``pytest -m fuzz``)."""

from __future__ import annotations

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the ``fuzz``-marked tests unless the ``-m`` expression names ``fuzz``.

    The normal suite runs a short version of every fuzzer; the long one takes minutes, so neither
    ``make test`` nor the fast suite runs it by accident.
    """
    if "fuzz" in (config.option.markexpr or ""):
        return
    long_runs = [item for item in items if item.get_closest_marker("fuzz") is not None]
    if long_runs:
        config.hook.pytest_deselected(items=long_runs)
        items[:] = [item for item in items if item.get_closest_marker("fuzz") is None]
