"""A session's results read back: its definitions, detections, frames and explanations.

:class:`SessionViews` is the reading half of :class:`~workbench.session.session.CepSession` (which
runs patterns and keeps what they produced); it reads the session's state and changes none of it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Sequence
from typing import TYPE_CHECKING

from workbench.engine.detection import Detection, TraceRecord
from workbench.engine.events import Event
from workbench.engine.faults import ConditionFault
from workbench.errors import CepError
from workbench.language.compile import Definition
from workbench.language.conditions import nearest
from workbench.session.notes import kind_of
from workbench.session.runs import _Run, to_frame
from workbench.session.shown import Partition, Shown
from workbench.session.times import NUMBERS, TimeFormat

if TYPE_CHECKING:
    import pandas as pd

    from workbench.engine.runtime import Engine

__all__ = ["SessionViews"]


class SessionViews:
    """Reading a session: what is defined, what the last runs found, and why (see the module doc)."""

    definitions: dict[str, Definition]
    sources: dict[str, str]
    runs: dict[str, _Run]
    live: Engine | None
    live_times: TimeFormat
    late: list[Event]
    late_fields: tuple[str, ...]
    errors: list[ConditionFault]
    times: TimeFormat

    def get(self, name: str) -> Definition:
        """The definition called ``name``; a :class:`CepError` with the nearest name otherwise."""
        try:
            return self.definitions[name]
        except KeyError:
            known = ", ".join(sorted(self.definitions)) or "none yet"
            msg = f"no pattern named {name!r}{nearest(name, self.definitions)}; defined: {known}"
            raise CepError(msg) from None

    def condition_errors(self) -> list[ConditionFault]:
        """The condition errors of the last replay, then those of the live feed (if one runs)."""
        live = self.live.errors if self.live is not None else []
        return [*self.errors, *live]

    def errors_frame(self) -> pd.DataFrame:
        """:meth:`condition_errors` as a DataFrame, the first erring event's time a date for date input
        (and a wall-clock date for the live feed's)."""
        import pandas as pd

        from workbench.results import errors_to_frame

        replayed = self.times.frame(errors_to_frame(self.errors), ("first_time",))
        if self.live is None or not self.live.errors:
            return replayed
        live = self.live_times.frame(errors_to_frame(self.live.errors), ("first_time",))
        return pd.concat([replayed, live], ignore_index=True) if len(replayed) else live

    def late_frame(self) -> pd.DataFrame:
        """The late events of the last replay, with a column for each field of its input (a late
        row without a value has a blank), and its datetimes as dates."""
        from workbench.results import events_to_frame

        return self.times.events(events_to_frame(self.late, self.late_fields))

    def detections(self, name: str) -> list[Detection]:
        """The detections of the last run of ``name``."""
        self.get(name)
        if name not in self.runs:
            msg = f"pattern {name!r} has not been run yet: %cep run {name} --on EVENTS"
            raise CepError(msg)
        return list(self.runs[name].detections)

    def matches(self, name: str) -> pd.DataFrame:
        """The detections of the last run of ``name`` as a DataFrame."""
        return to_frame(
            self.detections(name), self.runs[name].times, self.partitions(), self.measure_names([name])
        )

    def listing(self) -> pd.DataFrame:
        """One row per defined pattern: name, kind, elements, partition, detections of the last run."""
        import pandas as pd

        rows = []
        for name, d in self.definitions.items():
            p = d.pattern
            kind = kind_of(p)
            elements = len(getattr(p, "stages", ()) or getattr(p, "channels", ()) or (1,))
            run = self.runs.get(name)
            rows.append(
                {
                    "name": name,
                    "kind": kind,
                    "elements": elements,
                    "partition": d.partition,
                    "detections": None if run is None else len(run.detections),
                }
            )
        return pd.DataFrame(rows, columns=["name", "kind", "elements", "partition", "detections"])

    def show(self, name: str) -> str:
        """The compiled structure of ``name``: its canonical text and an outline."""
        from workbench.session.outline import outline

        d = self.get(name)
        return f"{self.sources[name]}\n\n{outline(d.pattern)}"

    def records(self, names: Sequence[str]) -> tuple[list[TraceRecord], list[Detection]]:
        """The trace and detections of the last run (or live feed) of ``names``, in time order."""
        trace: list[TraceRecord] = []
        detections: list[Detection] = []
        for name in names:
            self.get(name)
            run = self.runs.get(name)
            if run is None:
                msg = f"pattern {name!r} has not run yet; run it with %cep run {name} --on DATA"
                raise CepError(msg)
            trace.extend(run.trace)
            detections.extend(run.detections)
        trace.sort(key=lambda r: r.time)  # stable: per-pattern order is kept at equal times
        detections.sort(key=lambda d: d.time)
        return trace, detections

    def explain(
        self, name: str, *, key: Hashable | None = None, instance: int | None = None, details: bool = False
    ) -> str:
        """Why instances of ``name`` did or did not fire, from the trace of the last run.

        A summary first (outcomes, the most common reasons); one line per instance for a few
        instances or with ``details``.
        """
        from workbench.session.explain import explain

        self.detections(name)
        run = self.runs[name]
        shown = self.shown(name)
        return explain(
            self.get(name).pattern,
            run.trace,
            run.detections,
            run.events,
            key=None if key is None else shown.named(key, {r.key for r in run.trace}),
            instance=instance,
            details=details,
            show=shown,
        )

    def shown(self, name: str) -> Shown:
        """How the last run of ``name`` reads: its input's dates, its partition keys as dates too."""
        run = self.runs.get(name)
        return Shown(NUMBERS if run is None else run.times, self.get(name).partition)

    def measure_names(self, names: Iterable[str]) -> list[str]:
        """The measure columns of the named patterns' detections, in declared order."""
        from workbench.engine.derived import derived_fields

        out: dict[str, None] = {}
        for name in names:
            d = self.definitions.get(name)
            if d is not None:
                out.update(dict.fromkeys(derived_fields(d.pattern)))
        return list(out)

    def partitions(self) -> dict[str, Partition]:
        """Each defined pattern's ``partition by`` field(s) (``None``: the events' own keys)."""
        return {name: d.partition for name, d in self.definitions.items()}
