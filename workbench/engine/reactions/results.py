"""How a group instance's recorded entries become a detection: flattened events and the tree."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from workbench.engine.events import Event
from workbench.engine.reactions.state import Entry

__all__ = ["TreeNode", "flatten"]


@dataclass(frozen=True, slots=True)
class TreeNode:
    """A nested group's result inside ``Detection.extra["tree"]``.

    ``tree`` lists the nested group's own results: events and further :class:`TreeNode` items;
    ``negated`` its ``@not`` channels proved absent.
    """

    group: str
    exit: str
    tree: tuple[Event | TreeNode, ...]
    negated: tuple[str, ...] = ()

    @property
    def events(self) -> tuple[Event, ...]:
        """The leaf events, flattened."""
        out: list[Event] = []
        for item in self.tree:
            out.extend(item.events if isinstance(item, TreeNode) else (item,))
        return tuple(out)


def flatten(
    entries: Iterable[Entry], negated: Iterable[str], prefix: str = ""
) -> tuple[list[Event], list[str], list[str], list[Event | TreeNode]]:
    events: list[Event] = []
    chans: list[str] = []
    negs: list[str] = []
    tree: list[Event | TreeNode] = []
    for en in entries:
        if en.sub is not None:
            sub = en.sub
            ev, ch, ng, st = flatten(sub.entries, sub.negated, f"{prefix}{sub.group}.")
            events += ev
            chans += ch
            negs += ng
            tree.append(TreeNode(sub.group, sub.exit, tuple(st), tuple(sub.negated)))
        elif en.event is not None:
            events.append(en.event)
            chans.append(prefix + en.channel)
            tree.append(en.event)
    negs += [prefix + n for n in negated]
    return events, chans, negs, tree
