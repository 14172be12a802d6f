"""``%cep run NAME... --on DATAFRAME_OR_PATH [-o VAR] [--explain] [--timeline]``: replay events through
patterns."""

from __future__ import annotations

from argparse import Namespace
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser
from workbench.jupyter.commands.timeline import build as build_timeline
from workbench.jupyter.progress import make_progress
from workbench.session.notes import errors_note, input_notes, late_note, missing_key_note, partition_note
from workbench.session.ordering import ORDER_BY_HELP
from workbench.session.runs import dropped_note
from workbench.session.session import to_frame
from workbench.session.times import with_time_unit
from workbench.session.typecheck import input_mismatches

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["MISSING_KEY_HELP", "OUT_OF_ORDERNESS_HELP", "TIME_UNIT_HELP", "replay", "replay_args", "run"]

TIME_UNIT_HELP = "read the time column as epoch s, ms, us or ns, or ISO 8601 text (date): dates out"
MISSING_KEY_HELP = "events with no partition key value share a NULL key (default: an error naming the row)"
OUT_OF_ORDERNESS_HELP = (
    "bounded out-of-orderness: milliseconds (500) or a duration (2s, 500ms, 1.5min); default 0"
)


def _parser() -> ArgParser:
    p = ArgParser(prog="%cep run", description="Replay events (event time) through patterns.")
    p.add_argument("names", nargs="+", help="pattern names")
    p.add_argument("--on", required=True, help="a DataFrame variable, or a .csv/.jsonl/.json/.parquet file")
    p.add_argument("-o", "--out", help="store the detections DataFrame in this variable")
    p.add_argument("--time", help="time column (default: time, else t)")
    p.add_argument("--time-unit", help=TIME_UNIT_HELP)
    p.add_argument("--key", help="partition key column (default: key, or the pattern's 'partition by')")
    p.add_argument("--type", help="event type column (default: type)")
    p.add_argument("--out-of-orderness", default="0", metavar="MS|DURATION", help=OUT_OF_ORDERNESS_HELP)
    p.add_argument("--order-by", metavar="FIELD[,FIELD]", help=ORDER_BY_HELP)
    p.add_argument("--backend", default="local", help="local (default), flink or flink-sql")
    p.add_argument(
        "--timeline", action="store_true", help="also show the timeline widget of this run (%%cep timeline)"
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help="also print why each pattern's instances did or did not fire (%%cep explain NAME)",
    )
    p.add_argument(
        "--strict", action="store_true", help="stop at the first condition error (default: record, go on)"
    )
    p.add_argument("--allow-missing-key", action="store_true", help=MISSING_KEY_HELP)
    return p


def replay(
    magics: CepMagics,
    names: Sequence[str],
    source: str,
    *,
    time: str | None = None,
    time_unit: str | None = None,
    key: str | None = None,
    type_: str | None = None,
    out_of_orderness: float = 0,
    backend: str = "local",
    strict: bool = False,
    allow_missing_key: bool = False,
    order_by: str | None = None,
) -> object:
    """Load ``source``, run ``names`` over it, and return the detections DataFrame."""
    from workbench.backends import get_backend

    session = magics.session
    get_backend(backend)  # an unknown or uninstalled backend fails before the events are loaded
    data = magics.resolve(source)
    if isinstance(data, str):
        from workbench.session.inputs import read_frame

        data = read_frame(data)
    elif isinstance(data, Iterator):
        data = list(data)  # read once; each partition group loads the events again
    notes = input_notes(data, time, time_unit)
    data = with_time_unit(data, time, time_unit)
    done = session.replay(
        names,
        data,
        time=time,
        key=key,
        type=type_,
        progress=lambda total: make_progress(total, threshold=magics.progress_threshold, shell=magics.shell),
        trace=magics.trace,
        out_of_orderness=out_of_orderness,
        backend=backend,
        strict=strict,
        allow_missing_key=allow_missing_key,
        order_by=order_by,
    )
    outcome = done.outcome
    patterns = [session.get(n).pattern for n in names]
    for note in notes:
        print(f"note: {note}")
    dated = session.times.dated()
    for note in input_mismatches(patterns, done.types, done.fields, dated, type_, time, data):
        print(f"note: {note}")
    if not done.keyed:
        print("note: " + partition_note("give --key COLUMN, or write 'partition by FIELD' in the pattern"))
    if done.missing_keys:
        print("note: " + missing_key_note(done.missing_keys))
    if outcome.late:
        print(
            "note: "
            + late_note(outcome.late, out_of_orderness, "see them with %cep late", session.times.text)
        )
    if outcome.dropped:
        print("note: " + dropped_note(outcome.dropped))
    if outcome.errors:
        print("note: " + errors_note(outcome.errors, "see them with %cep errors", session.times.text))
    return to_frame(outcome.detections, session.times, session.partitions(), session.measure_names(names))


def run(magics: CepMagics, argv: Sequence[str]) -> object:
    """Replay; return the detections DataFrame, or store it with ``-o``."""
    args = _parser().parse_args(list(argv))
    names = list(dict.fromkeys(args.names))  # why: a name given twice is one pattern, run once
    frame = replay_args(magics, names, args)
    if args.explain:  # why here: the explanation reads this run's trace, as %cep explain does
        for name in names:
            print(magics.session.explain(name))
    if args.out:
        return build_timeline(magics.session, names) if args.timeline else None
    if args.timeline:
        from IPython.display import display

        display(frame)
        return build_timeline(magics.session, names)
    return frame


def replay_args(magics: CepMagics, names: Sequence[str], args: Namespace) -> object:
    """:func:`replay` with the options of a parsed ``%cep run`` or ``%%cep --on`` line; the
    detections DataFrame is also stored in ``args.out`` when that is given."""
    from workbench.session.inputs import out_of_orderness_ms

    frame = replay(
        magics,
        names,
        args.on,
        time=args.time,
        time_unit=getattr(args, "time_unit", None),
        key=args.key,
        type_=args.type,
        out_of_orderness=out_of_orderness_ms(args.out_of_orderness),
        backend=args.backend,
        strict=getattr(args, "strict", False),  # why: %%cep has no --strict
        allow_missing_key=args.allow_missing_key,
        order_by=getattr(args, "order_by", None),  # why: nor --order-by
    )
    if args.out:
        magics.store(args.out, frame)
    return frame
