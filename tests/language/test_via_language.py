"""``--via-language``: every conformance case that passes directly also passes through the language.

Each case's pattern object is printed as ``%%cep`` text, compiled back and run, so the whole corpus
doubles as a test of the printer, the grammar and the compiler.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.conformance.runner import RunOptions, iter_case_files, run_case

CASES = Path(__file__).parent.parent / "data" / "conformance"


@pytest.mark.slow
def test_every_case_passes_via_the_language() -> None:
    files = list(iter_case_files([CASES]))
    assert len(files) > 200
    failures = []
    for path in files:
        case = json.loads(path.read_text(encoding="utf-8"))
        direct = run_case(case, RunOptions(), str(path))
        if not direct.passed:
            continue  # an engine gap, not a language one
        via = run_case(case, RunOptions(via_language=True), str(path))
        if not via.passed:
            failures.append(f"{via.case_id}: {'; '.join(via.diffs)}")
    assert not failures, "\n".join(failures)
