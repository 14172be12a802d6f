"""The condition-function registry: register_function / unregister_function / registered_functions."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from workbench.engine import run
from workbench.engine.expr import (
    BUILTIN_NAMES,
    compile_expr,
    register_function,
    registered_functions,
    unregister_function,
)
from workbench.errors import CepError, ExpressionError
from workbench.language import compile_pattern, compile_text


@pytest.fixture
def clean() -> Iterator[None]:
    before = registered_functions()
    yield
    for name in set(registered_functions()) - set(before):
        unregister_function(name)


def test_a_registered_function_is_callable_in_every_family(clean: None) -> None:
    register_function("spread_r", lambda hi, lo: hi - lo)
    assert "spread_r" in registered_functions()
    assert compile_expr("spread_r(5, 2) == 3")({}) is True
    seq = compile_pattern("sequence s begin a where spread_r(e.hi, e.lo) > 2")
    grp = compile_pattern("receive r quote where spread_r(e.hi, e.lo) > 2")
    events = [{"type": "quote", "time": 0, "hi": 5, "lo": 1}, {"type": "quote", "time": 1, "hi": 2, "lo": 1}]
    assert [d.seqs for d in run([seq], events).detections] == [(0,)]
    assert [d.seqs for d in run([grp], events).detections] == [(0,)]


def test_unregister_removes_it_and_definitions_then_fail(clean: None) -> None:
    register_function("gone_r", abs)
    compiled = compile_expr("gone_r(-2) == 2")
    unregister_function("gone_r")
    assert "gone_r" not in registered_functions()
    assert compiled({}) is True  # compiled conditions keep the functions they were compiled with
    with pytest.raises(CepError, match=r"unknown function 'gone_r'.*register_function\('gone_r', fn\)"):
        compile_text("sequence s begin a where gone_r(e.x) > 1")


BAD_NAMES = ["", "2x", "a-b", "lambda", "_private", "__import__", "e", "matched", "None"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_invalid_or_reserved_names(name: str) -> None:
    with pytest.raises(ExpressionError, match="cannot register a condition function named"):
        register_function(name, abs)


def test_not_callable() -> None:
    with pytest.raises(ExpressionError, match="needs a callable, got int"):
        register_function("seven_r", 7)  # type: ignore[arg-type]


def test_taken_names_need_replace(clean: None) -> None:
    with pytest.raises(ExpressionError, match="a built-in condition function named 'len' exists already"):
        register_function("len", lambda x: 0)
    register_function("twice_r", lambda x: 2 * x)
    register_function("twice_r", registered_functions()["twice_r"])  # the same function again is fine
    with pytest.raises(ExpressionError, match="pass replace=True"):
        register_function("twice_r", lambda x: 3 * x)
    register_function("twice_r", lambda x: 3 * x, replace=True)
    assert compile_expr("twice_r(2)")({}) == 6


def test_unregister_errors(clean: None) -> None:
    assert "len" in BUILTIN_NAMES
    with pytest.raises(ExpressionError, match="'len' is a built-in condition function"):
        unregister_function("len")
    register_function("spread_r", lambda hi, lo: hi - lo)
    with pytest.raises(ExpressionError, match=r"no condition function named 'spred_r' .*'spread_r'"):
        unregister_function("spred_r")


def test_the_language_reexports_the_registry() -> None:
    import workbench.language as lang

    assert lang.register_function is register_function
    assert lang.unregister_function is unregister_function
