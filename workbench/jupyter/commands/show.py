"""``%cep show NAME``: the compiled structure of a pattern (its text and an outline)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["show"]


def show(magics: CepMagics, argv: Sequence[str]) -> None:
    """Print the pattern's canonical text, its state diagram and one line per stage/channel."""
    p = ArgParser(prog="%cep show", description="Show a pattern's compiled structure.")
    p.add_argument("name")
    args = p.parse_args(list(argv))
    print(magics.session.show(args.name))
