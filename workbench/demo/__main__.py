"""``python -m workbench.demo [example ...]``: run the Prova blog examples (see :mod:`workbench.demo.cli`)."""

from __future__ import annotations

import sys

from workbench.demo.cli import main

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
