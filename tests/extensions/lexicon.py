"""Read the word lists of the %%cep grammar and of the JupyterLab highlighter, for comparison.

The grammar is read as text, without lark: its string literals, regex literals and comments are
told apart by one scanner, so a quoted ``"//"`` is an operator and not a comment.
"""

from __future__ import annotations

import ast
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Grammar", "grammar_from_text", "lexicon_from_ts", "python_string_tables"]

_GRAMMAR_TOKEN = re.compile(
    r"""(?P<comment>//[^\n]*)
      | (?P<string>"(?:[^"\\\n]|\\.)*")(?P<strflags>i?)
      | (?P<regex>/(?:[^/\\\n]|\\.)+/)(?P<reflags>[imslux]*)
      | (?P<rule>^[ \t]*[?!]?(?P<name>[A-Za-z_][A-Za-z_0-9]*)(?:\.-?\d+)?[ \t]*:)
      | (?P<other>[^"/\n]+|\n)
    """,
    re.VERBOSE | re.MULTILINE,
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")
_PROBE = "qzxprobe"


@dataclass(frozen=True)
class Grammar:
    """What the highlighter must agree with.

    Attributes:
        words: keywords, from the grammar's quoted literals and from regex terminals that match a
            fixed word.
        annotations: annotation names the grammar spells out as terminals (``@and``, ``@or``).
        terminals: each regex terminal's name and compiled pattern.
    """

    words: frozenset[str]
    annotations: frozenset[str]
    terminals: dict[str, re.Pattern[str]]


def grammar_from_text(text: str, candidates: frozenset[str] = frozenset()) -> Grammar:
    """Collect the keywords and spelled-out annotations of a lark grammar.

    Args:
        text: the grammar source.
        candidates: extra words to test against the grammar's regex terminals (e.g. the
            highlighter's own words), on top of the words that appear in the grammar.

    Returns:
        The grammar's words, annotations and regex terminals.
    """
    literals: set[str] = set()
    regexes: list[re.Pattern[str]] = []
    terminals: dict[str, re.Pattern[str]] = {}
    current_rule = ""
    for m in _GRAMMAR_TOKEN.finditer(text):
        if m["rule"]:
            current_rule = m["name"]
        elif m["string"]:
            value = m["string"][1:-1].encode().decode("unicode_escape")
            literals.add(value.lower() if m["strflags"] else value)
        elif m["regex"]:
            flags = re.IGNORECASE if "i" in m["reflags"] else 0
            pattern = re.compile(m["regex"][1:-1], flags)
            regexes.append(pattern)
            if current_rule.isupper():
                terminals.setdefault(current_rule, pattern)
    pool = {w for w in literals if _WORD.fullmatch(w)} | set(candidates)
    for pattern in regexes:
        pool.update(_WORD.findall(pattern.pattern))
    words = {w for w in literals if _WORD.fullmatch(w)}
    annotations: set[str] = set()
    for pattern in regexes:
        for prefix, found in (("", words), ("@", annotations)):
            if pattern.fullmatch(prefix + _PROBE):
                continue  # a name-like terminal (NAME, ANNOT_NAME), not a fixed word
            found.update(w for w in pool if pattern.fullmatch(prefix + w))
        # Two-word terminals such as /not\s+in/ or /of\s+previous/: try the regex's own words in pairs.
        own = sorted(set(_WORD.findall(pattern.pattern)))
        for first, second in itertools.product(own, own):
            if pattern.fullmatch(f"{first} {second}"):
                words.update((first, second))
    return Grammar(frozenset(words), frozenset(annotations), terminals)


_TS_ARRAY = re.compile(r"export const (?P<name>[A-Z_]+)\s*:[^=]*=\s*\[(?P<body>[^\]]*)\]", re.DOTALL)
_TS_STRING_CONST = re.compile(r"export const (?P<name>[A-Z_]+)\s*=\s*'(?P<value>[^']*)'")
_TS_STRING = re.compile(r"'([^'\\]*)'")


def lexicon_from_ts(path: Path) -> dict[str, list[str] | str]:
    """Read the exported word lists (and string constants) of the extension's ``lexicon.ts``.

    Args:
        path: the TypeScript file.

    Returns:
        Each exported ``const`` by name: a list of its string items, or the string.
    """
    text = path.read_text(encoding="utf-8")
    out: dict[str, list[str] | str] = {}
    for m in _TS_ARRAY.finditer(text):
        out[m["name"]] = _TS_STRING.findall(m["body"])
    for m in _TS_STRING_CONST.finditer(text):
        out[m["name"]] = m["value"]
    return out


def python_string_tables(path: Path, suffix: str) -> dict[str, set[str]]:
    """Module-level tables of strings in a Python file, read without importing it.

    Args:
        path: the Python source file.
        suffix: take the names that end with this (``"_ANNOTATIONS"``, ``"DURATION_UNITS"``).

    Returns:
        Each matching name with its strings: the keys of a dict literal, or the items of a set,
        frozenset, tuple or list literal.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        elif (
            isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
        ):
            name, value = node.targets[0].id, node.value
        else:
            continue
        if not name.endswith(suffix):
            continue
        if isinstance(value, ast.Call) and value.args:  # frozenset({...})
            value = value.args[0]
        items = value.keys if isinstance(value, ast.Dict) else getattr(value, "elts", [])
        out[name] = {k.value for k in items if isinstance(k, ast.Constant) and isinstance(k.value, str)}
    return out
