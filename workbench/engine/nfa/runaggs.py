"""The declared aggregates of a sequence pattern, as one partial match holds them.

A partial match holds a tuple of :class:`~workbench.engine.aggregates.Aggregate` states, parallel
to the pattern's ``aggregates`` (``()`` until its first take). Taking an event copies the
aggregates of the taking stage and updates them; a condition reads one by name.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from workbench.engine.aggregates import Aggregate, input_of, make_aggregate, value_with
from workbench.engine.events import Event
from workbench.engine.faults import FaultSink
from workbench.engine.nfa.pattern import AggregateSpec, SequencePattern
from workbench.errors import EventError, PatternError

__all__ = ["RunAggregates"]


class RunAggregates:
    """The aggregate specs of one pattern and how a partial match's aggregates change.

    Attributes:
        specs: the pattern's aggregate specs.
        index: aggregate name -> position in ``specs``.
        of_stage: stage name -> positions of the aggregates that stage updates.
    """

    __slots__ = ("faults", "index", "name", "of_stage", "specs")

    def __init__(self, pattern: SequencePattern) -> None:
        #: where a value an aggregate cannot take is recorded (the matcher's; ``None``: it raises)
        self.faults: FaultSink | None = None
        specs = pattern.aggregates
        names = [a.name for a in specs]
        if len(set(names)) != len(names):
            msg = f"duplicate aggregate names: {names}"
            raise PatternError(msg, pattern=pattern.name)
        for a in specs:
            make_aggregate(a.function, **dict(a.params))  # validates the function name early
        self.name = pattern.name
        self.specs: tuple[AggregateSpec, ...] = specs
        self.index = {a.name: i for i, a in enumerate(specs)}
        of_stage: dict[str, list[int]] = {}
        for i, a in enumerate(specs):
            of_stage.setdefault(a.stage, []).append(i)
        self.of_stage = {stage: tuple(ids) for stage, ids in of_stage.items()}

    def check_stages(self, stage_names: Collection[str]) -> None:
        """Raise :class:`PatternError` for an aggregate over a stage the pattern does not have."""
        for a in self.specs:
            if a.stage not in stage_names:
                msg = f"aggregate {a.name!r} refers to unknown stage {a.stage!r}"
                raise PatternError(msg, pattern=self.name, element=a.name)

    def fresh(self) -> tuple[Aggregate, ...]:
        """Empty aggregates, one per spec."""
        return tuple(make_aggregate(s.function, **dict(s.params)) for s in self.specs)

    def take(self, aggs: tuple[Aggregate, ...], stage: str, event: Event) -> tuple[Aggregate, ...]:
        """The aggregates after ``stage`` took ``event``: the stage's ones copied and updated."""
        specs = self.specs
        if not specs:
            return ()
        if not aggs:
            aggs = self.fresh()
        touched = self.of_stage.get(stage)
        if not touched:
            return aggs
        out = list(aggs)
        for i in touched:
            out[i] = self.updated(aggs[i], i, event)
        return tuple(out)

    def updated(self, agg: Aggregate, i: int, event: Event, *, in_place: bool = False) -> Aggregate:
        """Aggregate ``i`` updated with ``event``'s value: a copy, or ``agg`` itself when
        ``in_place`` and the value is a plain number (every aggregate takes one without failing).

        A value it cannot take (a text price, a list) is skipped and recorded as a condition
        fault: ``agg`` comes back as it was (a failed update may have changed the copy halfway).
        """
        spec = self.specs[i]
        value = input_of(event, spec.field)
        plain = (
            value is None or value.__class__ is float or (isinstance(value, int) and -_EXACT < value < _EXACT)
        )
        if in_place and plain and value.__class__ is not bool:  # why: nothing to undo: update it in place
            agg.update(value)
            return agg
        new = agg.copy()
        try:
            new.update(value)
        except (TypeError, ValueError, ArithmeticError) as err:
            if self.faults is None:  # why: no matcher to record it (a bare plan, in tests)
                raise _bad_input(self.name, spec, event, value, err) from None
            what = f"{type(value).__name__} {value!r}"
            self.faults.report(
                f"aggregate {spec.name!r} ({spec.function} of {spec.field!r})",
                _same_kind(err)(f"cannot take {what}: {err}"),
                event,
            )
            return agg
        return new

    def read(self, aggs: tuple[Aggregate, ...], name: str, stage: str | None, event: Event) -> object:
        """The value of aggregate ``name`` seen by the condition of ``stage`` testing ``event``."""
        i = self.index.get(name)
        if i is None:
            msg = f"no aggregate named {name!r}; declared: {sorted(self.index)}"
            raise PatternError(msg, pattern=self.name)
        spec = self.specs[i]
        agg = aggs[i] if aggs else make_aggregate(spec.function, **dict(spec.params))
        if spec.include_current and stage == spec.stage:
            return value_with(agg, input_of(event, spec.field))
        return agg.get()

    def reader(self, aggs: tuple[Aggregate, ...], event: Event) -> Callable[[str, str | None], object]:
        """``read`` bound to one partial match's aggregates and the event being tested."""

        def read(name: str, stage: str | None = None) -> object:
            return self.read(aggs, name, stage, event)

        return read


#: ints below this size go into a float mean or spread without overflowing
_EXACT = 2**53


def _bad_input(pattern: str, spec: AggregateSpec, event: Event, value: object, err: Exception) -> EventError:
    """The error for an event whose value an aggregate cannot take, naming the event and field."""
    msg = (
        f"pattern {pattern!r}: aggregate {spec.name!r} ({spec.function} of {spec.field!r}) cannot take "
        f"{type(value).__name__} {value!r} of this {event.type!r} event at time {event.time}: {err}"
    )
    return EventError(msg, position=event.seq, field=spec.field)


def _same_kind(err: Exception) -> type[Exception]:
    """The built-in class of ``err`` (``TypeError``, ``ValueError`` or ``ArithmeticError``) to say it
    again with the aggregate's words: its own class may need other arguments (numpy's
    ``_UFuncBinaryResolutionError`` needs its dtypes), and a second error there would escape."""
    for kind in (TypeError, ValueError, ArithmeticError):
        if isinstance(err, kind):
            return kind
    return Exception
