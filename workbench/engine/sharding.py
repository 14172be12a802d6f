"""Key-hash sharding: N engines, one stream, the same detections for any N.

The patent's *event stream splitter* and Flink's ``keyBy``: every key is assigned to one of N shards
by a **stable** hash (:func:`stable_hash`: the same in every process and on every machine, unlike
Python's randomized ``hash(str)``), and each shard is an ordinary :class:`~workbench.engine.runtime.Engine`
with the same patterns. Matching is per key, so the shards never need each other's state.

What must stay global is the clock. :class:`ShardedEngine` is the splitter: it stamps each event with
its global arrival position (``seq``, so detections carry the same event ids for any N), decides
lateness against the *global* watermark (the one a single engine would have), and routes the event
to its key's shard. A shard sees a subset of the stream, so its own watermark is never ahead of the
global one: it never calls an event late that the splitter accepted, and for every key it handles
the same events and timers in the same order as a single engine. The detections are therefore the
same for any number of shards (a property test checks it); only the interleaving *across keys* of
when detections are emitted can differ, because a shard fires a timer when its own input or an
``advance_time``/``finish`` passes it.

:func:`partition` is the batch form for a multi-process or Flink host: it splits a finite stream
into per-shard event lists (global ``seq`` stamped, late events set aside) that independent
engines can replay anywhere; :func:`run_sharded` runs them in worker processes when asked.

>>> shard_of("u0001", 4) == shard_of("u0001", 4)
True
>>> stable_hash(1) == stable_hash(1.0)  # equal keys are the same key
True
"""

from __future__ import annotations

import hashlib
import math
import struct
from collections.abc import Hashable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Unpack

from workbench.engine.clock import EventClock, OrderBy, Watermark, stamp
from workbench.engine.derived import FIRST_DERIVED_SEQ, DerivedSeq
from workbench.engine.detection import Detection
from workbench.engine.events import Event, EventLike
from workbench.engine.families import compile_matcher
from workbench.engine.fingerprint import fingerprints
from workbench.engine.matcher import Matcher, Pattern
from workbench.engine.outputs import Fed, OutputOptions, Outputs
from workbench.engine.runtime import Engine, EngineSnapshot
from workbench.engine.shedding import DEFAULT_MAX_LIVE, Shedder
from workbench.engine.snapshot import dump, load
from workbench.errors import CepError, EventError

__all__ = [
    "Partitioned",
    "ShardedEngine",
    "ShardedSnapshot",
    "partition",
    "run_sharded",
    "shard_of",
    "stable_hash",
]

INF = math.inf


def _encode(key: object) -> bytes:
    """A canonical byte encoding: equal keys (``1 == 1.0 == True`` aside) encode equally."""
    if key is None:
        return b"n"
    if isinstance(key, bool):
        key = int(key)  # True == 1 is the same dict key, so it must be the same shard
    if isinstance(key, int):
        return b"i%d" % key
    if isinstance(key, float):
        if key.is_integer():
            return b"i%d" % int(key)
        return b"f" + key.hex().encode()
    if isinstance(key, str):
        return b"s" + key.encode("utf-8", "surrogatepass")
    if isinstance(key, bytes):
        return b"y" + key
    if isinstance(key, tuple):
        parts = [_encode(k) for k in key]
        return b"t" + b"".join(struct.pack(">I", len(p)) + p for p in parts)
    if isinstance(key, frozenset):
        parts = sorted(_encode(k) for k in key)
        return b"z" + b"".join(struct.pack(">I", len(p)) + p for p in parts)
    msg = (
        f"key {key!r} of type {type(key).__name__} has no stable hash; "
        "shard on str, int, float, bytes, None, or tuples/frozensets of them"
    )
    raise EventError(msg, field="key")


def stable_hash(key: Hashable) -> int:
    """A 64-bit hash of a key that is the same in every process, run and platform.

    >>> stable_hash("u0001")
    14194325905370549341
    """
    return int.from_bytes(hashlib.blake2b(_encode(key), digest_size=8).digest(), "big")


def shard_of(key: Hashable, shards: int) -> int:
    """The shard (``0 .. shards-1``) that owns ``key``.

    >>> shard_of("u0001", 1)
    0
    """
    return stable_hash(key) % shards


def _check_shards(shards: object) -> None:
    if type(shards) is not int or shards < 1:
        msg = f"shards must be a positive integer, got {shards!r}"
        raise CepError(msg)


class _Shard(Engine):
    """One shard's engine: it keeps only the keys :func:`shard_of` gives it (so a group's declared
    ``instance 'k' at 0`` starts once, in the shard of ``'k'``, not in every shard)."""

    def __init__(
        self, index: int, shards: int, patterns: Iterable[Pattern | Matcher], **options: Any
    ) -> None:
        self.index, self.shards = index, shards
        shared: DerivedSeq | None = options.pop("derived_seqs", None)
        if shared is not None:  # why before the set-up: its emitter numbers with the shared counter
            self.derived_seqs = shared
        super().__init__(patterns, **options)

    def owns(self, key: Hashable) -> bool:
        return shard_of(key, self.shards) == self.index


class ShardedEngine(Outputs):
    """One stream over ``shards`` engines, split by a stable hash of the key.

    Same interface as :class:`~workbench.engine.runtime.Engine` for event-time input
    (``process``, ``process_many``, ``advance_time``, ``finish``, ``detections``, ``late``).

    Args:
        patterns: patterns (compiled once; the immutable matchers are shared by all shards).
        shards: the number of engines.
        out_of_orderness, trace, order_by, on_detection, on_reaction, on_late, on_trace, collect,
            strict: as for :class:`~workbench.engine.runtime.Engine` (the shards share one error log).
        max_live: the engine-wide budget of :class:`~workbench.engine.runtime.Engine`, split evenly
            over the shards (each sheds its own oldest).

    >>> ShardedEngine([], shards=3).process({"type": "a", "time": 1, "key": "k"})
    []
    """

    def __init__(
        self,
        patterns: Iterable[Pattern | Matcher],
        shards: int,
        *,
        out_of_orderness: int | float = 0,
        trace: bool = False,
        order_by: OrderBy | None = None,
        max_live: int | None = DEFAULT_MAX_LIVE,
        **outputs: Unpack[OutputOptions],
    ) -> None:
        _check_shards(shards)
        Shedder(max_live)  # why: a bad limit is refused before any shard is built
        self.matchers: list[Matcher] = [compile_matcher(p) for p in patterns]
        self.shards = shards
        self._clock = EventClock(out_of_orderness)
        super().__init__(**outputs)
        self._shard_cache: dict[Hashable, int] = {}
        #: the global watermark the shards were last brought to
        self._synced: Watermark = self._clock.watermark
        self.engines = [
            _Shard(
                index,
                shards,
                self.matchers,
                out_of_orderness=out_of_orderness,
                trace=trace,
                order_by=order_by,
                max_live=None if max_live is None else max(1, max_live // shards),
                on_detection=self.publish,
                on_reaction=self.publish_reaction,
                on_trace=self.publish_trace,
                on_late=self.publish_late,  # why: a shard calls late only events fed back to it
                collect=False,
                derived_seqs=self.derived_seqs,  # why: one run numbers its derived events once
            )
            for index in range(shards)
        ]
        for engine in self.engines:  # the matchers are shared, so their errors go to one log
            engine.fault_log = self.fault_log
        for matcher in self.matchers:
            self._adopt_faults(matcher)

    @property
    def stats(self) -> dict[str, int]:
        """Run totals over all shards: ``dropped`` partial matches, ``late`` events, ``keys`` with state."""
        shards = [engine.stats for engine in self.engines]
        return {
            "dropped": sum(s["dropped"] for s in shards),
            "late": self.late_count,
            "keys": sum(s["keys"] for s in shards),
        }

    def shard(self, key: Hashable) -> int:
        """The shard index of a key (cached)."""
        index = self._shard_cache.get(key)
        if index is None:
            index = self._shard_cache[key] = shard_of(key, self.shards)
        return index

    def process(self, raw: EventLike) -> list[Detection]:
        """Feed one event; return the detections it caused (in its shard)."""
        return self.process_many((raw,))

    def process_many(self, events: Iterable[EventLike]) -> list[Detection]:
        """Feed events in order; return all detections they caused.

        The shards deliver each event's outputs once its transitions are complete; events a
        callback feeds back are queued and processed after the current one (as in :class:`Engine`).
        """
        with self._lock:
            if self._busy:  # why: a callback feeds events back: its shard queues them (see Engine)
                for raw in events:
                    self._feed_back(raw)
                return []
            with self._owner("process_many") as out:
                for raw in events:
                    self._one(raw, out)
                    self._settle(out)
            return out

    def _settle(self, out: list[Detection]) -> bool:
        pending = self._pending
        fed_any = bool(pending)
        while pending:  # why: events fed back by callbacks for other shards, first in first out
            fed = pending.pop(0)
            if isinstance(fed, Fed) and isinstance(fed.event, Event):
                out.extend(self.engines[self.shard(fed.event.key)].process(fed.event))
        return fed_any

    def _feed_back(self, raw: EventLike) -> None:
        clock = self._clock
        position = clock.next_seq
        clock.next_seq = position + 1
        event = stamp(raw, position)
        clock.max_seen = max(clock.max_seen, event.time)
        engine = self.engines[self.shard(event.key)]
        if engine._busy:  # why: the shard whose output fed it queues it right behind that output
            engine.process(event)
        else:  # why: another shard takes it after the current input event (see process_many)
            self._pending.append(Fed(event))

    def _one(self, raw: EventLike, out: list[Detection]) -> None:
        clock = self._clock
        position = clock.next_seq
        clock.next_seq = position + 1
        event = stamp(raw, position)
        if not clock.accept(event.time):
            self.publish_late(event)
            return
        wm = clock.watermark
        if wm != self._synced:  # why: every shard passes what the global watermark passed, as one engine
            self._synced = wm
            for engine in self.engines:
                out.extend(engine.catch_up(wm))
        out.extend(self.engines[self.shard(event.key)].process(event))

    def advance_time(self, watermark: int | float) -> list[Detection]:
        """Declare that no event with ``time <= watermark`` will arrive, on every shard."""
        with self._owner("advance_time") as out:
            self._clock.close(watermark)
            for engine in self.engines:
                out.extend(engine.advance_time(watermark))
        return out

    def finish(self, until: int | float | None = None) -> list[Detection]:
        """End of input on every shard (see :meth:`Engine.finish`)."""
        with self._owner("finish") as out:
            if until is None:  # why: every shard runs up to the input's newest time before its final flush
                seen = (self._clock.max_seen, False)
                for engine in self.engines:
                    out.extend(engine.catch_up(seen))
            self._clock.close(INF if until is None else until, "finish")
            for engine in self.engines:
                out.extend(engine.finish(until))
        return out

    def snapshot(self) -> bytes:
        """Every shard's state and the global clock as data (as :meth:`Engine.snapshot`)."""
        with self._lock:
            return self._snapshot()

    def _snapshot(self) -> bytes:
        clock = self._clock
        image = ShardedSnapshot(
            [engine.image() for engine in self.engines],
            clock.watermark,
            clock.max_seen,
            clock.next_seq,
            self.late,
            self.late_count,
            dict(self.counters),
        )
        return dump(image, fingerprints(self.matchers))

    def restore(self, blob: bytes) -> None:
        """Take over a snapshot of a sharded engine with the same patterns and number of shards."""
        image = load(blob, fingerprints(self.matchers))
        if not isinstance(image, ShardedSnapshot):
            msg = f"snapshot holds a {type(image).__name__}, not a sharded engine's state"
            raise CepError(msg)
        if len(image.shards) != self.shards:
            msg = f"snapshot was taken with {len(image.shards)} shards, this engine has {self.shards}"
            raise CepError(msg)
        with self._owner("restore"):
            self._adopt(image)
        return

    def _adopt(self, image: ShardedSnapshot) -> None:
        # why two passes: a damaged shard after a good one must not leave the engine half restored
        checked = [engine.checked(shard) for engine, shard in zip(self.engines, image.shards, strict=True)]
        for engine, shard in zip(self.engines, checked, strict=True):
            engine.take_over(shard)
        clock = self._clock
        clock.watermark, clock.max_seen, clock.next_seq = image.watermark, image.max_seen, image.next_seq
        self.late, self.late_count = image.late, image.late_count
        self.counters = dict(image.counters)


@dataclass(slots=True)
class ShardedSnapshot:
    """The state of a :class:`ShardedEngine`: one engine image per shard and the global clock."""

    shards: list[EngineSnapshot]
    watermark: Watermark
    max_seen: float
    next_seq: int
    late: list[Event]
    late_count: int
    counters: dict[str, int] = field(default_factory=dict)


@dataclass(slots=True)
class Partitioned:
    """A finite stream split by key: per-shard event lists (global ``seq``), the late events, and
    the newest event time of the stream (``-inf`` when it had none)."""

    shards: list[list[Event]]
    late: list[Event]
    last: int | float = -INF


def partition(events: Iterable[EventLike], shards: int, *, out_of_orderness: int | float = 0) -> Partitioned:
    """Split a finite stream over ``shards`` (what a multi-process or Flink host does before matching).

    Events are validated and stamped with their global position; late ones (by the global
    watermark, as a single engine would judge them) are set aside.

    >>> p = partition([{"type": "a", "time": 1, "key": k} for k in "abc"], 2)
    >>> sorted(e.seq for s in p.shards for e in s)
    [0, 1, 2]
    """
    _check_shards(shards)
    clock = EventClock(out_of_orderness)
    out: list[list[Event]] = [[] for _ in range(shards)]
    late: list[Event] = []
    cache: dict[Hashable, int] = {}
    for position, raw in enumerate(events):
        event = stamp(raw, position)
        if not clock.accept(event.time):
            late.append(event)
            continue
        index = cache.get(event.key)
        if index is None:
            index = cache[event.key] = shard_of(event.key, shards)
        out[index].append(event)
    return Partitioned(out, late, clock.max_seen)


def _load_patterns(factory: str, args: tuple[object, ...]) -> list[Pattern | Matcher]:
    module_name, _, attr = factory.partition(":")
    if not module_name or not attr:
        msg = f"pattern factory must be 'module:function', got {factory!r}"
        raise CepError(msg)
    fn = getattr(import_module(module_name), attr)
    return list(fn(*args))


@dataclass(frozen=True)
class _ShardJob:
    """What a worker needs besides the patterns: which shard it runs, and the stream's newest time."""

    index: int
    shards: int
    last: int | float
    out_of_orderness: int | float
    order_by: OrderBy | None


def _run_shard(
    factory: str, args: tuple[object, ...], events: Sequence[Event], job: _ShardJob
) -> list[Detection]:
    engine = _Shard(
        job.index,
        job.shards,
        _load_patterns(factory, args),
        out_of_orderness=job.out_of_orderness,
        order_by=job.order_by,
        # why apart: the shards count on their own, and two derived events must not share a seq
        derived_seqs=DerivedSeq(FIRST_DERIVED_SEQ - job.index, job.shards),
    )
    for e in events:
        engine.process(e)
    # why: up to the stream's newest time (not only this shard's) it runs as one engine would
    engine.catch_up((job.last, False))
    engine.finish()
    return engine.detections


def run_sharded(
    factory: str,
    events: Iterable[EventLike],
    shards: int,
    *,
    processes: int | None = None,
    out_of_orderness: int | float = 0,
    factory_args: tuple[object, ...] = (),
    order_by: OrderBy | None = None,
) -> tuple[list[Detection], list[Event]]:
    """Run a finite stream on ``shards`` independent engines, in worker processes.

    ``factory`` names a function ``"module:function"`` that returns the patterns when called with
    ``factory_args`` (picklable); each worker builds its own, so patterns need not be picklable.
    ``processes=0`` runs the shards in this process, one after another. Returns the detections
    (shard by shard) and the late events. ``order_by`` (field names, to pass to worker processes)
    orders equal-time events as in :class:`~workbench.engine.runtime.Engine`.
    """
    parts = partition(events, shards, out_of_orderness=out_of_orderness)
    _load_patterns(factory, factory_args)  # fail early, here, on a bad factory
    jobs = [_ShardJob(i, shards, parts.last, out_of_orderness, order_by) for i in range(shards)]
    if processes == 0:
        results = [
            _run_shard(factory, factory_args, part, job) for part, job in zip(parts.shards, jobs, strict=True)
        ]
    else:
        with ProcessPoolExecutor(max_workers=processes or shards) as pool:
            futures = [
                pool.submit(_run_shard, factory, factory_args, part, job)
                for part, job in zip(parts.shards, jobs, strict=True)
            ]
            results = [f.result() for f in futures]
    return [d for r in results for d in r], parts.late
