"""Which patterns a run needs besides the named ones: those whose detections they read (``emit into``).

Running ``attack``, which reads the ``burst`` events that the pattern ``burst`` emits, runs
``burst`` too, in the same engine (its detections are part of the run's results). A feeder and its
consumer must be keyed alike, or the derived events would reach the consumer under another key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from workbench.engine.derived import derived_fields, matched_types
from workbench.engine.families import compile_matcher
from workbench.errors import CepError
from workbench.language.compile import Definition
from workbench.session.inputs import KeyFields

__all__ = ["derived_shape", "with_feeders"]


def with_feeders(
    definitions: Mapping[str, Definition], names: Sequence[str], key: KeyFields | None
) -> list[str]:
    """``names`` and, after them, every defined pattern that feeds one of them (transitively).

    Raises :class:`CepError` when a feeder is partitioned otherwise than its consumer (and no
    explicit ``key`` keys them all).
    """
    emits = {n: t for n, d in definitions.items() if isinstance(t := _emits(d), str)}
    out = list(dict.fromkeys(names))
    if not emits:
        return out
    todo = list(out)
    while todo:
        consumer = todo.pop()
        if consumer not in definitions:
            continue  # why: an unknown name is reported by the caller, with the nearest name
        reads = matched_types(compile_matcher(definitions[consumer].pattern))
        for feeder, into in emits.items():
            if feeder == consumer or (reads is not None and into not in reads):
                continue
            _check_keys(definitions, feeder, consumer, into, key)
            if feeder not in out:
                out.append(feeder)
                todo.append(feeder)
    return out


def _check_keys(
    definitions: Mapping[str, Definition], feeder: str, consumer: str, into: str, key: KeyFields | None
) -> None:
    mine, theirs = definitions[feeder].partition, definitions[consumer].partition
    if key is None and mine != theirs:
        msg = (
            f"pattern {consumer!r} reads the {into!r} events that {feeder!r} emits, but they are "
            f"partitioned differently ({_by(theirs)} and {_by(mine)}): a derived event keeps its "
            "detection's key, so write the same 'partition by' on both (or run with --key)"
        )
        raise CepError(msg)


def _by(partition: str | tuple[str, ...] | None) -> str:
    if partition is None:
        return "not partitioned"
    return "by " + (partition if isinstance(partition, str) else ", ".join(partition))


def _emits(definition: Definition) -> object:
    return getattr(definition.pattern, "emit_into", None)


def derived_shape(
    definitions: Mapping[str, Definition], names: Sequence[str], types: frozenset[str], fields: frozenset[str]
) -> tuple[frozenset[str], frozenset[str]]:
    """The event types and fields a run's patterns met: the input's and those of the derived events."""
    for name in names:
        pattern = definitions[name].pattern
        into = getattr(pattern, "emit_into", None)
        if isinstance(into, str):
            types |= {into}
            fields |= set(derived_fields(pattern))
    return types, fields
