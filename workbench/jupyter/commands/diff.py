"""``%cep diff OLD NEW --on DATA [-o VAR]``: two versions of a pattern over the same events."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser
from workbench.session.diff import diff_patterns

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["diff"]


def diff(magics: CepMagics, argv: Sequence[str]) -> object:
    """Print the added, removed and changed detections; return them as a DataFrame (or store it)."""
    p = ArgParser(prog="%cep diff", description="Compare two patterns' detections on the same events.")
    p.add_argument("old", help="the old version's pattern name")
    p.add_argument("new", help="the new version's pattern name")
    p.add_argument("--on", required=True, help="a DataFrame variable, or a .csv/.jsonl/.json/.parquet file")
    p.add_argument("-o", "--out", help="store the differences DataFrame in this variable")
    p.add_argument("--time", help="time column (default: time, else t)")
    p.add_argument("--key", help="partition key column (default: key, or the pattern's 'partition by')")
    p.add_argument("--type", help="event type column (default: type)")
    args = p.parse_args(list(argv))
    data = magics.resolve(args.on)
    if isinstance(data, str):
        from workbench.session.inputs import read_frame

        data = read_frame(data)
    elif isinstance(data, Iterator):
        data = list(data)  # read once: each version replays it
    result = diff_patterns(
        magics.session, args.old, args.new, data, time=args.time, key=args.key, type=args.type
    )
    print(result.text)
    if args.out:
        magics.store(args.out, result.frame)
        return None
    return result.frame
