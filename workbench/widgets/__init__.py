"""Interactive views of a run: the timeline widget (ipywidgets + bokeh) and its data model.

:mod:`.model` is pure Python; :mod:`.timeline` imports ipywidgets, bokeh and jupyter_bokeh, and is
loaded only when :class:`Timeline` is first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from workbench.widgets.model import TimelineModel
from workbench.widgets.rows import State

if TYPE_CHECKING:
    from workbench.widgets.timeline import Timeline

__all__ = ["State", "Timeline", "TimelineModel"]


def __getattr__(name: str) -> type[Timeline]:
    if name == "Timeline":
        from workbench.widgets.timeline import Timeline

        return Timeline
    raise AttributeError(name)
