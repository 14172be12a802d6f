"""``%%cep [NAME] [--on EVENTS] [-o VAR] [-q] [--out-of-orderness MS|DURATION] [--backend B]``: define
patterns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser
from workbench.jupyter.commands.run import (
    MISSING_KEY_HELP,
    OUT_OF_ORDERNESS_HELP,
    TIME_UNIT_HELP,
    replay_args,
)
from workbench.session.inputs import out_of_orderness_ms
from workbench.session.notes import describe

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["define"]

#: the body of a %%cep cell starts on cell line 2 (line 1 is the magic line).
CELL_FIRST_LINE = 2


def _parser() -> ArgParser:
    p = ArgParser(prog="%%cep", description="Define patterns; optionally replay events through them.")
    p.add_argument("name", nargs="?", help="name for a cell whose single definition has none")
    p.add_argument("--on", help="replay these events right away (a DataFrame variable or a file)")
    p.add_argument("-o", "--out", help="store the detections DataFrame in this variable")
    p.add_argument("-q", "--quiet", action="store_true", help="print nothing")
    p.add_argument("--time", help="time column of --on")
    p.add_argument("--time-unit", help=TIME_UNIT_HELP)
    p.add_argument("--key", help="partition key column of --on")
    p.add_argument("--type", help="event type column of --on")
    p.add_argument(
        "--out-of-orderness", default="0", metavar="MS|DURATION", help=f"of --on: {OUT_OF_ORDERNESS_HELP}"
    )
    p.add_argument("--backend", default="local", help="run --on with this backend (local, flink, flink-sql)")
    p.add_argument("--allow-missing-key", action="store_true", help=MISSING_KEY_HELP)
    return p


def define(magics: CepMagics, argv: Sequence[str], cell: str) -> object:
    """Compile the cell; print what was defined; replay ``--on`` if given."""
    args = _parser().parse_args(list(argv))
    if args.on is not None:
        magics.resolve(args.on)  # why first: a misspelt --on variable leaves the session as it was
        out_of_orderness_ms(args.out_of_orderness)  # why first: so does a bad --out-of-orderness
    if args.on is None:
        defs = magics.session.define(cell, first_line=CELL_FIRST_LINE, default_name=args.name)
        if not args.quiet:
            for d in defs:
                print(f"defined {d.pattern.name!r}: {describe(d.pattern)}")
            if not defs:
                print(f"event types known: {', '.join(sorted(magics.session.schema)) or 'none'}")
        return None
    # why undone on error: the user sees only the run's error, so the cell must not have
    # replaced the patterns either (a bad --time-unit or backend, a missing key column, ...)
    with magics.session.undone_on_error():
        defs = magics.session.define(cell, first_line=CELL_FIRST_LINE, default_name=args.name)
        frame = replay_args(magics, [d.pattern.name for d in defs], args)
    return None if args.out else frame
