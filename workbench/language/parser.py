r"""Parse ``%%cep`` text into the syntax tree of :mod:`workbench.language.ast`.

The grammar (``cep.lark``) is loaded once by :mod:`workbench.language.grammar`; here a lark tree
becomes frozen AST nodes with spans. Parse errors become :class:`~workbench.errors.CepSyntaxError`
(:mod:`workbench.language.syntax_errors`) with the line and column in the caller's coordinates,
the offending line with a caret, what was expected, and the nearest keyword when the mistake looks
like a typo:

>>> from workbench.errors import CepSyntaxError
>>> try:
...     parse("sequence s\nbegin a wher e.x > 1", first_line=2)
... except CepSyntaxError as err:
...     print(err.span.line, err.span.column, err.message.split(";")[0], "/", err.message.split("(")[-1])
3 9 unexpected 'wher' / did you mean 'where'?)
"""

from __future__ import annotations

import re
from typing import Any

from lark import Token, Tree
from lark.exceptions import UnexpectedInput

from workbench.errors import SourceSpan
from workbench.language import ast
from workbench.language.alternation import choice_stage
from workbench.language.errors import CepCompileError
from workbench.language.grammar import lark_parser, parse_duration
from workbench.language.syntax_errors import check_nesting, syntax_error

__all__ = ["parse"]

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
        partition: tuple[ast.Name, ...] = ()
        stages: list[ast.Stage] = []
        aggregates: list[ast.AggregateDecl] = []
        measures: list[ast.Assignment] = []
        subsets: list[ast.SubsetDecl] = []
        emit_into: ast.Name | None = None
        emit_timeouts = True
        flink_order = False
        max_partial: int | str | None = "default"
        absence: ast.Absence | None = None
        for child in rest:
            assert isinstance(child, Tree)
            if child.data == "pattern_within":
                tok = _kids(child)[0]
                assert isinstance(tok, Token)
                within = self.duration(tok)
            elif child.data == "partition":
                partition = tuple(self.name(k) for k in _kids(child) if k is not None)
            elif child.data.startswith("skip"):
                skip = self.skip(child)
            elif child.data == "aggregate_decl":
                aggregates.append(self.aggregate_decl(child))
            elif child.data == "measures_clause":
                measures.extend(self.measure(m) for m in _kids(child) if isinstance(m, Tree))
            elif child.data == "subset_clause":
                subsets.extend(self.subset(d) for d in _kids(child) if isinstance(d, Tree))
            elif child.data == "emit_into":
                emit_into = self.name(_kids(child)[0])
            elif child.data == "no_timeouts":
                emit_timeouts = False
            elif child.data == "flink_order":
                flink_order = True
            elif child.data == "max_partial":
                tok = _kids(child)[0]
                assert isinstance(tok, Token)
                max_partial = None if tok.type == "NONE" else int(str(tok))
            elif child.data in ("first_stage", "stage"):
                stages.append(self.stage(child))
            elif child.data == "absence_start":
                absence = self.absence(child)
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
            tuple(measures),
            emit_into,
            absence,
            tuple(subsets),
            flink_order,
        )

    def aggregate_decl(self, tree: Tree[Token]) -> ast.AggregateDecl:
        name, value, including = _kids(tree)
        assert name is not None
        assert value is not None
        return ast.AggregateDecl(self.name(name), self.expr(value), including is not None, self.span(tree))

    def absence(self, tree: Tree[Token]) -> ast.Absence:
        every, name, types, duration, where = _kids(tree)
        assert isinstance(duration, Token)
        return ast.Absence(
            every is not None,
            self.name(name),
            tuple(self.name(t) for t in _kids(types)) if isinstance(types, Tree) else (),
            self.duration(duration),
            self.expr(_kids(where)[0]) if isinstance(where, Tree) else None,
            self.span(tree),
        )

    def measure(self, tree: Tree[Token]) -> ast.Assignment:
        name, value = _kids(tree)
        assert name is not None
        assert value is not None
        return ast.Assignment(self.name(name), self.expr(value), self.span(tree))

    def subset(self, tree: Tree[Token]) -> ast.SubsetDecl:
        name, *members = _kids(tree)
        assert name is not None
        names = tuple(self.name(m) for m in members if m is not None)
        return ast.SubsetDecl(self.name(name), names, self.span(tree))

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
        return self.stage_body(contiguity, body, tree)

    def stage_body(self, contiguity: str, body: Tree[Token], tree: Tree[Token]) -> ast.Stage:
        if body.data in ("alternation", "permute", "parenthesised"):
            return choice_stage(self, contiguity, body, self.span(tree))
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
            type_node = clauses.pop(0) if body.data != "choice_stage" else None  # why: branches have none
            if isinstance(type_node, Tree):
                types = tuple(self.name(t) for t in _kids(type_node))
        clauses_of = self.stage_clauses(clauses)
        return ast.Stage(
            contiguity,
            name,
            group,
            types,
            *clauses_of,
            self.span(tree),
        )

    def stage_clauses(
        self, clauses: list[Tree[Token]]
    ) -> tuple[
        tuple[tuple[str, ast.Expr], ...],
        ast.Expr | None,
        tuple[ast.Quantifier, ...],
        ast.Duration | None,
        ast.Duration | None,
    ]:
        """A stage's clauses after its name: (where, until, quantifiers, within, within previous)."""
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
        return tuple(where), until, tuple(quants), within, within_prev

    # -- groups

    def group(self, tree: Tree[Token]) -> ast.GroupDef:
        name_node, *rest = _kids(tree)
        initiator: ast.Initiator | None = None
        partition: tuple[ast.Name, ...] = ()
        block: ast.Block | None = None
        constants: list[ast.Assignment] = []
        state: list[ast.Assignment] = []
        instances: list[ast.InstanceDecl] = []
        for child in rest:
            assert isinstance(child, Tree)
            if child.data == "initiator":
                if initiator is not None:  # why: the grammar repeats group options; one 'on' only
                    msg = (
                        f"a group has one initiator: 'on ...' is given twice (first on line "
                        f"{initiator.span.line}); use one 'on' with a where clause, or two groups"
                    )
                    raise CepCompileError(msg, self.span(child), "\n" * self.offset + self.text)
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
                partition = tuple(self.name(k) for k in _kids(child) if k is not None)
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
        if isinstance(node, Tree) and node.data == "duration_literal":
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


_LONE_CR = re.compile(r"\r(?!\n)")


def parse(text: str, *, first_line: int = 1) -> ast.Script:
    """Parse ``text`` into a :class:`~workbench.language.ast.Script`.

    ``first_line`` is the line number of the text's first line in the caller's coordinates (2 for the
    body of a ``%%cep`` cell). Raises :class:`~workbench.errors.CepSyntaxError`.
    """
    # why: a lone CR (old Mac line ends) is a line break too; one character for one keeps every
    # offset, and conditions (read by Python's tokenizer) see the same lines as the grammar
    text = _LONE_CR.sub("\n", text)
    check_nesting(text, first_line)
    try:
        tree = lark_parser().parse(text)
    except UnexpectedInput as err:
        raise syntax_error(err, text, first_line) from None
    builder = _Builder(text, first_line)
    return ast.Script(builder.script(tree), text, first_line)
