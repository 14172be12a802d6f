"""The frontend-free application layer: a session of defined patterns and their runs.

Used by both the command line (:mod:`workbench.cli`) and the notebook magics
(:mod:`workbench.jupyter`); nothing here imports IPython, ipywidgets or bokeh.

* :mod:`.session`: :class:`~workbench.session.session.CepSession` (define, run, explain, show);
* :mod:`.inputs`: DataFrames and files (CSV, JSON lines, Parquet) into events;
* :mod:`.typecheck`: near misses between patterns and their input (types, fields);
* :mod:`.explain` and :mod:`.outline`: why instances did or did not fire, and a pattern's shape;
* :mod:`.progress`: text progress of long replays.
"""

from __future__ import annotations

from workbench.session.session import CepSession, RunOutcome

__all__ = ["CepSession", "RunOutcome"]
