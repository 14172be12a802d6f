"""Alternation (``(a next b) | c``) and ``permute(a, b, c)`` in the ``%%cep`` language.

Three small steps, one per layer of the language: :func:`choice_stage` turns the parse tree into
an :class:`~workbench.language.ast.StageChoice`, :func:`lower_choice` turns that into the engine's
:class:`~workbench.engine.nfa.pattern.Alternation` / :class:`~workbench.engine.nfa.pattern.Permute`,
and :func:`choice_lines` writes one back as text (every branch in parentheses, so a branch's
type list or group is never ambiguous).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from lark import Token, Tree

from workbench.engine.nfa import pattern as seq
from workbench.errors import PatternError, SourceSpan
from workbench.language import ast

if TYPE_CHECKING:
    from workbench.language.context import Context
    from workbench.language.parser import _Builder

__all__ = ["choice_lines", "choice_names", "choice_stage", "lower_choice"]


def choice_stage(builder: _Builder, contiguity: str, body: Tree[Token], span: SourceSpan) -> ast.Stage:
    """The stage an ``alternation`` / ``permute`` / ``parenthesised`` parse tree stands for
    (``builder``: the parser's); ``(b | c)`` alone is the alternation ``b | c``."""
    if body.data == "parenthesised":
        (inner,) = body.children
        assert isinstance(inner, Tree)
        head, *rest = inner.children
        assert isinstance(head, Tree)
        if not rest:
            return builder.stage_body(contiguity, head, head)
        body, span = Tree("sequence", [inner], body.meta), builder.span(inner)
    branches: list[tuple[ast.Stage, ...]] = []
    clauses: list[Tree[Token]] = []
    for child in body.children:
        assert isinstance(child, Tree)
        if child.data in ("choice_stage", "permute_stage"):
            branches.append((builder.stage_body("begin", child, child),))
        elif child.data == "sub_sequence":
            head, *rest = child.children
            assert isinstance(head, Tree)
            first = builder.stage_body("begin", head, head)
            branches.append((first, *(builder.stage(s) for s in rest if isinstance(s, Tree))))
        else:
            clauses.append(child)
    where, until, quants, within, within_prev = builder.stage_clauses(clauses)
    choice = ast.StageChoice(str(body.data), tuple(branches), span)
    return ast.Stage(contiguity, None, None, (), where, until, quants, within, within_prev, span, choice)


def choice_names(stage: ast.Stage) -> list[ast.Stage]:
    """The stages inside a choice, branch by branch (for the duplicate-name check)."""
    assert stage.choice is not None
    return [s for branch in stage.choice.branches for s in branch]


LowerStage = Callable[[ast.Stage, bool], "seq.Element"]


def lower_choice(
    ctx: Context, stage: ast.Stage, contiguity: seq.Contiguity, negated: bool, lower: LowerStage,
    spans: dict[str, SourceSpan],
) -> seq.Alternation | seq.Permute:  # fmt: skip
    """The engine element of a choice; ``lower`` lowers one inner stage (first of its chain or not)."""
    choice = stage.choice
    assert choice is not None
    if choice.kind == "sequence":
        msg = (
            "a parenthesised sequence of stages is a group: write '(begin a next b)', "
            "or alternate it: '(a next b) | c'"
        )
        raise ctx.fail(msg, choice.span)
    word = "permute" if choice.kind == "permute" else "an alternation"
    if negated:
        msg = f"{word} cannot be negated; negate a single stage instead"
        raise ctx.fail(msg, stage.span)
    extra = stage.where[0][1].span if stage.where else (stage.until or stage.within or stage.within_previous)
    if extra is not None:
        span = extra if isinstance(extra, SourceSpan) else extra.span
        msg = f"{word} takes no 'where', 'until' or 'within' (put them on its stages)"
        raise ctx.fail(msg, span)
    branches = tuple(tuple(lower(s, i == 0) for i, s in enumerate(b)) for b in choice.branches)
    if choice.kind == "alternation":
        if stage.quantifiers:
            msg = "an alternation takes no quantifier (put it on a stage or group inside a branch)"
            raise ctx.fail(msg, stage.quantifiers[0].span)
        name = "(" + " | ".join(" ".join(s.name for s in b) for b in branches) + ")"
        spans.setdefault(name, choice.span)
        return seq.Alternation(branches, contiguity, name)
    inner = _permute_inner(ctx, stage.quantifiers)
    elements = tuple(b[0] if len(b) == 1 else _group(b) for b in branches)
    name = "permute(" + ", ".join(e.name for e in elements) + ")"
    spans.setdefault(name, choice.span)
    try:
        return seq.Permute(elements, contiguity, inner, name)
    except PatternError as err:  # why: too many elements, said where the permute is written
        raise ctx.fail(str(err), choice.span) from None


def _group(stages: Sequence[seq.Element]) -> seq.GroupStage:
    return seq.GroupStage("(" + " ".join(s.name for s in stages) + ")", tuple(stages))


def _permute_inner(ctx: Context, quantifiers: Sequence[ast.Quantifier]) -> seq.Contiguity:
    """``consecutive`` (SQL's strict order) or ``allow combinations`` between permuted elements."""
    inner = seq.Contiguity.RELAXED
    for i, q in enumerate(quantifiers):
        if q.kind not in ("consecutive", "combinations") or i > 0:
            msg = (
                "permute takes only 'consecutive' or 'allow combinations' "
                "(the contiguity between its elements)"
            )
            raise ctx.fail(msg, q.span)
        inner = seq.Contiguity.STRICT if q.kind == "consecutive" else seq.Contiguity.NONDETERMINISTIC_RELAXED
    return inner


StageLines = Callable[[seq.Element, bool, str], list[str]]


def choice_lines(
    choice: seq.Alternation | seq.Permute, lead: str, indent: str, step: str, stage_lines: StageLines
) -> list[str]:
    """``choice`` as text: ``lead (a next b) | c`` or ``lead permute(a, b, c) consecutive``; a branch
    of one plain stage is written bare, any other in parentheses, one stage a line."""
    if isinstance(choice, seq.Alternation):
        branches: Sequence[Sequence[seq.Element]] = choice.branches
        line, sep, close = f"{indent}{lead} ", " | ", ""
    else:
        branches = [_unwrap(e) for e in choice.elements]
        line, sep = f"{indent}{lead} permute(", ", "
        tail = {
            seq.Contiguity.STRICT: " consecutive",
            seq.Contiguity.NONDETERMINISTIC_RELAXED: " allow combinations",
        }
        close = ")" + tail.get(seq.Contiguity(choice.inner), "")
    lines: list[str] = []
    for i, branch in enumerate(branches):
        body = _branch(branch, indent + step, stage_lines)
        if i:
            line += sep
        if len(body) == 1 and _bare(branch, typed=isinstance(choice, seq.Permute)):
            line += body[0].strip()
        else:
            lines.append(line + "(")
            lines.extend(body)
            line = f"{indent})"
    lines.append(line + close)
    return lines


def _unwrap(e: seq.Element) -> Sequence[seq.Element]:
    """A permuted element as a branch: a plain group's stages, else the element alone."""
    if isinstance(e, seq.GroupStage) and e.quantifier.single and e.until is None and e.within_ms is None:
        return e.stages
    return (e,)


def _bare(branch: Sequence[seq.Element], *, typed: bool) -> bool:
    """A branch written without parentheses: one stage (with a type list only in ``permute``)."""
    return len(branch) == 1 and isinstance(branch[0], seq.Stage) and (typed or not branch[0].types)


def _branch(stages: Sequence[seq.Element], indent: str, stage_lines: StageLines) -> list[str]:
    """A branch's stages; its first line without ``begin`` (a sub-sequence starts bare)."""
    lines: list[str] = []
    for i, s in enumerate(stages):
        lines.extend(stage_lines(s, i == 0, indent))
    lines[0] = indent + lines[0][len(indent) + len("begin ") :]
    return lines
