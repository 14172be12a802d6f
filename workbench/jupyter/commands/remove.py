"""``%cep remove NAME...``: forget patterns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["remove"]


def remove(magics: CepMagics, argv: Sequence[str]) -> None:
    """Remove the named patterns from the session."""
    p = ArgParser(prog="%cep remove", description="Forget patterns.")
    p.add_argument("names", nargs="+")
    for name in p.parse_args(list(argv)).names:
        magics.session.remove(name)
