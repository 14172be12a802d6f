"""Pure predicates of the group state machine: satisfaction, completion, join compatibility."""

from __future__ import annotations

from collections.abc import Mapping

from workbench.engine.events import Event
from workbench.engine.reactions.compiled import CChannel, CGroup
from workbench.engine.reactions.state import ChannelState, Entry, InstanceState

__all__ = ["and_complete", "compatible", "negation_holds", "satisfied"]


def satisfied(group: CGroup, ch: ChannelState, cc: CChannel, at_timeout: bool) -> bool:
    """Whether a live channel lets an AND complete (prova.md 3.1, isAndComplete)."""
    spec = cc.spec
    if spec.negated:
        if not negation_holds(ch, cc):
            return False
        # Absence is proved by a timeout when there is one: the group's (at_timeout) or the
        # channel's own member timeout (a "not within T" channel holds completion back).
        return at_timeout or (group.spec.timeout_ms is None and spec.timeout_ms is None)
    if spec.optional or spec.stop or spec.is_control:
        return True
    if spec.count is not None:
        return ch.seen >= spec.count.min
    return False


def negation_holds(ch: ChannelState, cc: CChannel) -> bool:
    """Whether an ``@not`` channel is still unviolated (strict counts: outside ``[min, max]``)."""
    count = cc.spec.count
    if count is None:
        return True
    if count.mode == "strict":
        return ch.seen < count.min or ch.seen > count.max
    return ch.seen < max(count.min, 1)


def and_complete(group: CGroup, inst: InstanceState, at_timeout: bool = False) -> bool:
    """Every live channel is satisfied and no nested group is pending (never for ``@vars`` groups)."""
    if group.vars_mode or inst.children:
        return False
    for ch in inst.channels.values():
        cc = group.members[ch.member]
        assert isinstance(cc, CChannel)
        if not satisfied(group, ch, cc, at_timeout):
            return False
    return True


def compatible(
    group: CGroup,
    env: Mapping[str, object],
    mine: Mapping[str, object],
    legs: list[Entry],
    event: Event,
    with_where: bool = True,
) -> bool:
    """Whether the current bindings ``mine`` join the recorded ``legs``: equal values for shared
    variable names and, ``with_where``, the group ``@where`` on the merged bindings."""
    merged: dict[str, object] = {}
    for leg in legs:
        for var, value in (leg.bindings or {}).items():
            if var in merged and merged[var] != value:
                return False
            merged[var] = value
    for var, value in mine.items():
        if var in merged and merged[var] != value:
            return False
    if group.where is None or not with_where:
        return True
    scope = {**env, **merged, **mine}
    return bool(group.where(event, scope))
