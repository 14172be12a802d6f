"""The cost view's figure (bokeh) and its notebook wrapper."""

from __future__ import annotations

from pathlib import Path

from bokeh.models import ColumnDataSource

from workbench.language.compile import compile_pattern
from workbench.session.cost import measure_cost
from workbench.widgets.cost import CostView, cost_figure, cost_lines, warning_html

GROWS = (
    "sequence grows"
    " begin a where e.type == 'a'"
    " followed by any b where e.type == 'b' followed by c where e.type == 'c'"
)


def _report():  # type: ignore[no-untyped-def]
    events = [{"type": "ab"[t % 3 == 0], "time": t, "key": f"k{t % 2}"} for t in range(120)]
    return measure_cost([compile_pattern(GROWS)], events, every=4)


def test_lines_by_element_and_by_key() -> None:
    report = _report()
    by_element = cost_lines(report)
    assert set(by_element) == {"grows · b", "grows · c"}
    by_key = cost_lines(report, by="key")
    assert set(by_key) == {"grows · k0", "grows · k1"}
    total = sum(f["live"].iloc[-1] for f in by_key.values())
    assert total == sum(f["live"].iloc[-1] for f in by_element.values())


def test_figure_holds_a_line_per_stage_and_the_warning(tmp_path: Path) -> None:
    report = _report()
    layout = cost_figure(report)
    sources = [m for m in layout.select({"type": ColumnDataSource})]
    assert len(sources) == 2
    assert "followed by any b" in warning_html(report)
    view = CostView(report)
    assert view.frame.equals(report.frame())
    out = view.save(str(tmp_path / "cost.html"))
    assert "Bokeh" in Path(out).read_text(encoding="utf-8")
