"""The ``%cep`` subcommands, one module each; :func:`dispatch` picks one from the magic's line."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NoReturn

from IPython.core.error import UsageError

from workbench.language.conditions import nearest

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["SUBCOMMANDS", "ArgParser", "dispatch"]


class ArgParser(argparse.ArgumentParser):
    """An argparse parser whose errors are IPython ``UsageError`` s (shown without a traceback)."""

    def error(self, message: str) -> NoReturn:
        msg = f"{self.prog}: {message}\n{self.format_usage().strip()}"
        raise UsageError(msg)

    def exit(self, status: int = 0, message: str | None = None) -> NoReturn:
        if status == 0:  # why: --help printed the help already; that is the whole answer
            raise HelpShown
        raise UsageError(message or self.format_help())


class HelpShown(Exception):  # why an exception: argparse exits from deep in parse_args
    """``--help`` printed a parser's help: the magic returns nothing more."""


def _table() -> dict[str, Callable[[CepMagics, Sequence[str]], object]]:
    from workbench.jupyter.commands import (
        diff,
        errors,
        examples,
        explain,
        feed,
        late,
        listing,
        matches,
        remove,
        run,
        show,
        timeline,
    )

    return {
        "run": run.run,
        "feed": feed.feed,
        "list": listing.listing,
        "show": show.show,
        "matches": matches.matches,
        "explain": explain.explain,
        "diff": diff.diff,
        "examples": examples.examples,
        "remove": remove.remove,
        "late": late.late,
        "errors": errors.errors,
        "timeline": timeline.timeline,
    }


SUBCOMMANDS = (
    "run",
    "feed",
    "list",
    "show",
    "matches",
    "explain",
    "diff",
    "examples",
    "timeline",
    "late",
    "errors",
    "remove",
)


def dispatch(magics: CepMagics, argv: Sequence[str]) -> object:
    """Run the subcommand named by ``argv[0]`` (``help``, ``-h`` or ``--help``: the overview, or
    ``help NAME`` the subcommand's own help)."""
    if not argv:
        msg = f"%cep needs a subcommand: {', '.join(SUBCOMMANDS)} (or use %%cep to define patterns)"
        raise UsageError(msg)
    name, *rest = argv
    table = _table()
    if name in _HELP:
        if not rest or rest[0] in _HELP:  # why the second: %cep help help is the overview too
            print(overview())
            return None
        name, rest = rest[0], ["--help"]
    if name not in table:
        # why help among them: to the user it is a subcommand (%cep hlep), though no module serves it
        words = (*SUBCOMMANDS, "help")
        msg = f"unknown %cep subcommand {name!r}{nearest(name, words)}; subcommands: {', '.join(words)}"
        raise UsageError(msg)
    try:
        return table[name](magics, rest)
    except HelpShown:
        return None


_HELP = ("help", "-h", "--help")


def overview() -> str:
    """``%cep help``: the cell magic and every subcommand, each with its one-line purpose."""
    from importlib import import_module

    lines = [
        "%%cep [NAME] [--on EVENTS] [-o VAR] [-q] ...   define patterns (and replay EVENTS through them)",
        "",
        "%cep SUBCOMMAND ...   (%cep help SUBCOMMAND, or %cep SUBCOMMAND --help, for its options)",
    ]
    modules = {"list": "listing"}
    for name in SUBCOMMANDS:
        doc = import_module(f"workbench.jupyter.commands.{modules.get(name, name)}").__doc__ or ""
        usage, _, purpose = doc.partition("``:")
        purpose = " ".join(purpose.split("\n\n")[0].split()).split(";")[0].replace("``", "").rstrip(".")
        lines.append(f"  {name:<9} {purpose or usage.strip('`')}")
    return "\n".join(lines)
