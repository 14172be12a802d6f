"""Turn what a user points ``%cep run --on`` (or ``workbench run``) at into events.

Accepted: a pandas DataFrame, a path to a ``.csv``, ``.jsonl``/``.ndjson``, ``.json`` (a list of
records) or ``.parquet`` file, or an iterable of event mappings / :class:`~workbench.engine.Event`.
Columns: ``type``, ``time`` (or ``t``), ``key`` and one column per field; other names can be given
(``time=``, ``key=``, ``type=``). Frames are converted by
:class:`~workbench.backends.columnar.frame.EventColumns` (column by column, an event per row on demand).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.engine.events import Event, make_event
from workbench.errors import CepError, EventError
from workbench.language.conditions import nearest

if TYPE_CHECKING:
    import pandas as pd

    from workbench.backends.columnar.frame import EventColumns

__all__ = ["SUFFIXES", "load_columns", "load_events", "read_frame"]

SUFFIXES = (".csv", ".jsonl", ".ndjson", ".json", ".parquet")


def read_frame(path: str | Path) -> pd.DataFrame:
    """Read an event file into a DataFrame (by suffix); a :class:`CepError` names what is wrong."""
    import pandas as pd

    p = Path(path)
    if not p.exists():
        msg = f"no such file: {p}"
        raise CepError(msg)
    suffix = p.suffix.lower()
    try:
        if suffix == ".csv":
            return pd.read_csv(p)
        if suffix in (".jsonl", ".ndjson"):
            return pd.read_json(p, lines=True)
        if suffix == ".json":
            return pd.read_json(p)
        if suffix == ".parquet":
            return pd.read_parquet(p)
    except (ValueError, OSError, ImportError) as err:
        msg = f"cannot read {p}: {err}"
        raise CepError(msg) from None
    msg = f"cannot read {p}: unknown file type {suffix!r}; use one of {', '.join(SUFFIXES)}"
    raise CepError(msg)


def load_columns(
    source: object, *, time: str | None = None, key: str | None = None, type: str | None = None
) -> EventColumns | None:
    """A DataFrame's (or an event file's) events as columns; ``None`` for an iterable of events.

    ``key`` names the partition key column (checked; a column other than ``key`` is copied, so it
    stays a field that conditions can read). Raises :class:`EventError` for a missing column.
    """
    import pandas as pd

    from workbench.backends.columnar.frame import EventColumns

    if isinstance(source, str | Path):
        source = read_frame(source)
    if not isinstance(source, pd.DataFrame):
        return None
    if key is not None and key not in source.columns:
        columns = [str(c) for c in source.columns]
        msg = (
            f"the events have no partition key column {key!r}{nearest(key, columns)} "
            f"(it comes from --key or the pattern's 'partition by {key}'); "
            f"columns: {', '.join(columns) or 'none'}"
        )
        raise EventError(msg, field=key)
    if key is not None and key != "key" and key in source.columns and "key" not in source.columns:
        # key by a copy, so the column stays a field conditions can read (partition by symbol)
        source = source.assign(key=source[key])
        key = "key"
    return EventColumns.from_frame(
        source,
        type_column=type or "type",
        time_column=time,
        key_column=key if key is not None else "key",
    )


def load_events(
    source: Any,
    *,
    time: str | None = None,
    key: str | None = None,
    type: str | None = None,
) -> list[Event]:
    """Events from a DataFrame, a file path or an iterable of mappings/events (see module doc)."""
    columns = load_columns(source, time=time, key=key, type=type)
    if columns is not None:
        return columns.events()
    if isinstance(source, Mapping) or not isinstance(source, Iterable):
        msg = (
            f"cannot read events from a {type_name(source)}; "
            "give a DataFrame, a file path or a list of events"
        )
        raise CepError(msg)
    out: list[Event] = []
    keyed = mappings = False
    for i, item in enumerate(source):
        if isinstance(item, Event):
            out.append(item)
        elif isinstance(item, Mapping):
            raw = dict(item)
            mappings = True
            if time is not None and time in raw:
                raw["time"] = raw.pop(time)
            if key is not None and key in raw:
                raw["key"] = raw[key]  # the field stays readable in conditions, as for DataFrames
                keyed = True
            if type is not None and type in raw:
                raw["type"] = raw.pop(type)
            out.append(make_event(raw, i))
        else:
            msg = f"item {i} is a {type_name(item)}, not an event mapping"
            raise EventError(msg, position=i)
    if key is not None and mappings and not keyed:
        msg = (
            f"no event has the partition key field {key!r} "
            f"(it comes from --key or the pattern's 'partition by {key}')"
        )
        raise EventError(msg, field=key)
    return out


def type_name(value: object) -> str:
    """The type name of ``value`` for messages."""
    return str(value.__class__.__name__)
