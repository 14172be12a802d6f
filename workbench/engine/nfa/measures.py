"""Measures: named expressions evaluated once per detection (SQL ``MATCH_RECOGNIZE`` ``MEASURES``).

A :class:`Measure` is a name and an expression of the closed IR (:mod:`workbench.engine.expr`).
It reads the events of the finished match: ``matched('a')`` is every event stage ``a`` took
(``first(matched('a')).price``, ``count(matched('b'))``), and ``matched('*')`` every event of the
match in order (SQL's universal pattern variable: ``avg(matched('*').price)``; the ``%%cep``
language writes ``avg(price)``). There is no current event: ``e`` is NULL.

A timed-out partial match gets the measures that read only stages it reached (and the universal
variable); the others are NULL. A measure whose evaluation fails is NULL and its error is
recorded with the pattern's condition errors.

>>> Measure("dur", "last(matched('b')).time - first(matched('a')).time").kind
'duration'
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

from workbench.engine.detection import DETECTION_COLUMNS, Detection, MeasureValues
from workbench.engine.expr import Run, as_tree, compile_tree, ir, stages_of
from workbench.engine.faults import FaultSink
from workbench.errors import PatternError

__all__ = [
    "RESERVED_MEASURE_NAMES",
    "UNIVERSAL",
    "Measure",
    "MeasureEvaluator",
    "MeasureKind",
    "measure_kind",
]

#: the stage name that reads every event of the match (SQL's universal pattern variable).
UNIVERSAL = "*"

#: names a measure cannot have: the fixed columns of the detections DataFrame.
RESERVED_MEASURE_NAMES = frozenset(DETECTION_COLUMNS)

MeasureKind = Literal["time", "duration", "value"]

_PICKS = frozenset({"first", "last", "min", "max", "prev", "avg"})


def measure_kind(node: ir.Node) -> MeasureKind:
    """Whether ``node`` is an event time (``x.time``, ``first(a).t``, ``max(a.time)``), a difference of
    two times (a duration), or any other value: results show times as dates when the input's are.

    >>> from workbench.engine.expr import parse_expr
    >>> [measure_kind(parse_expr(t)) for t in ("max(matched('a').time)", "e.x", "last(matched('a')).t + 5")]
    ['time', 'value', 'time']
    """
    if isinstance(node, ir.Attr):
        return "time" if node.name in ("time", "t") else "value"
    if isinstance(node, ir.Call) and node.func in _PICKS and len(node.args) == 1:
        return measure_kind(node.args[0])
    if isinstance(node, ir.IfElse):
        kinds = {measure_kind(node.then), measure_kind(node.orelse)}
        return kinds.pop() if len(kinds) == 1 else "value"
    if isinstance(node, ir.Binary) and node.op in ("+", "-"):
        left, right = measure_kind(node.left), measure_kind(node.right)
        if node.op == "-" and left == right == "time":
            return "duration"
        if "time" in (left, right) and "duration" not in (left, right):
            return "time" if (left == "time") != (right == "time") else "value"
        if left == right == "duration":
            return "duration"
    return "value"


@dataclass(frozen=True, slots=True)
class Measure:
    """One named output value per detection.

    Attributes:
        name: the column name (an identifier, unique in the pattern, not a fixed detection column).
        expr: the expression (text is parsed into the IR when the measure is defined).
    """

    name: str
    expr: ir.Node

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            msg = f"a measure's name must be an identifier, got {self.name!r}"
            raise PatternError(msg)
        if self.name in RESERVED_MEASURE_NAMES:
            msg = f"a measure cannot be called {self.name!r} (a column every detection has)"
            raise PatternError(msg)
        object.__setattr__(self, "expr", as_tree(self.expr, f"measure {self.name!r}"))

    @property
    def kind(self) -> MeasureKind:
        """``"time"``, ``"duration"`` or ``"value"`` (see :func:`measure_kind`)."""
        return measure_kind(self.expr)


class _MatchFrame:
    """The :class:`~workbench.engine.expr.Frame` of a finished match: each stage's events."""

    __slots__ = ("events", "stages")

    def __init__(self, detection: Detection) -> None:
        self.events = list(detection.events)
        self.stages = detection.by_stage()

    def matched(self, stage: str) -> Sequence[object]:
        return self.events if stage == UNIVERSAL else self.stages.get(stage, [])

    def lookup(self, name: str) -> object:
        raise KeyError(name)


class MeasureEvaluator:
    """Adds a pattern's measures to its detections (built once per compiled pattern)."""

    __slots__ = ("kinds", "measures", "names", "runs", "sink", "stages")

    def __init__(
        self,
        measures: Sequence[Measure],
        sink: FaultSink,
        functions: Mapping[str, Callable[..., object]] | None = None,
    ) -> None:
        self.measures = tuple(measures)
        self.names = tuple(m.name for m in measures)
        self.kinds: Mapping[str, MeasureKind] = {m.name: m.kind for m in measures}
        self.runs: tuple[Run, ...] = tuple(compile_tree(m.expr, functions).run for m in measures)
        self.stages = tuple(stages_of(m.expr) - {UNIVERSAL} for m in measures)
        self.sink = sink

    def check_stages(self, known: Sequence[str]) -> None:
        """Every stage a measure reads exists (raises :class:`PatternError` naming the measure)."""
        for m, stages in zip(self.measures, self.stages, strict=True):
            for s in sorted(stages - set(known)):
                msg = f"measure {m.name!r} reads unknown stage {s!r}"
                raise PatternError(msg, element=s)

    def apply(self, detection: Detection) -> Detection:
        """``detection`` with its measures (a match: all; a timeout: those its stages can give)."""
        frame = _MatchFrame(detection)
        reached = frame.stages.keys()
        timeout = detection.kind != "match"
        values: dict[str, object] = {}
        for name, run, stages in zip(self.names, self.runs, self.stages, strict=True):
            # Why: a timed-out partial match has no value for a stage it never reached
            if timeout and not stages <= reached:
                values[name] = None
                continue
            try:
                values[name] = run(None, frame, None)
            except Exception as err:  # why: recorded like a condition's error; the value is NULL
                last = detection.events[-1] if detection.events else None
                self.sink.report(f"measure {name!r}", err, last)
                values[name] = None
        return replace(detection, measures=MeasureValues(values, self.kinds))


class MeasuringContext:
    """A matcher context whose ``emit`` adds the measures; everything else is the wrapped context's."""

    __slots__ = ("evaluator", "inner")

    def __init__(self, evaluator: MeasureEvaluator) -> None:
        self.evaluator = evaluator
        self.inner: object = None

    def emit(self, detection: Detection) -> None:
        self.inner.emit(self.evaluator.apply(detection))  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        if name == "inner":  # why: unpickling (Flink ships matchers pickled) asks before it is set
            raise AttributeError(name)
        return getattr(self.inner, name)
