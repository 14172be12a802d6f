"""Two versions of a pattern over the same data: added, removed and changed detections, and why.

:func:`diff_patterns` replays both patterns (two defined names; the language has no parameters, so
"the same pattern with another threshold" is a second definition) over the same events with
tracing on, pairs their detections by partition key and the event that started the instance, and
for each difference finds the first trace record where the two runs went different ways. Near
misses (:mod:`workbench.session.nearmiss`) take part in that comparison, so a threshold change
reads as ``old: accepted 'hot' <- event #12``, ``new: rejected 'hot' <- event #12: `e.celsius >
85`: 84 > 85 is false``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event
from workbench.errors import CepError
from workbench.session.nearmiss import near_misses, spans

if TYPE_CHECKING:
    import pandas as pd

    from workbench.session.session import CepSession

__all__ = ["COLUMNS", "PatternDiff", "diff_patterns"]

COLUMNS = [
    "change",
    "key",
    "old_kind",
    "new_kind",
    "old_time",
    "new_time",
    "old_events",
    "new_events",
    "diverged",
]
#: at most this many differences get their divergence traced (each re-checks near misses).
TRACED = 200
#: at most this many differences are listed in the text.
LISTED = 10


@dataclass(frozen=True)
class PatternDiff:
    """The differences (``frame``: one row each) and their text (``text``: a summary, then a line each)."""

    text: str
    frame: pd.DataFrame

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class _Side:
    """One run: its pattern, trace per instance, detections, and events."""

    pattern: object
    instances: Mapping[tuple[Hashable, int], list[TraceRecord]]
    detections: list[Detection]
    events: Mapping[int, Event]

    def story(self, d: Detection) -> list[TraceRecord]:
        """The instance's records with its near misses, in order."""
        records = self.instances.get((d.key, d.instance), [])
        both = [*records, *near_misses(self.pattern, records, self.events)]
        return sorted(both, key=lambda r: (r.time, r.event_seq if r.event_seq is not None else 1 << 62))

    def counterpart(self, key: Hashable, start: int | None) -> list[TraceRecord]:
        """The story of the instance of ``key`` started by event ``start`` (empty: none was)."""
        for (k, _), records in self.instances.items():
            if k == key and records and records[0].event_seq == start:
                fake = Detection(records[0].pattern, k, records[0].instance, "", 0, (), ())
                return self.story(fake)
        return []


def diff_patterns(
    session: CepSession,
    old: str,
    new: str,
    data: object,
    *,
    time: str | None = None,
    key: str | None = None,
    type: str | None = None,
    out_of_orderness: int | float = 0,
    order_by: str | None = None,
    allow_missing_key: bool = False,
) -> PatternDiff:
    """Run ``old`` and ``new`` over ``data`` and compare their detections (see the module docstring);
    the keywords are :meth:`CepSession.replay`'s, how both replays read ``data``."""
    if old == new:
        msg = f"diff needs two different patterns, got {old!r} twice (define the new one under another name)"
        raise CepError(msg)
    sides = []
    for name in (old, new):
        done = session.replay(
            [name],
            data,
            time=time,
            key=key,
            type=type,
            trace=True,
            out_of_orderness=out_of_orderness,
            order_by=order_by,
            allow_missing_key=allow_missing_key,
        )
        run = session.runs[name]
        sides.append(_Side(session.get(name).pattern, spans(run.trace), list(run.detections), run.events))
        rows, show = done.rows, run.times.text
    a, b = sides
    rows_out, same = _compare(a, b, show)
    import pandas as pd

    frame = pd.DataFrame(rows_out, columns=COLUMNS)
    counts = {c: int((frame.change == c).sum()) for c in ("added", "removed", "changed")}
    head = (
        f"diff {old} -> {new} on {rows} events: {counts['added']} added, {counts['removed']} removed, "
        f"{counts['changed']} changed, {same} unchanged"
    )
    lines = [head]
    for row in rows_out[:LISTED]:
        lines.append(f"  {row['change']} key={row['key']!r} {_what(row, show)}")
        if row["diverged"]:
            lines.append(f"    first difference: {row['diverged']}")
    if len(rows_out) > LISTED:
        lines.append(f"  ... {len(rows_out) - LISTED} more (the returned DataFrame has every one)")
    return PatternDiff("\n".join(lines), frame)


def _anchor(d: Detection) -> int | None:
    """The event that started the detection's instance (its initiator, else its first event)."""
    if d.initiator is not None:
        return d.initiator.seq
    return d.events[0].seq if d.events else None


def _compare(a: _Side, b: _Side, show: Callable[[float], str]) -> tuple[list[dict[str, object]], int]:
    """The rows of the differences between ``a`` (old) and ``b`` (new), and the unchanged count."""
    paired: dict[tuple[Hashable, int | None], tuple[list[Detection], list[Detection]]] = {}
    for side, detections in ((0, a.detections), (1, b.detections)):
        for d in detections:
            paired.setdefault((d.key, _anchor(d)), ([], []))[side].append(d)
    rows: list[dict[str, object]] = []
    same = 0
    for (k, _), (olds, news) in paired.items():
        for d in list(olds):
            twin = next((n for n in news if n.kind == d.kind and n.seqs == d.seqs), None)
            if twin is not None:
                olds.remove(d)
                news.remove(twin)
                same += 1
        for i in range(max(len(olds), len(news))):
            o = olds[i] if i < len(olds) else None
            n = news[i] if i < len(news) else None
            change = "changed" if o and n else "removed" if o else "added"
            diverged = _diverged(a, b, o, n, show) if len(rows) < TRACED else ""
            rows.append(
                {
                    "change": change,
                    "key": k,
                    "old_kind": o.kind if o else None,
                    "new_kind": n.kind if n else None,
                    "old_time": o.time if o else None,
                    "new_time": n.time if n else None,
                    "old_events": list(o.seqs) if o else None,
                    "new_events": list(n.seqs) if n else None,
                    "diverged": diverged,
                }
            )
    rows.sort(key=_first_time)
    return rows, same


def _first_time(row: Mapping[str, object]) -> float:
    """When a difference shows: the earlier of its two detections' times."""
    return min(float(t) for t in (row["old_time"], row["new_time"]) if isinstance(t, int | float))


def _diverged(
    a: _Side, b: _Side, o: Detection | None, n: Detection | None, show: Callable[[float], str]
) -> str:
    """The first record where the two runs' stories of this instance differ, both sides shown."""
    some = o or n
    assert some is not None
    start = _anchor(some)
    old = a.story(o) if o else a.counterpart(some.key, start)
    new = b.story(n) if n else b.counterpart(some.key, start)
    for x, y in zip(old, new, strict=False):
        if (x.kind, x.element, x.event_seq) != (y.kind, y.element, y.event_seq):
            return f"old {_record(x, show)}; new {_record(y, show)}"
    if len(old) == len(new):
        return ""
    longer, side = (old, "old") if len(old) > len(new) else (new, "new")
    rest = longer[min(len(old), len(new))]
    other = "new" if side == "old" else "old"
    if not old or not new:
        return f"{other} started no instance on event #{start}; {side} {_record(rest, show)}"
    return f"{other} had nothing more; {side} {_record(rest, show)}"


def _record(r: TraceRecord, show: Callable[[float], str]) -> str:
    """``t=300: rejected 'hot' <- event #12 (`e.x > 5`: 4 > 5 is false)``."""
    what = f"{r.kind.value}" + (f" '{r.element}'" if r.element else "")
    source = "timer" if r.event_seq is None else f"event #{r.event_seq}"
    parts = r.detail.get("parts")
    why = f" ({', '.join(str(p['text']) for p in parts if not p['holds'])})" if parts else ""
    return f"t={show(r.time)}: {what} <- {source}{why}"


def _what(row: Mapping[str, object], show: Callable[[float], str]) -> str:
    """``timeout at 900 -> match at 1200 (events [0, 3] -> [0, 3, 5])``."""
    old = f"{row['old_kind']} at {show(row['old_time'])}" if row["old_kind"] else "nothing"  # type: ignore[arg-type]
    new = f"{row['new_kind']} at {show(row['new_time'])}" if row["new_kind"] else "nothing"  # type: ignore[arg-type]
    return f"{old} -> {new} (events {row['old_events'] or []} -> {row['new_events'] or []})"
