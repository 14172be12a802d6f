"""The Jupyter front end: the ``%%cep``/``%cep`` magics and the session behind them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from workbench.session.session import CepSession


__all__ = ["current_session"]


def current_session(shell: InteractiveShell | None = None) -> CepSession:
    """The kernel's ``%cep`` session (see :func:`workbench.jupyter.extension.current_session`)."""
    from workbench.jupyter.extension import current_session as _current

    return _current(shell)
