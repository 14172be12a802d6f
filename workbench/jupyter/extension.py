"""``%load_ext workbench``: register (and unregister) the ``%%cep`` / ``%cep`` magics."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from workbench.session.session import CepSession


__all__ = ["current_session", "load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register :class:`~workbench.jupyter.magics.CepMagics` with the shell."""
    from workbench.jupyter.completion import register
    from workbench.jupyter.magics import CepMagics

    ipython.register_magics(CepMagics)
    register(ipython)  # tab completion in %%cep cells and on %cep lines


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """Remove the magics (IPython has no unregister API: drop them from the magics table)."""
    from workbench.jupyter.completion import unregister

    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("cep", None)
    unregister(ipython)


def current_session(shell: InteractiveShell | None = None) -> CepSession:
    """The :class:`~workbench.session.session.CepSession` of the running kernel's ``%cep`` magics.

    It holds the defined patterns and, per pattern, the detections and trace of its last run:
    ``current_session().runs["name"].trace``. Raises a :class:`~workbench.errors.CepError` when the
    magics are not loaded (``%load_ext workbench``).
    """
    from workbench.errors import CepError
    from workbench.session.session import CepSession

    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    magic = shell.find_line_magic("cep") if shell is not None else None
    if magic is None:
        msg = "the workbench magics are not loaded in this kernel: run %load_ext workbench"
        raise CepError(msg)
    session = magic.__self__.session
    assert isinstance(session, CepSession)
    return session
