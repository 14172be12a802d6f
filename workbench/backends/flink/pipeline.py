"""Build the Flink dataflow: timestamps and watermarks, ``key_by``, the matcher operator."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from pyflink.common import Duration, Types, WatermarkStrategy
from pyflink.datastream import DataStream

from workbench.backends.flink.function import MatcherFunction, RecordTimestamps, record_key
from workbench.backends.keyed import KeyedDriver

__all__ = ["detect", "watermark_strategy"]


def watermark_strategy(out_of_orderness: int | float) -> WatermarkStrategy:
    """Bounded out-of-orderness watermarks over the records' event time.

    Flink's watermark is ``max timestamp - bound - 1``; rounding the bound up keeps the watermark at
    or below the engine's, so Flink never declares an event late that the engine would accept. An
    infinite bound (the engine's "only explicit watermarks") means no watermarks until the end of
    the input.
    """
    if not math.isfinite(out_of_orderness):
        return WatermarkStrategy.no_watermarks().with_timestamp_assigner(RecordTimestamps())
    bound = Duration.of_millis(math.ceil(out_of_orderness))
    return WatermarkStrategy.for_bounded_out_of_orderness(bound).with_timestamp_assigner(RecordTimestamps())


def detect(
    records: DataStream,
    hosts: Sequence[KeyedDriver],
    offsets: Sequence[int],
    *,
    out_of_orderness: int | float = 0,
    source_parallelism: int = 1,
    parallelism: int | None = None,
    name: str = "cep",
    durable: bool = True,
    grouped: bool = False,
    eager: bool = False,
    hold: int = 0,
    function: Callable[..., MatcherFunction] = MatcherFunction,
) -> DataStream:
    """Run the hosts' matchers over a stream of :data:`~workbench.backends.flink.function.FlinkRecord`.

    Timestamps and watermarks are assigned right after the source, at the source's parallelism
    (``source_parallelism``), so that each key's events reach the operator in input order; the
    operator runs at ``parallelism`` (default: the environment's). PyFlink's ``key_by`` computes
    the key in a Python operator of its own, at the environment's parallelism: a job whose
    operator must see each key's events in input order (``eager``) runs in an environment of
    parallelism 1 and gives the operator its ``parallelism`` here, so that the key step is fed by
    one channel and feeds the operator by one channel per key (Flink keeps each channel's order).

    Operators get stable uids (``name`` prefixed) so a savepoint maps back onto them.
    ``durable=False`` keeps the key states in the operator's memory only (no pickling; for a job
    that takes no checkpoint or savepoint). ``grouped``: one ``(run, [HostOutput, ...])`` record
    per operator call (flatten with :func:`~workbench.backends.flink.function.outputs_of`).
    ``eager``: process each on-time event at once (see ``MatcherFunction``'s ``bound``); it needs
    each key's events in input order. ``hold``: with ``grouped``, outputs gather in the operator
    up to this many before they go out (see ``MatcherFunction``; only for a finite job without
    checkpoints). ``function`` makes the operator from ``(hosts, offsets,
    bound=, durable=, grouped=)`` (a subclass may observe it). Returns the stream of
    ``(run, HostOutput)`` records.
    """
    stamped = records.assign_timestamps_and_watermarks(watermark_strategy(out_of_orderness))
    stamped = stamped.name(f"{name}-watermarks").uid(f"{name}-watermarks").set_parallelism(source_parallelism)
    keyed = stamped.key_by(record_key, key_type=Types.STRING())
    bound = out_of_orderness if eager else None
    more = {"hold": hold} if hold else {}  # why: a ``function`` that observes need not know it
    operator = function(hosts, offsets, bound=bound, durable=durable, grouped=grouped, **more)
    out = keyed.process(operator, output_type=Types.PICKLED_BYTE_ARRAY())
    if parallelism is not None:
        out = out.set_parallelism(parallelism)
    return out.name(f"{name}-matchers").uid(f"{name}-matchers")
