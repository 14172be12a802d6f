"""The ``detail`` of the trace records that end a partial match, shared by every plan (and the cap warning).

The general interpreter and the fast paths must emit equal trace records, so they build these
details here. Each has a ``reason`` (a short sentence for ``%cep explain`` and the timeline) plus
machine-readable fields.
"""

from __future__ import annotations

from workbench.engine.matcher import Context

__all__ = ["cap_detail", "negation_detail", "skip_detail", "strict_detail", "warn_cap"]


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
