"""Headless demo (``python -m workbench.demo``, ``make demo``): the four Prova blog examples.

For each example it prints the lines the blog's ``println`` continuations and exit reactions print
(channel reactions and detections, formatted as Prova prints them), then the detections as records.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from workbench.demo.examples import EXAMPLES, run_example_records
from workbench.engine.detection import Detection

__all__ = ["main"]


def _describe(d: Detection) -> str:
    events = ", ".join(f"{ch}={e.describe()}" for ch, e in zip(d.channels, d.events, strict=True))
    negated = f" not[{', '.join(d.negated)}]" if d.negated else ""
    return f"  {d.kind} key={d.key} instance={d.instance} t={d.time}: {events or '-'}{negated}"


def main(argv: Sequence[str] | None = None) -> int:
    """Run the examples and print their output; returns the exit status."""
    names = list(argv) if argv else list(EXAMPLES)
    unknown = [n for n in names if n not in EXAMPLES]
    if unknown:
        print(f"unknown example(s) {unknown}; choose from {list(EXAMPLES)}", file=sys.stderr)
        return 2
    for name in names:
        records = run_example_records(EXAMPLES[name])
        print(f"=== {name}.prova")
        for line, _ in records:
            print(line)
        detections = [r for _, r in records if isinstance(r, Detection)]
        print(f"--- {len(detections)} detection(s)")
        for d in detections:
            print(_describe(d))
        print()
    return 0
