"""The compiled (immutable, shared) form of a reaction group: validated channels and conditions."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass, field, replace

from workbench.engine.events import Event
from workbench.engine.expr.values import plain
from workbench.engine.faults import FaultSink
from workbench.engine.reactions.accumulators import Window, compile_window
from workbench.engine.reactions.conditions import Compiled, compile_condition
from workbench.engine.reactions.patterns import (
    AND,
    OR,
    Channel,
    Initiator,
    Pairs,
    ReactionGroup,
    Size,
    Var,
    pairs,
)
from workbench.errors import PatternError

__all__ = [
    "CChannel",
    "CGroup",
    "CInitiator",
    "Window",
    "compile_group",
    "compile_match",
    "group_initiator",
    "match_event",
]

_UNSET = object()


@dataclass(frozen=True, slots=True)
class _Match:
    field: str
    value: object
    var: str | None


def compile_match(table: Pairs) -> tuple[_Match, ...]:
    out = []
    for name, value in table:
        if isinstance(value, Var):
            out.append(_Match(name, None, value.name))
        else:
            out.append(_Match(name, value, None))
    return tuple(out)


def match_event(
    match: tuple[_Match, ...],
    where: Compiled | None,
    type_: str | None,
    event: Event,
    env: Mapping[str, object],
) -> dict[str, object] | None:
    """``None`` if the event does not match; else the free variables it binds (often empty)."""
    if type_ is not None and event.type != type_:
        return None
    fields = event.fields
    bound: dict[str, object] = {}
    for m in match:
        if m.field not in fields:
            return None
        actual = fields[m.field]
        if actual.__class__.__module__ == "numpy":  # why: an array's != is elementwise, its truth an error
            actual = plain(actual)
        if m.var is None:
            if actual != m.value:
                return None
            continue
        expected = env.get(m.var, _UNSET)
        if expected is _UNSET:
            expected = bound.setdefault(m.var, actual)  # a free variable binds on first use
        if actual != expected:
            return None
    if where is not None:
        scope = {**env, **bound} if bound else env
        if not where(event, scope):
            return None
    return bound


@dataclass(frozen=True, slots=True)
class CInitiator:
    """A compiled initiator."""

    spec: Initiator
    match: tuple[_Match, ...]
    where: Compiled | None

    def accepts(self, event: Event, env: Mapping[str, object]) -> dict[str, object] | None:
        """The variables bound from ``event`` if it starts an instance, else ``None``."""
        bound = match_event(self.match, self.where, self.spec.type, event, env)
        if bound is None:
            return None
        for var, name in pairs(self.spec.bind):
            if name not in event.fields:
                return None
            bound[var] = event.fields[name]
        return bound


@dataclass(frozen=True, slots=True)
class CChannel:
    """A compiled channel; ``successors`` are the members created each time it fires."""

    spec: Channel
    index: int
    match: tuple[_Match, ...]
    where: Compiled | None
    collect: tuple[tuple[str, Compiled], ...]
    successors: tuple[int, ...]
    required: tuple[str, ...] = ()
    #: No ``@size``, ``@timer``, member ``@timeout`` or ``@paused``: creating it needs no set-up.
    plain: bool = False
    #: The ``@size``/``@timer`` window accumulator, compiled.
    window: Window | None = None

    @property
    def id(self) -> str:
        """The channel id."""
        return self.spec.id

    def accepts(self, event: Event, env: Mapping[str, object]) -> dict[str, object] | None:
        """The free variables bound if the event matches this channel, else ``None``.

        An event that lacks a field the channel binds (``binds``/``vars``) does not match, as an event
        without a ``match`` field does not (Prova binds positional payload arguments).
        """
        if self.required:
            fields = event.fields
            for name in self.required:
                if name not in fields:
                    return None
        return match_event(self.match, self.where, self.spec.type, event, env)


@dataclass(frozen=True, slots=True)
class CGroup:
    """A compiled group (top-level or nested)."""

    spec: ReactionGroup
    members: tuple[CChannel | CGroup, ...]
    index_of: Mapping[str, int]
    initial: tuple[int, ...]
    where: Compiled | None
    constants: Mapping[str, object]
    vars_mode: bool
    index: int = -1
    successors_of: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    vars_channels: int = 0

    @property
    def name(self) -> str:
        """The group name."""
        return self.spec.name

    @property
    def op(self) -> str:
        """``"and"`` or ``"or"``."""
        return self.spec.operator

    @property
    def id(self) -> str:
        """The member id of a nested group: its name."""
        return self.spec.name

    def types(self) -> frozenset[str] | None:
        """Event types any channel (at any depth) listens to; ``None`` for all."""
        out: set[str] = set()
        for m in self.members:
            if isinstance(m, CGroup):
                sub = m.types()
                if sub is None:
                    return None
                out |= sub
            elif m.spec.type is None:
                if m.spec.timer is None and m.spec.hop is None:
                    return None
            else:
                out.add(m.spec.type)
        return frozenset(out)


def _check_ids(
    group: ReactionGroup, ids: tuple[str, ...], what: str, known: Mapping[str, int], ch: str
) -> None:
    for target in ids:
        if target not in known:
            msg = f"channel {ch!r}: {what} names unknown channel {target!r}; channels: {sorted(known)}"
            raise PatternError(msg, pattern=group.name, element=ch)


def prova_not_count(group: ReactionGroup, ch: Channel) -> Channel:
    """``ch`` as the engine runs it: Prova's ``@not @count(N)`` on an ``@or`` channel is ``@not @size(N)``.

    The Prova blog writes ``@not @count(2)`` on an OR channel (``or_not_count``): the channel is
    violated by its N-th matching event, which is what ``@size(N)`` means on a negated OR channel.
    The pattern keeps the blog's spelling (it prints back as written); only the compiled channel
    changes.
    """
    c = ch.count
    if (
        group.operator == OR
        and ch.negated
        and c is not None
        and ch.size is None
        and c.min == c.max >= 1
        and c.mode == "ignore"
    ):
        return replace(ch, count=None, size=Size(c.min))
    return ch


def compile_group(
    group: ReactionGroup, index: int = -1, top: bool = True, faults: FaultSink | None = None
) -> CGroup:
    """Validate ``group`` and compile its conditions; raises :class:`PatternError`."""
    _check_group(group, top)
    index_of = _member_ids(group)
    successors: dict[str, list[int]] = {}
    for i, m in enumerate(group.channels):
        if isinstance(m, Channel):
            _check_channel(group, m)
            _check_ids(group, m.after, "after", index_of, m.id)
            _check_ids(group, m.stop_ids, "@stop", index_of, m.id)
            _check_ids(group, m.pause_ids, "@pause", index_of, m.id)
            _check_ids(group, m.resume_ids, "@resume", index_of, m.id)
            for pred in m.after:
                successors.setdefault(pred, []).append(i)
    members: list[CChannel | CGroup] = []
    for i, m in enumerate(group.channels):
        if isinstance(m, ReactionGroup):
            members.append(compile_group(m, i, top=False, faults=faults))
        else:
            members.append(_compile_channel(group, prova_not_count(group, m), i, successors, faults))
    gwhere = None
    if group.where is not None:
        gwhere = compile_condition(group.where, f"group {group.name!r}, @where", faults)
    vars_channels = sum(1 for m in group.channels if isinstance(m, Channel) and pairs(m.vars))
    vars_mode = vars_channels > 0
    if vars_mode and group.operator != AND:
        msg = "@vars joins are defined for AND groups only"
        raise PatternError(msg, pattern=group.name)
    initial = tuple(i for i, m in enumerate(group.channels) if not (isinstance(m, Channel) and m.after))
    return CGroup(
        group,
        tuple(members),
        index_of,
        initial,
        gwhere,
        dict(pairs(group.constants)),
        vars_mode,
        index,
        {name: tuple(succ) for name, succ in successors.items()},
        vars_channels,
    )


def _check_group(group: ReactionGroup, top: bool) -> None:
    name: object = group.name
    if not isinstance(name, str) or not name:
        msg = "a reaction group needs a non-empty name"
        raise PatternError(msg)
    if group.operator not in (AND, OR):
        msg = f"operator must be 'and' or 'or', got {group.operator!r}"
        raise PatternError(msg, pattern=group.name)
    if not group.channels:
        msg = "a reaction group needs at least one channel"
        raise PatternError(msg, pattern=group.name)
    if not top and (group.initiator is not None or group.instances):
        msg = "a nested group cannot have its own initiator or start-up instances"
        raise PatternError(msg, pattern=group.name)
    if group.timeout_ms is not None and group.timeout_ms <= 0:
        msg = f"timeout_ms must be > 0, got {group.timeout_ms!r}"
        raise PatternError(msg, pattern=group.name)
    for what, value in (("@count", group.exit.count), ("@size", group.exit.size)):
        if value is not None and value < 1:
            msg = f"{what} on the exit must be >= 1 (emissions per instance), got {value!r}"
            raise PatternError(msg, pattern=group.name)


def _member_ids(group: ReactionGroup) -> dict[str, int]:
    """Each member's id (a nested group's name) -> its position; ids are unique."""
    index_of: dict[str, int] = {}
    for i, m in enumerate(group.channels):
        member: object = m
        if not isinstance(member, Channel | ReactionGroup):
            msg = f"member {i} must be a Channel or a nested ReactionGroup, got {type(member).__name__}"
            raise PatternError(msg, pattern=group.name)
        mid = m.id if isinstance(m, Channel) else m.name
        if mid in index_of:
            msg = f"duplicate channel id {mid!r}"
            raise PatternError(msg, pattern=group.name, element=mid)
        index_of[mid] = i
    return index_of


def _compile_channel(
    group: ReactionGroup, m: Channel, i: int, successors: Mapping[str, list[int]], faults: FaultSink | None
) -> CChannel:
    where = None
    if m.where is not None:
        where = compile_condition(m.where, f"group {group.name!r}, channel {m.id!r}", faults)
    spec = m.size or m.timer or m.hop
    acc = None if spec is None else spec.accumulator
    window = None if acc is None else compile_window(acc, faults)  # unknown functions fail now
    collect = tuple(
        (var, compile_condition(expr, f"group {group.name!r}, channel {m.id!r}, collect {var!r}", faults))
        for var, expr in pairs(m.collect)
    )
    required = tuple(dict.fromkeys(name for _, name in (*pairs(m.binds), *pairs(m.vars))))
    return CChannel(
        m,
        i,
        compile_match(pairs(m.match)),
        where,
        collect,
        tuple(successors.get(m.id, ())),
        required,
        m.size is None and m.timer is None and m.hop is None and m.timeout_ms is None and not m.paused,
        window,
    )


def _check_channel(group: ReactionGroup, ch: Channel) -> None:
    def bad(msg: str) -> PatternError:
        return PatternError(msg, pattern=group.name, element=ch.id)

    cid: object = ch.id
    if not isinstance(cid, str) or not cid:
        msg = "a channel needs a non-empty id"
        raise bad(msg)
    if ch.size is not None and group.operator != OR:
        msg = "@size is defined for OR groups (use @count in AND groups)"
        raise bad(msg)
    if ch.timer is not None and group.operator != OR:
        msg = "@timer is defined for OR groups"
        raise bad(msg)
    if ch.hop is not None and group.operator != OR:
        msg = "@hop is defined for OR groups"
        raise bad(msg)
    if ch.timer is not None and (ch.timer.delay_ms <= 0 or (ch.timer.period_ms or ch.timer.delay_ms) <= 0):
        msg = "@timer delay and period must be > 0"
        raise bad(msg)
    if ch.count is not None and group.operator != AND and prova_not_count(group, ch) is ch:
        msg = "@count on a channel is defined for AND groups (use @size in OR groups)"
        raise bad(msg)
    if ch.timeout_ms is not None and ch.timeout_ms <= 0:
        msg = f"timeout_ms must be > 0, got {ch.timeout_ms!r}"
        raise bad(msg)
    if ch.size is not None and ch.size.n == 0:
        msg = "@size(0) is not meaningful; use @optional"
        raise bad(msg)
    if ch.size is not None and ch.size.reset is not None and ch.size.reset < 1:
        msg = f"@size reset must be >= 1, got {ch.size.reset!r}"
        raise bad(msg)
    if ch.count is not None:
        _check_count(ch, bad)
    conflicts = (
        (ch.negated and ch.stop, "@not and a bare @stop"),
        (ch.stop and bool(ch.stop_ids), "a bare @stop and @stop(ids)"),
        (ch.size is not None and ch.timer is not None, "@size and @timer"),
        (ch.timer is not None and ch.negated, "@not and @timer"),
        (ch.hop is not None and (ch.size is not None or ch.timer is not None), "@hop and @size or @timer"),
        (
            ch.hop is not None and (ch.negated or ch.stop or ch.is_control),
            "@hop and @not, @stop, @pause or @resume",
        ),
    )
    for clash, what in conflicts:
        if clash:
            msg = f"a channel cannot carry both {what}"
            raise bad(msg)


def _check_count(ch: Channel, bad: Callable[[str], PatternError]) -> None:
    count = ch.count
    assert count is not None
    if count.mode not in ("ignore", "record", "strict"):
        msg = f"@count mode must be ignore, record or strict, got {count.mode!r}"
        raise bad(msg)
    if count.min < 0 or count.max < 0:
        msg = f"@count bounds must be >= 0 (use Count.of for Prova's -1 forms), got {count!r}"
        raise bad(msg)
    if count.mode != "record" and count.max < count.min:
        msg = f"@count max must be >= min, got {count!r}"
        raise bad(msg)


def all_channels(group: CGroup) -> list[CChannel]:
    """Every channel of the group, nested groups' channels included."""
    out: list[CChannel] = []
    for m in group.members:
        if isinstance(m, CGroup):
            out.extend(all_channels(m))
        else:
            out.append(m)
    return out


def instance_keys(group: CGroup) -> dict[str, tuple[tuple[str, str], ...]]:
    """For each event type, the ``(field, variable)`` pairs every channel of that type matches on.

    An instance whose variable is bound when it starts can only accept events of that type whose
    field equals the variable's value, so the per-key state indexes instances by it. A variable
    that a channel's ``binds`` may rebind is not used; a channel listening to any type (``type=None``)
    disables the index.
    """
    channels = [
        c
        for c in all_channels(group)
        if c.spec.type is not None or (c.spec.timer is None and c.spec.hop is None)
    ]
    if any(c.spec.type is None for c in channels):
        return {}
    rebound = {var for c in channels for var, _ in pairs(c.spec.binds)}
    by_type: dict[str, list[CChannel]] = {}
    for c in channels:
        assert c.spec.type is not None
        by_type.setdefault(c.spec.type, []).append(c)
    out: dict[str, tuple[tuple[str, str], ...]] = {}
    for type_, members in by_type.items():
        candidates: list[tuple[str, str]] | None = None
        for c in members:
            keyed = [(m.field, m.var) for m in c.match if m.var is not None and m.var not in rebound]
            candidates = keyed if candidates is None else [k for k in candidates if k in keyed]
        if candidates:
            out[type_] = tuple(candidates)
    return out


def group_initiator(group: ReactionGroup, faults: FaultSink | None = None) -> CInitiator | None:
    """The compiled initiator of a top-level group, if any."""
    init = group.initiator
    if init is None:
        return None
    where = None
    if init.where is not None:
        where = compile_condition(init.where, f"group {group.name!r}, initiator", faults)
    return CInitiator(init, compile_match(pairs(init.match)), where)


def token_key(token: Hashable) -> str:
    """The kind of a timer token (first element)."""
    return str(token[0]) if isinstance(token, tuple) and token else ""
