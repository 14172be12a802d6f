"""The IPython shell the magic tests drive: IPython's testing shell with the workbench extension loaded."""

from __future__ import annotations

from typing import Any

from IPython.testing import globalipapp

from workbench.jupyter.extension import load_ipython_extension
from workbench.session.session import CepSession


def cep_shell() -> Any:
    """The process's testing shell (started once), with ``%cep``/``%%cep`` loaded once, and a fresh
    session: no test sees the patterns or event declarations another one defined."""
    globalipapp.start_ipython()  # type: ignore[no-untyped-call]  # once per process; then a no-op
    shell = globalipapp.get_ipython()  # type: ignore[no-untyped-call]
    if "cep" not in shell.magics_manager.magics["cell"]:
        load_ipython_extension(shell)
    magics = shell.magics_manager.registry["CepMagics"]
    magics.session = CepSession()
    return shell
