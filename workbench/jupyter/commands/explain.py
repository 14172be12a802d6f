"""``%cep explain NAME [--key KEY] [--instance N] [--all] [--event SEQ]``: why instances did or did not
fire; ``--event`` tells what one event did in every instance it met (taken, or rejected and why)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from workbench.jupyter.commands import ArgParser
from workbench.session.explain import explain_event

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["explain"]


def explain(magics: CepMagics, argv: Sequence[str]) -> None:
    """Print the explanation from the trace of the last run."""
    p = ArgParser(prog="%cep explain", description="Explain instances from the engine trace.")
    p.add_argument("name")
    p.add_argument(
        "--key", help="only this partition key (its text, a Python literal such as ('ann', 5), or a date)"
    )
    p.add_argument("--instance", type=int, help="the full timeline of this instance")
    p.add_argument("--all", action="store_true", help="after the summary, one line per instance")
    p.add_argument("--event", type=int, metavar="SEQ", help="what event #SEQ did in every instance it met")
    args = p.parse_args(list(argv))
    key = args.key
    if args.event is not None:
        print(explain_event(magics.session, args.name, args.event))
        return
    print(magics.session.explain(args.name, key=key, instance=args.instance, details=args.all))
