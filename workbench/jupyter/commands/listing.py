"""``%cep list``: the patterns defined in this kernel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.jupyter.commands import ArgParser

__all__ = ["listing"]


def listing(magics: Any, argv: Sequence[str]) -> Any:
    """A DataFrame with one row per pattern (name, kind, elements, partition, last detections)."""
    ArgParser(prog="%cep list", description="List the defined patterns.").parse_args(list(argv))
    return magics.session.listing()
