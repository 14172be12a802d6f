"""``%cep examples NAME [--count N] [--max-events N] [--play N] [-o VAR]``: generated inputs that
fire the pattern, almost fire it (each with why not) and time out, as DataFrames."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["examples"]


def _parser() -> ArgParser:
    p = ArgParser(
        prog="%cep examples",
        description="Generate the shortest inputs that fire a pattern, almost fire it, and time out.",
    )
    p.add_argument("name")
    p.add_argument("--count", type=int, default=3, help="examples of each kind (default 3)")
    p.add_argument("--max-events", type=int, default=6, help="longest input tried (default 6)")
    p.add_argument("--play", type=int, metavar="N", help="show example N on the timeline instead")
    p.add_argument("-o", "--out", help="store the Examples object in this variable")
    return p


def examples(magics: CepMagics, argv: Sequence[str]) -> object:
    """Print the examples, one line each with its why; return their DataFrame (or a timeline)."""
    from workbench.session.examples import examples_of

    args = _parser().parse_args(list(argv))
    if args.count < 1 or args.max_events < 1:
        p = _parser()
        p.error("--count and --max-events must be at least 1")
    found = examples_of(magics.session, args.name, count=args.count, max_events=args.max_events)
    if args.out:
        magics.store(args.out, found)
    if args.play is not None:
        from workbench.widgets import Timeline

        return Timeline.from_run(found.replay(args.play), title=f"{args.name}: example {args.play}")
    print(found.text())
    return None if args.out else found.frame()
