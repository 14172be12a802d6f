"""``%cep timeline NAME... [--key K] [-o VAR]``: the timeline widget of the last run of patterns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.jupyter.commands import ArgParser

__all__ = ["timeline"]


def _parser() -> ArgParser:
    p = ArgParser(prog="%cep timeline", description="Show the timeline of the last run of patterns.")
    p.add_argument("names", nargs="+", help="pattern names (run them first with %%cep run)")
    p.add_argument("--key", action="append", help="show only this key (repeatable)")
    p.add_argument("-o", "--out", help="store the Timeline widget in this variable")
    return p


def timeline(magics: Any, argv: Sequence[str]) -> Any:
    """Build the timeline; return it (Jupyter displays it) or store it with ``-o``."""
    args = _parser().parse_args(list(argv))
    widget = magics.session.timeline(args.names, keys=args.key)
    if args.out:
        magics.store(args.out, widget)
        return None
    return widget
