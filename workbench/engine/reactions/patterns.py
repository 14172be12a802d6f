"""Prova reaction groups as frozen, declarative pattern objects.

A :class:`ReactionGroup` is Prova's ``@group(g)`` plus its ``@and(g)``/``@or(g)`` exit: a set of event
*channels* (member reactions) joined by an operator. Channels carry the member annotations
(``@not``, ``@stop``, ``@id``, ``@pause``/``@resume``/``@paused``, ``@count``, ``@size``,
``@timer``, ``@hop``, ``@optional``, ``@vars``, ``@timeout``). An :class:`Initiator` is the ``rcvMult`` that
starts one group instance per matching event and binds variables from it.

Conditions
----------
Every condition (``where`` of a channel or initiator, the group's ``where``) is either

* an **expression** (:mod:`workbench.engine.expr`): text is parsed into the expression IR when
  the pattern is defined (an invalid one raises :class:`~workbench.errors.ExpressionError` with its
  line and column); it reads ``e`` (the event: ``e.ip``, ``e.type``, ``e.t``; a missing field is
  NULL) plus every variable bound so far by name (the initiator's ``bind``, ``state``, the group's
  ``constants``, earlier channels' ``binds`` and, in a group ``where``, the ``@vars`` bindings); or
* a **callable** ``cond(e, env) -> bool`` where ``e`` is the :class:`~workbench.engine.events.Event`
  and ``env`` a read-only mapping of the same variables (``lambda e, env: e["ip"] != env["IP"]``).
  A group ``where`` callable receives ``e`` = the current event.

Match values (``match={"user": Var("User")}``) compare an event field with a literal or with a bound
variable. Pattern objects never build callables at construction time, so two patterns built from the
same ``%%cep`` text compare equal; :meth:`ReactionGroup.compile` validates and compiles.

>>> g = ReactionGroup("suspicious", "or", channels=(
...     Channel("c_login", "login", match={"user": Var("User")}, where="e.ip != IP"),
...     Channel("c_logout", "logout", match={"user": Var("User"), "ip": Var("IP")}),
... ), initiator=Initiator("login", bind={"User": "user", "IP": "ip"}), timeout_ms=1000)
>>> from workbench.engine.families import compile_matcher
>>> compile_matcher(g).name
'suspicious'
"""

from __future__ import annotations

import math
from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, TypedDict

from workbench.engine.events import Event
from workbench.engine.expr import as_tree, ir
from workbench.engine.reactions.accumulators import Accumulator, MapCounter, SortedAccumulator

__all__ = [
    "AND",
    "DEFAULT_COUNTER",
    "MIN_TIMER_PERIOD_MS",
    "OR",
    "Channel",
    "ChannelOptions",
    "Condition",
    "Count",
    "Exit",
    "Hop",
    "Initiator",
    "Instance",
    "MapCounter",
    "Member",
    "ReactionGroup",
    "Receive",
    "Size",
    "SortedAccumulator",
    "Timer",
    "Var",
    "pairs",
]

AND = "and"
OR = "or"
#: The counter ``counts=True`` increments (Prova's ``$Count`` in the test suites).
DEFAULT_COUNTER = "Count"

#: A condition: a Python-syntax string, or ``cond(e, env) -> bool``.
Condition: TypeAlias = str | ir.Node | Callable[[Event, Mapping[str, object]], object]

Pairs: TypeAlias = tuple[tuple[str, Any], ...]
#: A name -> value table: given as a mapping, stored as a tuple of pairs (see :func:`pairs`).
Fields: TypeAlias = Mapping[str, Any] | Pairs


def pairs(value: Fields | None) -> Pairs:
    """The ``(name, value)`` pairs of a table field (stored normalised by ``__post_init__``)."""
    if isinstance(value, tuple):
        return value
    return _pairs(value)


def _pairs(value: Fields | None) -> Pairs:
    if value is None:
        return ()
    if isinstance(value, Mapping):
        return tuple((str(k), v) for k, v in value.items())
    return tuple((str(k), v) for k, v in value)


def _counter(value: object, where: str) -> str | None:
    """A ``counts`` value: ``True`` is Prova's ``Count``, a string names the counter, else none."""
    if value is None or value is False:
        return None
    if value is True:
        return DEFAULT_COUNTER
    if isinstance(value, str) and value.isidentifier():
        return value
    from workbench.errors import PatternError

    msg = f"{where}: counts names a counter (an identifier such as 'Count') or is True, got {value!r}"
    raise PatternError(msg)


def _ids(value: str | tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    return tuple(value)


@dataclass(frozen=True, slots=True)
class Var:
    """A reference to a bound variable in a ``match`` mapping (Prova's shared variable name)."""

    name: str


@dataclass(frozen=True, slots=True)
class Count:
    """``@count(min, max, mode)`` on a channel (AND groups).

    ``mode`` is ``"ignore"`` (the channel closes on its ``max``-th event: exactly that many events are
    recorded), ``"record"`` (every event is recorded, the channel stays open; it is satisfied once
    ``min`` events arrived) or ``"strict"`` (an event beyond ``max`` fails the group). Build it the
    way Prova writes it with :meth:`of`: ``Count.of(2)`` = ``@count(2)``, ``Count.of(-1)`` =
    ``@count(-1)`` (any number, record), ``Count.of(1, -1)`` = at least one, record.

    With ``@not`` (``Channel(negated=True)``) the channel is violated when ``min`` events arrived
    (ignore/record); in strict mode it is satisfied exactly when the number of events lies *outside*
    ``[min, max]`` -- zero events included (the User Guide's "anything but", prova.md 9.7).
    """

    min: int
    max: int
    mode: Literal["ignore", "record", "strict"] = "ignore"

    @classmethod
    def of(cls, n: int, m: int | None = None, mode: str | None = None) -> Count:
        """Prova's argument conventions (prova.md 4.8)."""
        if m is None:
            if n < 0:
                return cls(0, 0, "record")
            return cls(n, n, "ignore")
        if m < 0:
            return cls(n, n, "record")
        chosen = mode or "ignore"
        if chosen not in ("ignore", "record", "strict"):
            from workbench.errors import PatternError

            msg = f"@count mode must be ignore, record or strict, got {chosen!r}"
            raise PatternError(msg)
        return cls(n, m, chosen)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Size:
    """``@size(n[, reset[, acc]])`` on an OR channel.

    ``n`` events are needed before the channel fires. With ``reset`` the group is recurring: it
    emits on the ``n``-th event and then every ``reset`` events (``@size(1,1)``: one emission per
    event). With an ``accumulator`` the emission carries its snapshot (``extra["aggregate"]``).
    """

    n: int
    reset: int | None = None
    accumulator: Accumulator | None = None


@dataclass(frozen=True, slots=True)
class Timer:
    """``@timer(delay[, period[, acc]])`` on an OR channel: a recurring time window.

    The first window closes ``delay_ms`` after the instance starts, the next ones every ``period_ms``
    (default: ``delay_ms``, as Prova's one-argument form). Each close emits the window's events and
    the accumulator snapshot, empty windows included. At the end of input (final flush) windows do
    not re-arm.
    """

    delay_ms: float
    period_ms: float | None = None
    accumulator: Accumulator | None = None

    def __post_init__(self) -> None:
        period = self.delay_ms if self.period_ms is None else self.period_ms
        problem = None
        if not _finite(self.delay_ms) or self.delay_ms < 0:
            problem = f"@timer's delay must be a finite number of ms >= 0, got {self.delay_ms!r}"
        elif not _finite(period) or period < MIN_TIMER_PERIOD_MS:
            problem = f"@timer's period must be at least {MIN_TIMER_PERIOD_MS} ms, got {period!r}"
        if problem is not None:
            from workbench.errors import PatternError

            raise PatternError(problem)


#: the shortest ``@timer`` period (ms): windows of a finer grain would only flood the output
MIN_TIMER_PERIOD_MS = 1


@dataclass(frozen=True, slots=True)
class Hop:
    """``@hop(size, hop[, acc])`` on an OR channel: hopping windows (Flink's sliding windows).

    The windows are ``[c + k*hop_ms, c + k*hop_ms + size_ms)`` for ``k = 0, 1, ...``, ``c`` the
    channel's creation (the instance's start for a channel without ``after``): with
    ``size_ms > hop_ms`` they overlap, with ``size_ms == hop_ms`` they tumble. Each window that
    holds an event fires once, when time passes its end, with exactly its events and the
    accumulator over them; an empty window fires nothing (Flink, Kafka Streams).
    ``hop_ms > size_ms`` would leave events in no window and is refused (as Kafka Streams does).
    Both are whole milliseconds, at least :data:`MIN_TIMER_PERIOD_MS`.
    """

    size_ms: int
    hop_ms: int
    accumulator: Accumulator | None = None

    def __post_init__(self) -> None:
        problem = None
        for what, value in (("size", self.size_ms), ("hop", self.hop_ms)):
            if not _finite(value) or value < MIN_TIMER_PERIOD_MS or int(value) != value:
                problem = (
                    f"@hop's {what} must be a whole number of milliseconds >= {MIN_TIMER_PERIOD_MS}, "
                    f"got {value!r}"
                )
                break
        if problem is None and self.hop_ms > self.size_ms:
            problem = (
                f"@hop's hop ({self.hop_ms!r} ms) must not exceed its size ({self.size_ms!r} ms): "
                "the events between two windows would belong to none"
            )
        if problem is not None:
            from workbench.errors import PatternError

            raise PatternError(problem)
        object.__setattr__(self, "size_ms", int(self.size_ms))
        object.__setattr__(self, "hop_ms", int(self.hop_ms))


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


@dataclass(frozen=True, slots=True)
class Channel:
    """One member reaction of a group (``@group(g) rcvMsg(...)``).

    Args:
        id: the channel's ``@id`` (unique in its group); used by ``stop_ids``/``pause_ids``/``after``.
        type: the event type it listens to (``None``: any).
        match: field -> literal or :class:`Var` equalities.
        where: guard condition (see module docstring).
        negated: ``@not``.
        stop: bare ``@stop`` (optional control channel that ends the group).
        stop_ids / pause_ids / resume_ids: ``@stop(ids)``, ``@pause(ids)``, ``@resume(ids)``.
        paused: ``@paused`` (starts paused).
        optional: ``@optional``.
        count / size / timer / hop: ``@count``, ``@size``, ``@timer``, ``@hop``.
        timeout_ms: member ``@timeout`` counted from the channel's creation.
        vars: ``@vars``: variable -> field, joined across channels (AND).
        binds: variables bound from the accepted event for channels created ``after`` this one.
        after: ids of channels whose firing creates a new instance of this channel (group
            extension: how Prova writes sequences). A channel with ``after`` does not exist when the
            instance starts.
        collect: ``(variable, expression)`` pairs: on acceptance append the expression's value to the
            instance's list variable (per-instance state such as Prova's ``Basket``).
        counts: the counter the channel's continuation increments each time it reacts to an event
            (Prova's ``$Count.incrementAndGet()`` after the ``rcvMsg``): a name, or ``True`` for
            ``Count``. A paused channel's event counts too: Prova still runs the continuation
            (prova.md 4.7). The engine's ``counters`` hold the totals.
    """

    id: str
    type: str | None = None
    match: Fields = ()
    where: Condition | None = None
    negated: bool = False
    stop: bool = False
    stop_ids: tuple[str, ...] = ()
    pause_ids: tuple[str, ...] = ()
    resume_ids: tuple[str, ...] = ()
    paused: bool = False
    optional: bool = False
    count: Count | None = None
    size: Size | None = None
    timer: Timer | None = None
    hop: Hop | None = None
    timeout_ms: float | None = None
    vars: Fields = ()
    binds: Fields = ()
    after: tuple[str, ...] = ()
    collect: Fields = ()
    counts: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", _counter(self.counts, f"channel {self.id!r}"))
        for name in ("match", "vars", "binds", "collect"):
            object.__setattr__(self, name, _pairs(getattr(self, name)))
        where = f"channel {self.id!r}"
        object.__setattr__(self, "where", as_tree(self.where, where))
        collect = tuple((v, as_tree(x, f"{where}, collect {v!r}")) for v, x in pairs(self.collect))
        object.__setattr__(self, "collect", collect)
        for name in ("stop_ids", "pause_ids", "resume_ids", "after"):
            object.__setattr__(self, name, _ids(getattr(self, name)))

    @property
    def is_control(self) -> bool:
        """A ``@pause``/``@resume`` channel: recorded, never completes the group, stays live."""
        return bool(self.pause_ids or self.resume_ids)


class ChannelOptions(TypedDict, total=False):
    """The keyword options of :class:`Channel` (what its annotations set in the ``%%cep`` language)."""

    negated: bool
    stop: bool
    stop_ids: tuple[str, ...]
    pause_ids: tuple[str, ...]
    resume_ids: tuple[str, ...]
    paused: bool
    optional: bool
    count: Count
    size: Size
    timer: Timer
    hop: Hop
    timeout_ms: float
    vars: tuple[tuple[str, str], ...]
    after: tuple[str, ...]
    collect: tuple[tuple[str, ir.Node], ...]
    counts: str


@dataclass(frozen=True, slots=True)
class Initiator:
    """The reaction that starts group instances (``rcvMult(XID,...,login(User,IP))``).

    Args:
        type: event type (``None``: any).
        match / where: as for :class:`Channel` (``where`` sees ``e`` and the group constants).
        bind: variable -> field bound from the initiating event.
        mult: ``True`` (``rcvMult``): one instance per matching event; ``False`` (``rcvMsg``): only
            the first matching event of each key starts an instance.
        template: Prova's ``@group(g) rcvMult(...)`` (a template group): the initiating event is
            also the first member event of the instance (recorded in its trace, channel ``id``).
        state: per-instance variables with their initial values (copied per instance).
        id: the channel name used for the initiating event when ``template`` is set.
    """

    type: str | None = None
    match: Fields = ()
    where: Condition | None = None
    bind: Fields = ()
    mult: bool = True
    template: bool = False
    state: Fields = ()
    id: str = "initiator"

    def __post_init__(self) -> None:
        for name in ("match", "bind", "state"):
            object.__setattr__(self, name, _pairs(getattr(self, name)))
        object.__setattr__(self, "where", as_tree(self.where, "initiator"))


@dataclass(frozen=True, slots=True)
class Instance:
    """A group instance created at start-up (Prova ``:- eval(server(q1))``), for partition ``key``."""

    key: Hashable
    created_t: float = 0
    vars: Fields = ()

    def __post_init__(self) -> None:
        try:
            hash(self.key)
        except TypeError:  # why: the key names a partition: it is a dict key everywhere
            from workbench.errors import PatternError

            kind = type(self.key).__name__
            msg = f"an instance key is a string, number, boolean, null or tuple, not a {kind}"
            raise PatternError(msg) from None
        object.__setattr__(self, "vars", _pairs(self.vars))


@dataclass(frozen=True, slots=True)
class Exit:
    """Annotations on the exit reaction: ``@count(n)`` caps the emissions of an instance;
    ``@size(n)`` on an OR exit stops a recurring group after ``n`` emissions."""

    count: int | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class ReactionGroup:
    """A Prova reaction group: channels joined by ``@and`` or ``@or``.

    Args:
        name: the pattern name (for a nested group: the inner group's name, used in ``tree``).
        operator: ``"and"`` or ``"or"``.
        channels: :class:`Channel` members and nested :class:`ReactionGroup` members (whose exit is
            also ``@group(outer)``).
        timeout_ms: the group ``@timeout``, counted from instance creation.
        timeout_channel: whether a failed instance reports a ``kind="timeout"`` detection (Prova's
            second exit ``rcvMsg(...,timeout,Events)``); without it a failure is silent.
        initiator: starts one instance per matching event; ``None`` with ``instances``.
        instances: instances created at start-up.
        exit: ``@count``/``@size`` on the exit.
        where: the group ``@where``, evaluated on ``@vars`` joins.
        constants: names available to every condition.
        counts: the counter the exit continuation increments on each match of an instance (a
            nested group's too), as :attr:`Channel.counts`.
    """

    name: str
    operator: Literal["and", "or"] = "and"
    channels: tuple[Member, ...] = ()
    timeout_ms: float | None = None
    timeout_channel: bool = False
    initiator: Initiator | None = None
    instances: tuple[Instance, ...] = ()
    exit: Exit = field(default_factory=Exit)
    where: Condition | None = None
    constants: Fields = ()
    counts: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "counts", _counter(self.counts, f"group {self.name!r}"))
        object.__setattr__(self, "channels", tuple(self.channels))
        object.__setattr__(self, "instances", tuple(self.instances))
        object.__setattr__(self, "constants", _pairs(self.constants))
        object.__setattr__(self, "where", as_tree(self.where, f"group {self.name!r}, @where"))


Member: TypeAlias = Channel | ReactionGroup


@dataclass(frozen=True, slots=True)
class Receive:
    """A plain reaction outside any group (``rcvMsg``/``rcvMult``): one detection per accepted event.

    ``count``: ``None`` or ``-1`` = unlimited (``rcvMult``, ``@count(-1)``); ``n`` = the first ``n``
    matching events of each key (``rcvMsg`` is ``count=1``).
    """

    name: str
    type: str | None = None
    match: Fields = ()
    where: Condition | None = None
    count: int | None = None
    constants: Fields = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "match", _pairs(self.match))
        object.__setattr__(self, "constants", _pairs(self.constants))
        object.__setattr__(self, "where", as_tree(self.where, f"reaction {self.name!r}"))
