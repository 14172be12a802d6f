"""Run the PATTERNS.md benchmark: ``python -m benchmarks.run --csv FILE [--patterns P1,P2] [--repeat N]``.

For each pattern it prints exactly one line to stdout::

    pattern=P1 events=N matches=M seconds=S events_per_s=R checksum=C engine=workbench peak_mb=X parse_s=Y

``seconds`` is the median over the repeats of feeding every event to a fresh engine and flushing it
(parsing excluded; ``parse_s`` is the time to read the CSV into events). ``checksum`` is
``PATTERNS.md``'s order-independent checksum of the matches. ``peak_mb`` is the peak resident memory
of the process that ran the pattern: each pattern runs in a forked child process so that one pattern's
memory does not count for the next; it includes the interpreter and the parsed events (the baseline is
printed on stderr). When the file is the reference workload (by SHA-256) the counts and checksums are
compared with ``REFERENCE_COUNTS.md`` on stderr, and the exit status is 1 if any differs.

``--shards N`` splits the keys over N engines (identical results); with ``--processes P`` the shards
run in P worker processes (the time then includes partitioning and moving events and detections
between processes). ``--one-pass`` also runs all the chosen patterns in ONE engine over one pass of
the stream (the splitter routes each event to the patterns that can use it) and compares the results.
``--generate`` writes the reference workload to ``benchmarks/data/w200k.csv``
(``--n`` for another size) and, without ``--csv``, runs on it.

``--backend flink|flink-sql --parallelism P`` (PyFlink: run from ``.venv-flink``) times each pattern
as ``python -m benchmarks.flink`` does: one Flink job on a local mini-cluster over the file's first
2,000 rows (the job's start-up), then one over the whole file; the line (``engine=flink-sql-pP``)
reports ``startup_s`` and ``steady_events_per_s`` (the extra rows over the extra time) separately,
and ``client_peak_mb`` for the Python client only. ``flink-sql`` reads the file (CSV or Parquet) at
the cluster's edge; ``flink`` is the Python path, the events read by the client.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import hashlib
import math
import multiprocessing
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchmarks.checksum import Checksum
from benchmarks.reference import PATTERNS, REFERENCE, SHA256
from benchmarks.workload import HEADER, WorkloadSpec, write_csv
from workbench.engine import native
from workbench.engine.detection import Detection
from workbench.engine.events import Event
from workbench.engine.expr import parse_expr
from workbench.engine.matcher import Pattern
from workbench.engine.nfa.measures import Measure
from workbench.engine.nfa.pattern import SequencePattern
from workbench.engine.runtime import Engine
from workbench.engine.sharding import ShardedEngine, run_sharded
from workbench.errors import CepError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Result", "format_line", "main", "read_events", "read_frame", "replay_frame", "run_pattern"]

DATA_DIR = Path(__file__).resolve().parent / "data"

try:
    import resource

    def peak_rss_mb() -> float:
        """Peak resident set size of this process in MB (Linux reports KB)."""
        kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return kb / 1024 if sys.platform != "darwin" else kb / (1024 * 1024)

except ImportError:  # pragma: no cover - Windows

    def peak_rss_mb() -> float:
        """Not available on this platform."""
        return math.nan


@dataclass(frozen=True, slots=True)
class Result:
    """One pattern's measurements."""

    pattern: str
    events: int
    matches: int
    checksum: int
    seconds: float
    peak_mb: float
    parse_s: float
    all_seconds: tuple[float, ...] = ()
    engine: str = "workbench"
    mode: str = "stream"


def format_line(r: Result) -> str:
    """The one-line report (format fixed by the benchmark harness)."""
    eps = r.events / r.seconds if r.seconds > 0 else math.inf
    return (
        f"pattern={r.pattern} events={r.events} matches={r.matches} seconds={r.seconds:.3f} "
        f"events_per_s={eps:.0f} checksum={r.checksum} engine={r.engine} peak_mb={r.peak_mb:.1f} "
        f"parse_s={r.parse_s:.3f} mode={r.mode}"
    )


def read_events(path: str | Path, limit: int | None = None) -> list[Event]:
    """Parse the workload CSV into events (``seq`` = row index, fields ``price``, ``qty``, ``ip``)."""
    out: list[Event] = []
    append = out.append
    with open(path, encoding="utf-8") as f:
        header = f.readline()
        if header != HEADER:
            msg = f"{path}: expected the header {HEADER.strip()!r}, got {header.strip()!r}"
            raise ValueError(msg)
        for i, line in enumerate(f):
            if limit is not None and i >= limit:
                break
            parts = line.rstrip("\n").split(",")
            if len(parts) != 6:
                msg = f"{path}: row {i}: expected 6 columns, got {len(parts)}"
                raise ValueError(msg)
            t, key, typ, price, qty, ip = parts
            append(Event(typ, int(t), key, {"price": float(price), "qty": int(qty), "ip": ip}, i))
    return out


def read_frame(path: str | Path, limit: int | None = None) -> pd.DataFrame:
    """Read the workload CSV into a DataFrame, as a notebook user holds it before ``%cep run``."""
    import pandas as pd

    frame = pd.read_csv(path, nrows=limit)
    if list(frame.columns) != HEADER.strip().split(","):
        msg = f"{path}: expected the columns {HEADER.strip()!r}, got {list(frame.columns)}"
        raise ValueError(msg)
    return frame


def replay_frame(pattern: Pattern, frame: pd.DataFrame) -> pd.DataFrame:
    """The user's replay path: a DataFrame in, the detections DataFrame out (what ``%cep run`` does)."""
    from workbench.backends.columnar.replay import replay_frame as replay
    from workbench.results import detections_to_frame

    result = replay([pattern], frame, time_column="t", key_column="key")
    return detections_to_frame(result.detections)


def _replay(pattern: Pattern, frame: pd.DataFrame) -> tuple[float, Checksum]:
    start = time.perf_counter()
    out = replay_frame(pattern, frame)
    elapsed = time.perf_counter() - start
    checksum = Checksum()
    for kind, seqs in zip(out["kind"].tolist(), out["events"].tolist(), strict=True):
        if kind == "match":
            checksum.add(seqs)
    return elapsed, checksum


CHUNK_ROWS = 1_000_000


def replay_file_chunked(name: str, pattern: Pattern, path: Path, total: int) -> Result:
    """Replay a large CSV in slices of :data:`CHUNK_ROWS` rows through one engine (bounded memory).

    Each slice is read with pandas, replayed (:func:`workbench.backends.columnar.replay.replay_chunks`)
    and its detections turned into a DataFrame, then dropped; a progress line goes to stderr.
    ``seconds`` is the whole run minus the reading (``parse_s``).
    """
    import pandas as pd

    from workbench.backends.columnar.replay import replay_chunks
    from workbench.results import detections_to_frame

    read_s = 0.0
    done = 0

    def slices() -> Iterator[pd.DataFrame]:
        nonlocal read_s, done
        reader = pd.read_csv(path, chunksize=CHUNK_ROWS)
        while True:
            start = time.perf_counter()
            frame = next(reader, None)
            read_s += time.perf_counter() - start
            if frame is None:
                return
            yield frame
            done += len(frame)
            print(
                f"\r# {name}: {done:,}/{total:,} rows ({100 * done / max(total, 1):.0f}%)",
                end="",
                file=sys.stderr,
            )

    checksum = Checksum()
    start = time.perf_counter()
    for got in replay_chunks([pattern], slices(), time_column="t", key_column="key"):
        out = detections_to_frame(got)
        for kind, seqs in zip(out["kind"].tolist(), out["events"].tolist(), strict=True):
            if kind == "match":
                checksum.add(seqs)
    elapsed = time.perf_counter() - start - read_s
    print(file=sys.stderr)
    return Result(
        name,
        done,
        checksum.matches,
        checksum.value,
        elapsed,
        peak_rss_mb(),
        read_s,
        (elapsed,),
        mode="replay",
    )


def _feed(
    pattern: Pattern,
    events: Sequence[Event],
    shards: int,
    processes: int,
    worker_job: tuple[str, str],
    live: bool = False,
) -> tuple[float, Checksum]:
    detections: Sequence[Detection]
    if live:  # why: the live path as a caller writes it, one process() call per arriving event
        engine1 = Engine([pattern])
        process = engine1.process
        start = time.perf_counter()
        for e in events:
            process(e)
        engine1.finish()
        elapsed = time.perf_counter() - start
        detections = engine1.detections
    elif processes > 0:
        start = time.perf_counter()
        detections, _ = run_sharded(
            "benchmarks.patterns:named", events, shards, processes=processes, factory_args=worker_job
        )
        elapsed = time.perf_counter() - start
    else:
        engine: Engine | ShardedEngine = (
            Engine([pattern]) if shards <= 1 else ShardedEngine([pattern], shards)
        )
        start = time.perf_counter()
        engine.process_many(events)
        engine.finish()
        elapsed = time.perf_counter() - start
        detections = engine.detections
    checksum = Checksum()
    for d in detections:
        if d.kind == "match":
            checksum.add(d.seqs)
    return elapsed, checksum


def run_pattern(
    name: str,
    pattern: Pattern,
    events: Sequence[Event],
    *,
    repeat: int = 1,
    parse_s: float = 0.0,
    shards: int = 1,
    processes: int = 0,
    source: str = "auto",
    frame: pd.DataFrame | None = None,
    live: bool = False,
) -> Result:
    """Run one pattern ``repeat`` times over the events (``processes > 0``: shards in worker processes).

    With a ``frame``, each repeat is a replay (:func:`replay_frame`) of it instead, and ``events`` is
    not used. ``live``: one ``Engine.process`` call per event instead of ``process_many``.
    """
    times: list[float] = []
    first: Checksum | None = None
    for _ in range(max(1, repeat)):
        gc.collect()
        if frame is not None:
            elapsed, checksum = _replay(pattern, frame)
        else:
            elapsed, checksum = _feed(pattern, events, shards, processes, (name, source), live)
        times.append(elapsed)
        if first is None:
            first = checksum
        elif (checksum.matches, checksum.value) != (first.matches, first.value):
            msg = f"{name}: repeats disagree ({first.matches} vs {checksum.matches} matches)"
            raise RuntimeError(msg)
    assert first is not None
    return Result(
        name,
        len(frame) if frame is not None else len(events),
        first.matches,
        first.value,
        statistics.median(times),
        peak_rss_mb(),
        parse_s,
        tuple(times),
        "workbench",
        "replay" if frame is not None else "live" if live else "stream",
    )


def _child(conn: Any, job: Callable[[], Result]) -> None:
    try:
        conn.send(job())
    except BaseException as err:  # report to the parent, whatever it is
        conn.send(err)
    finally:
        conn.close()


def run_isolated(job: Callable[[], Result]) -> Result:
    """Run ``job`` in a forked child (its own peak memory); in-process where fork is unavailable."""
    if "fork" not in multiprocessing.get_all_start_methods():
        return job()
    ctx = multiprocessing.get_context("fork")
    parent, child = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(child, job))
    proc.start()
    child.close()
    try:
        got = parent.recv()
    except EOFError:
        proc.join()
        got = RuntimeError(f"benchmark child process died (exit code {proc.exitcode})")
    proc.join()
    if isinstance(got, BaseException):
        raise got
    assert isinstance(got, Result)
    return got


def _file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def reference_rows(path: Path, events: int) -> int | None:
    """The reference column that applies: the file is a reference workload and ``events`` a known prefix."""
    digest = _file_sha256(path)
    if digest not in SHA256.values():
        return None
    file_rows = next(n for n, d in SHA256.items() if d == digest)
    if events in (20_000, 200_000, 1_000_000) and events <= file_rows:
        return events
    return None


def generate(n: int, out: Path | None = None) -> Path:
    """Write the reference workload with ``n`` rows (skipped when the file is already right)."""
    path = out or DATA_DIR / f"w{n // 1000}k.csv"
    if path.exists() and n in SHA256 and _file_sha256(path) == SHA256[n]:
        print(f"# {path} is up to date", file=sys.stderr)
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    write_csv(WorkloadSpec(n=n), path)
    print(f"# wrote {path} ({n} rows) in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    return path


def _patterns(source: str) -> dict[str, Pattern]:
    """The eight patterns in the chosen form, then the reaction groups (``G1``, ``G2``; by name only)."""
    from benchmarks import patterns

    table: dict[str, Pattern]
    if source == "api":
        table = dict(patterns.api_patterns())
    elif source == "language":
        table = dict(patterns.language_patterns())
    else:
        table = dict(patterns.benchmark_patterns())
    table.update(patterns.group_patterns())
    return table


@dataclass(frozen=True)
class Loaded:
    """The workload as a mode reads it: a DataFrame (replay) or parsed events, and the parse time."""

    frame: pd.DataFrame | None
    events: list[Event]
    parse_s: float

    @classmethod
    def read(cls, path: Path, limit: int | None, mode: str) -> Loaded:
        """Read ``path`` (its first ``limit`` rows); the input is frozen out of the collector's scans."""
        start = time.perf_counter()
        frame = read_frame(path, limit) if mode == "replay" else None
        events = read_events(path, limit) if frame is None else []
        parse_s = time.perf_counter() - start
        rows = len(frame) if frame is not None else len(events)
        gc.collect()
        gc.freeze()  # the parsed input lives for the whole run: keep the collector from rescanning it
        print(
            f"# {rows} rows read in {parse_s:.3f} s ({mode} mode, {native.describe()} core); "
            f"baseline rss {peak_rss_mb():.1f} MB",
            file=sys.stderr,
        )
        return cls(frame, events, parse_s)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", type=Path, help="workload CSV (t,key,type,price,qty,ip)")
    ap.add_argument(
        "--patterns",
        default=",".join(PATTERNS),
        help="comma-separated (default: the eight of PATTERNS.md; also G1, G2: reaction groups)",
    )
    ap.add_argument("--repeat", type=int, default=1, help="runs per pattern; the median is reported")
    ap.add_argument("--limit", type=int, default=None, help="use only the first N rows")
    ap.add_argument("--generate", action="store_true", help="write the workload to benchmarks/data/")
    ap.add_argument(
        "--n",
        type=int,
        default=None,
        help="rows to generate (default 200000 with --generate); without --csv, generate and run on them",
    )
    ap.add_argument("--shards", type=int, default=1, help="run on N key-hash shards (same results)")
    ap.add_argument("--processes", type=int, default=0, help="run the shards in P worker processes")
    ap.add_argument("--source", choices=("auto", "language", "api"), default="auto", help="pattern form")
    ap.add_argument("--in-process", action="store_true", help="do not fork a child per pattern")
    ap.add_argument("--one-pass", action="store_true", help="also run all patterns in one engine, one pass")
    ap.add_argument(
        "--backend", choices=("local", "flink", "flink-sql"), default="local", help="where the patterns run"
    )
    ap.add_argument("--parallelism", type=int, default=1, help="Flink job parallelism (--backend flink)")
    ap.add_argument(
        "--mode",
        choices=("stream", "live", "replay"),
        default="stream",
        help=(
            "stream: parsed events fed in order through process_many; live: one process() call per "
            "event; replay: a DataFrame in, a detections DataFrame out"
        ),
    )
    ap.add_argument(
        "--measure",
        action="append",
        default=[],
        metavar="NAME=EXPR",
        help="add a measure to every pattern (repeatable; EXPR as FORMAT.md writes it, e.g. "
        "\"n=len(matched('a'))\"): the detections and checksums stay the same",
    )
    args = ap.parse_args(argv)
    if args.mode != "stream" and (
        args.backend != "local" or args.shards > 1 or args.processes > 0 or args.one_pass
    ):
        ap.error(f"--mode {args.mode} runs locally: no --backend, --shards, --processes or --one-pass")
    if args.backend != "local":
        if args.shards > 1 or args.processes > 0 or args.one_pass:
            ap.error(f"--backend {args.backend} takes no --shards, --processes or --one-pass")
        if args.parallelism < 1:
            ap.error(f"--parallelism must be >= 1, got {args.parallelism}")
        from workbench.backends import BackendError, get_backend

        try:
            get_backend(args.backend, parallelism=args.parallelism)
        except BackendError as err:
            ap.error(f"{err} (run the benchmark with .venv-flink/bin/python)")

    csv_path: Path | None = args.csv
    if args.generate or (args.n is not None and csv_path is None):
        generated = generate(args.n or 200_000)
        csv_path = csv_path or generated
    if csv_path is None:
        ap.error("give --csv FILE or --generate")
    names = [p.strip() for p in args.patterns.split(",") if p.strip()]
    available = _patterns(args.source)
    if args.measure:
        try:
            available = {name: _measured(p, args.measure) for name, p in available.items()}
        except CepError as err:
            ap.error(f"--measure: {err}")
    unknown = [n for n in names if n not in available]
    if unknown:
        ap.error(f"unknown pattern(s) {unknown}; known: {', '.join(available)}")

    if args.mode == "replay" and args.limit is None and args.n is not None and args.n >= CHUNK_ROWS:
        return _chunked(names, available, csv_path, args.n, args.in_process)
    if args.backend != "local":
        if args.source != "auto":
            ap.error(f"--backend {args.backend} runs the benchmark patterns (no --source)")
        if csv_path.suffix == ".parquet" and args.backend != "flink-sql":
            ap.error("a Parquet file runs on --backend flink-sql only")
        return _on_flink(names, csv_path, args.backend, args.parallelism, args.limit, args.repeat)
    # Why the children read the file themselves: a child forked after the parent built the events
    # shares their pages copy-on-write, and its first writes to them (reference counts) made runs
    # up to 2x slower on the project's machine; no user's process works on objects shared that way.
    isolate = not args.in_process and "fork" in multiprocessing.get_all_start_methods()
    loaded = None if isolate else Loaded.read(csv_path, args.limit, args.mode)
    ref_rows: int | None = None

    status = 0
    results: dict[str, Result] = {}
    for name in names:
        pattern = available[name]

        def job(name: str = name, pattern: Pattern = pattern) -> Result:
            data = loaded if loaded is not None else Loaded.read(csv_path, args.limit, args.mode)
            return run_pattern(
                name,
                pattern,
                data.events,
                repeat=args.repeat,
                parse_s=data.parse_s,
                shards=args.shards,
                processes=args.processes,
                source=args.source,
                frame=data.frame,
                live=args.mode == "live",
            )

        result = run_isolated(job) if isolate else job()
        results[name] = result
        print(format_line(result), flush=True)
        if name == names[0]:
            ref_rows = reference_rows(csv_path, result.events)
        if ref_rows is not None and name in REFERENCE:  # (the groups have no peer reference)
            want = REFERENCE[name][ref_rows]
            got = (result.matches, result.checksum)
            verdict = "equal to" if got == want else "DIFFERENT from"
            print(f"# {name}: matches/checksum {got} {verdict} REFERENCE_COUNTS.md {want}", file=sys.stderr)
            if got != want:
                status = 1
    if args.one_pass and len(names) > 1:
        events = (loaded or Loaded.read(csv_path, args.limit, "stream")).events
        status = max(status, one_pass([available[n] for n in names], events, results))
    return status


def _measured(pattern: Pattern, measures: Sequence[str]) -> Pattern:
    """``pattern`` with the measures ``NAME=EXPR`` added (a sequence pattern; any other as it is)."""
    if not isinstance(pattern, SequencePattern):
        return pattern
    added = []
    for text in measures:
        name, sep, expr = text.partition("=")
        if not sep:
            msg = f"{text!r} is not NAME=EXPR"
            raise CepError(msg)
        added.append(Measure(name.strip(), parse_expr(expr.strip())))
    return dataclasses.replace(pattern, measures=(*pattern.measures, *added))


def _on_flink(
    names: Sequence[str], path: Path, backend: str, parallelism: int, limit: int | None, repeat: int
) -> int:
    """``--backend flink|flink-sql``: each pattern timed as ``python -m benchmarks.flink`` times it.

    A start-up job over the file's first rows, then the whole file: the line reports the job's
    start-up (``startup_s``) and the steady-state rate (``steady_events_per_s``, the extra rows
    over the extra time) separately; ``flink-sql`` reads the file at the cluster's edge and skips,
    saying why on stderr, a pattern that ``MATCH_RECOGNIZE`` cannot express. With
    ``--repeat`` the run with the median steady rate is printed. The exit status is 1 when a
    count or checksum differs from the reference (where it has the file's size).
    """
    import tempfile

    from benchmarks.flink import FlinkTiming, head_rows, native_names, time_pattern

    if backend == "flink-sql":
        names = native_names(names)
    status, first = 0, True
    with tempfile.TemporaryDirectory(prefix="cep-flink-head-") as tmp:
        if limit is not None:  # why a file: the jobs read files (flink-sql at the cluster's edge)
            path = head_rows(path, limit, Path(tmp) / f"{path.stem}-head{limit}.csv")
        for name in names:
            timings: list[FlinkTiming] = []
            for _ in range(max(1, repeat)):
                timings.append(time_pattern(name, path, backend, parallelism, STARTUP_ROWS, warm_up=first))
                first = False
            timings.sort(key=lambda t: t.steady_events_per_s)
            line = timings[len(timings) // 2].line()
            print(line, flush=True)
            status |= "reference=MISMATCH" in line
    return status


#: rows of the start-up job that ``--backend`` runs before the whole file (its fixed cost)
STARTUP_ROWS = 2_000


def _chunked(
    names: Sequence[str], available: dict[str, Pattern], path: Path, rows: int, in_process: bool
) -> int:
    """``--mode replay`` on a generated file larger than one slice: each pattern replayed in slices."""
    ref_rows = reference_rows(path, rows)
    status = 0
    for name in names:

        def job(name: str = name) -> Result:
            return replay_file_chunked(name, available[name], path, rows)

        result = job() if in_process else run_isolated(job)
        print(format_line(result), flush=True)
        if ref_rows is not None and name in REFERENCE:  # (the groups have no peer reference)
            want, got = REFERENCE[name][ref_rows], (result.matches, result.checksum)
            print(
                f"# {name}: matches/checksum {got} {'equal to' if got == want else 'DIFFERENT from'} "
                f"REFERENCE_COUNTS.md {want}",
                file=sys.stderr,
            )
            status = max(status, int(got != want))
    return status


def one_pass(patterns: Sequence[Pattern], events: Sequence[Event], separate: dict[str, Result]) -> int:
    """All patterns in ONE engine over one pass of the stream; compare with the separate runs."""
    engine = Engine(patterns)
    gc.collect()
    start = time.perf_counter()
    engine.process_many(events)  # why: the separate runs' path (the fused loop), so the sums compare
    engine.finish()
    elapsed = time.perf_counter() - start
    sums: dict[str, Checksum] = {}
    for d in engine.detections:
        if d.kind == "match":
            sums.setdefault(d.pattern, Checksum()).add(d.seqs)
    status = 0
    for name, r in separate.items():
        c = sums.get(name, Checksum())
        if (c.matches, c.value) != (r.matches, r.checksum):
            print(
                f"# one pass: {name} gave {(c.matches, c.value)}, separately {(r.matches, r.checksum)}",
                file=sys.stderr,
            )
            status = 1
    total = sum(r.seconds for r in separate.values())
    print(
        f"# one pass, {len(patterns)} patterns in one engine: {elapsed:.3f} s "
        f"({len(events) / elapsed:.0f} events/s); separate runs sum to {total:.3f} s; "
        f"results {'equal' if status == 0 else 'DIFFERENT'}",
        file=sys.stderr,
    )
    return status


if __name__ == "__main__":
    sys.exit(main())
