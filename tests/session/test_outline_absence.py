"""The outline of a pattern that begins with a silence."""

from __future__ import annotations

from workbench.language import compile_pattern
from workbench.session.outline import outline


def test_the_outline_says_what_is_absent_and_what_follows() -> None:
    text = outline(compile_pattern("sequence s begin every not a: hb for 5s where e.ok followed by b next c"))
    lines = text.splitlines()
    assert lines[0] == (
        "silence: no a (hb where e.ok) for 5s per key; restarts at each absent event and each detection"
    )
    assert lines[1] == "then states: b -> c -> (match)"
    alone = outline(compile_pattern("sequence s begin not a for 5s"))
    assert alone == "silence: no a (any) for 5s per key; restarts at each absent event"
