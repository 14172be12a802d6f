"""Colours and glyphs of the timeline: one per state and one per trace kind (pure data)."""

from __future__ import annotations

import math

from workbench.widgets.rows import State

__all__ = ["DETECTION_COLORS", "KIND_GLYPHS", "STATE_COLORS", "STATE_HATCH", "kind_color", "marker_size"]

# Paul Tol's "muted" scheme (distinct under the common colour-vision deficiencies) plus greys:
# https://personal.sron.nl/~pault/ ; "stopped" also gets a hatch, so it never reads as a colour only.
STATE_COLORS: dict[str, str] = {
    State.WAITING: "#dddddd",
    State.ACTIVE: "#88ccee",
    State.PAUSED: "#999933",
    State.COUNTED: "#44aa99",
    State.NEGATED: "#117733",
    State.DETECTED: "#ddcc77",
    State.STOPPED: "#332288",
    State.TIMED_OUT: "#aa4499",
    State.VIOLATED: "#cc6677",
    State.FAILED: "#882255",
    State.PRUNED: "#bbbbbb",
    State.HELD: "#ee8866",
}
"""Band colour per :class:`~workbench.widgets.model.State` (negated = satisfied by absence)."""

STATE_HATCH: dict[str, str] = {State.STOPPED: "/", State.PRUNED: "."}
"""Hatch pattern of a state's band (bokeh pattern names); other states are plain."""

DETECTION_COLORS: dict[str, str] = {"match": "#ddcc77", "timeout": "#aa4499"}
"""Star colour per detection kind (a match, a timeout reported on the timeout channel)."""

KIND_GLYPHS: dict[str, str] = {
    "started": "triangle",
    "extended": "triangle_pin",
    "accepted": "circle",
    "counted": "circle_dot",
    "paused": "square",
    "resumed": "square_pin",
    "stopped": "square_x",
    "negated": "circle_cross",
    "violated": "x",
    "timed_out": "diamond",
    "detected": "star",
    "failed": "x",
    "pruned": "dash",
    "held": "hex",
    "ignored": "dot",
    "late": "inverted_triangle",
    "event": "circle",
}
"""Marker glyph (a bokeh ``scatter`` marker name) per trace kind."""

_KIND_STATE = {
    "started": State.ACTIVE,
    "extended": State.ACTIVE,
    "resumed": State.ACTIVE,
    "paused": State.PAUSED,
    "counted": State.COUNTED,
    "stopped": State.STOPPED,
    "negated": State.NEGATED,
    "violated": State.VIOLATED,
    "timed_out": State.TIMED_OUT,
    "detected": State.DETECTED,
    "failed": State.FAILED,
    "pruned": State.PRUNED,
    "held": State.HELD,
}


def kind_color(kind: str) -> str:
    """A marker's colour: darker than the band of the state the record sets; events are near black."""
    state = _KIND_STATE.get(kind)
    if state is None:
        return "#cc3311" if kind == "late" else "#222222"
    base = STATE_COLORS[state]
    r, g, b = (int(base[i : i + 2], 16) for i in (1, 3, 5))
    return f"#{int(r * 0.7):02x}{int(g * 0.7):02x}{int(b * 0.7):02x}"


def marker_size(count: int) -> float:
    """Glyph size: 9 for one record, growing with the log of a bin's count."""
    return 9.0 + 3.0 * math.log2(max(1, count))
