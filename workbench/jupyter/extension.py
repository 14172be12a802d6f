"""``%load_ext workbench``: register (and unregister) the ``%%cep`` / ``%cep`` magics."""

from __future__ import annotations

from typing import Any

__all__ = ["load_ipython_extension", "unload_ipython_extension"]


def load_ipython_extension(ipython: Any) -> None:
    """Register :class:`~workbench.jupyter.magics.CepMagics` with the shell."""
    from workbench.jupyter.completion import register
    from workbench.jupyter.magics import CepMagics

    ipython.register_magics(CepMagics)
    register(ipython)  # tab completion in %%cep cells and on %cep lines


def unload_ipython_extension(ipython: Any) -> None:
    """Remove the magics (IPython has no unregister API: drop them from the magics table)."""
    from workbench.jupyter.completion import unregister

    for kind in ("line", "cell"):
        ipython.magics_manager.magics[kind].pop("cep", None)
    unregister(ipython)
