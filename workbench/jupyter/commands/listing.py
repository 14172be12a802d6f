"""``%cep list``: the patterns defined in this kernel."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["listing"]


def listing(magics: CepMagics, argv: Sequence[str]) -> object:
    """A DataFrame with one row per pattern (name, kind, elements, partition, last detections)."""
    ArgParser(prog="%cep list", description="List the defined patterns.").parse_args(list(argv))
    return magics.session.listing()
