"""``@counts`` / ``@counts(Name)``: counters incremented by channel and exit continuations."""

from __future__ import annotations

import pytest

from workbench.engine.reactions import ReactionGroup
from workbench.engine.runtime import run
from workbench.language import compile_text
from workbench.language.errors import CepCompileError
from workbench.language.printer import format_pattern

SOURCE = """
event login(user, ip)
event logout(user, ip)
group g
    on login(user as User, ip as IP)
    @or @timeout(400ms) @counts {
        @counts(Logins) c_login: login(user = User) where e.ip != IP
        @and(inner) @counts(Inner) { x: logout(user = User) }
    }
"""


def group() -> ReactionGroup:
    pattern = compile_text(SOURCE)[0].pattern
    assert isinstance(pattern, ReactionGroup)
    return pattern


def test_counts_lowers_to_channel_and_group_counters() -> None:
    g = group()
    assert g.counts == "Count"
    assert g.channels[0].counts == "Logins"
    inner = g.channels[1]
    assert isinstance(inner, ReactionGroup)
    assert inner.counts == "Inner"


def test_counts_prints_and_reads_back() -> None:
    text = format_pattern(group())
    assert "@or @timeout(400ms) @counts {" in text
    assert "@counts(Logins) c_login" in text
    assert "@and(inner) @counts(Inner) {" in text
    assert compile_text(text)[0].pattern == group()


def test_counters_run_through_the_language() -> None:
    events = [
        {"type": "login", "time": 0, "key": "u", "fields": {"user": "u", "ip": "1"}},
        {"type": "logout", "time": 1, "key": "u", "fields": {"user": "u", "ip": "1"}},
    ]
    # the inner AND matches; its result completes the OR, whose exit counts Count
    assert run(group(), events).counters == {"Inner": 1, "Count": 1}


@pytest.mark.parametrize(
    ("annotation", "message"),
    [("@counts('two words')", "@counts names a counter"), ("@counts(A, B)", "@counts")],
)
def test_bad_counters_are_compile_errors(annotation: str, message: str) -> None:
    text = SOURCE.replace("@counts(Logins)", annotation)
    with pytest.raises(CepCompileError, match=message):
        compile_text(text)
