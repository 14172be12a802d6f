"""BokehJS in every browser page that shows a figure, not once per kernel.

``jupyter_bokeh``'s ``BokehView`` needs ``window.Bokeh`` when it is constructed. BokehJS lives in
the browser page, so "loaded once per kernel" breaks as soon as the page is reloaded, the notebook
is reopened or a second tab shows it while the kernel keeps running: the view fails with
"Cannot read properties of undefined (reading 'require')".

So a figure is shown inside an ``ipywidgets.Output`` whose first output is a *guarded* BokehJS
loader and whose second output is the ``BokehModel`` view. An output area renders its outputs in
order, and a JavaScript output runs synchronously when rendered, while a widget view is created
asynchronously; so in every page that renders the ``Output`` (a new display, a re-run after a
reload, a restored view in another tab) BokehJS is there before ``BokehView`` is built. The loader
returns at once when the page already has this BokehJS version.

The loader is inline (no CDN: offline and Binder work) and is widget state, not a cell output, so
it is never saved into the notebook file.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import ipywidgets as widgets

__all__ = ["LOAD_MIME", "bokehjs_loader", "control_row", "figure_area", "load_bokeh", "unshrinking"]

JS_MIME = "application/javascript"
LOAD_MIME = "application/vnd.bokehjs_load.v0+json"
"""The MIME type jupyter_bokeh's JupyterLab renderer runs BokehJS loaders from."""
WIDGET_MIME = "application/vnd.jupyter.widget-view+json"


@functools.cache
def bokehjs_loader() -> dict[str, str]:
    """The MIME bundle that loads this bokeh's BokehJS inline unless the page already has it.

    >>> bundle = bokehjs_loader()
    >>> sorted(bundle) == sorted([JS_MIME, LOAD_MIME])
    True
    >>> "window.Bokeh.version ===" in bundle[LOAD_MIME]
    True
    """
    from bokeh import __version__
    from bokeh.core.templates import AUTOLOAD_NB_JS
    from bokeh.embed.bundle import bundle_for_objs_and_resources
    from bokeh.resources import INLINE

    bundle = bundle_for_objs_and_resources(None, INLINE)

    def guarded(register_mime: bool) -> str:
        js = AUTOLOAD_NB_JS.render(
            bundle=bundle, elementid=None, force=True, timeout=5000, register_mime=register_mime
        )
        # Why the guard: re-running BokehJS in a page that has it would replace window.Bokeh and
        # orphan the documents already rendered from it.
        return (
            "(function () {\n"
            f"  if (window.Bokeh !== undefined && window.Bokeh.version === {__version__!r}) {{ return; }}\n"
            f"{js}\n"
            "})();\n"
        )

    return {JS_MIME: guarded(True), LOAD_MIME: guarded(False)}


def _display_data(data: Mapping[str, object]) -> dict[str, object]:
    return {"output_type": "display_data", "data": data, "metadata": {}}


def figure_area(plot: widgets.DOMWidget) -> widgets.Output:
    """An ``Output`` widget that shows ``plot`` (a ``BokehModel``) after ensuring BokehJS in the page.

    >>> from bokeh.plotting import figure
    >>> from jupyter_bokeh.widgets import BokehModel
    >>> area = figure_area(BokehModel(figure()))
    >>> [sorted(o["data"])[0] for o in area.outputs]
    ['application/javascript', 'application/vnd.jupyter.widget-view+json']
    """
    view = {"model_id": plot.model_id, "version_major": 2, "version_minor": 0}
    area = widgets.Output(layout=widgets.Layout(width="100%"))
    area.outputs = (
        _display_data(bokehjs_loader()),
        _display_data({WIDGET_MIME: view, "text/plain": "BokehModel()"}),
    )
    return area


def unshrinking() -> widgets.Layout:
    """A button as wide as its label, never squeezed below it."""
    return widgets.Layout(width="auto", min_width="84px", flex="0 0 auto")


def control_row(children: list[widgets.Widget]) -> widgets.HBox:
    """A row of controls that wraps onto a second line instead of squeezing its members."""
    return widgets.HBox(children, layout=widgets.Layout(flex_flow="row wrap", align_items="center"))


def load_bokeh(force: bool = False) -> None:
    """Load BokehJS inline into the current output (``BokehModel`` needs ``window.Bokeh``).

    Timelines do not need this: each one ensures BokehJS in every page that shows it
    (:mod:`workbench.widgets.bokehjs`). It is for other ``BokehModel`` figures; ``force`` is kept
    for compatibility and has no effect, since the loader does nothing in a page that has BokehJS.
    """
    from IPython.display import display

    del force
    display(bokehjs_loader(), raw=True)
