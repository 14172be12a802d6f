"""The headless command line: ``workbench run``, ``check``, ``explain`` and ``diff``.

::

    workbench check PATTERNS.cep
    workbench explain PATTERNS.cep NAME --on EVENTS [--key VALUE] [--instance N] [--all] [--event SEQ]
                      [INPUT OPTIONS, the key column as --key-column COL]
    workbench diff PATTERNS.cep OLD NEW --on EVENTS [-o OUT.csv] [INPUT OPTIONS]
    workbench run PATTERNS.cep EVENTS.csv|.jsonl|.json|.parquet [INPUT OPTIONS]
                  [--pattern NAME ...] [-o OUT.csv|.jsonl|.parquet] [--late LATE.csv]
                  [--backend local|flink|flink-sql] [--quiet] [--strict] [--errors ERRORS.csv]
    workbench run PATTERNS.cep --on EVENTS ...     (the same; --on names the events explicitly)

    INPUT OPTIONS (how run, explain and diff read the events, alike):
                  [--time COL] [--key COL | --key-column COL] [--type COL] [--time-unit s|ms|us|ns|date]
                  [--out-of-orderness MS|DURATION] [--order-by FIELD[,FIELD]] [--allow-missing-key]

``check`` compiles the file and prints one line per pattern (exit status 1 with the caret message on
an error). ``run`` replays the events in event time through every pattern of the file (or the ones
named with ``--pattern``), shows a progress bar on stderr for long inputs, and writes the detections
(one row per detection, :func:`workbench.results.detections_to_frame`) to ``-o`` or prints them.
Late events (too far out of order to match) are always reported on stderr, and written to
``--late``. ``--out-of-orderness`` is milliseconds (``500``) or a duration as the language writes it
(``2s``, ``500ms``, ``1.5min``). ``--key`` is the partition key column in ``run`` and ``diff`` but the
key value to explain in ``explain``; ``--key-column`` is the column in all three. ``--backend`` picks
the execution backend (:func:`workbench.backends.get_backend`).
A condition that fails on an event (a runtime error) does not stop the run: the event does not
match, every distinct error is printed on stderr with its first event and count (and written to
``--errors``), and the exit status is 3. ``--strict`` stops at the first one instead (status 1).
Output files (``-o``, ``--late``, ``--errors``) are checked before the replay: a known suffix and an
existing folder. Pattern files are UTF-8 (a byte-order mark is allowed). A time column of text is
read as ISO 8601 dates. A row with no value in the partition key column is an error naming the row;
``--allow-missing-key`` lets such rows share a NULL key (with a note).
Exit status: 0 on success, 1 for a pattern or input error, 2 for bad usage, 3 when the run
finished with condition errors.
Times come out as the input gave them: dates when the time column held datetimes (Parquet), or when
``--time-unit`` says how to read it (epoch numbers in a unit, or ISO 8601 text); else numbers.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workbench.errors import CepError, CepSyntaxError
from workbench.language.errors import CepCompileError

if TYPE_CHECKING:
    import pandas as pd

    from workbench.session.session import CepSession, Replay

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="workbench", description="CEP Workbench from the command line.")
    sub = p.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="compile a pattern file and list its patterns")
    check.add_argument("patterns", help="a .cep file")
    run = sub.add_parser("run", help="replay events through the patterns of a file")
    run.add_argument("patterns", help="a .cep file")
    run.add_argument("events", nargs="?", help="events: .csv, .jsonl, .json or .parquet")
    run.add_argument("--on", dest="on", help="events (alternative to the positional argument)")
    run.add_argument("-o", "--out", help="write detections here (.csv, .jsonl, .json, .parquet)")
    run.add_argument("--late", help="write the late (unmatched) events here (.csv, .jsonl, .json, .parquet)")
    _input_arguments(run)
    run.add_argument("--pattern", action="append", help="run only this pattern (repeatable)")
    run.add_argument(
        "--backend",
        default="local",
        help="execution backend: local (default), flink or flink-sql (needs the PyFlink environment)",
    )
    run.add_argument("-q", "--quiet", action="store_true", help="no progress bar, no summary")
    run.add_argument(
        "--strict", action="store_true", help="stop at the first condition error (default: record, go on)"
    )
    run.add_argument("--errors", help="write the condition errors here (.csv, .jsonl, .json, .parquet)")
    _debug_parsers(sub)
    ex = sub.add_parser("examples", help="generate inputs that fire, almost fire and time out a pattern")
    ex.add_argument("patterns", help="a .cep file")
    ex.add_argument("--pattern", action="append", help="only this pattern (repeatable)")
    ex.add_argument("--count", type=int, default=3, help="examples of each kind (default 3)")
    ex.add_argument("--max-events", type=int, default=6, help="longest input tried (default 6)")
    ex.add_argument("-o", "--out", help="write the examples' events here (.csv, .jsonl, .json, .parquet)")
    return p


def _input_arguments(p: argparse.ArgumentParser, *, key_is_a_value: bool = False) -> None:
    """How to read the events: ``run``, ``explain`` and ``diff`` all take these, so the three read a
    file alike. The partition key column is ``--key-column`` everywhere, and ``--key`` too unless
    the command's ``--key`` is a key value (``explain --key ann``)."""
    p.add_argument("--time", metavar="COLUMN", help="time column (default: time, else t)")
    p.add_argument(
        "--time-unit",
        metavar="s|ms|us|ns|date",
        help="the time column holds epoch numbers in this unit, or ISO 8601 text (date): show dates",
    )
    names = ("--key-column",) if key_is_a_value else ("--key", "--key-column")
    p.add_argument(
        *names,
        dest="key_column",
        metavar="COLUMN",
        help="partition key COLUMN (default: key, or the pattern's 'partition by')",
    )
    p.add_argument("--type", metavar="COLUMN", help="event type column (default: type)")
    p.add_argument(
        "--out-of-orderness",
        default="0",
        metavar="MS|DURATION",
        help="bounded out-of-orderness: milliseconds (500) or a duration (2s, 500ms, 1.5min); default 0",
    )
    p.add_argument(
        "--order-by",
        metavar="FIELD[,FIELD]",
        help="order equal-time events by these fields (default: arrival)",
    )
    p.add_argument(
        "--allow-missing-key",
        action="store_true",
        help="events with no partition key value share a NULL key (default: an error naming the row)",
    )


def _debug_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``workbench explain`` and ``workbench diff`` (they replay with tracing on)."""
    explain = sub.add_parser("explain", help="why a pattern's instances did or did not fire")
    explain.add_argument("patterns", help="a .cep file")
    explain.add_argument("name", help="the pattern to explain")
    explain.add_argument("--on", required=True, help="events: .csv, .jsonl, .json or .parquet")
    explain.add_argument(
        "--key",
        metavar="VALUE",
        help="only the instances of this partition key VALUE (its text, a Python literal such as "
        "('ann', 5), or a date); the key column is --key-column",
    )
    _input_arguments(explain, key_is_a_value=True)
    explain.add_argument("--instance", type=int, help="the full story of this instance")
    explain.add_argument("--all", action="store_true", help="after the summary, one line per instance")
    explain.add_argument("--event", type=int, metavar="SEQ", help="what event #SEQ did in every instance")
    diff = sub.add_parser("diff", help="two versions of a pattern on the same events")
    diff.add_argument("patterns", help="a .cep file defining both versions")
    diff.add_argument("old", help="the old version's name")
    diff.add_argument("new", help="the new version's name")
    diff.add_argument("--on", required=True, help="events: .csv, .jsonl, .json or .parquet")
    diff.add_argument("-o", "--out", help="write the differences here (.csv, .jsonl, .json, .parquet)")
    _input_arguments(diff)


def _read(path: str) -> str:
    """A pattern file's text: UTF-8, with or without a byte-order mark."""
    try:
        return Path(path).read_text(encoding="utf-8-sig")
    except OSError as err:
        msg = f"cannot read {path}: {err.strerror or err}"
        raise CepError(msg) from None
    except UnicodeDecodeError as err:
        before = err.object[: err.start]
        line, column = before.count(b"\n") + 1, err.start - before.rfind(b"\n")
        msg = (
            f"cannot read {path}: line {line}, column {column}: byte 0x{err.object[err.start]:02x} is not "
            "UTF-8; save the file as UTF-8"
        )
        raise CepError(msg) from None


@dataclass(frozen=True)
class _Inputs:
    """How ``run``, ``explain`` and ``diff`` read their events (the options of :func:`_input_arguments`)."""

    time: str | None
    time_unit: str | None
    key: str | None  # the partition key column
    type: str | None
    out_of_orderness: int | float  # milliseconds
    order_by: str | None
    allow_missing_key: bool

    @classmethod
    def of(cls, args: argparse.Namespace) -> _Inputs:
        """The parsed options; a bad ``--out-of-orderness`` is a :class:`CepError` naming it."""
        from workbench.session.inputs import out_of_orderness_ms

        return cls(
            time=args.time,
            time_unit=args.time_unit,
            key=args.key_column,
            type=args.type,
            out_of_orderness=out_of_orderness_ms(args.out_of_orderness),
            order_by=args.order_by,
            allow_missing_key=args.allow_missing_key,
        )

    def replay_options(self) -> dict[str, Any]:
        """The keywords of :meth:`CepSession.replay` (and ``diff_patterns``) that say how to read."""
        return {
            "time": self.time,
            "key": self.key,
            "type": self.type,
            "out_of_orderness": self.out_of_orderness,
            "order_by": self.order_by,
            "allow_missing_key": self.allow_missing_key,
        }

    def read(self, source: str) -> object:
        """The events of ``source``, their times read as ``--time-unit`` says (or ISO text as dates)."""
        from workbench.session.inputs import read_frame
        from workbench.session.times import with_time_unit

        return with_time_unit(read_frame(source), self.time, self.time_unit)


def _check_outputs(args: argparse.Namespace, *outputs: tuple[str, str | None]) -> None:
    """Refuse an output file (option, path) that cannot be written (suffix, folder), or that is an
    input or another output, before any event is replayed."""
    for option, out in outputs:
        _check_output(option, out)
    _check_apart(args, outputs)


def _check_apart(args: argparse.Namespace, outputs: tuple[tuple[str, str | None], ...]) -> None:
    """Refuse an output file that is an input file (it would be overwritten: the data lost) or
    another output (one would replace the other), compared as resolved paths."""
    inputs = (("the patterns", getattr(args, "patterns", None)), ("the events", getattr(args, "on", None)),
              ("the events", getattr(args, "events", None)))  # fmt: skip
    taken: dict[object, str] = {}
    for what, path in inputs:
        if path is not None:
            taken.setdefault(_file_id(path), f"{what} file")
    for option, out in outputs:
        if out is None:
            continue
        where = _file_id(out)
        if where in taken:
            msg = f"{option} {out} is {taken[where]}: write it to another file"
            raise CepError(msg)
        taken[where] = f"the {option} file"


def _file_id(path: str) -> object:
    """What names one file: its device and inode when it exists (a hard link, another spelling on a
    case-insensitive disk), else its resolved path."""
    p = Path(path).resolve()
    try:
        st = p.stat()
    except OSError:
        return p
    return (st.st_dev, st.st_ino)


def _check_output(option: str, out: str | None) -> None:
    """Refuse one output file that cannot be written: an unknown suffix, a missing folder, a folder."""
    from workbench.session.writing import SUFFIXES, check_writable

    if out is None:
        return
    path = Path(out)
    if path.suffix.lower() not in SUFFIXES:
        kind = path.suffix or "suffix-less"
        msg = f"{option} {out}: cannot write a {kind} file; use {', '.join(SUFFIXES)}"
        raise CepError(msg)
    folder = path.parent
    if not folder.is_dir():
        msg = f"{option} {out}: no such folder {str(folder)!r}"
        raise CepError(msg)
    if path.is_dir():
        msg = f"{option} {out}: is a folder, not a file"
        raise CepError(msg)
    check_writable(out)  # why now: a missing Parquet engine fails before the replay, not after it


def _check(args: argparse.Namespace) -> int:
    from workbench.language import compile_text
    from workbench.session.notes import describe

    defs = compile_text(_read(args.patterns))
    for d in defs:
        print(f"{d.pattern.name}: {describe(d.pattern)}")
    print(f"{args.patterns}: {len(defs)} pattern(s), OK")
    return 0


def _examples(args: argparse.Namespace) -> int:
    import pandas as pd

    from workbench.language import compile_text
    from workbench.session.examples import generate_examples

    if args.count < 1 or args.max_events < 1:
        msg = "--count and --max-events must be at least 1"
        raise CepError(msg)
    defs = compile_text(_read(args.patterns))
    chosen = [d for d in defs if not args.pattern or d.pattern.name in args.pattern]
    missing = sorted(set(args.pattern or ()) - {d.pattern.name for d in defs})
    if missing:
        msg = f"no pattern {', '.join(map(repr, missing))} in {args.patterns}"
        raise CepError(msg)
    _check_outputs(args, ("-o/--out", args.out))  # why now: before the search for examples, not after it
    frames = []
    for d in chosen:
        found = generate_examples(d.pattern, count=args.count, max_events=args.max_events)
        print(found.text())
        frames.append(found.frame().assign(pattern=d.pattern.name))
    if args.out:
        _write(pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(), args.out)
    return 0


def _write(frame: pd.DataFrame, out: str) -> None:
    from workbench.session.writing import write_frame

    for note in write_frame(frame, out):
        print(f"warning: {note}", file=sys.stderr)


def _run(args: argparse.Namespace) -> int:
    from workbench.session.progress import TextProgress
    from workbench.session.session import CepSession, to_frame

    source = args.on or args.events
    if source is None:
        msg = "give the events file (workbench run PATTERNS.cep EVENTS.csv)"
        raise CepError(msg)
    from workbench.backends import get_backend

    inputs = _Inputs.of(args)  # a bad option fails now, not after reading the events
    outputs = (("-o/--out", args.out), ("--late", args.late), ("--errors", args.errors))
    _check_outputs(args, *outputs)  # a bad output path fails now, not after the whole replay
    get_backend(args.backend)  # an unknown or uninstalled backend fails before the events are read
    session = CepSession()
    defs = session.define(_read(args.patterns))
    names = args.pattern or [d.pattern.name for d in defs]
    if not names:
        msg = f"{args.patterns} defines no pattern"
        raise CepError(msg)
    data = inputs.read(source)  # the replay keeps its dates
    done = session.replay(
        names,
        data,
        progress=lambda total: None if args.quiet or total < 10_000 else TextProgress(),
        trace=False,
        backend=args.backend,
        strict=args.strict,
        **inputs.replay_options(),
    )
    outcome = done.outcome
    frame = to_frame(outcome.detections, session.times, session.partitions(), session.measure_names(names))
    if args.out:
        _write(frame, args.out)
    elif not frame.empty:
        import pandas as pd

        with pd.option_context("display.max_rows", None, "display.width", 200):
            print(frame.drop(columns=["extra"], errors="ignore").to_string(index=False))
    _notes(session, names, done, inputs, data)
    _report(args, inputs, session, done)
    return 3 if outcome.errors else 0


def _notes(session: CepSession, names: Sequence[str], done: Replay, inputs: _Inputs, data: object) -> None:
    """What the input lacked, on stderr: types and fields no pattern meets, keys, time units, dates
    compared with text."""
    from workbench.session.notes import input_notes, missing_key_note, partition_note
    from workbench.session.typecheck import input_mismatches

    patterns = [session.get(n).pattern for n in names]
    for note in [
        *input_notes(data, inputs.time, inputs.time_unit),
        *input_mismatches(
            patterns, done.types, done.fields, session.times.dated(), inputs.type, inputs.time, data
        ),
    ]:
        print(f"warning: {note}", file=sys.stderr)
    if not done.keyed:
        hint = "give --key COLUMN, or write 'partition by FIELD' in the pattern"
        print(f"note: {partition_note(hint)}", file=sys.stderr)
    if done.missing_keys:
        print(f"note: {missing_key_note(done.missing_keys)}", file=sys.stderr)


def _report(args: argparse.Namespace, inputs: _Inputs, session: CepSession, done: Replay) -> None:
    """Write the late events and condition errors where asked; warn and summarise on stderr."""
    from workbench.session.notes import late_note
    from workbench.session.runs import dropped_note

    outcome, n_events, times = done.outcome, done.rows, session.times
    if args.late:
        _write(session.late_frame(), args.late)  # the input's fields as columns, its dates as dates
    if outcome.late and not args.late:  # never silent, even with --quiet
        note = late_note(
            outcome.late, inputs.out_of_orderness, "write them to a file with --late FILE", times.text
        )
        print(f"warning: {note}", file=sys.stderr)
    if args.errors:
        _write(session.errors_frame(), args.errors)
    if outcome.dropped:  # never silent, even with --quiet
        print(f"warning: {dropped_note(outcome.dropped)}", file=sys.stderr)
    for fault in outcome.errors:  # never silent, even with --quiet
        print(f"error in condition: {fault.describe(times.text)}", file=sys.stderr)
    if not args.quiet:
        late = ""
        if outcome.late:
            late = f", {len(outcome.late)} late" + (f" -> {args.late}" if args.late else "")
        failed = ""
        if outcome.errors:
            count = sum(f.count for f in outcome.errors)
            failed = f", {len(outcome.errors)} condition error(s) on {count} event(s)"
        where = f" -> {args.out}" if args.out else ""
        summary = f"{n_events} events, {len(outcome.detections)} detection(s){late}{failed}{where}"
        print(summary, file=sys.stderr)


def _debug(args: argparse.Namespace) -> int:
    """``workbench explain`` / ``workbench diff``: print the explanation or the differences."""
    from workbench.session.session import CepSession

    inputs = _Inputs.of(args)
    session = CepSession()
    session.define(_read(args.patterns))
    _check_outputs(args, ("-o/--out", getattr(args, "out", None)))  # why now: before the replays, not after
    data = inputs.read(args.on)  # why: as `run` reads it (ISO text times as dates, --time-unit)
    if args.command == "diff":
        from workbench.session.diff import diff_patterns

        result = diff_patterns(session, args.old, args.new, data, **inputs.replay_options())
        print(result.text)
        _late_warning(session, inputs)
        if args.out:
            _write(result.frame.astype({"old_events": str, "new_events": str}), args.out)
        return 0
    from workbench.session.explain import explain_event

    session.replay([args.name], data, trace=True, **inputs.replay_options())
    _late_warning(session, inputs)
    if args.event is not None:
        print(explain_event(session, args.name, args.event))
    else:
        print(session.explain(args.name, key=args.key, instance=args.instance, details=args.all))
    return 0


def _late_warning(session: CepSession, inputs: _Inputs) -> None:
    """Say on stderr that the last replay had late events: explain and diff do not see them either."""
    from workbench.session.notes import late_note

    if session.late:
        note = late_note(
            session.late, inputs.out_of_orderness, "workbench run --late FILE writes them", session.times.text
        )
        print(f"warning: {note}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``workbench`` console script; returns the exit status."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "check":
            return _check(args)
        if args.command in ("explain", "diff"):
            return _debug(args)
        if args.command == "examples":
            return _examples(args)
        return _run(args)
    except CepError as err:
        where = ""
        span = getattr(err, "span", None)
        if isinstance(err, CepSyntaxError | CepCompileError) and span is not None:
            where = f"{args.patterns}:{span.line}:{span.column}: "  # file:line:column, as compilers say
        print(f"{where}error: {type(err).__name__}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
