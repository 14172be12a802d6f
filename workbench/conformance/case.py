"""The shape of a conformance case: the JSON of ``conformance/FORMAT.md`` as typed dictionaries.

The runner reads a case with :func:`json.loads` and trusts it to have this shape: a key of the
wrong type fails that case (the adapters' ``int(...)``, ``str(...)`` and the engine's own checks
say what is wrong), never the run. Keys a case may carry that no adapter reads (``source``,
``semantics_notes``, ``observed_head``, ...) are left out.
"""

from __future__ import annotations

from typing import Literal, Required, TypeAlias, TypedDict

__all__ = [
    "JSON",
    "Case",
    "ChannelSpec",
    "Detection",
    "InitiatorSpec",
    "OperatorSpec",
    "PatternSpec",
    "RawEvent",
    "StageSpec",
    "SubgroupSpec",
]

#: any JSON value.
JSON: TypeAlias = "bool | int | float | str | list[JSON] | dict[str, JSON] | None"
Number: TypeAlias = int | float
#: stage or channel ids: one, several, or none.
Ids: TypeAlias = str | list[str] | None
#: milliseconds, or Prova's text (``'3 sec'``, ``'0 minutes 500 ms'``).
Duration: TypeAlias = int | float | str
Operator: TypeAlias = Literal["and", "or"]
CountMode: TypeAlias = Literal["ignore", "record", "strict"]


class QuantifierSpec(TypedDict, total=False):
    min: int
    max: int | None
    greedy: bool
    optional: bool
    inner_contiguity: str | None
    window_ms: Number | None


class StageSpec(TypedDict, total=False):
    """One stage of a ``sequence`` pattern (``where``/``until``: a condition, or a list of any-of)."""

    name: Required[str]
    where: str | list[str] | None
    until: str | list[str] | None
    contiguity: str | None
    negated: bool
    quantifier: QuantifierSpec | None
    within_prev_ms: Number | None


class AggregatorSpec(TypedDict, total=False):
    kind: str
    key: str
    value: str
    top: int | None


class TimerSpec(TypedDict, total=False):
    delay_ms: Required[Duration]
    period_ms: Duration | None


#: One channel of a ``group`` pattern (Prova keys: ``prova.md`` section 6); the functional form
#: because one key, ``not``, is a Python keyword.
ChannelSpec = TypedDict(
    "ChannelSpec",
    {
        "id": Required[str],
        "type": str | None,
        "match": dict[str, JSON],
        "where": str | None,
        "verb": str | None,
        "not": bool,
        "stop": bool,
        "paused": bool,
        "optional": bool,
        "stop_ids": Ids,
        "pause_ids": Ids,
        "resume_ids": Ids,
        "after": Ids,
        "count": int | str | list[int | str] | None,
        "count_min": int,
        "count_max": int,
        "count_mode": CountMode,
        "size": int | list[int] | None,
        "size_reset": int | None,
        "aggregator": AggregatorSpec | None,
        "timer": TimerSpec | None,
        "timeout_ms": Duration | None,
        "vars": dict[str, JSON],
        "binds": dict[str, str],
        "on_match": str | None,
        "on_violation": str | None,
        "group_result": str | None,
        "counts": str | bool | None,
    },
    total=False,
)


class ExitSpec(TypedDict, total=False):
    count: int | None
    size: int | None
    counts: bool | None


class SubgroupSpec(TypedDict, total=False):
    channels: Required[list[ChannelSpec]]
    operator: Operator
    timeout_ms: Duration | None
    timeout_channel: bool
    exit: ExitSpec | None
    group_where: str | None
    counts: bool


class InitiatorSpec(TypedDict, total=False):
    type: str | None
    verb: str | None
    match: dict[str, JSON]
    where: str | None
    bind: dict[str, str]
    mult: bool
    state: dict[str, JSON]


class InstanceSpec(TypedDict, total=False):
    key: Required[str]
    created_t: Number
    vars: dict[str, JSON]


class PatternSpec(TypedDict, total=False):
    """A case's ``pattern``: ``kind`` says which of the keys below apply."""

    kind: str
    # kind "sequence"
    stages: list[StageSpec]
    within_ms: Number | None
    skip: str | None
    skip_throw_on_miss: bool
    # kinds "group" and "filter"
    operator: Operator
    type: str | None
    where: str | None
    verb: str | None
    count: int
    timeout_ms: Duration | None
    timeout_channel: bool
    initiator: InitiatorSpec | None
    template_channel: InitiatorSpec | None
    channels: list[ChannelSpec]
    subgroups: dict[str, SubgroupSpec] | None
    exit: ExitSpec | None
    group_where: str | None
    constants: dict[str, JSON] | None
    instances: list[InstanceSpec] | None
    environment: str | None


class RawEvent(TypedDict, total=False):
    t: Required[Number]
    type: Required[str]
    key: JSON
    fields: dict[str, JSON] | None


class Watermark(TypedDict):
    after_event: int
    wm: Number


class OperatorSpec(TypedDict, total=False):
    """Flink's event-time ``CepOperator``: watermarks by arrival position, an optional sort key."""

    mode: str
    late: str
    watermarks: list[Watermark]
    comparator: str | None
    final_watermark: str


class Detection(TypedDict, total=False):
    """An expected detection (``expected``, ``expected_timeouts``, ``expected_subgroup`` items)."""

    events: list[int]
    negated: list[JSON]
    t_emit: Number
    kind: str
    by_stage: dict[str, list[int]]
    initiator: int | None
    exit: str | None
    group: str | None
    instance: str
    tree: list[JSON]
    aggregate: dict[str, JSON]


class Case(TypedDict, total=False):
    """One case file."""

    id: str
    pattern: PatternSpec
    events: list[RawEvent]
    events_generator: str
    expected: list[Detection]
    expected_generator: str
    expected_timeouts: list[Detection]
    expected_subgroup: list[Detection]
    expected_late: list[int]
    expected_idealised: JSON
    expect_error: str
    final_advance_ms: Number | None
    order_matters: bool
    operator: OperatorSpec
    horizon_t: Number | None
    assertions: dict[str, JSON]
