"""Every example of docs/language.md runs.

A ```` ```cep ```` block must compile. When it is followed by an ```` ```events ```` block (one JSON
event per line) and a ```` ```detections ```` block (one JSON detection per line: ``pattern``,
``kind``, ``events`` = arrival positions, and optionally ``key``, ``negated`` and ``measures``), the
events are replayed through the block's patterns and the detections must be exactly those. A
```` ```cep-error ```` block must fail; the ```` ```text ```` block after it holds the message.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from workbench.engine import run
from workbench.errors import CepError
from workbench.language import compile_text, format_pattern, register_function

DOC = Path(__file__).parent.parent.parent / "docs" / "language.md"

# the reference registers this function from Python before using it in a condition
register_function("spread", lambda hi, lo: hi - lo, replace=True)
FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```", re.M | re.S)


def _blocks() -> list[tuple[str, str, int]]:
    text = DOC.read_text(encoding="utf-8")
    return [(m.group(1), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


def _examples() -> list[Any]:
    blocks = _blocks()
    out = []
    for i, (kind, body, line) in enumerate(blocks):
        if kind not in ("cep", "cep-error"):
            continue
        events = expected = message = None
        if kind == "cep" and i + 2 < len(blocks) and blocks[i + 1][0] == "events":
            events = blocks[i + 1][1]
            assert blocks[i + 2][0] == "detections", f"line {line}: events without detections"
            expected = blocks[i + 2][1]
        if kind == "cep-error":
            assert blocks[i + 1][0] == "text", f"line {line}: a cep-error block needs a text block"
            message = blocks[i + 1][1]
        out.append(pytest.param(kind, body, events, expected, message, id=f"line{line}"))
    return out


EXAMPLES = _examples()


def test_the_reference_has_examples() -> None:
    assert len(EXAMPLES) >= 30


@pytest.mark.parametrize(("kind", "body", "events", "expected", "message"), EXAMPLES)
def test_example(kind: str, body: str, events: str | None, expected: str | None, message: str | None) -> None:
    if kind == "cep-error":
        with pytest.raises(CepError) as info:
            compile_text(body)
        assert message is not None
        assert message.strip() == str(info.value).strip()
        return
    defs = compile_text(body)
    for d in defs:  # every example survives printing (as %cep show does) and compiling back
        (back,) = compile_text(format_pattern(d.pattern, partition=d.partition))
        assert (d.pattern, d.partition) == (back.pattern, back.partition)
    if events is None:
        return
    assert expected is not None
    result = run([d.pattern for d in defs], [json.loads(line) for line in events.strip().splitlines()])
    want = [json.loads(line) for line in expected.strip().splitlines()]
    got = []
    for d, w in zip(result.detections, want, strict=False):
        item: dict[str, Any] = {"pattern": d.pattern, "kind": d.kind, "events": list(d.seqs)}
        if "key" in w:
            item["key"] = d.key
        if "negated" in w:
            item["negated"] = list(d.negated)
        if "measures" in w:
            item["measures"] = dict(d.measures)
        got.append(item)
    extra = result.detections[len(want) :]
    got += [{"pattern": d.pattern, "kind": d.kind, "events": list(d.seqs)} for d in extra]
    assert want == got
