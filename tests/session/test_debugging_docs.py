"""Every Python example of docs/debugging-tools.md runs (in order, sharing one namespace)."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "debugging-tools.md"


def test_the_examples_of_the_debugging_page_run() -> None:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), flags=re.S)
    assert len(blocks) == 3
    namespace: dict[str, object] = {}
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), namespace)  # our own documentation
    assert namespace["report"].warnings  # type: ignore[attr-defined]
