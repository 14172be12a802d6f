"""The table under the timeline for the selected detection: which event each stage or channel took.

One line per (stage or channel, event): the event's arrival position (``#seq``, its row in the
input), type, time and its first fields, short and escaped (the input's datetime fields as dates);
never the object reprs of the DataFrame's ``events``/``extra`` columns.
"""

from __future__ import annotations

import html

from workbench.engine.detection import Detection
from workbench.session.shown import PLAIN, Shown

__all__ = ["detail_table"]

_FIELDS_SHOWN = 4
_VALUE_CHARS = 40


def _short(name: str, value: object, show: Shown) -> str:
    text = show.field(name, value)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 1] + "…"


def detail_table(index: int, d: Detection, show: Shown = PLAIN) -> str:
    """HTML for detection ``index``: a header line, then stage/channel → event position rows.

    >>> from workbench.engine import Detection, Event
    >>> d = Detection("p", "k", 1, "match", 9, (Event("a", 3, "k", {"x": 1}, seq=0),), ("first",))
    >>> "<td>first</td><td>#0</td><td>a</td><td>3</td><td>x=1</td>" in detail_table(0, d)
    True
    """
    esc = html.escape
    head = (
        f"<b>#{index} {esc(d.kind)}</b> {esc(d.pattern)}#{d.instance} key={esc(show.key(d.key))} "
        f"at {esc(show.time(d.time))}"
    )
    if d.negated:
        head += f" · absent: {esc(', '.join(d.negated))}"
    rows = []
    for channel, e in zip(d.channels, d.events, strict=True):
        fields = list(e.fields.items())
        shown = ", ".join(f"{k}={_short(k, v, show)}" for k, v in fields[:_FIELDS_SHOWN])
        if len(fields) > _FIELDS_SHOWN:
            shown += f", … ({len(fields) - _FIELDS_SHOWN} more)"
        rows.append(
            f"<tr><td>{esc(channel)}</td><td>#{e.seq}</td><td>{esc(e.type)}</td>"
            f"<td>{esc(show.time(e.time))}</td><td>{esc(shown)}</td></tr>"
        )
    table = (
        '<table class="cep-detection"><thead><tr><th>stage / channel</th><th>event</th><th>type</th>'
        "<th>time</th><th>fields</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>"
    )
    return f"<div>{head}</div>{table}"
