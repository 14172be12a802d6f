"""Tab completion in %%cep cells and on %cep lines (workbench.jupyter.completion)."""

from __future__ import annotations

from typing import Any

import pytest

from workbench.jupyter.completion import complete, register

CELL = """%%cep
event payment(card, amount, country)
sequence probe within 10min partition by card
  begin small: payment where small.amount < 1.5
  followed by big: payment where big.amount > 500
"""


def _texts(
    text: str, patterns: tuple[str, ...] = (), schema: dict[str, tuple[str, ...]] | None = None
) -> list[str]:
    """Completions with the cursor at the end of ``text``."""
    lines = text.split("\n")
    found = complete(text, len(lines) - 1, len(lines[-1]), patterns, schema)
    assert found is not None, text
    return [t for t, _ in found.items]


def test_keywords_in_a_cep_cell() -> None:
    assert _texts("%%cep\nsequence s wi") == ["with", "within"]
    assert _texts("%%cep\nsequence s\n  begin a\n  followed by b\n  ti") == ["timeouts", "times"]


def test_annotations_after_at() -> None:
    assert _texts("%%cep\ngroup g\n  on a(x as v)\n  @and { @ti") == ["timeout", "timeout_channel", "timer"]
    assert "count" in _texts("%%cep\ngroup g\n  on a\n  @and { @")


def test_fields_of_a_stage_bound_to_a_declared_type() -> None:
    assert _texts(CELL + "  where small.") == ["amount", "card", "country"]
    assert _texts(CELL + "  where big.co") == ["country"]


def test_fields_from_the_session_schema() -> None:
    schema = {"login": ("user", "ip"), "payment": ("card",)}
    assert _texts("%%cep\nsequence s\n  begin login where login.", schema=schema) == ["ip", "user"]
    # An unknown owner (a group variable, a typo) gets every known field.
    assert _texts("%%cep\nsequence s\n  begin x where y.", schema=schema) == ["card", "ip", "user"]


def test_names_from_the_cell_and_the_session() -> None:
    got = _texts(CELL + "  where b", patterns=("bursts", "alerts"))
    assert got == ["begin", "big", "bursts", "by"]
    assert _texts("%%cep\nreceive late_pay payment\ngroup g\n  on lat") == ["late_pay"]
    assert "pay" not in _texts("%%cep\nevent payment(a)\nsequence s\n  begin pay")
    assert _texts("%%cep\nevent payment(a)\nsequence s\n  begin pay") == ["payment"]


def test_no_cep_context_means_no_answer() -> None:
    assert complete("%%cep fr", 0, 8) is None  # the magic line itself
    assert complete("import math\nmath.", 1, 5) is None
    assert complete("%%time\nx.", 1, 2) is None


def test_line_magic_subcommands_and_patterns() -> None:
    patterns = ("fraud", "frost", "logins")
    subcommands = [
        "diff",
        "errors",
        "examples",
        "explain",
        "feed",
        "late",
        "list",
        "matches",
        "remove",
        "run",
        "show",
        "timeline",
    ]
    assert _texts("%cep ") == subcommands
    assert _texts("%cep ma") == ["matches"]
    assert _texts("%cep run fr", patterns) == ["fraud", "frost"]
    assert _texts("%cep run fraud ", patterns) == ["frost", "logins"]
    assert _texts("%cep hits << show lo", patterns) == ["logins"]
    assert _texts("x = 1\n%cep show f", patterns) == ["fraud", "frost"]


def test_flag_values_are_left_to_ipython() -> None:
    assert complete("%cep run fraud --on ", 0, 20, ("fraud",)) is None
    assert complete("%cep run fraud -o ", 0, 18, ("fraud",)) is None
    assert complete("%cep list ", 0, 10, ("fraud",)) is None


@pytest.fixture
def shell() -> Any:
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.testing.globalipapp import start_ipython

    start_ipython()  # type: ignore[no-untyped-call]  # the shared test shell (returned on the first call only)
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "workbench")  # registers the matcher
    return ip


def _complete_in(shell: Any, text: str) -> list[tuple[str, str]]:
    from IPython.core.completer import provisionalcompleter

    with provisionalcompleter():
        return [(c.text, c.type) for c in shell.Completer.completions(text, len(text))]


def test_through_ipython_completer(shell: Any) -> None:
    shell.run_cell_magic("cep", "", "sequence fraud_watch\n  begin a\n  followed by b\n")
    assert ("fraud_watch", "pattern") in _complete_in(shell, "%cep run fra")
    got = _complete_in(shell, "%%cep\nsequence s within 5s\n  begin a where a.x > 1\n  @ti")
    assert got == [("timeout", "annotation"), ("timeout_channel", "annotation"), ("timer", "annotation")]
    # Python cells are untouched: the usual completions still come.
    assert any(text == "math" for text, _ in _complete_in(shell, "import math\nmat"))


def test_register_twice_keeps_one_matcher(shell: Any) -> None:
    before = len(shell.Completer.custom_matchers)
    register(shell)
    assert len(shell.Completer.custom_matchers) == before


def test_unload_removes_the_matcher(shell: Any) -> None:
    from workbench.jupyter.extension import load_ipython_extension, unload_ipython_extension

    unload_ipython_extension(shell)
    try:
        assert ("run", "command") not in _complete_in(shell, "%cep ru")
    finally:
        load_ipython_extension(shell)
    assert _complete_in(shell, "%cep ru") == [("run", "command")]


def test_docstring_examples() -> None:
    import doctest

    from workbench.jupyter import completion

    result = doctest.testmod(completion)
    assert (result.attempted, result.failed) == (2, 0)
