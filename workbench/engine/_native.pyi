from collections.abc import Callable, Hashable
from typing import Any

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
def bind_loop_run(cls: type) -> None: ...

SUM_OR_AVG: int
COUNT: int
OTHER: int
AVG_WITH: int
GET_WITH: int
VALUE_WITH: int
GET: int

class Node: ...

class Constant(Node):
    def __init__(self, constant: object) -> None: ...

class Probe(Node):
    def __init__(self, index: int) -> None: ...

class Both(Node):
    def __init__(self, left: Node, right: Node) -> None: ...

class Either(Node):
    def __init__(self, left: Node, right: Node) -> None: ...

class Negation(Node):
    def __init__(self, inner: Node) -> None: ...

class Compare(Node):
    def __init__(self, op: int, left: Node, right: Node) -> None: ...

class Arithmetic(Node):
    def __init__(self, function: Callable[[Any, Any], object], left: Node, right: Node) -> None: ...

class Unary(Node):
    def __init__(self, op: str, operand: Node) -> None: ...

class IsNull(Node):
    def __init__(self, operand: Node, negated: bool) -> None: ...

class Aggregate(Node):
    def __init__(
        self,
        index: int,
        how: int,
        probe: int,
        value_with: Callable[..., object],
        clean: Callable[[object], object],
    ) -> None: ...

class Condition:
    def __init__(self, root: Node, fallback: Callable[[Any, Event], object]) -> None: ...

class LoopStep:
    def __init__(self, **parts: Any) -> None: ...
    def __call__(self, state: Any, e: Event, ctx: Any) -> None: ...
    def advance(self, state: Any, t: int | float, ctx: Any) -> None: ...
    def on_timer(self, state: Any, t: int | float, token: object, ctx: Any) -> None: ...

class LoopFeed:
    def __init__(self, **parts: Any) -> None: ...
    def __call__(self, engine: Any, it: Any, out: list[Detection]) -> tuple[Event, int] | None: ...

def bind_types(state: type, event: type, ctx: type, sum_: type, avg: type) -> None: ...
def bind_timers(sink_schedule: Callable[..., None], heappush: Callable[..., None]) -> None: ...
def bind_key_state(cls: type) -> None: ...
