"""Flink job pieces the tests need: a slow, checkpointable source and an exactly-once file sink.

Imported only by tests marked ``flink`` (and by Flink's Python workers, by module name).
"""

from __future__ import annotations

import base64
import pickle
import time
import uuid
from collections.abc import Sequence
from pathlib import Path

from pyflink.common import Encoder, TypeInformation, Types, WatermarkStrategy
from pyflink.datastream import (
    DataStream,
    MapFunction,
    RuntimeContext,
    StreamExecutionEnvironment,
)
from pyflink.datastream.connectors.file_system import FileSink, RollingPolicy
from pyflink.datastream.connectors.number_seq import NumberSequenceSource

from workbench.backends.flink.function import MatcherFunction
from workbench.backends.keyed import HostOutput, KeyedDriver


class SlowRecords(MapFunction):  # type: ignore[misc]
    """Index -> record, taking ``delay_s`` per record (so a job can be stopped mid-stream)."""

    def __init__(self, records: Sequence[object], delay_s: float) -> None:
        self.records = list(records)
        self.delay_s = delay_s

    def map(self, value: int) -> object:
        time.sleep(self.delay_s)
        return self.records[value]


def encode(value: tuple[int, HostOutput]) -> str:
    """One output as a line of text (base64 of its pickle)."""
    return base64.b64encode(pickle.dumps(value)).decode("ascii")


def decode(line: str) -> tuple[int, HostOutput]:
    """Inverse of :func:`encode`."""
    value: tuple[int, HostOutput] = pickle.loads(base64.b64decode(line))
    return value


def slow_source(
    env: StreamExecutionEnvironment,
    records: Sequence[object],
    delay_s: float,
    output_type: TypeInformation | None = None,
) -> DataStream:
    """A checkpointable source of ``records`` (a number sequence mapped to them), parallelism 1."""
    indices = env.from_source(
        NumberSequenceSource(0, len(records) - 1), WatermarkStrategy.no_watermarks(), "indices"
    )
    indices = indices.uid("indices").set_parallelism(1)
    kind = Types.PICKLED_BYTE_ARRAY() if output_type is None else output_type
    slow = indices.map(SlowRecords(records, delay_s), output_type=kind)
    return slow.uid("records").set_parallelism(1)


def file_sink(outputs: DataStream, directory: Path) -> None:
    """Write outputs to committed part files (exactly once with checkpoints)."""
    lines = outputs.map(encode, output_type=Types.STRING()).uid("encode")
    # Roll part files on every checkpoint, so each checkpoint (and the savepoint) commits them.
    builder = FileSink.for_row_format(str(directory), Encoder.simple_string_encoder())
    sink = builder.with_rolling_policy(RollingPolicy.on_checkpoint_rolling_policy()).build()
    lines.sink_to(sink).uid("files")


def read_committed(directory: Path) -> list[tuple[int, HostOutput]]:
    """Every output in committed part files (in-progress and pending files start with a dot)."""
    out = []
    for path in sorted(directory.rglob("*")):
        if path.is_file() and not path.name.startswith("."):
            out.extend(decode(line) for line in path.read_text(encoding="ascii").splitlines() if line)
    return out


class _WatchedState:
    """A ``ValueState`` that tells its operator which keys hold a value."""

    def __init__(self, state: object, owner: StateWatch) -> None:
        self.state = state
        self.owner = owner

    def at(self, key: str) -> None:
        self.owner.current = key
        self.state.at(key)  # type: ignore[attr-defined]

    def at_timer(self) -> str | None:
        key: str | None = self.state.at_timer()  # type: ignore[attr-defined]
        self.owner.current = key or ""
        return key

    def value(self) -> object:
        return self.state.value()  # type: ignore[attr-defined]

    def update(self, value: object) -> None:
        self.owner.live.add(self.owner.current)
        self.state.update(value)  # type: ignore[attr-defined]

    def clear(self) -> None:
        self.owner.live.discard(self.owner.current)
        self.state.clear()  # type: ignore[attr-defined]


class StateWatch(MatcherFunction):
    """The matcher operator, writing how many keys still hold state when it closes (one file per task)."""

    def __init__(
        self, hosts: Sequence[KeyedDriver], offsets: Sequence[int], *, directory: str, **options: object
    ) -> None:
        super().__init__(hosts, offsets, **options)  # type: ignore[arg-type]
        self.directory = directory
        self.live: set[str] = set()
        self.current = ""

    def open(self, runtime_context: RuntimeContext) -> None:
        super().open(runtime_context)
        self._state = _WatchedState(self._state, self)  # type: ignore[assignment]
        self.task = uuid.uuid4().hex  # why: thread mode cannot read the subtask index

    def close(self) -> None:
        Path(self.directory, f"live-{self.task}").write_text(str(len(self.live)), encoding="ascii")


def live_keys(directory: Path) -> int:
    """Keys holding state when the job ended, over all tasks."""
    return sum(int(p.read_text(encoding="ascii")) for p in directory.glob("live-*"))
