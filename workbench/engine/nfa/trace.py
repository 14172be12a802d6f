"""The ``detail`` of the trace records that end a partial match, shared by every plan (and the cap warning).

The general interpreter and the fast paths must emit equal trace records, so they build these
details here. Each has a ``reason`` (a short sentence for ``%cep explain`` and the timeline) plus
machine-readable fields.
"""

from __future__ import annotations

import functools

from workbench.engine.events import Event
from workbench.engine.expr import ir
from workbench.engine.expr.evaluate import compile_tree
from workbench.engine.expr.printer import print_expr
from workbench.engine.expr.values import EVENT_ATTRIBUTES, Frame, MappingFrame, Run
from workbench.engine.matcher import Context

__all__ = [
    "MappingFrame",
    "cap_detail",
    "condition_parts",
    "near_miss_detail",
    "negation_detail",
    "skip_detail",
    "strict_detail",
    "warn_cap",
]


def strict_detail(seq: int, stage: str) -> dict[str, object]:
    """A partial match waiting at ``stage`` with strict contiguity met an event it cannot take.

    >>> strict_detail(3, "success")["reason"]
    'strict contiguity broken by event #3'
    """
    return {"reason": f"strict contiguity broken by event #{seq}", "event": seq, "waiting": stage}


def negation_detail(seq: int) -> dict[str, object]:
    """A ``notNext``/``notFollowedBy`` stage occurred.

    >>> negation_detail(5)
    {'reason': 'negation violated by event #5', 'event': 5}
    """
    return {"reason": f"negation violated by event #{seq}", "event": seq}


def skip_detail(strategy: str) -> dict[str, object]:
    """A match's after-match skip strategy discarded the partial (or held-back) match.

    >>> skip_detail("skip_past_last_event")["reason"]
    'skip strategy skip_past_last_event'
    """
    return {"reason": f"skip strategy {strategy}", "strategy": strategy}


def cap_detail(cap: int) -> dict[str, object]:
    """``max_partial_matches`` dropped the partial match (the oldest go first).

    >>> cap_detail(10)["reason"]
    'cap: more than 10 partial matches'
    """
    return {"reason": f"cap: more than {cap} partial matches", "max_partial_matches": cap}


def warn_cap(ctx: Context, pattern: str, cap: int, excess: int) -> None:
    """``max_partial_matches`` dropped ``excess`` partial matches: count them, warn once per pattern and run.

    The text is the same for every key and event (Python keeps one registry entry per distinct
    warning text); the run's ``stats["dropped"]`` has the numbers.
    """
    ctx.drop(excess)
    ctx.warn_once(
        "max_partial_matches",
        f"pattern {pattern!r}: a key had more than {cap} partial matches; the oldest were dropped "
        "(max_partial_matches; given once per run, the run's stats count every dropped one)",
    )


#: one checked part of a condition: its text, its value, and for a comparison both sides' values.
Part = dict[str, object]


@functools.lru_cache(maxsize=512)
def _compiled(node: ir.Node) -> Run:
    return compile_tree(node)


def _conjuncts(node: ir.Node) -> list[ir.Node]:
    """The parts of a condition worth reporting one by one: the items of its top-level ``and``s."""
    if isinstance(node, ir.BoolOp) and node.op == "and":
        return [part for item in node.items for part in _conjuncts(item)]
    return [node]


def _value(node: ir.Node, event: Event, frame: Frame) -> object:
    """``node``'s value, or the error it raised (as text) -- the trace path never stops on one."""
    try:
        return _compiled(node)(event, frame, None)
    except Exception as err:  # why: a condition error makes the event not match; show it, do not raise
        return f"<error: {type(err).__name__}: {err}>"


def _show(value: object) -> str:
    return "NULL" if value is None else repr(value)


def _side(node: ir.Node, value: object, event: Event) -> str:
    """A comparison side's value; a NULL read from a field the event lacks says so."""
    if (
        value is None
        and isinstance(node, ir.Attr)
        and node.obj == ir.Name("e")
        and node.name not in EVENT_ATTRIBUTES
        and node.name not in event.fields
    ):
        return f"NULL (no field {node.name!r})"
    return _show(value)


def condition_parts(tree: ir.Node, event: Event, frame: Frame) -> list[Part]:
    """Re-evaluate ``tree`` part by part on ``event``: each part's text, both sides, its truth.

    Only the trace path calls this (explain, diff): the matchers' compiled conditions are untouched.

    >>> from workbench.engine.expr.parse import parse_expr
    >>> e = Event("tick", 0, None, {"price": 9.1, "volume": 800})
    >>> frame = MappingFrame({"matched": {"drop": [Event("tick", 0, None, {"price": 7.5})]}})
    >>> tree = parse_expr("e.price > last(matched('drop')).price * 1.2 and e.volume > 1000")
    >>> [p["text"] for p in condition_parts(tree, e, frame)]
    ['`e.price > last(drop).price * 1.2`: 9.1 > 9.0 is true', '`e.volume > 1000`: 800 > 1000 is false']
    """
    parts: list[Part] = []
    for node in _conjuncts(tree):
        source = print_expr(node, stages="names")
        holds = _value(node, event, frame)
        verdict = "true" if holds is True else "unknown (NULL)" if holds is None else "false"
        if isinstance(holds, str):  # why: the part raised; its text says so
            verdict = holds
        if isinstance(node, ir.Compare):
            left, right = _value(node.left, event, frame), _value(node.right, event, frame)
            shown = f"{_side(node.left, left, event)} {node.op} {_side(node.right, right, event)}"
            parts.append(
                {"part": source, "left": left, "op": node.op, "right": right, "holds": holds is True}
            )
        else:
            shown = _show(holds)
            parts.append({"part": source, "value": holds, "holds": holds is True})
        parts[-1]["text"] = (
            f"`{source}`: {shown} is {verdict}" if shown != verdict else f"`{source}`: {verdict}"
        )
    return parts


def near_miss_detail(tree: ir.Node, event: Event, frame: Frame, element: str) -> dict[str, object]:
    """The detail of a ``rejected`` trace record: ``event`` reached ``element`` but failed ``tree``.

    ``reason`` names the first failing part with both sides' values; ``parts`` has every part.
    """
    parts = condition_parts(tree, event, frame)
    failed = [p for p in parts if not p["holds"]] or parts
    return {
        "reason": f"'{element}' rejected it: " + ", ".join(str(p["text"]) for p in parts),
        "failed": failed[0]["part"],
        "parts": parts,
    }
