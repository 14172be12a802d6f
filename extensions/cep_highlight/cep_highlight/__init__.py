"""JupyterLab 4 prebuilt extension: syntax highlighting for ``%%cep`` cells of CEP Workbench.

The labextension is installed into ``share/jupyter/labextensions/cep-highlight`` by the wheel;
nothing needs importing at run time. ``_jupyter_labextension_paths`` serves the development
install (``jupyter labextension develop``).
"""

from __future__ import annotations

__all__ = ["_jupyter_labextension_paths"]


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Tell JupyterLab where the built extension of this package lives.

    Returns:
        One entry: the ``labextension`` folder beside this module, installed as ``cep-highlight``.
    """
    return [{"src": "labextension", "dest": "cep-highlight"}]
