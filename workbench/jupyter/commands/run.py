"""``%cep run NAME... --on DATAFRAME_OR_PATH [-o VAR]``: replay events through patterns."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.jupyter.commands import ArgParser
from workbench.jupyter.inputs import load_events
from workbench.jupyter.progress import make_progress
from workbench.jupyter.session import to_frame

__all__ = ["replay", "run"]


def _parser() -> ArgParser:
    p = ArgParser(prog="%cep run", description="Replay events (event time) through patterns.")
    p.add_argument("names", nargs="+", help="pattern names")
    p.add_argument("--on", required=True, help="a DataFrame variable, or a .csv/.jsonl/.json/.parquet file")
    p.add_argument("-o", "--out", help="store the detections DataFrame in this variable")
    p.add_argument("--time", help="time column (default: time, else t)")
    p.add_argument("--key", help="partition key column (default: key, or the pattern's 'partition by')")
    p.add_argument("--type", help="event type column (default: type)")
    p.add_argument("--out-of-orderness", type=float, default=0, help="bounded out-of-orderness (ms)")
    return p


def replay(
    magics: Any,
    names: Sequence[str],
    source: str,
    *,
    time: str | None = None,
    key: str | None = None,
    type_: str | None = None,
    out_of_orderness: float = 0,
) -> Any:
    """Load ``source``, run ``names`` over it, and return the detections DataFrame."""
    session = magics.session
    if key is None:
        partitions = {session.get(n).partition for n in names} - {None}
        if len(partitions) == 1:
            key = partitions.pop()
    events = load_events(magics.resolve(source), time=time, key=key, type=type_)
    progress = make_progress(len(events), threshold=magics.progress_threshold, shell=magics.shell)
    outcome = session.run(
        list(names), events, progress=progress, trace=magics.trace, out_of_orderness=out_of_orderness
    )
    if outcome.late:
        print(f"note: {len(outcome.late)} late event(s) were not matched (see the engine's late list)")
    return to_frame(outcome.detections)


def run(magics: Any, argv: Sequence[str]) -> Any:
    """Replay; return the detections DataFrame, or store it with ``-o``."""
    args = _parser().parse_args(list(argv))
    frame = replay(
        magics,
        args.names,
        args.on,
        time=args.time,
        key=args.key,
        type_=args.type,
        out_of_orderness=args.out_of_orderness,
    )
    if args.out:
        magics.store(args.out, frame)
        return None
    return frame
