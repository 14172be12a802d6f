"""``%cep feed``: push live events through patterns in processing time.

``%cep feed NAME... --start`` starts a processing-time engine (the wall clock stamps each event, or
the callable ``--clock VAR`` holds);
``%cep feed --from VAR`` pushes the events of an iterable (mappings or events) and fires due timers,
returning the detections they caused; ``%cep feed --tick`` only fires timers; ``%cep feed --stop``
flushes and closes the engine. The feed runs through the session as a replay does
(:meth:`~workbench.session.session.CepSession.start_feed`): condition errors show in
``%cep errors``, and ``--start --strict`` stops at the first one. ``%cep matches NAME`` shows
everything detected so far.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, cast

from workbench.engine.timekeeping import Clock
from workbench.errors import CepError
from workbench.jupyter.commands import ArgParser
from workbench.session.runs import dropped_note
from workbench.session.session import to_frame

if TYPE_CHECKING:
    from workbench.jupyter.magics import CepMagics

__all__ = ["feed"]


def _parser() -> ArgParser:
    p = ArgParser(prog="%cep feed", description="Live events in processing time.")
    p.add_argument("names", nargs="*", help="patterns to run (with --start)")
    mode = p.add_mutually_exclusive_group(required=True)
    mode.add_argument("--start", action="store_true", help="start a live engine on NAME...")
    mode.add_argument("--from", dest="source", help="a variable holding an iterable of events to push")
    mode.add_argument("--tick", action="store_true", help="fire the timers the clock has passed")
    mode.add_argument("--stop", action="store_true", help="flush and stop the live engine")
    p.add_argument("-o", "--out", help="store the detections DataFrame in this variable")
    p.add_argument("--strict", action="store_true", help="with --start: stop at the first condition error")
    p.add_argument(
        "--clock",
        help="with --start: a variable holding the clock, a callable returning milliseconds "
        "(default: the wall clock); a simulation or a test brings its own",
    )
    return p


def feed(magics: CepMagics, argv: Sequence[str]) -> object:
    """Run the feed action; return the detections it caused as a DataFrame (``None`` on --start)."""
    args = _parser().parse_args(list(argv))
    session = magics.session
    if args.start:
        if not args.names:
            msg = "%cep feed --start needs at least one pattern name"
            raise CepError(msg)
        clock: Clock | None = None
        if args.clock is not None:
            value = magics.resolve(args.clock)
            if not callable(value):
                msg = f"--clock needs a variable holding a callable returning ms, got {args.clock!r}"
                raise CepError(msg)
            clock = cast("Clock", value)  # why: its readings are checked as they are taken
        session.start_feed(args.names, strict=args.strict, clock=clock)
        by = "" if clock is None else f", stamped by {args.clock}()"
        print(f"live feed started on {', '.join(args.names)} (processing time{by})")
        return None
    if args.names:
        msg = "pattern names go with --start only"
        raise CepError(msg)
    for name in ("strict", "clock"):
        if getattr(args, name) not in (None, False):
            msg = f"--{name} goes with --start only"
            raise CepError(msg)
    engine = session.live
    before = engine.stats["dropped"] if engine is not None else 0
    if args.stop:
        if engine is None:  # why a note, not an error: stopping twice is harmless, but say so
            print("note: no live feed is running (start one with %cep feed NAME... --start)")
        detections = session.stop_feed()
    elif args.tick:
        detections = session.feed(())
    else:
        items = magics.resolve(args.source)
        if isinstance(items, str) or not isinstance(items, Iterable):
            msg = f"--from needs a variable holding an iterable of events, got {args.source!r}"
            raise CepError(msg)
        detections = session.feed(items)
    if engine is not None and engine.stats["dropped"] > before:  # why: caps dropped state on this call
        print("note: " + dropped_note(engine.stats["dropped"] - before))
    frame = to_frame(detections, magics.session.live_times, magics.session.partitions())
    if args.out:
        magics.store(args.out, frame)
        return None
    return frame
