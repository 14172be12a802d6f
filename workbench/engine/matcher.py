"""The contract between the keyed runtime and a compiled pattern.

A pattern object (a frozen dataclass: a reaction group, a sequence) compiles to a :class:`Matcher`
with :func:`~workbench.engine.families.compile_matcher`.
The matcher is immutable and shared by every key; everything that changes lives in a per-key state
object it creates with ``new_state`` and that the runtime stores, routes and snapshots. Per-key
state must be plain, picklable data (no callables, no references to the matcher), so that a host
(Flink keyed state, a checkpoint) can hold it.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from workbench.engine.detection import Detection, Reaction, TraceKind
from workbench.engine.events import Event

__all__ = ["Context", "Kernel", "Matcher", "Pattern"]


class Context(Protocol):
    """What a matcher may do while it handles one event or one timer of one key."""

    @property
    def key(self) -> Hashable:
        """The key being processed."""
        ...

    @property
    def now(self) -> int | float:
        """The time of the event or timer being handled."""
        ...

    @property
    def cause(self) -> int | None:
        """The position of the event being handled (``None`` while a timer fires): what trace
        records of the changes it makes name as their cause."""
        ...

    @property
    def tracing(self) -> bool:
        """Whether trace records are wanted; guard record construction with it."""
        ...

    @property
    def final(self) -> bool:
        """True while the runtime flushes at end of input: recurring timers should not re-arm."""
        ...

    def emit(self, detection: Detection) -> None:
        """Output a detection."""
        ...

    def release_time(self) -> int | float:
        """In ``on_timer``: the time of a match that time passing releases (held back by a skip
        strategy, a trailing ``notFollowedBy``): the watermark that passed, as Flink's
        ``advanceTime`` (the driver decides; at least :attr:`now`). :attr:`now` moves to it: what
        the release reports is traced then."""
        ...

    def react(self, reaction: Reaction) -> None:
        """Output a channel reaction (an accepted channel event)."""
        ...

    def schedule(self, time: int | float, token: Hashable) -> None:
        """Ask for ``on_timer(state, time, token)`` once event time passes ``time``.

        Timers are never cancelled; a matcher ignores a timer whose token it no longer expects.
        """
        ...

    def new_instance(self) -> int:
        """A fresh instance id, unique within this key and pattern (deterministic per key)."""
        ...

    def horizon(self) -> int | float:
        """How far time will move before the next event (timers due up to here fire first)."""
        ...

    def drop(self, count: int) -> None:
        """The matcher dropped ``count`` partial matches or instances to stay within a cap."""
        ...

    def warn_once(self, topic: str, message: str) -> None:
        """A ``RuntimeWarning`` about this pattern, given once per run and ``topic``."""
        ...

    def trace(
        self,
        kind: TraceKind,
        instance: int,
        element: str | None = None,
        event_seq: int | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Record a state change (no-op when tracing is off)."""
        ...


@runtime_checkable
class Matcher(Protocol):
    """A compiled pattern: immutable, shared across keys."""

    name: str

    def event_types(self) -> frozenset[str] | None:
        """The event types this matcher can use (``None``: all). Others never reach it."""
        ...

    def new_state(self, key: Hashable) -> Any:
        """A fresh per-key state (plain picklable data)."""
        ...

    def process(self, state: Any, event: Event, ctx: Context) -> None:
        """Handle one event of the state's key."""
        ...

    def on_timer(self, state: Any, time: int | float, token: Hashable, ctx: Context) -> None:
        """Handle a timer scheduled through ``ctx.schedule``."""
        ...

    def is_idle(self, state: Any) -> bool:
        """True when the state holds nothing worth keeping (the runtime may drop it)."""
        ...


@runtime_checkable
class Pattern(Protocol):
    """A declarative pattern: a frozen dataclass with a name (compiled by
    :func:`~workbench.engine.families.compile_matcher`)."""

    @property
    def name(self) -> str:
        """The pattern's name (unique within one engine)."""
        ...


@dataclass(frozen=True, slots=True)
class Kernel:
    """A matcher's per-event step as source text, for the engine's fused loop (optional hook).

    A matcher may offer ``kernel(pindex) -> Kernel | None``; :mod:`workbench.engine.fused` then
    pastes ``body`` into one generated loop instead of calling ``process`` per event. The body does
    exactly what ``process(st, e, ctx)`` does for an in-order event when tracing is off, reading the
    loop's locals ``e`` (the event), ``t`` (its time), ``key``, ``ks`` (the key's
    :class:`~workbench.engine.host.KeyState`), ``st`` (the matcher's state in it) and ``ctx`` (the
    host context, its pattern already set); it may assume ``t`` is not before the state's time. It
    must not ``return``, ``break`` or ``continue``. It may also queue a detection with
    ``pending.append`` and a timer with ``_heappush(timers, (time, _next(timer_seq), key, pindex,
    token))`` after counting it in ``ks.timer_counts`` (the engine's own queues, as ``ctx`` would).

    Attributes:
        body: the statements, unindented; a ``{ctx}`` line stands where the context must be set to
            the event (before the first use of ``ctx``; the loop fills it in).
        consts: the values the body names (names unique to the matcher: ``prefix`` of its index).
        starts: an expression over ``e``: whether the event can change a fresh state at all
            (``None``: any event may); when false no state is created for the key.
        idle: an expression over ``st``, true only when the state holds nothing (``is_idle``); it
            may stay false for an idle state that still waits for a timer (the loop keeps those).
        timer: statements doing what ``on_timer(st, tt, token, ctx)`` does, over the loop's locals
            ``st``, ``tt``, ``tkey``, ``tks`` and ``token`` (``None``: the loop calls ``on_timer``).
    """

    body: str
    consts: dict[str, object] = field(default_factory=dict)
    starts: str | None = None
    idle: str = "False"
    timer: str | None = None
