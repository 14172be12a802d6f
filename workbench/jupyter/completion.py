"""Tab completion for ``%%cep`` cells and ``%cep`` lines, through IPython's completer.

IPython's completer serves every frontend (JupyterLab, Notebook, VS Code, the terminal), so this
works wherever the kernel does. Inside a ``%%cep`` cell it offers:

* after ``@``: annotation names (``@timeout``, ``@count``, ...);
* after ``X.``: the fields of ``X``'s event type, from ``event`` declarations in the cell or the
  session's schema (``begin small: payment`` binds stage ``small`` to type ``payment``);
* elsewhere: keywords, event types, the cell's stage and pattern names, and the session's patterns.

On a ``%cep`` line it offers the subcommands, then pattern names (but not where a flag such as
``--on`` takes a value: IPython's own variable and file completion handles that).

The analysis is textual, so it works on half-written cells that do not parse yet.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from IPython.core.completer import CompletionContext, SimpleCompletion, SimpleMatcherResult, context_matcher

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from workbench.session.session import CepSession

__all__ = ["CepCompletions", "complete", "register", "unregister"]

_CELL_MAGIC = re.compile(r"\s*%%cep(?![A-Za-z_0-9])")
_LINE_MAGIC = re.compile(r"^\s*(?:[A-Za-z_]\w*\s*=\s*)?%cep\s+(?:[A-Za-z_]\w*\s*<<\s*)?(?P<args>.*)$")
_WORD_END = re.compile(r"[A-Za-z_0-9]*$")
_EVENT_DECL = re.compile(r"\bevent\s+(?P<type>[A-Za-z_]\w*)\s*\((?P<fields>[^)]*)\)")
_STAGE = re.compile(
    r"\b(?:begin|next|followed\s+by(?:\s+any)?)\s+(?P<stage>[A-Za-z_]\w*)(?:\s*:\s*(?P<type>[A-Za-z_]\w*))?"
)
_PATTERN_NAME = re.compile(r"^\s*(?:sequence|group|receive)\s+(?P<name>[A-Za-z_]\w*)", re.MULTILINE)
_OPTIONS_WITH_VALUE = frozenset(
    {
        "--on",
        "-o",
        "--out",
        "--time",
        "--time-unit",
        "--key",
        "--type",
        "--out-of-orderness",
        "--from",
        "--instance",
        "--backend",
        "--late",
    }
)
_NO_PATTERN_ARGS = frozenset({"list"})
_MATCHER_ID = "workbench.cep_matcher"


@dataclass(frozen=True)
class CepCompletions:
    """What to insert: ``fragment`` (the end of the text before the cursor) is replaced by an item.

    Attributes:
        fragment: the partial word before the cursor (may be empty).
        items: each completion's text and kind (keyword, annotation, field, event, stage, pattern,
            command).
    """

    fragment: str
    items: tuple[tuple[str, str], ...]


@functools.cache
def _keywords() -> frozenset[str]:
    from workbench.language.grammar import keywords

    return keywords()


@functools.cache
def _annotations() -> frozenset[str]:
    from workbench.language.compile import CHANNEL_ANNOTATIONS, EXIT_ANNOTATIONS, INITIATOR_ANNOTATIONS

    return frozenset({"and", "or", *CHANNEL_ANNOTATIONS, *EXIT_ANNOTATIONS, *INITIATOR_ANNOTATIONS})


def _subcommands() -> tuple[str, ...]:
    from workbench.jupyter.commands import SUBCOMMANDS

    return SUBCOMMANDS


def _pick(fragment: str, candidates: Iterable[tuple[str, str]]) -> CepCompletions:
    chosen: dict[str, str] = {}
    for text, kind in candidates:
        if text.startswith(fragment):
            chosen.setdefault(text, kind)
    return CepCompletions(fragment, tuple(sorted(chosen.items())))


def _schema(cell: str, schema: Mapping[str, Iterable[str]]) -> dict[str, tuple[str, ...]]:
    types = {name: tuple(fields) for name, fields in schema.items()}
    for m in _EVENT_DECL.finditer(cell):
        types[m["type"]] = tuple(f.strip() for f in m["fields"].split(",") if f.strip())
    return types


def _complete_cell(
    before: str, cell: str, patterns: Iterable[str], schema: Mapping[str, Iterable[str]]
) -> CepCompletions:
    partial = _WORD_END.search(before)
    word = partial.group() if partial else ""
    head = before[: len(before) - len(word)]
    types = _schema(cell, schema)
    keywords = _keywords()
    stages = {m["stage"]: m["type"] for m in _STAGE.finditer(cell) if m["stage"] not in keywords}
    if head.endswith("@"):
        return _pick(word, ((a, "annotation") for a in _annotations()))
    if owner := re.search(r"([A-Za-z_]\w*)\.$", head):
        type_name = stages.get(owner.group(1)) or owner.group(1)
        if type_name in types:
            fields: Iterable[str] = types[type_name]
        else:
            fields = {f for fs in types.values() for f in fs}
        return _pick(word, ((f, "field") for f in fields))
    # Names read from the cell include the word being typed: offer only other, longer ones.
    local = [(t, "event") for t in types]
    local += [(s, "stage") for s in stages]
    local += [(m["name"], "pattern") for m in _PATTERN_NAME.finditer(cell)]
    candidates = [(k, "keyword") for k in keywords] + [(p, "pattern") for p in patterns]
    candidates += [(name, kind) for name, kind in local if name != word]
    return _pick(word, candidates)


def _complete_line(args: str, patterns: Iterable[str]) -> CepCompletions | None:
    words = args.split()
    if args and not args[-1].isspace():
        current, done = words[-1], words[:-1]
    else:
        current, done = "", words
    if not re.fullmatch(r"[A-Za-z_0-9]*", current):
        return None
    if not done:
        return _pick(current, ((c, "command") for c in _subcommands()))
    if done[0] in _NO_PATTERN_ARGS or done[-1] in _OPTIONS_WITH_VALUE:
        return None
    return _pick(current, ((p, "pattern") for p in patterns if p not in done[1:]))


def complete(
    text: str,
    line: int,
    column: int,
    patterns: Iterable[str] = (),
    schema: Mapping[str, Iterable[str]] | None = None,
) -> CepCompletions | None:
    """Completions at a cursor in a cell, or ``None`` where the cell is not cep text.

    Args:
        text: the whole cell.
        line: the cursor's line (0-based).
        column: the cursor's column in that line.
        patterns: pattern names defined in the session.
        schema: event type -> field names known to the session.

    Returns:
        The fragment before the cursor and what may replace it, or ``None`` when the cursor is not
        in a ``%%cep`` body or on a ``%cep`` line (other completers then answer as usual).

    >>> complete("%%cep\\nsequence s wi", 1, 13).items
    (('with', 'keyword'), ('within', 'keyword'))
    >>> complete("%cep sh", 0, 7).items
    (('show', 'command'),)
    """
    lines = text.split("\n")
    before = lines[line][:column] if line < len(lines) else ""
    if _CELL_MAGIC.match(text):
        first = len(text) - len(text.lstrip())
        magic_line = text[:first].count("\n")
        if line <= magic_line:
            return None
        return _complete_cell(before, text, patterns, schema or {})
    if m := _LINE_MAGIC.match(before):
        return _complete_line(m["args"], patterns)
    return None


def _session(shell: InteractiveShell) -> CepSession | None:
    magics = shell.magics_manager.registry.get("CepMagics")
    session: CepSession | None = getattr(magics, "session", None)  # CepMagics sets it in __init__
    return session


def _matcher(shell: InteractiveShell) -> Callable[[CompletionContext], SimpleMatcherResult]:
    def cep_matcher(context: CompletionContext) -> SimpleMatcherResult:
        session = _session(shell)
        patterns = list(session.definitions) if session is not None else []
        schema = dict(session.schema) if session is not None else {}
        found = complete(context.full_text, context.cursor_line, context.cursor_position, patterns, schema)
        if found is None or not context.token.endswith(found.fragment):
            return {"completions": [], "suppress": False}
        return {
            "completions": [SimpleCompletion(text, type=kind) for text, kind in found.items],
            "matched_fragment": found.fragment,
            "suppress": True,
        }

    context_matcher(identifier=_MATCHER_ID, priority=10)(cep_matcher)  # marks cep_matcher in place
    return cep_matcher


def register(shell: InteractiveShell) -> None:
    """Add the cep matcher to ``shell``'s completer (once)."""
    unregister(shell)
    shell.Completer.custom_matchers.append(_matcher(shell))


def unregister(shell: InteractiveShell) -> None:
    """Remove the cep matcher from ``shell``'s completer."""
    matchers = shell.Completer.custom_matchers
    matchers[:] = [m for m in matchers if getattr(m, "matcher_identifier", None) != _MATCHER_ID]
