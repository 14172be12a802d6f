"""The printer and the compiler are inverses: ``compile_pattern(format_pattern(p)) == p``."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from tests.language.strategies import groups, receives, sequences
from workbench.engine.families import compile_matcher
from workbench.errors import CepError
from workbench.language import compile_pattern, format_pattern

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def roundtrip(p: Any) -> None:
    text = format_pattern(p)
    back = compile_pattern(text, validate=False)
    assert p == back, text
    assert text == format_pattern(back)
    try:
        compile_matcher(p)
    except CepError:
        return
    # a pattern the engine accepts is also accepted through the language, with validation on
    assert p == compile_pattern(text)


@SETTINGS
@given(sequences())
def test_sequence_roundtrip(p: Any) -> None:
    roundtrip(p)


@SETTINGS
@given(groups())
def test_group_roundtrip(p: Any) -> None:
    roundtrip(p)


@SETTINGS
@given(receives())
def test_receive_roundtrip(p: Any) -> None:
    roundtrip(p)
