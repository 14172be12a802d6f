from collections.abc import Callable, Hashable

from workbench.engine.detection import Detection
from workbench.engine.events import Event

NewMatch = Callable[[str, Hashable, int, str, int | float, tuple[Event, ...], tuple[str, ...]], Detection]

def bind_detection(cls: type[Detection], no_measures: object) -> NewMatch: ...
def new_match(
    pattern: str,
    key: Hashable,
    instance: int,
    kind: str,
    time: int | float,
    events: tuple[Event, ...],
    channels: tuple[str, ...],
) -> Detection: ...
