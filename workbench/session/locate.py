"""Where the stage or channel that a runtime error names was written: its line, with a caret."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from workbench.language.compile import Definition

__all__ = ["locate_element"]


def locate_element(definitions: Mapping[str, Definition], names: Sequence[str], message: str) -> str:
    """The place in ``names``' source that ``message`` names (text with a caret), or ``""``.

    ``""`` too when no element, or more than one, of the named patterns matches.
    """
    found = []
    for element in re.findall(r"(?:stage|channel) '([^']+)'", message):
        for n in names:
            d = definitions[n]
            if element in d.elements:
                found.append((n, element, d.elements[element], d.source))
    if len({(n, e) for n, e, _, _ in found}) != 1:
        return ""
    name, element, span, source = found[0]
    lines = source.splitlines()
    text = lines[span.line - 1] if 1 <= span.line <= len(lines) else ""
    return (
        f"\n  {element!r} of pattern {name!r} is defined at line {span.line}, column {span.column}:"
        f"\n    {text}\n    {' ' * (span.column - 1)}^"
    )
