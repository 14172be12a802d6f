"""``%cep remove NAME...``: forget patterns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.jupyter.commands import ArgParser

__all__ = ["remove"]


def remove(magics: Any, argv: Sequence[str]) -> None:
    """Remove the named patterns from the session."""
    p = ArgParser(prog="%cep remove", description="Forget patterns.")
    p.add_argument("names", nargs="+")
    for name in p.parse_args(list(argv)).names:
        magics.session.remove(name)
