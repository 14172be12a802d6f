"""``%cep late [-o VAR]``: the events the last replay received too late to match."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["late"]


def late(magics: CepMagics, argv: Sequence[str]) -> object:
    """Return (or store with ``-o``) the late events of the last ``%cep run`` as a DataFrame.

    An event is late when its time is at or below the watermark when it arrives (its time is more
    than ``--out-of-orderness`` behind the newest event seen): the engine cannot put it back in
    order, so no pattern sees it. ``seq`` is its position in the input.
    """
    p = ArgParser(prog="%cep late", description="Late events of the last replay (not matched).")
    p.add_argument("-o", "--out", help="store the DataFrame in this variable")
    args = p.parse_args(list(argv))
    frame = magics.session.late_frame()  # dates in, dates out; the input's fields as columns
    if args.out:
        magics.store(args.out, frame)
        return None
    return frame
