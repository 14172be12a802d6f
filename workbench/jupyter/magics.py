"""The ``%%cep`` cell magic and the ``%cep`` line magic.

Cell magic (define, optionally run)::

    %%cep [NAME] [VAR <<] [--on EVENTS] [-o VAR] [-q]
    sequence ... / group ...

defines (or replaces) the patterns of the cell in the kernel's session. ``NAME`` names a cell whose
single definition has no name of its own. With ``--on`` it also replays ``EVENTS`` and returns the
detections as a DataFrame (or stores it in ``VAR``).

Line magic subcommands (one module each in :mod:`workbench.jupyter.commands`)::

    %cep run NAME... --on DATAFRAME_OR_PATH [-o VAR] [--time COL] [--key COL] [--type COL] [--timeline]
             [--explain] [--strict]
    %cep feed NAME... --start | %cep feed --from ITERABLE | %cep feed --stop
    %cep list
    %cep show NAME
    %cep matches NAME [-o VAR]
    %cep explain NAME [--key KEY] [--instance N] [--all] [--event SEQ]
    %cep diff OLD NEW --on DATA [-o VAR]
    %cep timeline NAME... [--key KEY] [-o VAR]
    %cep late [-o VAR]
    %cep errors [-o VAR]
    %cep remove NAME
    %cep help [NAME]

``VAR << %cep ...``-style capture is written ``%cep VAR << run ...`` (jupysql). User errors (bad
pattern text, an unknown pattern, a bad event file) are shown as the message with the caret, without
a Python traceback; bad flags raise IPython's ``UsageError``.
"""

from __future__ import annotations

import keyword
import re
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from traitlets import Bool, Int

from workbench.errors import CepError
from workbench.jupyter import commands
from workbench.jupyter.commands.define import define as define_cell
from workbench.language.conditions import nearest
from workbench.session.session import CepSession

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["CepCellError", "CepMagics"]

_CAPTURE = re.compile(r"^\s*(?P<var>[A-Za-z_]\w*)\s*<<\s*(?P<rest>.*)$", re.DOTALL)


class CepCellError(Exception):
    """A user error raised from a magic: IPython shows only the message (no Python frames)."""

    def __init__(self, error: CepError) -> None:
        super().__init__(str(error))
        self.error = error

    def _render_traceback_(self) -> list[str]:
        lines = str(self.error).splitlines() or [""]
        lines[0] = f"{type(self.error).__name__}: {lines[0]}"
        return lines


@magics_class
class CepMagics(Magics):
    """``%%cep`` / ``%cep``; settings via ``%config CepMagics.<name> = ...``."""

    progress_threshold = Int(
        10_000, config=True, help="Show a progress bar when a replay has at least this many events."
    )
    trace = Bool(True, config=True, help="Record the engine trace on replays (needed by %cep explain).")

    def __init__(self, shell: InteractiveShell | None = None, **kwargs: object) -> None:
        super().__init__(shell=shell, **kwargs)
        self.session = CepSession()

    @line_cell_magic
    def cep(self, line: str = "", cell: str | None = None) -> object:
        """Define patterns (cell) or run a subcommand (line): ``%cep help`` lists the subcommands,
        ``%cep help NAME`` (or ``%cep NAME --help``) gives one's options."""
        var = None
        if m := _CAPTURE.match(line):
            var, line = m["var"], m["rest"]
        try:
            argv = shlex.split(line)
        except ValueError as err:
            msg = f"cannot split the magic line: {err}"
            raise UsageError(msg) from None
        try:
            result = define_cell(self, argv, cell) if cell is not None else commands.dispatch(self, argv)
        except commands.HelpShown:  # why: %%cep --help printed its help; nothing is defined
            return None
        except CepError as err:
            raise CepCellError(err) from None
        if var is not None:
            self.store(var, result)
            return None
        return result

    def resolve(self, source: str) -> object:
        """``--on`` value: a variable of the user's namespace, else a file path."""
        ns = self.shell.user_ns if self.shell is not None else {}
        if source.isidentifier() and source in ns:
            return ns[source]
        if source.isidentifier() and not Path(source).exists():
            frames = [k for k, v in ns.items() if not k.startswith("_") and type(v).__name__ == "DataFrame"]
            msg = (
                f"--on {source}: no variable {source!r}{nearest(source, frames)} and no such file; "
                f"DataFrames defined: {', '.join(sorted(frames)) or 'none'}"
            )
            raise CepError(msg)
        return source

    def store(self, name: str, value: object) -> None:
        """Put ``value`` into the user's namespace as ``name`` (a plain identifier: never a keyword
        or one of Python's and IPython's own ``__names__``)."""
        if self.shell is None:
            msg = "the %cep magics are not attached to a shell"
            raise UsageError(msg)
        if (
            not name.isidentifier()
            or keyword.iskeyword(name)
            or (name.startswith("__") and name.endswith("__"))
        ):
            msg = f"cannot store the result as {name!r}: give a variable name such as 'hits'"
            raise UsageError(msg)
        self.shell.user_ns[name] = value
