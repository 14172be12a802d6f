"""``%cep errors [-o VAR]``: the runtime errors of conditions in the last replay and the live feed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["errors"]


def errors(magics: CepMagics, argv: Sequence[str]) -> object:
    """Return (or store with ``-o``) the condition errors of the last ``%cep run`` (and of the live
    ``%cep feed``, if one runs) as a DataFrame.

    A condition that fails on an event (a string compared with a number, a registered function
    that raises, a limit reached) does not stop the run: that event does not match. Each distinct
    error is one row, with how many events it happened on and the first of them (``first_seq`` is
    its position in the input). ``%cep run --strict`` stops at the first error instead.
    """
    p = ArgParser(prog="%cep errors", description="Condition errors of the last replay (runs go on).")
    p.add_argument("-o", "--out", help="store the DataFrame in this variable")
    args = p.parse_args(list(argv))
    frame = magics.session.errors_frame()
    if frame.empty:  # why: an empty table with headers reads as a failure to show them
        print("no condition errors in the last run" + (" or the live feed" if magics.session.live else ""))
    if args.out:
        magics.store(args.out, frame)
        return None
    return frame
