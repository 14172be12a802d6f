"""``%cep matches NAME [-o VAR]``: the detections of the last run, as a DataFrame."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["matches"]


def matches(magics: CepMagics, argv: Sequence[str]) -> object:
    """Return (or store with ``-o``) the detections DataFrame of the last run of NAME."""
    p = ArgParser(prog="%cep matches", description="Detections of the last run of a pattern.")
    p.add_argument("name")
    p.add_argument("-o", "--out", help="store the DataFrame in this variable")
    args = p.parse_args(list(argv))
    frame = magics.session.matches(args.name)
    if args.out:
        magics.store(args.out, frame)
        return None
    return frame
