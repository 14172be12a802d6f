r"""Parse ``%%cep`` text into the syntax tree of :mod:`workbench.language.ast`.

The grammar (``cep.lark``, shipped in the package) is loaded once, on first use, into an LALR(1)
parser with lark's contextual lexer. Parse errors become :class:`~workbench.errors.CepSyntaxError`
with the line and column in the caller's coordinates, the offending line with a caret, what was
expected, and the nearest keyword when the mistake looks like a typo:

>>> try:
...     parse("sequence s\nbegin a wher e.x > 1", first_line=2)
... except CepSyntaxError as err:
...     print(err.span.line, err.span.column, err.message.split(";")[0], "/", err.message.split("(")[-1])
3 9 unexpected 'wher' / did you mean 'where'?)
"""

from __future__ import annotations

import difflib
import functools
import re
from importlib import resources
from typing import Any

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from workbench.errors import CepSyntaxError, SourceSpan
from workbench.language import ast

__all__ = ["DURATION_UNITS", "keywords", "parse", "parse_duration"]

#: milliseconds per duration unit.
DURATION_UNITS: dict[str, int] = {
    "ms": 1,
    "s": 1000,
    "sec": 1000,
    "min": 60_000,
    "h": 3_600_000,
    "d": 86_400_000,
}

_DURATION_RE = re.compile(r"^(\d+(?:\.\d+)?)\s?(ms|s|sec|min|h|d)$")


@functools.cache
def _parser() -> Lark:
    grammar = resources.files("workbench.language").joinpath("cep.lark").read_text(encoding="utf-8")
    return Lark(
        grammar,
        parser="lalr",
        lexer="contextual",
        propagate_positions=True,
        maybe_placeholders=True,
    )


@functools.cache
def _keywords() -> frozenset[str]:
    out = set()
    for term in _parser().terminals:
        pat = term.pattern
        if pat.type == "str" and re.fullmatch(r"[a-z]+", pat.value):
            out.add(pat.value)
    return frozenset(out)


def keywords() -> frozenset[str]:
    """Every reserved word of the language (``within``, ``followed``, ``times``, ...)."""
    return _keywords()


def parse_duration(text: str) -> int | float:
    """Milliseconds in a duration literal.

    >>> parse_duration("250ms"), parse_duration("1.5s"), parse_duration("5min"), parse_duration("3d")
    (250, 1500, 300000, 259200000)
    """
    m = _DURATION_RE.match(text.strip())
    if m is None:
        msg = f"not a duration: {text!r} (write e.g. 250ms, 10s, 5min, 1h, 3d)"
        raise ValueError(msg)
    value = float(m.group(1)) * DURATION_UNITS[m.group(2)]
    return int(value) if value.is_integer() else value


# ---- error reporting -------------------------------------------------------------------------------

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
    "$END": "the end of the text",
}


def _describe(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    try:
        term = _parser().get_terminal(name)
    except KeyError:
        return name.lower()
    if term.pattern.type == "str":
        return f"'{term.pattern.value}'"
    return name.lower()


def _expected_text(expected: set[str]) -> tuple[str, list[str]]:
    terminals = {t.name: t for t in _parser().terminals}
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
    if unit in _keywords():  # 'within 10 begin ...': the next word is the language's, not a unit
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
    lines = text.split("\n")
    return len(lines), len(lines[-1]) + 1


def _syntax_error(err: UnexpectedInput, text: str, first_line: int) -> CepSyntaxError:
    source = "\n" * (first_line - 1) + text
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
            msg += _suggest(got, words)
        elif "DURATION" in err.expected:
            msg += _duration_hint(text.split("\n")[line - 1][col - 1 :])
    elif isinstance(err, UnexpectedCharacters):
        line, col = err.line, err.column
        ch = text.split("\n")[line - 1][col - 1 : col] if line >= 1 else ""
        allowed = set(err.allowed or ())
        what, words = _expected_text(allowed) if allowed else ("something else", [])
        word = re.match(r"[A-Za-z_]\w*", text.split("\n")[line - 1][col - 1 :])
        got = word.group(0) if word else ch
        msg = f"unexpected {got!r}; expected {what}"
        if word:
            msg += _suggest(got, words)
        elif "DURATION" in allowed:
            msg += _duration_hint(text.split("\n")[line - 1][col - 1 :])
    else:  # pragma: no cover - lark has no other UnexpectedInput subclasses
        line, col = max(err.line, 1), max(err.column, 1)
        msg = str(err)
    dangling = _dangling_annotation(text, line, col)
    if dangling is not None:  # 'a: logout(...) @stop(c) }': annotations come first
        line, col, written = dangling
        msg = (
            f"'{written}' annotates nothing: annotations go before the channel or block they apply to "
            f"(write '{written} a: type(...)')"
        )
    elif text[_offset(text, line, col) :].startswith("@") and text[
        : _offset(text, line, col)
    ].rstrip().endswith("}"):
        msg += " (a group's own annotations go right after its operator: '@and @timeout(5s) { ... }')"
    line += first_line - 1
    return CepSyntaxError(msg, SourceSpan(line, col, line, col + 1), source)


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


# ---- tree -> AST -----------------------------------------------------------------------------------


def _kids(tree: Tree[Token]) -> list[Any]:
    """A tree's children (``None`` stands for an absent optional part: ``maybe_placeholders``)."""
    return list(tree.children)


class _Builder:
    def __init__(self, text: str, first_line: int) -> None:
        self.text = text
        self.offset = first_line - 1

    def span(self, node: Tree[Token] | Token) -> SourceSpan:
        if isinstance(node, Token):
            return SourceSpan(
                (node.line or 1) + self.offset,
                node.column or 1,
                (node.end_line or node.line or 1) + self.offset,
                node.end_column or (node.column or 1) + 1,
            )
        meta = node.meta
        if meta.empty:
            return SourceSpan(1 + self.offset, 1, 1 + self.offset, 1)
        return SourceSpan(meta.line + self.offset, meta.column, meta.end_line + self.offset, meta.end_column)

    def name(self, node: Tree[Token] | Token) -> ast.Name:
        tok = _kids(node)[0] if isinstance(node, Tree) else node
        assert isinstance(tok, Token)
        value = str(tok)
        if tok.type == "QUOTED_NAME":
            value = value[1:-1]
        return ast.Name(value, self.span(tok))

    def expr(self, node: Tree[Token] | Token) -> ast.Expr:
        if isinstance(node, Token):
            return ast.Expr(str(node), self.span(node))
        return ast.Expr(self.text[node.meta.start_pos : node.meta.end_pos], self.span(node))

    def duration(self, tok: Token) -> ast.Duration:
        return ast.Duration(parse_duration(str(tok)), str(tok), self.span(tok))

    def script(
        self, tree: Tree[Token]
    ) -> tuple[ast.EventDecl | ast.SequenceDef | ast.GroupDef | ast.ReceiveDef, ...]:
        out: list[ast.EventDecl | ast.SequenceDef | ast.GroupDef | ast.ReceiveDef] = []
        for item in _kids(tree):
            assert isinstance(item, Tree)
            if item.data == "event_decl":
                type_, *fields = _kids(item)
                decls = [f for f in fields if f is not None]
                out.append(
                    ast.EventDecl(
                        self.name(type_),
                        tuple(self.name(_kids(f)[0]) for f in decls),
                        self.span(item),
                        tuple(None if _kids(f)[1] is None else str(_kids(f)[1]) for f in decls),
                    )
                )
            elif item.data == "sequence_def":
                out.append(self.sequence(item))
            elif item.data == "receive_def":
                out.append(self.receive(item))
            else:
                out.append(self.group(item))
        return tuple(out)

    # -- sequences

    def sequence(self, tree: Tree[Token]) -> ast.SequenceDef:
        name_node, *rest = _kids(tree)
        within: ast.Duration | None = None
        skip: ast.Skip | None = None
        partition: ast.Name | None = None
        stages: list[ast.Stage] = []
        aggregates: list[ast.AggregateDecl] = []
        emit_timeouts = True
        max_partial: int | str | None = "default"
        for child in rest:
            assert isinstance(child, Tree)
            if child.data == "pattern_within":
                tok = _kids(child)[0]
                assert isinstance(tok, Token)
                within = self.duration(tok)
            elif child.data == "partition":
                partition = self.name(_kids(child)[0])
            elif child.data.startswith("skip"):
                skip = self.skip(child)
            elif child.data == "aggregate_decl":
                aname, value, incl = _kids(child)
                assert aname is not None
                assert value is not None
                aggregates.append(
                    ast.AggregateDecl(self.name(aname), self.expr(value), incl is not None, self.span(child))
                )
            elif child.data == "no_timeouts":
                emit_timeouts = False
            elif child.data == "max_partial":
                tok = _kids(child)[0]
                assert isinstance(tok, Token)
                max_partial = None if tok.type == "NONE" else int(str(tok))
            elif child.data in ("first_stage", "stage"):
                stages.append(self.stage(child))
        name = self.name(name_node) if name_node is not None else None
        return ast.SequenceDef(
            name,
            within,
            skip,
            partition,
            tuple(aggregates),
            emit_timeouts,
            max_partial,
            tuple(stages),
            self.span(tree),
        )

    def skip(self, tree: Tree[Token]) -> ast.Skip:
        kind = {"skip_none": "no_skip", "skip_next": "skip_to_next", "skip_past_last": "skip_past_last_event"}
        if tree.data in kind:
            return ast.Skip(kind[tree.data], None, False, self.span(tree))
        which, stage, or_fail = _kids(tree)
        return ast.Skip(f"skip_to_{which}", self.name(stage), or_fail is not None, self.span(tree))

    def stage(self, tree: Tree[Token]) -> ast.Stage:
        if tree.data == "first_stage":
            contiguity, body = "begin", _kids(tree)[0]
        else:
            cont, body = _kids(tree)
            assert isinstance(cont, Tree)
            contiguity = str(cont.data)
        assert isinstance(body, Tree)
        head, *clauses = _kids(body)
        name: ast.Name | None = None
        group: ast.StageGroup | None = None
        types: tuple[ast.Name, ...] = ()
        assert isinstance(head, Tree)
        if head.data == "group_stage":
            group = ast.StageGroup(
                tuple(self.stage(s) for s in _kids(head) if isinstance(s, Tree)), self.span(head)
            )
        else:
            name = self.name(head)
            type_node = clauses.pop(0)
            if isinstance(type_node, Tree):
                types = tuple(self.name(t) for t in _kids(type_node))
        where: list[tuple[str, ast.Expr]] = []
        until: ast.Expr | None = None
        within: ast.Duration | None = None
        within_prev: ast.Duration | None = None
        quants: list[ast.Quantifier] = []
        for c in clauses:
            assert isinstance(c, Tree)
            if c.data == "where_clause":
                where.append(("and", self.expr(_kids(c)[0])))
            elif c.data == "or_where":
                where.append(("or", self.expr(_kids(c)[1])))
            elif c.data == "until_clause":
                until = self.expr(_kids(c)[0])
            elif c.data == "stage_within":
                tok, prev = _kids(c)
                assert isinstance(tok, Token)
                if prev is None:
                    within = self.duration(tok)
                else:
                    within_prev = self.duration(tok)
            elif c.data == "q_window":
                tok = _kids(c)[0]
                assert isinstance(tok, Token)
                quants.append(ast.Quantifier("window", (parse_duration(str(tok)),), self.span(c)))
            else:
                kind = str(c.data)[2:]
                args = tuple(int(str(a)) for a in _kids(c))
                quants.append(ast.Quantifier(kind, args, self.span(c)))
        return ast.Stage(
            contiguity,
            name,
            group,
            types,
            tuple(where),
            until,
            tuple(quants),
            within,
            within_prev,
            self.span(tree),
        )

    # -- groups

    def group(self, tree: Tree[Token]) -> ast.GroupDef:
        name_node, *rest = _kids(tree)
        initiator: ast.Initiator | None = None
        partition: ast.Name | None = None
        block: ast.Block | None = None
        constants: list[ast.Assignment] = []
        state: list[ast.Assignment] = []
        instances: list[ast.InstanceDecl] = []
        for child in rest:
            assert isinstance(child, Tree)
            if child.data == "initiator":
                annots, once, head, where = _kids(child)
                assert isinstance(head, Tree)
                assert isinstance(annots, Tree)
                initiator = ast.Initiator(
                    self.annotations(annots),
                    once is not None,
                    self.head(head),
                    self.expr(_kids(where)[0]) if isinstance(where, Tree) else None,
                    self.span(child),
                )
            elif child.data == "partition":
                partition = self.name(_kids(child)[0])
            elif child.data == "constant":
                constants.append(self.assignment(child))
            elif child.data == "state_var":
                state.append(self.assignment(child))
            elif child.data == "instance":
                key, at, *assigns = _kids(child)
                assert key is not None
                instances.append(
                    ast.InstanceDecl(
                        self.expr(key),
                        self.expr(at) if at is not None else None,
                        tuple(self.assignment(a) for a in assigns if isinstance(a, Tree)),
                        self.span(child),
                    )
                )
            elif child.data == "block":
                block = self.block(child, ())
        assert block is not None
        name = self.name(name_node) if name_node is not None else None
        return ast.GroupDef(
            name,
            initiator,
            partition,
            tuple(constants),
            tuple(state),
            tuple(instances),
            block,
            self.span(tree),
        )

    def receive(self, tree: Tree[Token]) -> ast.ReceiveDef:
        name_node, *rest = _kids(tree)
        constants = [self.assignment(c) for c in rest if isinstance(c, Tree) and c.data == "constant"]
        annots, head, where = rest[len(constants) :]
        return ast.ReceiveDef(
            self.name(name_node) if name_node is not None else None,
            tuple(constants),
            self.annotations(annots),
            self.head(head),
            self.expr(_kids(where)[0]) if isinstance(where, Tree) else None,
            self.span(tree),
        )

    def assignment(self, tree: Tree[Token]) -> ast.Assignment:
        name, value = _kids(tree)
        assert value is not None
        assert name is not None
        return ast.Assignment(self.name(name), self.expr(value), self.span(tree))

    def annotations(self, tree: Tree[Token]) -> tuple[ast.Annotation, ...]:
        out = []
        for a in _kids(tree):
            assert isinstance(a, Tree)
            tok, *args = _kids(a)
            assert isinstance(tok, Token)
            parsed: tuple[ast.Expr | ast.Duration, ...] | None
            if len(args) == 1 and args[0] is None:
                parsed = None
            else:
                parsed = tuple(self.annot_arg(x) for x in args if x is not None)
            out.append(ast.Annotation(ast.Name(str(tok), self.span(tok)), parsed, self.span(a)))
        return tuple(out)

    def annot_arg(self, node: Tree[Token] | Token) -> ast.Expr | ast.Duration:
        if isinstance(node, Tree) and node.data == "duration_arg":
            tok = _kids(node)[0]
            assert isinstance(tok, Token)
            return self.duration(tok)
        return self.expr(node)

    def block(self, tree: Tree[Token], outer: tuple[ast.Annotation, ...]) -> ast.Block:
        op, ident, annots, *members = _kids(tree)
        assert isinstance(op, Token)
        assert isinstance(annots, Tree)
        built: list[ast.Channel | ast.Block] = []
        for m in members:
            assert isinstance(m, Tree)
            if m.data == "nested":
                m_annots, inner = _kids(m)
                assert isinstance(m_annots, Tree)
                assert isinstance(inner, Tree)
                built.append(self.block(inner, self.annotations(m_annots)))
            else:
                m_annots, label, head, where = _kids(m)
                assert isinstance(m_annots, Tree)
                assert isinstance(head, Tree)
                built.append(
                    ast.Channel(
                        self.annotations(m_annots),
                        self.name(_kids(label)[0]) if isinstance(label, Tree) else None,
                        self.head(head),
                        self.expr(_kids(where)[0]) if isinstance(where, Tree) else None,
                        self.span(m),
                    )
                )
        return ast.Block(
            str(op)[1:],
            self.name(ident) if ident is not None else None,
            outer + self.annotations(annots),
            tuple(built),
            self.span(tree),
        )

    def head(self, tree: Tree[Token]) -> ast.ChannelHead:
        type_, *items = _kids(tree)
        built = []
        for it in items:
            if it is None:
                continue
            assert isinstance(it, Tree)
            field, value = _kids(it)
            assert value is not None
            assert field is not None
            if it.data == "match_bind":
                built.append(ast.MatchItem(self.name(field), self.name(value), True, self.span(it)))
            else:
                built.append(ast.MatchItem(self.name(field), self.expr(value), False, self.span(it)))
        return ast.ChannelHead(self.name(type_), tuple(built), self.span(tree))


def parse(text: str, *, first_line: int = 1) -> ast.Script:
    """Parse ``text`` into a :class:`~workbench.language.ast.Script`.

    ``first_line`` is the line number of the text's first line in the caller's coordinates (2 for the
    body of a ``%%cep`` cell). Raises :class:`~workbench.errors.CepSyntaxError`.
    """
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as err:
        raise _syntax_error(err, text, first_line) from None
    builder = _Builder(text, first_line)
    return ast.Script(builder.script(tree), text, first_line)
