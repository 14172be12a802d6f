"""Generated examples of a pattern (``%cep examples NAME``): shortest inputs that fire, almost fire,
and time out.

The search is breadth-first over the pattern's own state machine, driven by the engine: candidate
events come from :func:`~workbench.session.exampledata.alphabet_of` (values solved from the
comparisons of the conditions' IR); each sequence is run through a fresh engine that shares the
compiled matcher, and a sequence is extended only while its last event moved some instance on (its
trace took, counted or extended something new). So every example is checked by the engine: a
*fires* example did produce a match, an *almost fires* example (a firing one with one event
changed or left out) did not, and says why not (the instance's outcome from the trace), and a
*times out* example ended in a timeout. Conditions the IR cannot solve are named in ``notes``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict, Unpack

import pandas as pd

from workbench.engine.detection import Detection, TraceKind, TraceRecord
from workbench.engine.families import compile_matcher
from workbench.engine.matcher import Matcher
from workbench.engine.runtime import Engine, RunResult, run
from workbench.errors import CepError
from workbench.language.texts import format_duration
from workbench.session.exampledata import Alphabet, Candidate, Scalar, alphabet_of
from workbench.session.reasons import outcome_of

if TYPE_CHECKING:
    from workbench.session.session import CepSession

__all__ = ["Example", "Examples", "examples_of", "generate_examples"]

FIRES, ALMOST, TIMES_OUT = "fires", "almost fires", "times out"
_TAKING = (TraceKind.STARTED, TraceKind.ACCEPTED, TraceKind.COUNTED, TraceKind.EXTENDED, TraceKind.NEGATED)
_KEY = "k1"

EventSpec = tuple[str, dict[str, Scalar]]


@dataclass(frozen=True)
class Example:
    """One generated input: ``events`` (plain dicts, ready for ``%cep run`` or a replay) and ``why``."""

    kind: str
    events: tuple[dict[str, object], ...]
    why: str

    def frame(self) -> pd.DataFrame:
        """The events as a DataFrame (``type``, ``time``, ``key`` and the fields)."""
        return pd.DataFrame(list(self.events))


@dataclass
class Examples:
    """The examples of one pattern, by kind, and notes on what could not be solved or found."""

    pattern: str
    fires: list[Example] = field(default_factory=list)
    almost: list[Example] = field(default_factory=list)
    times_out: list[Example] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    source: object = field(default=None, repr=False, compare=False)  # the pattern object

    @property
    def all(self) -> list[Example]:
        """Every example: firing ones first, then near misses, then timeouts."""
        return [*self.fires, *self.almost, *self.times_out]

    def frame(self) -> pd.DataFrame:
        """One row per event of every example: ``example``, ``kind``, ``step``, the event, ``why``."""
        rows = []
        for n, ex in enumerate(self.all, 1):
            for step, e in enumerate(ex.events, 1):
                rows.append(
                    {"example": n, "kind": ex.kind, "step": step, **e, "why": ex.why if step == 1 else ""}
                )
        return pd.DataFrame(rows)

    def replay(self, number: int) -> RunResult:
        """Run example ``number`` (as numbered in :meth:`text` and :meth:`frame`, from 1) through
        the pattern with tracing on: its trace and detections, for ``Timeline.from_run``."""
        examples = self.all
        if not 1 <= number <= len(examples):
            msg = f"no example {number} of {self.pattern!r}: there are {len(examples)} (numbered from 1)"
            raise CepError(msg)
        return run([compile_matcher(self.source)], examples[number - 1].events, trace=True)

    def text(self) -> str:
        """A short report: each example on one line with its why, then the notes."""
        lines = [f"examples of {self.pattern!r}:"]
        for n, ex in enumerate(self.all, 1):
            evs = ", ".join(_short(e) for e in ex.events)
            lines.append(f"  #{n} {ex.kind}: {evs}\n      {ex.why}")
        lines += [f"  note: {note}" for note in self.notes]
        return "\n".join(lines)


def _short(e: dict[str, object]) -> str:
    fields = " ".join(f"{k}={v!r}" for k, v in e.items() if k not in ("type", "time", "key"))
    return f"{e['type']}@{e['time']}" + (f"({fields})" if fields else "")


@dataclass
class _Run:
    """What one candidate sequence did in the engine."""

    detections: list[Detection]
    trace: list[TraceRecord]

    @property
    def fired(self) -> bool:
        return any(d.kind == "match" for d in self.detections)

    @property
    def timed_out(self) -> bool:
        return any(d.kind == "timeout" for d in self.detections) or any(
            r.kind is TraceKind.TIMED_OUT for r in self.trace
        )

    def progress(self) -> frozenset[tuple[Hashable, str | None, str, int]]:
        """What the instances took: ``(instance, element, kind, how many)`` of the taking records
        (a stage that takes a second event counts twice)."""
        taken = Counter((r.instance, r.element, r.kind.value) for r in self.trace if r.kind in _TAKING)
        return frozenset((*k, n) for k, n in taken.items())


def _shape(seq: Sequence[EventSpec], res: _Run) -> tuple[object, ...]:
    """The types of a firing sequence and the channels or stages of its matches."""
    matched = tuple(sorted({d.channels for d in res.detections if d.kind == "match"}))
    return (tuple(t for t, _ in seq), matched)


class _Search:
    """One pattern's example search (see the module docstring)."""

    def __init__(self, pattern: object, *, max_events: int, budget: int) -> None:
        self.pattern = pattern
        self.matcher: Matcher = compile_matcher(pattern)
        self.alphabet: Alphabet = alphabet_of(pattern)
        self.max_events = max_events
        self.budget = budget
        self.runs = 0
        self.window = _window_ms(pattern)
        self.gap = 1 if self.window is not None else 1000

    def events(
        self, specs: Sequence[EventSpec], times: Sequence[float] | None = None
    ) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for i, (typ, fields) in enumerate(specs):
            t = times[i] if times is not None else i * self.gap
            out.append({"type": typ, "time": t, "key": _KEY, **fields})
        return out

    def run(self, events: list[dict[str, object]]) -> _Run:
        self.runs += 1
        engine = Engine([self.matcher], trace=True)
        found = engine.process_many(events)
        found += engine.finish()
        return _Run(found, list(engine.trace_records))

    def shortest_firing(self, count: int) -> tuple[list[list[EventSpec]], list[list[EventSpec]]]:
        """Breadth first: the shortest firing sequences (at most ``count``) and the open ones met."""
        letters = [(t, f) for t, f, _ in self.alphabet.events()]
        frontier: list[tuple[list[EventSpec], frozenset[Hashable]]] = [([], frozenset())]
        fired: list[list[EventSpec]] = []
        shapes: set[tuple[object, ...]] = set()
        open_: list[list[EventSpec]] = []
        for _depth in range(self.max_events):
            nxt: list[tuple[list[EventSpec], frozenset[Hashable]]] = []
            seen: set[frozenset[Hashable]] = set()
            for seq, progress in frontier:
                for letter in letters:
                    if self.runs >= self.budget:
                        return fired, open_
                    cand = [*seq, letter]
                    res = self.run(self.events(cand))
                    if res.fired:
                        shape = _shape(cand, res)
                        if shape not in shapes:  # why: examples that differ in more than values
                            shapes.add(shape)
                            fired.append(cand)
                        continue
                    now = res.progress()
                    if now - progress and now not in seen:  # why: only sequences that moved on
                        seen.add(now)
                        nxt.append((cand, now))
                        open_.append(cand)
            if fired and len(fired) >= count:
                break
            if fired:  # why: the shortest length is found; longer ones are not the shortest
                break
            frontier = nxt[:200]
        return fired[:count], open_

    def why_not(self, events: list[dict[str, object]], res: _Run) -> str:
        """The most advanced instance's outcome, in words, from the trace."""
        by_inst: dict[tuple[Hashable, int], list[TraceRecord]] = {}
        for r in res.trace:
            by_inst.setdefault((r.key, r.instance), []).append(r)
        if not by_inst:
            return "no instance started: no event matched the first stage or the initiator"
        records = max(by_inst.values(), key=lambda rs: sum(r.kind in _TAKING for r in rs))
        outcome = outcome_of(self.pattern, records, 0)
        return f"{outcome.label}: {outcome.reason}" if outcome.reason else outcome.label


def _whole(x: float) -> float:
    """``x`` as an int when it is whole (times read better: ``10001``, not ``10001.0``)."""
    return int(x) if float(x).is_integer() else x


def _window_ms(pattern: object) -> float | None:
    for attr in ("within_ms", "timeout_ms"):
        v = getattr(pattern, attr, None)
        if isinstance(v, int | float):
            return float(v)
    return None


def generate_examples(
    pattern: object, *, count: int = 3, max_events: int = 6, budget: int = 20_000
) -> Examples:
    """The examples of ``pattern`` (see the module docstring).

    ``count``: examples of each kind; ``max_events``: the longest sequence tried; ``budget``: the
    most engine runs the search may make (the notes say when it ran out).
    """
    search = _Search(pattern, max_events=max_events, budget=budget)
    out = Examples(getattr(pattern, "name", "?"), source=pattern)
    out.notes += [f"cannot solve {u}" for u in search.alphabet.unsolved]
    out.notes += search.alphabet.callables
    fired, open_ = search.shortest_firing(count)
    for seq in fired:
        events = search.events(seq)
        res = search.run(events)
        # why dict.fromkeys: the stages in the order the match took them, each once
        names = list(dict.fromkeys(ch for d in res.detections if d.kind == "match" for ch in d.channels))
        out.fires.append(Example(FIRES, tuple(events), f"fires: a match of {', '.join(names)}"))
    if not fired:
        out.notes.append(
            f"no firing input of at most {max_events} events found"
            + (" (search budget spent)" if search.runs >= budget else "")
        )
    out.almost = _near_misses(search, fired, open_, count)
    out.times_out = _timeouts(search, fired, open_, count)
    if search.window is None:
        out.notes.append("no `within` / `@timeout`: nothing can time out")
    return out


def _near_misses(
    search: _Search, fired: list[list[EventSpec]], open_: list[list[EventSpec]], count: int
) -> list[Example]:
    """Each firing example with one event changed (one field, or the type) or left out, that no
    longer fires; one per distinct reason, the latest change first."""
    out: list[Example] = []
    reasons: set[tuple[str, str]] = set()
    letters = list(search.alphabet.events())
    for seq in fired:
        for i in reversed(range(len(seq))):
            variants: list[tuple[list[EventSpec], str, str]] = []
            for typ, fields, change in letters:
                if (typ, fields) != seq[i]:
                    what = _diff(seq[i], (typ, fields), change, search.alphabet.values)
                    cand = [*seq[:i], (typ, fields), *seq[i + 1 :]]
                    variants.append((cand, f"event {i + 1} with {what}", what.split("=")[0]))
            variants.sort(key=lambda v: "`" not in v[1])  # why: a change that breaks a condition first
            variants.append((seq[:i] + seq[i + 1 :], f"without event {i + 1}", "without"))
            for cand, change, kind in variants:
                if len(out) >= count or search.runs >= search.budget:
                    return out
                if not cand:
                    continue
                events = search.events(cand)
                res = search.run(events)
                if res.fired:
                    continue
                why = search.why_not(events, res)
                if (why, kind) not in reasons:  # why: one example per reason and kind of change
                    reasons.add((why, kind))
                    out.append(Example(ALMOST, tuple(events), f"{change}; why not: {why}"))
    return out


def _diff(old: EventSpec, new: EventSpec, change: str, values: Mapping[str, list[Candidate]]) -> str:
    """What ``new`` changes in ``old``: ``type 'b' instead of 'a'``, ``price=100 instead of 101``.

    The comparison that the new value violates is named only when the old value satisfied it (a
    value found for one stage's condition may be tried at another stage, where it says nothing).
    """
    parts = [f"type {new[0]!r} instead of {old[0]!r}"] if new[0] != old[0] else []
    broke = ""
    for k, v in new[1].items():
        if old[1].get(k) != v:
            parts.append(f"{k}={v!r} instead of {old[1].get(k)!r}")
            why = change.partition(" (")[2].rstrip(")") if "`" in change else ""
            cond = why.rpartition(" is ")[0]
            held = [c for c in values.get(k, []) if c.value == old[1].get(k) and c.why == f"{cond} is true"]
            broke = why if cond and held else ""
    return ", ".join(parts) + (f" ({broke})" if broke else "")


def _timeouts(
    search: _Search, fired: list[list[EventSpec]], open_: list[list[EventSpec]], count: int
) -> list[Example]:
    """Firing examples whose last event comes after the window, then the shortest open inputs, that
    end in a timeout (each checked)."""
    out: list[Example] = []
    if search.window is None:
        return out
    tries: list[tuple[list[EventSpec], list[float] | None, str]] = []
    for seq in fired:
        if len(seq) > 1:
            late: list[float] = [i * search.gap for i in range(len(seq) - 1)]
            late.append(late[0] + _whole(search.window) + 1)
            gap, window = format_duration(late[-1] - late[0]), format_duration(search.window)
            tries.append((seq, late, f"the last event comes {gap} after the first, past the {window} window"))
    tries += [(seq, None, "the input ends before the pattern completes") for seq in sorted(open_, key=len)]
    for seq, times, why in tries:
        if len(out) >= count or search.runs >= search.budget:
            break
        events = search.events(seq, times)
        res = search.run(events)
        text = f"times out: {why}; {search.why_not(events, res)}"
        if res.timed_out and not res.fired and text not in {e.why for e in out}:
            out.append(Example(TIMES_OUT, tuple(events), text))
    return out


class ExampleOptions(TypedDict, total=False):
    """The keyword options of :func:`generate_examples`."""

    count: int
    max_events: int
    budget: int


def examples_of(session: CepSession, name: str, **options: Unpack[ExampleOptions]) -> Examples:
    """:func:`generate_examples` of the pattern ``name`` defined in a :class:`CepSession`."""
    return generate_examples(session.get(name).pattern, **options)
