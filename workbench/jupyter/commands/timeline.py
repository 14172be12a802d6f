"""``%cep timeline NAME... [--key K] [-o VAR]``: the timeline widget of the last run of patterns."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics
    from workbench.session.session import CepSession
    from workbench.widgets import Timeline

__all__ = ["build", "timeline"]


def _parser() -> ArgParser:
    p = ArgParser(prog="%cep timeline", description="Show the timeline of the last run of patterns.")
    p.add_argument("names", nargs="+", help="pattern names (run them first with %%cep run)")
    p.add_argument("--key", action="append", help="show only this key (repeatable)")
    p.add_argument("-o", "--out", help="store the Timeline widget in this variable")
    return p


def build(session: CepSession, names: Sequence[str], keys: Sequence[Hashable] | None = None) -> Timeline:
    """The :class:`~workbench.widgets.Timeline` of the last run (or live feed) of ``names``."""
    from workbench.widgets import Timeline

    trace, detections = session.records(names)
    return Timeline(
        trace,
        detections,
        keys=list(keys) if keys else None,
        title=", ".join(names),
        times=session.times_of(names),
    )


def timeline(magics: CepMagics, argv: Sequence[str]) -> object:
    """Build the timeline; return it (Jupyter displays it) or store it with ``-o``."""
    args = _parser().parse_args(list(argv))
    widget = build(magics.session, args.names, args.key)
    if args.out:
        magics.store(args.out, widget)
        return None
    return widget
