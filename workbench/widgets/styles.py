"""Colours and glyphs of the timeline: one per state and one per trace kind (pure data)."""

from __future__ import annotations

import math

from workbench.widgets.rows import State

__all__ = ["KIND_GLYPHS", "STATE_COLORS", "kind_color", "marker_size"]

STATE_COLORS: dict[str, str] = {
    State.WAITING: "#d9d9d9",
    State.ACTIVE: "#4e79a7",
    State.PAUSED: "#f28e2b",
    State.COUNTED: "#76b7b2",
    State.STOPPED: "#7f7f7f",
    State.NEGATED: "#59a14f",
    State.VIOLATED: "#e15759",
    State.TIMED_OUT: "#b07aa1",
    State.DETECTED: "#edc948",
    State.FAILED: "#9c2a2a",
    State.PRUNED: "#bab0ac",
    State.HELD: "#ff9da7",
}
"""Band colour per :class:`~workbench.widgets.model.State` (negated = satisfied by absence)."""

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
        return "#e15759" if kind == "late" else "#222222"
    base = STATE_COLORS[state]
    r, g, b = (int(base[i : i + 2], 16) for i in (1, 3, 5))
    return f"#{int(r * 0.7):02x}{int(g * 0.7):02x}{int(b * 0.7):02x}"


def marker_size(count: int) -> float:
    """Glyph size: 9 for one record, growing with the log of a bin's count."""
    return 9.0 + 3.0 * math.log2(max(1, count))
