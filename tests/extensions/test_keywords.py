"""The JupyterLab highlighter's word lists stay in step with the %%cep grammar."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.extensions.lexicon import Grammar, grammar_from_text, lexicon_from_ts, python_string_tables

ROOT = Path(__file__).resolve().parents[2]
LANGUAGE = ROOT / "workbench" / "language"
GRAMMAR = LANGUAGE / "cep.lark"
LEXICON = ROOT / "extensions" / "cep_highlight" / "src" / "lexicon.ts"

# Unit spellings a grammar might accept; the highlighter must agree with the grammar on each.
UNIT_SPELLINGS = frozenset(
    {
        "ns", "us", "ms", "s", "sec", "secs", "second", "seconds", "m", "min", "mins", "minute",
        "minutes", "h", "hr", "hrs", "hour", "hours", "d", "day", "days", "w", "wk", "week", "weeks", "y",
    }
)  # fmt: skip


def _strings(value: list[str] | str) -> list[str]:
    assert isinstance(value, list), value
    return value


@pytest.fixture(scope="module")
def lexicon() -> dict[str, list[str] | str]:
    return lexicon_from_ts(LEXICON)


@pytest.fixture(scope="module")
def grammar(lexicon: dict[str, list[str] | str]) -> Grammar:
    ours = {w for name in ("KEYWORDS", "OPERATOR_WORDS", "ANNOTATIONS") for w in _strings(lexicon[name])}
    return grammar_from_text(GRAMMAR.read_text(encoding="utf-8"), frozenset(ours))


def test_lexicon_lists_are_well_formed(lexicon: dict[str, list[str] | str]) -> None:
    for name in ("KEYWORDS", "OPERATOR_WORDS", "CONSTANTS", "ANNOTATIONS", "DURATION_UNITS"):
        items = _strings(lexicon[name])
        assert items, f"{name} is empty or was not found in {LEXICON.name}"
        assert len(items) == len(set(items)), f"{name} repeats an entry"
    assert not set(_strings(lexicon["KEYWORDS"])) & set(_strings(lexicon["OPERATOR_WORDS"]))


def test_keywords_match_grammar(grammar: Grammar, lexicon: dict[str, list[str] | str]) -> None:
    ours = set(_strings(lexicon["KEYWORDS"])) | set(_strings(lexicon["OPERATOR_WORDS"]))
    missing = sorted(grammar.words - ours)
    stale = sorted(ours - grammar.words)
    assert (missing, stale) == ([], []), (
        f"cep.lark keywords missing from lexicon.ts: {missing}; lexicon.ts words cep.lark lacks: {stale}"
    )


def test_constants_are_not_grammar_keywords(grammar: Grammar, lexicon: dict[str, list[str] | str]) -> None:
    assert not set(_strings(lexicon["CONSTANTS"])) & grammar.words


def test_annotations_the_grammar_spells_out_are_highlighted(
    grammar: Grammar, lexicon: dict[str, list[str] | str]
) -> None:
    assert grammar.annotations, "cep.lark no longer spells out the group operators (@and, @or)"
    missing = sorted(grammar.annotations - set(_strings(lexicon["ANNOTATIONS"])))
    assert missing == [], f"annotations in cep.lark missing from lexicon.ts: {missing}"


def test_annotations_match_compiler(grammar: Grammar, lexicon: dict[str, list[str] | str]) -> None:
    tables = python_string_tables(LANGUAGE / "arguments.py", "_ANNOTATIONS")
    assert tables, "workbench/language/arguments.py has no *_ANNOTATIONS tables any more"
    known = set(grammar.annotations).union(*tables.values())
    ours = set(_strings(lexicon["ANNOTATIONS"]))
    missing, stale = sorted(known - ours), sorted(ours - known)
    assert (missing, stale) == ([], []), (
        f"annotations the compiler knows missing from lexicon.ts: {missing}; "
        f"lexicon.ts annotations the compiler rejects: {stale}"
    )


def test_duration_units_match_parser(lexicon: dict[str, list[str] | str]) -> None:
    # the language's DURATION_UNITS is the expressions' table of units (one table for both)
    tables = python_string_tables(ROOT / "workbench" / "engine" / "expr" / "durations.py", "UNITS")
    assert set(tables.get("UNITS", ())) == set(_strings(lexicon["DURATION_UNITS"]))


def test_duration_units_match_grammar(grammar: Grammar, lexicon: dict[str, list[str] | str]) -> None:
    duration = grammar.terminals.get("DURATION")
    assert duration is not None, "cep.lark has no DURATION terminal"
    ours = set(_strings(lexicon["DURATION_UNITS"]))
    accepted = {u for u in UNIT_SPELLINGS | ours if duration.fullmatch(f"5{u}")}
    assert sorted(ours) == sorted(accepted)
    assert all(duration.fullmatch(f"2.5 {u}") for u in ours), "the highlighter allows `2.5 s`"


def test_comment_marker_matches_grammar(grammar: Grammar, lexicon: dict[str, list[str] | str]) -> None:
    marker = lexicon["LINE_COMMENT"]
    assert isinstance(marker, str)
    comment = grammar.terminals.get("COMMENT")
    assert comment is not None, "cep.lark has no COMMENT terminal"
    assert comment.fullmatch(f"{marker} a comment")
    assert not comment.fullmatch("a comment")


def test_grammar_scanner_reads_literals_regexes_and_comments() -> None:
    text = r"""
// a "commented" word is not a keyword
start: "alpha" B "//" C "x y"
B: /@(beta|gamma)(?![a-z])/
C.2: "Delta"i | "epsilon"
D: /zeta\s+eta(?![a-z])/
ANNOT: "@" NAME
NAME: /[a-z]+/
"""
    got = grammar_from_text(text)
    assert got.words == {"alpha", "delta", "epsilon", "zeta", "eta"}
    assert got.annotations == {"beta", "gamma"}
    assert set(got.terminals) == {"B", "D", "NAME"}


def test_lexicon_reader(tmp_path: Path) -> None:
    source = tmp_path / "lexicon.ts"
    source.write_text(
        "/** words */\nexport const KEYWORDS: readonly string[] = [\n  'a',\n  'b'\n];\n"
        "export const LINE_COMMENT = '#';\n",
        encoding="utf-8",
    )
    assert lexicon_from_ts(source) == {"KEYWORDS": ["a", "b"], "LINE_COMMENT": "#"}


def test_python_table_reader(tmp_path: Path) -> None:
    source = tmp_path / "tables.py"
    source.write_text(
        "A_ANNOTATIONS: dict[str, int] = {'x': 1, 'y': 2}\n"
        "B_ANNOTATIONS = frozenset({'z'})\n"
        "OTHER = {'w': 0}\n",
        encoding="utf-8",
    )
    assert python_string_tables(source, "_ANNOTATIONS") == {
        "A_ANNOTATIONS": {"x", "y"},
        "B_ANNOTATIONS": {"z"},
    }
