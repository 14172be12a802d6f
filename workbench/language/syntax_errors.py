"""Parse errors of ``%%cep`` text as :class:`~workbench.errors.CepSyntaxError`.

:func:`syntax_error` turns lark's ``UnexpectedInput`` into a message that says what was found, what
was expected (in words, not terminal names), and the nearest keyword or duration unit when the
mistake looks like a typo, with the span in the caller's coordinates.
"""

from __future__ import annotations

import difflib
import re

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from workbench.errors import CepSyntaxError, SourceSpan
from workbench.language.grammar import DURATION_UNITS, keywords, lark_parser

__all__ = ["syntax_error"]

_TERMINAL_WORDS = {
    "NAME": "a name",
    "QUOTED_NAME": "a `quoted name`",
    "ANNOT_NAME": "an annotation name",
    "DURATION": "a duration (250ms, 10s, 5min, 1h, 3d)",
    "INT": "a whole number",
    "NUMBER": "a number",
    "STRING": "a string",
    "OPERATOR": "'@and' or '@or'",
    "FIRST_OR_LAST": "'first' or 'last'",
    "NOT_IN": "'not in'",
    "IS_NOT": "'is not'",
    "ADD_OP": "'+' or '-'",
    "MUL_OP": "an operator",
    "UNARY_OP": "'-'",
    "ONCE": "'once'",
    "OR_WHERE": "'or where'",
    "OF_PREVIOUS": "'of previous'",
    "INCLUDING": "'including current'",
    "WINDOW_LAST": "'over last'",
    "WINDOW_SESSION": "'over session'",
    "WINDOW_EVENTS": "'events'",
    "$END": "the end of the text",
}


def _describe(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    try:
        term = lark_parser().get_terminal(name)
    except KeyError:
        return name.lower()
    if term.pattern.type == "str":
        return f"'{term.pattern.value}'"
    return name.lower()


def _expected_text(expected: set[str]) -> tuple[str, list[str]]:
    terminals = {t.name: t for t in lark_parser().terminals}
    words = sorted(
        terminals[e].pattern.value
        for e in expected
        if e in terminals and terminals[e].pattern.type == "str" and terminals[e].pattern.value.isalpha()
    )
    described = [f"'{w}'" for w in words] + sorted(
        {_describe(e) for e in expected if not e.startswith("__")} - {f"'{w}'" for w in words}
    )
    if len(described) > 18:
        described = [*described[:18], "..."]
    if len(described) == 1:
        return described[0], words
    return "one of " + ", ".join(described), words


#: what Flink CEP's Java API, SQL and C-like languages spell -> how this language says it
_FOREIGN = {
    "followedBy": "followed by",
    "followedByAny": "followed by any",
    "notFollowedBy": "not followed by",
    "notNext": "not next",
    "oneOrMore": "one or more",
    "timesOrMore": "times N or more",
    "allowCombinations": "allow combinations",
    "noSkip": "no skip",
    "skipToNext": "skip to next",
    "skipPastLastEvent": "skip past last event",
    "skipToFirst": "skip to first STAGE",
    "skipToLast": "skip to last STAGE",
    "&&": "and",
    "&": "and",
    "||": "or",
    "!": "not",
    "~": "not",
    "=": "==",
    "<>": "!=",
}


def _foreign_hint(text: str, line: int, col: int) -> str:
    """A hint for another language's spelling at the error (``followedBy``, ``&&``), else ``""``."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    rest = lines[line - 1][col - 1 :]
    before = lines[line - 1][: col - 1]
    word = re.match(r"[A-Za-z_]\w*|&&|&|\|\||!(?!=)|~|<>|=(?!=)", rest)
    got = word.group(0) if word else ""
    if rest.startswith("|") and before.endswith("|"):
        got = "||"  # why: the first '|' parsed (a stage alternation); the second is the error
    elif (rest.startswith(".") and re.search(r"\|\s*[A-Za-z_]\w*$", before)) or (
        rest.startswith("|") and not rest.startswith("||")
    ):
        # why: 'e.x | e.y' parsed '| e' as an alternative stage named e, and the '.' is the error;
        # or the '|' itself is, where no alternative can start
        return " (write 'or' for '|' in a condition; '|' separates alternative stages)"
    elif rest.startswith(">") and before.endswith("<"):
        got = "<>"  # why: '<' parsed as a comparison; the '>' after it is the error
    if got not in _FOREIGN or (got == "=" and before.endswith(("<", ">", "!", "="))):
        return ""  # why: '<=' and the like are the language's own; only a lone '=' is SQL's
    return f" (write '{_FOREIGN[got]}' for '{got}')"


def _suggest(got: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(got, candidates, n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""


#: what people write for a duration unit -> the unit the language spells.
_UNIT_SPELLINGS = {
    **{w: "ms" for w in ("msec", "msecs", "millis", "millisecond", "milliseconds")},
    **{w: "s" for w in ("secs", "second", "seconds")},
    **{w: "min" for w in ("m", "mins", "minute", "minutes")},
    **{w: "h" for w in ("hr", "hrs", "hour", "hours")},
    **{w: "d" for w in ("day", "days")},
}


def _duration_hint(rest: str) -> str:
    """A hint for a malformed duration at the start of ``rest`` (``5 mins``, ``10``), else ``""``."""
    m = re.match(r"(\d+(?:\.\d+)?)\s*([A-Za-z]*)", rest)
    if m is None:
        return ""
    number, unit = m.group(1), m.group(2)
    if unit in keywords():  # 'within 10 begin ...': the next word is the language's, not a unit
        unit = ""
    units = "units: " + ", ".join(DURATION_UNITS)
    if not unit:
        return f" (a duration needs a unit: write e.g. '{number}s' or '{number}ms'; {units})"
    fixed = _UNIT_SPELLINGS.get(unit.lower(), unit.lower() if unit.lower() in DURATION_UNITS else None)
    if fixed is None:
        close = difflib.get_close_matches(unit.lower(), list(DURATION_UNITS), n=1, cutoff=0.5)
        fixed = close[0] if close else None
    if fixed is None:
        return f" ({units})"
    return f" (did you mean '{number}{fixed}'? {units})"


def _end_of(text: str) -> tuple[int, int]:
    """Where the text stops: just after the last thing written (a cell's blank or comment lines
    after it have nothing to point at)."""
    lines = text.split("\n")
    while len(lines) > 1 and (not lines[-1].strip() or lines[-1].lstrip().startswith("#")):
        lines.pop()
    return len(lines), len(lines[-1].rstrip()) + 1


def syntax_error(err: UnexpectedInput, text: str, first_line: int) -> CepSyntaxError:
    source = "\n" * (first_line - 1) + text
    hint = ""  # why apart from msg: another language's spelling, when there is one, replaces it
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        line, col = _end_of(text)
        what, _ = _expected_text(set(err.expected))
        msg = f"unexpected end of text; expected {what}"
    elif isinstance(err, UnexpectedToken):
        line, col = err.line, err.column
        what, words = _expected_text(set(err.expected))
        got = str(err.token)
        msg = f"unexpected {got!r}; expected {what}"
        if re.fullmatch(r"[A-Za-z_]\w*", got):
            hint = _suggest(got, words)
        elif "DURATION" in err.expected:
            hint = _duration_hint(text.split("\n")[line - 1][col - 1 :])
    elif isinstance(err, UnexpectedCharacters):
        line, col = err.line, err.column
        ch = text.split("\n")[line - 1][col - 1 : col] if line >= 1 else ""
        allowed = set(err.allowed or ())
        what, words = _expected_text(allowed) if allowed else ("something else", [])
        word = re.match(r"[A-Za-z_]\w*", text.split("\n")[line - 1][col - 1 :])
        got = word.group(0) if word else ch
        msg = f"unexpected {got!r}; expected {what}"
        if word:
            hint = _suggest(got, words)
        elif ch.isalnum() and not ch.isascii() and "NAME" in allowed:
            name = _word_at(text.split("\n")[line - 1], col - 1)
            hint = f" (a name is ASCII letters, digits and '_'; put any other name in backquotes: `{name}`)"
        elif "DURATION" in allowed:
            hint = _duration_hint(text.split("\n")[line - 1][col - 1 :])
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses
        line, col = max(err.line, 1), max(err.column, 1)
        msg = str(err)
    msg += _foreign_hint(text, line, col) or hint
    dangling = _dangling_annotation(text, line, col)
    if dangling is not None:  # 'a: logout(...) @stop(c) }': annotations come first
        line, col, written = dangling
        msg = (
            f"'{written}' annotates nothing: annotations go before the channel or block they apply to "
            f"(write '{written} a: type(...)')"
        )
    elif (colon := _missing_colon(text, line, col)) is not None and "did you mean" not in msg:
        msg = colon  # a word that is not a misspelt keyword, where ':' and a type belong
    elif text[_offset(text, line, col) :].startswith("@") and text[
        : _offset(text, line, col)
    ].rstrip().endswith("}"):
        msg += " (a group's own annotations go right after its operator: '@and @timeout(5s) { ... }')"
    line += first_line - 1
    return CepSyntaxError(msg, SourceSpan(line, col, line, col + 1), source)


def _word_at(row: str, i: int) -> str:
    """The word (letters of any script, digits, '_') around position ``i`` of ``row``.

    >>> _word_at("group gé x", 7)
    'gé'
    """
    start = i
    while start > 0 and (row[start - 1].isalnum() or row[start - 1] == "_"):
        start -= 1
    end = i
    while end < len(row) and (row[end].isalnum() or row[end] == "_"):
        end += 1
    return row[start:end]


#: a stage keyword and a stage name right before the error: ``begin a login`` lacks its ``:``
_STAGE_NAME = re.compile(r"\b(begin|next|by|any)\s+([A-Za-z_]\w*|`[^`]*`)\s*$")


def _missing_colon(text: str, line: int, col: int) -> str | None:
    """The message for ``begin a login`` (a stage name, then a word where ``:`` belongs), else ``None``."""
    offset = _offset(text, line, col)
    word = re.match(r"[A-Za-z_]\w*", text[offset:])
    m = _STAGE_NAME.search(text[:offset])
    if word is None or m is None or m.group(2) in ("by", "any", "where"):
        return None
    name, typ = m.group(2), word.group(0)
    return f"expected ':' after the stage name '{name}' (write '{name}: {typ}')"


_TRAILING_ANNOTATION = re.compile(r"@([A-Za-z_]\w*)(\([^()]*\))?\s*$")


def _dangling_annotation(text: str, line: int, col: int) -> tuple[int, int, str] | None:
    """Where an annotation followed by ``}`` (or the end) starts: ``(line, column, name)``, else ``None``."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines) or lines[line - 1][col - 1 : col] not in ("}", ""):
        return None
    before = "\n".join([*lines[: line - 1], lines[line - 1][: col - 1]])
    m = _TRAILING_ANNOTATION.search(before)
    if m is None or m.group(1) in ("and", "or"):
        return None
    start_line = before.count("\n", 0, m.start()) + 1
    start_col = m.start() - (before.rfind("\n", 0, m.start()) + 1) + 1
    return start_line, start_col, m.group(0).strip()


def _offset(text: str, line: int, col: int) -> int:
    """The character offset of (line, column) in ``text`` (both 1-based)."""
    return sum(len(x) + 1 for x in text.split("\n")[: line - 1]) + col - 1


#: the deepest nesting of brackets pattern text may have (as an expression's tree: ``MAX_DEPTH``)
MAX_NESTING = 100
_OPEN, _CLOSE = "([{", ")]}"


def check_nesting(text: str, first_line: int) -> None:
    """A :class:`CepSyntaxError` at the bracket that nests deeper than :data:`MAX_NESTING`.

    Checked before parsing: the parser and the lowering recurse once per level, so text nested
    thousands deep would exhaust Python's stack. Strings, quoted names and comments are skipped.
    """
    depth, quote, i = 0, "", 0
    while i < len(text):
        ch = text[i]
        if quote:  # why: brackets inside a string or a `quoted name` are text
            if ch == "\\" and quote != "`":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch in "'\"`":
            quote = ch
        elif ch == "#":  # why: a comment runs to the end of its line
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif ch in _OPEN:
            depth += 1
            if depth > MAX_NESTING:
                line = text.count("\n", 0, i) + 1
                col = i - (text.rfind("\n", 0, i) + 1) + 1
                msg = f"brackets nest more than {MAX_NESTING} deep here; write the pattern flatter"
                at = line + first_line - 1
                raise CepSyntaxError(msg, SourceSpan(at, col, at, col + 1), "\n" * (first_line - 1) + text)
        elif ch in _CLOSE:
            depth -= 1
        i += 1
