"""The language (and the CLI) never import IPython; pattern text never needs a kernel."""

from __future__ import annotations

import subprocess
import sys


def test_language_and_cli_do_not_import_ipython() -> None:
    code = (
        "import sys, workbench.language, workbench.cli, workbench.jupyter.session\n"
        "from workbench.language import compile_pattern\n"
        "compile_pattern('sequence s begin a next b')\n"
        "assert 'IPython' not in sys.modules, sorted(m for m in sys.modules if 'IPython' in m)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
