"""Measures: named expressions evaluated once per detection (SQL ``MATCH_RECOGNIZE`` ``MEASURES``).

A :class:`Measure` is a name and an expression of the closed IR (:mod:`workbench.engine.expr`).
It reads the events of the finished match: ``matched('a')`` is every event stage ``a`` took
(``first(matched('a')).price``, ``count(matched('b'))``), and ``matched('*')`` every event of the
match in order (SQL's universal pattern variable: ``avg(matched('*').price)``; the ``%%cep``
language writes ``avg(price)``). A named subset of stages (SQL ``SUBSET ab = (a, b)``, the
pattern's ``subsets``) reads the events of its stages in match order: ``avg(matched('ab').price)``.
There is no current event: ``e`` is NULL.

A timed-out partial match gets the measures that read only stages it reached (and the universal
variable and subsets, over the events it has); the others are NULL. A measure whose evaluation
fails is NULL and its error is recorded with the pattern's condition errors.

>>> Measure("dur", "last(matched('b')).time - first(matched('a')).time").kind
'duration'
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any, Literal, cast

from workbench.engine.detection import DETECTION_COLUMNS, Detection, MeasureValues, Reaction, with_measures
from workbench.engine.events import Event
from workbench.engine.expr import Run, as_tree, compile_tree, ir, stages_of
from workbench.engine.faults import FaultSink
from workbench.engine.nfa.buffer import Time
from workbench.errors import PatternError

__all__ = [
    "RESERVED_MEASURE_NAMES",
    "TIME_ATTRS",
    "UNIVERSAL",
    "Measure",
    "MeasureEvaluator",
    "MeasureKind",
    "Subsets",
    "measure_kind",
    "subsets_of",
]

#: the stage name that reads every event of the match (SQL's universal pattern variable).
UNIVERSAL = "*"

#: names a measure cannot have: the fixed columns of the detections DataFrame.
RESERVED_MEASURE_NAMES = frozenset(DETECTION_COLUMNS)

MeasureKind = Literal["time", "duration", "value"]

_PICKS = frozenset({"first", "last", "min", "max", "prev", "avg"})


#: the attributes that are event times whatever the input (a datetime field is one only in its input)
TIME_ATTRS = frozenset({"time", "t"})


def measure_kind(
    node: ir.Node, dated: Collection[str] = TIME_ATTRS, durations: Collection[str] = ()
) -> MeasureKind:
    """Whether ``node`` is an event time (``x.time``, ``first(a).t``, ``max(a.time)``), a duration (a
    difference of two times, or a field in ``durations``), or any other value: results show times as
    dates when the input's are, and durations as durations.

    ``dated``: the attributes that hold times (a DataFrame's datetime fields are times too);
    ``durations``: the attributes that hold durations (its timedelta fields). A time plus or minus a
    duration is a time; durations add, subtract and scale (``* 2``, ``/ 2``) to durations.

    >>> from workbench.engine.expr import parse_expr
    >>> [measure_kind(parse_expr(t)) for t in ("max(matched('a').time)", "e.x", "last(matched('a')).t + 5")]
    ['time', 'value', 'time']
    >>> measure_kind(parse_expr("last(matched('b')).shipped - e.opened"), {"shipped", "opened"})
    'duration'
    >>> texts = ("e.time + e.wait", "sum(e.wait) / 2", "e.wait / e.wait")
    >>> [measure_kind(parse_expr(t), durations={"wait"}) for t in texts]
    ['time', 'duration', 'value']
    """
    if isinstance(node, ir.Attr):
        return "time" if node.name in dated else "duration" if node.name in durations else "value"
    if isinstance(node, ir.Call) and len(node.args) == 1 and node.func in _PICKS | {"sum", "abs"}:
        kind = measure_kind(node.args[0], dated, durations)
        # why: a sum or absolute value of times is no time, of durations a duration
        return kind if node.func in _PICKS or kind == "duration" else "value"
    if isinstance(node, ir.IfElse):
        kinds = {measure_kind(node.then, dated, durations), measure_kind(node.orelse, dated, durations)}
        return kinds.pop() if len(kinds) == 1 else "value"
    if isinstance(node, ir.Binary) and node.op in ("+", "-", "*", "/"):
        left, right = measure_kind(node.left, dated, durations), measure_kind(node.right, dated, durations)
        return _combined(node.op, left, right)
    return "value"


def _combined(op: str, left: MeasureKind, right: MeasureKind) -> MeasureKind:
    """The kind of ``left op right``: time arithmetic (a number added to a time counts milliseconds)."""
    kinds = (left, right)
    if op in ("*", "/"):
        # why: a duration scaled by a number is one; a ratio of two durations is a number
        scaled = (left == "duration" and right == "value") or (op == "*" and kinds == ("value", "duration"))
        return "duration" if scaled else "value"
    if op == "-" and left == right == "time":
        return "duration"
    if "time" in kinds:
        if kinds.count("time") == 2 or (op == "-" and right == "time"):
            return "value"  # why: a sum of times, or a duration minus a time, means no time
        return "time"
    return "duration" if "duration" in kinds else "value"


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


class Subsets(Mapping[str, tuple[str, ...]]):
    """Named subsets of a pattern's stages (SQL ``SUBSET ab = (a, b)``): an immutable, hashable
    mapping ``name -> stage names``, in declared order.

    >>> s = Subsets({"ab": ("a", "b")}); (dict(s), s == {"ab": ("a", "b")}, hash(s) == hash(Subsets(s)))
    ({'ab': ('a', 'b')}, True, True)
    """

    __slots__ = ("_items",)

    def __init__(self, items: Mapping[str, Iterable[str]] | Iterable[tuple[str, Iterable[str]]] = ()) -> None:
        pairs = items.items() if isinstance(items, Mapping) else items
        self._items: dict[str, tuple[str, ...]] = {}
        for name, members in pairs:
            if name in self._items:
                msg = f"subset {name!r} is defined twice"
                raise PatternError(msg)
            if isinstance(members, str) or not isinstance(members, Iterable):
                msg = f"subset {name!r}: the members are a tuple of stage names, got {members!r}"
                raise PatternError(msg)
            self._items[name] = tuple(members)

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._items[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __hash__(self) -> int:
        return hash(tuple(self._items.items()))

    def __repr__(self) -> str:
        return f"Subsets({self._items!r})"

    def __reduce__(self) -> tuple[type[Subsets], tuple[dict[str, tuple[str, ...]]]]:
        return (Subsets, (self._items,))


def subsets_of(value: object, stages: Collection[str], pattern: str) -> Subsets:
    """``value`` (a mapping or pairs) as :class:`Subsets`, checked against the pattern's ``stages``:
    names are identifiers unlike any stage (or ``*``, ``e``, ``matched``), members are distinct
    stages of the pattern, at least one."""
    try:
        out = value if isinstance(value, Subsets) else Subsets(value)  # type: ignore[arg-type]
    except PatternError as err:
        raise PatternError(str(err), pattern=pattern) from None
    except (TypeError, ValueError) as err:
        msg = f"subsets must map names to tuples of stage names ({err})"
        raise PatternError(msg, pattern=pattern) from None
    for name, members in out.items():
        problem = _subset_problem(name, members, stages)
        if problem is not None:
            msg = f"subset {name!r}: {problem}"
            raise PatternError(msg, pattern=pattern, element=str(name))
    return out


def _subset_problem(name: object, members: tuple[str, ...], stages: Collection[str]) -> str | None:
    """What is wrong with one subset (``None``: nothing)."""
    if not isinstance(name, str) or not name.isidentifier() or name in ("e", "matched"):
        return "a subset's name must be an identifier other than 'e' and 'matched'"
    if name in stages:
        return "a stage has that name"
    if not members:
        return "it needs at least one stage"
    unknown = [m for m in members if m not in stages]
    if unknown:
        return f"unknown stage {unknown[0]!r}"
    if len(set(members)) < len(members):
        return "a stage is listed twice"
    return None


class _MatchFrame:
    """The :class:`~workbench.engine.expr.Frame` of a finished match: each stage's events."""

    __slots__ = ("detection", "rows", "stages", "subsets")

    def __init__(self, detection: Detection, subsets: Mapping[str, tuple[str, ...]]) -> None:
        self.detection = detection
        # why lazy: a measure reads a stage or two; a long match need not be regrouped whole
        self.stages: dict[str, list[Event]] = {}
        self.rows: list[tuple[str, Event]] | None = None  # built when the whole match is read
        self.subsets = subsets

    def stage(self, name: str) -> list[Event]:
        """The events stage ``name`` took (empty: none, or a stage the match never reached)."""
        got = self.stages.get(name)
        if got is None:
            channels, events = self.detection.channels, self.detection.events
            n = channels.count(name)
            start = channels.index(name) if n else 0
            if channels[start : start + n].count(name) == n:  # why: one run of the stage (the usual
                got = list(events[start : start + n])  # layout): sliced, no per-event step
            else:
                got = [e for c, e in zip(channels, events, strict=True) if c == name]
            self.stages[name] = got
        return got

    def _rows(self) -> list[tuple[str, Event]]:
        rows = self.rows
        if rows is None:
            d = self.detection
            rows = list(zip(d.channels, d.events, strict=True))
            # why: a detection lists its events by stage; a repeated group of stages (``(a next b)
            # times 2``) takes them out of time order, and the universal variable and subsets read
            # rows in the order the match took them. Only a time that goes back shows it; without
            # one the stage order stands (the order taken, equal times under order_by included)
            if any(e.time < p.time for (_, p), (_, e) in pairwise(rows)):
                rows.sort(key=lambda row: _row(row[1]))
            self.rows = rows
        return rows

    def matched(self, stage: str) -> Sequence[object]:
        if stage == UNIVERSAL:
            return [e for _, e in self._rows()]
        members = self.subsets.get(stage)
        if members is None:  # why: a stage (or one the match never reached)
            return self.stage(stage)
        return [e for c, e in self._rows() if c in members]

    def lookup(self, name: str) -> object:
        raise KeyError(name)


def _row(event: Event) -> tuple[float, int]:
    """An event's place among the rows of a match: its time, then its arrival position."""
    return (event.time, event.seq)


class MeasureEvaluator:
    """Adds a pattern's measures to its detections (built once per compiled pattern)."""

    __slots__ = ("exprs", "kinds", "measures", "names", "runs", "sink", "stages", "subsets")

    def __init__(
        self,
        measures: Sequence[Measure],
        sink: FaultSink,
        functions: Mapping[str, Callable[..., object]] | None = None,
        subsets: Mapping[str, tuple[str, ...]] | None = None,
    ) -> None:
        self.measures = tuple(measures)
        self.names = tuple(m.name for m in measures)
        self.kinds: Mapping[str, MeasureKind] = {m.name: m.kind for m in measures}
        self.exprs: Mapping[str, ir.Node] = {m.name: m.expr for m in measures}
        self.runs: tuple[Run, ...] = tuple(compile_tree(m.expr, functions).run for m in measures)
        self.subsets: Mapping[str, tuple[str, ...]] = subsets or {}
        # a subset, like the universal variable, reads whatever events the match has
        self.stages = tuple(stages_of(m.expr) - {UNIVERSAL, *self.subsets} for m in measures)
        self.sink = sink

    def check_stages(self, known: Sequence[str]) -> None:
        """Every stage a measure reads exists (raises :class:`PatternError` naming the measure)."""
        for m, stages in zip(self.measures, self.stages, strict=True):
            for s in sorted(stages - set(known)):
                msg = f"measure {m.name!r} reads unknown stage {s!r}"
                raise PatternError(msg, element=s)

    def apply(self, detection: Detection) -> Detection:
        """``detection`` with its measures (a match: all; a timeout: those its stages can give)."""
        frame = _MatchFrame(detection, self.subsets)
        timeout = detection.kind != "match"
        reached = frozenset(detection.channels) if timeout else frozenset()
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
        return with_measures(detection, MeasureValues(values, self.kinds, self.exprs))


class MeasuringContext:
    """A matcher context whose ``emit`` adds the measures; everything else is the wrapped context's.

    Why each member is spelled out: a class with ``__getattr__`` pays for a failed lookup and its
    exception on every delegated read (``ctx.tracing``, ``ctx.key``: several per event).
    ``__getattr__`` stays only for what a particular driver's context adds.
    """

    __slots__ = ("evaluator", "inner")

    def __init__(self, evaluator: MeasureEvaluator) -> None:
        self.evaluator = evaluator
        self.inner: Any = None

    def emit(self, detection: Detection) -> None:
        self.inner.emit(self.evaluator.apply(detection))

    key = property(lambda self: self.inner.key)
    now = property(lambda self: self.inner.now)
    cause = property(lambda self: self.inner.cause)
    tracing = property(lambda self: self.inner.tracing)
    final = property(lambda self: self.inner.final)
    keystate = property(lambda self: self.inner.keystate)
    pindex = property(lambda self: self.inner.pindex)
    pattern = property(lambda self: self.inner.pattern)

    def release_time(self) -> Time:
        return cast("Time", self.inner.release_time())

    def react(self, reaction: Reaction) -> None:
        self.inner.react(reaction)

    def schedule(self, time: Time, token: Hashable) -> None:
        self.inner.schedule(time, token)

    def new_instance(self) -> int:
        return cast("int", self.inner.new_instance())

    def horizon(self) -> Time:
        return cast("Time", self.inner.horizon())

    def drop(self, count: int) -> None:
        self.inner.drop(count)

    def warn_once(self, topic: str, message: str) -> None:
        self.inner.warn_once(topic, message)

    def trace(self, *args: Any, **kwargs: Any) -> None:
        self.inner.trace(*args, **kwargs)

    def __getattr__(self, name: str) -> object:
        if name == "inner":  # why: unpickling (Flink ships matchers pickled) asks before it is set
            raise AttributeError(name)
        return getattr(self.inner, name)
