"""The Jupyter front end: the ``%%cep``/``%cep`` magics and the session behind them."""

from __future__ import annotations

from typing import Any

__all__ = ["current_session"]


def current_session(shell: Any = None) -> Any:
    """The kernel's ``%cep`` session (see :func:`workbench.jupyter.extension.current_session`)."""
    from workbench.jupyter.extension import current_session as _current

    return _current(shell)
