"""What the browser holds of a timeline, and the deltas that bring it up to a new view.

The bokeh data sources are write-only (jupyter_bokeh echoes streamed rows into the Python-side
copy), so :class:`SentView` remembers what was sent: the rows, each band's index and end, each
marker's index and text, the detections in the browser's order. :meth:`SentView.update` then sends
a new view as ``stream`` (new glyphs) and ``patch`` (bands whose end moved, marker texts a later
detection named) deltas, or replaces the data wholesale when the layout changed.
"""

from __future__ import annotations

from collections.abc import Mapping

from bokeh.models import ColumnDataSource, FactorRange
from bokeh.plotting import figure

from workbench.widgets.figure import (
    MarkerId,
    band_columns,
    cap_width,
    detection_columns,
    figure_height,
    label_dy,
    marker_columns,
    marker_ids,
)
from workbench.widgets.rows import Band, Marker, View

__all__ = ["SentView"]

BandId = tuple[str, float, str, str]


def _band_id(b: Band) -> BandId:
    return (b.row, b.start, str(b.state), b.label)


class SentView:
    """The view last sent to the browser's sources, and the deltas that update it.

    Args:
        sources: the bands, markers and detections sources the figure draws.
        fig: the figure (its height follows the rows).
        y_range: the figure's row axis.
        deltas: counters of ``stream``, ``patch`` and ``reset`` sends (updated here).
    """

    def __init__(
        self,
        sources: Mapping[str, ColumnDataSource],
        fig: figure,
        y_range: FactorRange,
        deltas: dict[str, int],
    ) -> None:
        self.sources = sources
        self.figure = fig
        self.y_range = y_range
        self.deltas = deltas
        self.view: View | None = None
        self.rows: list[str] = []
        self.bands: dict[BandId, tuple[int, float]] = {}
        self.markers: dict[MarkerId, tuple[int, str]] = {}
        self.detections: list[int] = []  # detection indices in the order the browser holds them

    def update(self, view: View) -> None:
        """Send ``view``: as deltas when the layout allows, else wholesale."""
        if not self._try_delta(view):
            self._reset(view)
        self.view = view

    def _reset(self, view: View) -> None:
        self.deltas["reset"] += 1
        self.y_range.factors = list(reversed(view.rows)) or [""]
        self.figure.height = figure_height(len(view.rows))
        self.sources["bands"].data = band_columns(view.bands)
        self.sources["markers"].data = marker_columns(view.markers)
        self.sources["detections"].data = detection_columns(view.detections)
        self.rows = list(view.rows)
        self.bands = {_band_id(b): (i, b.end) for i, b in enumerate(view.bands)}
        self.markers = {ident: (i, m.text) for i, (ident, m) in enumerate(marker_ids(view.markers).items())}
        self.detections = [d.index for d in view.detections]

    def _fits(self, view: View) -> bool:
        """Whether ``view`` only adds to what was sent (same level, window and binning, no lost rows)."""
        old = self.view
        if old is None or view.level != old.level or view.binned or old.binned:
            return False
        if view.hidden_instances != old.hidden_instances or view.time < old.time:
            return False
        return set(self.rows) <= set(view.rows)

    def _try_delta(self, view: View) -> bool:
        """Send ``view`` as stream/patch deltas against what was sent; False if it needs a reset."""
        if not self._fits(view):
            return False
        bands = {_band_id(b): b for b in view.bands}
        if not self.bands.keys() <= bands.keys():
            return False  # a band changed state or vanished: redraw
        marks = marker_ids(view.markers)
        if not self.markers.keys() <= marks.keys():
            return False
        if view.rows != self.rows:
            self.y_range.factors = list(reversed(view.rows))
            self.figure.height = figure_height(len(view.rows))
            self.rows = list(view.rows)
        self._send_bands(bands)
        self._send_markers(marks)
        held = set(self.detections)
        new_dets = [d for d in view.detections if d.index not in held]
        if new_dets:
            self.detections.extend(d.index for d in new_dets)
            self.deltas["stream"] += 1
            self.sources["detections"].stream(detection_columns(new_dets))
        return True

    def _send_bands(self, bands: dict[BandId, Band]) -> None:
        patches = []
        for ident, (i, end) in self.bands.items():
            b = bands[ident]
            if b.end != end:
                patches.append((i, b))
                self.bands[ident] = (i, b.end)
        if patches:
            self.deltas["patch"] += 1
            self.sources["bands"].patch(
                {
                    "end": [(i, b.end) for i, b in patches],
                    "mid": [(i, (b.start + b.end) / 2) for i, b in patches],
                    "cap": [(i, cap_width(b)) for i, b in patches],
                    "label_dy": [(i, label_dy(b)) for i, b in patches],
                }
            )
        new_bands = [b for ident, b in bands.items() if ident not in self.bands]
        if new_bands:
            base = len(self.bands)
            for j, b in enumerate(new_bands):
                self.bands[_band_id(b)] = (base + j, b.end)
            self.deltas["stream"] += 1
            self.sources["bands"].stream(band_columns(new_bands))

    def _send_markers(self, marks: dict[MarkerId, Marker]) -> None:
        # A detection that arrives later names the events of markers already sent: patch their text.
        texts = []
        for mid, (i, text) in self.markers.items():
            if marks[mid].text != text:
                texts.append((i, marks[mid].text))
                self.markers[mid] = (i, marks[mid].text)
        if texts:
            self.deltas["patch"] += 1
            self.sources["markers"].patch({"text": texts})
        new_ids = [mid for mid in marks if mid not in self.markers]
        if new_ids:
            base = len(self.markers)
            for j, mid in enumerate(new_ids):
                self.markers[mid] = (base + j, marks[mid].text)
            self.deltas["stream"] += 1
            self.sources["markers"].stream(marker_columns([marks[mid] for mid in new_ids]))
