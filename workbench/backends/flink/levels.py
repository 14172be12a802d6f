"""Which keyed operator of a Flink chain runs each pattern of a run with ``emit into``.

On Flink, a detection cannot be fed back into the operator that produced it (its outputs go
downstream), so the patterns of a run that derives events are split into levels, one keyed
operator each: level 0 runs the patterns that receive no derived type, level ``n + 1`` the
patterns that receive a type emitted at level ``n`` (and perhaps earlier). Each operator passes
its input events on, with its own derived events, to the next one (see
:mod:`~workbench.backends.flink.chain`). The engine's cycle check makes the levels finite; a
pattern that receives every type of its key (it keeps the key's stream for ``prev(e, n)`` or a
window) and emits itself would need its own derived events, which no chain can give it, and is
refused. This module needs no PyFlink (the path choice uses it too).
"""

from __future__ import annotations

from collections.abc import Sequence

from workbench.backends.base import BackendError, PatternLike
from workbench.engine.derived import emits_of
from workbench.engine.matcher import Matcher

__all__ = ["emit_reason", "levels_of"]


def levels_of(matchers: Sequence[Matcher]) -> list[list[int]]:
    """The matcher indexes of each level, in pattern order (one level when none emits).

    Raises :class:`~workbench.backends.base.BackendError` for a pattern that would receive the
    events it derives itself (or those of a pattern it feeds).
    """
    emits = {i: t for i, m in enumerate(matchers) if (t := emits_of(m)) is not None}
    feeders: dict[int, list[int]] = {}
    for i, m in enumerate(matchers):
        received = m.event_types()
        # why every emitter for None: a pattern that keeps the key's stream sees derived events too
        feeders[i] = [e for e, t in emits.items() if received is None or t in received]
    level: dict[int, int] = {}
    for i in range(len(matchers)):
        _place(i, matchers, feeders, level, [])
    depth = max(level.values(), default=0) + 1
    return [[i for i in range(len(matchers)) if level[i] == n] for n in range(depth)]


def _place(
    i: int, matchers: Sequence[Matcher], feeders: dict[int, list[int]], level: dict[int, int], path: list[int]
) -> int:
    """The level of matcher ``i``: one past its deepest feeder (depth-first, ``path`` the chain)."""
    if i in level:
        return level[i]
    if i in path:
        names = " -> ".join(repr(matchers[j].name) for j in [*path[path.index(i) :], i])
        msg = (
            f"pattern {matchers[i].name!r} would receive the events it derives itself ({names}): it "
            "reads every event type of its key (prev or a window over the key's stream), and the Flink "
            "backend runs a pattern that consumes derived events in an operator after the one that "
            "derives them; run it with --backend local"
        )
        raise BackendError(msg)
    path.append(i)
    level[i] = max((_place(e, matchers, feeders, level, path) + 1 for e in feeders[i]), default=0)
    path.pop()
    return level[i]


def emit_reason(pattern: PatternLike, emitted: frozenset[str], reads: frozenset[str] | None) -> str | None:
    """Why a pattern takes the Python path of the Flink backend for ``emit into`` (``None``: no reason).

    ``emitted``: the types the run's patterns emit into; ``reads``: the types the pattern reads.
    """
    into = getattr(pattern, "emit_into", None)
    if into:
        return f"emits into {into!r} (derived events flow to a second keyed operator on the Python path)"
    consumed = sorted(emitted if reads is None else emitted & reads)
    if consumed:
        return (
            f"reads the derived type(s) {', '.join(map(repr, consumed))} (emit into runs on the Python path)"
        )
    return None
