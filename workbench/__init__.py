"""CEP Workbench: complex event processing in Jupyter.

``%load_ext workbench`` loads the IPython magics (imported lazily, so ``import workbench`` stays
light). The engine lives in :mod:`workbench.engine` (stdlib only).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["__version__", "load_ipython_extension", "unload_ipython_extension"]
__version__ = "0.1.0"


def load_ipython_extension(ipython: InteractiveShell) -> None:
    """Register the ``%cep`` / ``%%cep`` magics (IPython calls this on ``%load_ext workbench``)."""
    from workbench.jupyter.extension import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: InteractiveShell) -> None:
    """Remove the magics' hooks (IPython calls this on ``%unload_ext workbench``)."""
    from workbench.jupyter.extension import unload_ipython_extension as _unload

    _unload(ipython)
