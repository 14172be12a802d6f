"""The cep highlighter's token classes, computed by Node.js without a browser.

Runs the extension's compiled ``lib/language.js`` (tsc is re-run first, so it matches ``src/``) in
a CodeMirror ``EditorState`` and lists each highlighted span with its ``cep-tok-*`` class, the
same classes the browser test sees in the DOM. Needs the extension's ``node_modules`` (present
after ``pip install ./extensions/cep_highlight`` or ``npm install`` there).
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

EXTENSION = Path(__file__).resolve().parents[2] / "extensions" / "cep_highlight"
NODE_TIMEOUT_S = 120

_SPANS_JS = """
import { EditorState } from '@codemirror/state';
import { ensureSyntaxTree } from '@codemirror/language';
import { highlightTree } from '@lezer/highlight';
import { readFileSync } from 'node:fs';
const { cepSupport, cepHighlighter } = await import('./lib/language.js');
const out = JSON.parse(readFileSync(0, 'utf8')).map(text => {
  const state = EditorState.create({ doc: text, extensions: [cepSupport()] });
  const tree = ensureSyntaxTree(state, state.doc.length, 10000);
  const spans = [];
  highlightTree(tree, cepHighlighter, (from, to, cls) => spans.push([text.slice(from, to), cls.slice(8)]));
  return spans;
});
process.stdout.write(JSON.stringify(out));
"""


@pytest.fixture(scope="module")
def compiled() -> Path:
    node = shutil.which("node")
    tsc = EXTENSION / "node_modules" / ".bin" / "tsc"
    if node is None or not tsc.exists():
        pytest.skip("needs Node.js and extensions/cep_highlight/node_modules (npm install there)")
    subprocess.run([str(tsc)], cwd=EXTENSION, check=True, timeout=NODE_TIMEOUT_S)
    return Path(node)


def spans(node: Path, *texts: str) -> list[list[tuple[str, str]]]:
    """Each text's highlighted spans as (text, class without the ``cep-tok-`` prefix)."""
    done = subprocess.run(
        [str(node), "--disable-warning=MODULE_TYPELESS_PACKAGE_JSON", "--input-type=module", "-e", _SPANS_JS],
        cwd=EXTENSION,
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        timeout=NODE_TIMEOUT_S,
    )
    return [[(t, c) for t, c in one] for one in json.loads(done.stdout)]


def classes(node: Path, text: str) -> dict[str, str]:
    """Span text -> class for one text (texts that occur once)."""
    return dict(spans(node, text)[0])


def test_magic_line(compiled: Path) -> None:
    assert spans(compiled, "%%cep fraud res << --on df -o out -q")[0] == [
        ("%%cep", "magic"),
        ("fraud", "name"),
        ("res", "name"),
        ("<<", "operator"),
        ("--on", "option"),
        ("df", "name"),
        ("-o", "option"),
        ("out", "name"),
        ("-q", "option"),
    ]


def test_magic_only_on_the_first_line(compiled: Path) -> None:
    blank_first, file_text, not_magic = spans(compiled, "\n\n%%cep\nsequence", "sequence s\n%%cep", "%%cepx")
    assert blank_first == [("%%cep", "magic"), ("sequence", "keyword")]
    assert ("%%cep", "magic") not in file_text
    assert ("%%cepx", "magic") not in not_magic


def test_durations(compiled: Path) -> None:
    text = "%%cep\nwithin 250ms 10s 2.5 s 5min 1h 3d 10 sec 5mins 3x 5 m"
    assert spans(compiled, text)[0][2:] == [
        ("250ms", "duration"),
        ("10s", "duration"),
        ("2.5 s", "duration"),
        ("5min", "duration"),
        ("1h", "duration"),
        ("3d", "duration"),
        ("10 sec", "duration"),
        ("5mins", "error"),
        ("3x", "error"),
        ("5", "number"),
        ("m", "name"),
    ]


def test_numbers_and_ranges(compiled: Path) -> None:
    got = spans(compiled, "times 1..3 where x > 1.5 or x < .5 or x == 1e3")[0]
    assert [t for t, c in got if c == "number"] == ["1", "3", "1.5", ".5", "1e3"]
    assert ("..", "operator") in got


def test_strings_comments_and_names(compiled: Path) -> None:
    got = spans(
        compiled, "where a.s == 'x' or a.s == \"b\\\"#c\" or a.s == r'raw' # note \"q\"\n`odd name` 'oops"
    )
    assert got[0] == [
        ("where", "keyword"),
        ("a", "name"),
        (".", "punctuation"),
        ("s", "property"),
        ("==", "operator"),
        ("'x'", "string"),
        ("or", "keyword"),
        ("a", "name"),
        (".", "punctuation"),
        ("s", "property"),
        ("==", "operator"),
        ('"b\\"#c"', "string"),
        ("or", "keyword"),
        ("a", "name"),
        (".", "punctuation"),
        ("s", "property"),
        ("==", "operator"),
        ("r'raw'", "string"),
        ('# note "q"', "comment"),
        ("`odd name`", "name"),
        ("'oops", "error"),
    ]


def test_keywords_are_contextual_after_a_dot(compiled: Path) -> None:
    got = spans(compiled, "begin a where a.times > 2 times 3")[0]
    assert ("times", "property") in got
    assert got[-2:] == [("times", "keyword"), ("3", "number")]


def test_annotations(compiled: Path) -> None:
    got = classes(compiled, "@and(g) @count(2, 3) @timeout_channel @bogus @ x")
    assert got["@and"] == got["@count"] == got["@timeout_channel"] == "annotation"
    assert got["@bogus"] == got["@"] == "error"


def test_constants_operators_and_stray_characters(compiled: Path) -> None:
    got = spans(compiled, "True False None none ** // == != <= >= < > + - * / % = : | $ ! ? ;")[0]
    assert got[:4] == [("True", "atom"), ("False", "atom"), ("None", "atom"), ("none", "keyword")]
    operators = ["**", "//", "==", "!=", "<=", ">=", "<", ">", "+", "-", "*", "/", "%", "=", ":", "|"]
    assert got[4:20] == [(op, "operator") for op in operators]
    assert got[20:] == [("$", "error"), ("!", "error"), ("?", "error"), (";", "error")]
