"""The CEP engine: pure Python, standard library only, deterministic.

Events (:mod:`.events`), event time (:mod:`.clock`), the per-key host every driver runs matchers
through (:mod:`.host`), the keyed runtime (:mod:`.runtime`), the records it emits
(:mod:`.detection`), the matcher contract (:mod:`.matcher`) and the restricted condition
evaluator (:mod:`.expr`). Pattern families plug in as matchers.
"""

from workbench.engine.detection import Detection, Reaction, TraceKind, TraceRecord
from workbench.engine.events import Event, make_event
from workbench.engine.matcher import Context, Matcher, Pattern
from workbench.engine.runtime import Engine, RunResult, run

__all__ = [
    "Context",
    "Detection",
    "Engine",
    "Event",
    "Matcher",
    "Pattern",
    "Reaction",
    "RunResult",
    "TraceKind",
    "TraceRecord",
    "make_event",
    "run",
]
