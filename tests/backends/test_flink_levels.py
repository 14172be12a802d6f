"""The levels of an ``emit into`` chain on Flink, and the path choice for emitters (no PyFlink needed)."""

from __future__ import annotations

import pytest

from workbench.backends.base import BackendError, RunOptions
from workbench.backends.flink.levels import levels_of
from workbench.backends.flink.paths import choose_paths
from workbench.engine.families import compile_matcher
from workbench.language import compile_patterns

THREE = """
sequence takeover begin a: attack followed by s: login_ok
sequence attack emit into attack begin b: burst times 3
sequence plain begin x: login_ok
sequence burst measures n = count(f) emit into burst begin f: fail times 3
sequence both begin b: burst followed by a: attack
"""


def test_each_pattern_runs_one_level_past_the_patterns_that_feed_it() -> None:
    matchers = [compile_matcher(p) for p in compile_patterns(THREE)]
    levels = [[matchers[i].name for i in level] for level in levels_of(matchers)]
    assert levels == [["plain", "burst"], ["attack"], ["takeover", "both"]]


def test_without_emit_into_there_is_one_level() -> None:
    matchers = [compile_matcher(p) for p in compile_patterns("sequence a begin x: x\nsequence b begin y: y")]
    assert levels_of(matchers) == [[0, 1]]


def test_an_emitter_that_reads_its_keys_whole_stream_is_refused() -> None:
    text = "sequence pv emit into pv begin x: c where prev(e, 1).type == 'a'"
    matchers = [compile_matcher(p) for p in compile_patterns(text)]
    with pytest.raises(BackendError, match=r"'pv' would receive the events it derives itself"):
        levels_of(matchers)


def test_emitters_and_their_consumers_take_the_python_path_with_a_reason() -> None:
    patterns = compile_patterns(THREE)
    events = [{"type": "fail", "time": t, "key": "k"} for t in range(3)]
    reasons = {c.pattern: c.reasons for c in choose_paths(patterns, events, RunOptions())}
    assert any("emits into 'burst'" in r for r in reasons["burst"])
    assert any("emits into 'attack'" in r and "second keyed operator" in r for r in reasons["attack"])
    assert any("reads the derived type(s) 'attack'" in r for r in reasons["takeover"])
    assert any("reads the derived type(s) 'attack', 'burst'" in r for r in reasons["both"])
    assert not any("derived" in r or "emits" in r for r in reasons["plain"])
