"""The Flink backends at scale: job start-up and steady-state events/s, reported separately.

``python -m benchmarks.flink --backend flink-sql --n 1000000 --parallelism 2 --patterns P1,P2,P4``
(from ``.venv-flink``) runs each pattern as one job twice: over the first ``--startup-rows`` rows
(the job's fixed cost: JVM-side planning, deployment, task start, end-of-job commit) and over the
whole file. The steady-state rate is the extra rows over the extra time, so start-up is not part of
it. ``flink-sql`` reads the CSV with Flink's own filesystem connector and writes the matches to
files (:mod:`workbench.backends.flink.edge`); ``flink`` runs the engine in a PyFlink
``KeyedProcessFunction`` (the Python path) over the events read by the client. ``--csv`` may name
a Parquet file (``flink-sql`` only; staged as a typed CSV copy without Flink's Parquet jar).
``--patterns`` also takes the reaction groups ``G1``, ``G2``. On ``flink-sql`` a pattern that
``MATCH_RECOGNIZE`` cannot express (``followed by any``, the ``no_skip`` loops P3 and P5, the
groups) is not run: a ``#`` line on stderr says why.
``client_peak_mb`` is this process's peak RSS (the client; the JVM is a separate process).

One line per pattern::

    pattern=P1 events=1000000 matches=8754 checksum=112707054 engine=flink-sql-p2 startup_s=6.1
        seconds=14.2 steady_events_per_s=123000 client_peak_mb=310 reference=ok

``reference`` compares counts and checksums with :data:`benchmarks.reference.REFERENCE` where it
has the size (``ok``/``MISMATCH``), else ``n/a``.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchmarks.checksum import Checksum
from benchmarks.patterns import GROUP_TEXT, benchmark_patterns, named
from benchmarks.reference import REFERENCE
from benchmarks.workload import WorkloadSpec, write_csv

__all__ = ["FlinkTiming", "head_rows", "main", "native_names", "native_refusal", "time_pattern"]


@dataclass(frozen=True, slots=True)
class FlinkTiming:
    """One pattern's figures on one backend and parallelism."""

    pattern: str
    events: int
    matches: int
    checksum: int
    engine: str
    startup_s: float
    seconds: float
    client_peak_mb: float = 0.0

    @property
    def steady_events_per_s(self) -> float:
        """Rows beyond the start-up run, over the time beyond it."""
        return self.events / max(self.seconds - self.startup_s, 1e-9)

    def line(self) -> str:
        """The result line (see the module docstring)."""
        expected = REFERENCE.get(self.pattern, {}).get(self.events)
        verdict = (
            "n/a" if expected is None else ("ok" if expected == (self.matches, self.checksum) else "MISMATCH")
        )
        return (
            f"pattern={self.pattern} events={self.events} matches={self.matches} checksum={self.checksum} "
            f"engine={self.engine} startup_s={self.startup_s:.1f} seconds={self.seconds:.1f} "
            f"steady_events_per_s={self.steady_events_per_s:.0f} client_peak_mb={self.client_peak_mb:.0f} "
            f"reference={verdict}"
        )


def _rows(path: Path) -> int:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq  # type: ignore[import-not-found]  # comes with the flink extra

        return int(pq.ParquetFile(path).metadata.num_rows)
    with open(path, "rb") as f:
        return sum(1 for _ in f) - 1


def head_rows(path: Path, rows: int, out: Path) -> Path:
    """The file's first ``rows`` rows (CSV with its header, or Parquet) as a file of their own at ``out``."""
    if path.suffix == ".parquet":  # why: the start-up run reads the same format as the whole run
        import pyarrow as pa
        import pyarrow.parquet as pq

        head = pa.Table.from_batches([next(pq.ParquetFile(path).iter_batches(rows))])
        pq.write_table(head, out.with_suffix(".parquet"))
        return out.with_suffix(".parquet")
    with open(path, encoding="utf-8") as src, open(out, "w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i > rows:
                break
            dst.write(line)
    return out


def _run_sql(name: str, csv: Path, parallelism: int, work: Path) -> tuple[float, list[tuple[int, ...]]]:
    from workbench.backends.flink.edge import NativeJob, infer_source, read_detections

    out = work / f"out-{name}-{csv.stem}-p{parallelism}"
    shutil.rmtree(out, ignore_errors=True)
    start = time.perf_counter()
    job = NativeJob([benchmark_patterns()[name]], infer_source(csv), out)
    found = read_detections(job, job.run(parallelism, SQL_OPTIONS))
    seconds = time.perf_counter() - start
    return seconds, list(found["seqs"])


#: Flink options of the native path (``--config`` with ``--backend flink-sql``), set by :func:`main`.
SQL_OPTIONS: dict[str, str] = {}


#: Python-path options (``--execution-mode``, ``--config``), set by :func:`main`.
PYTHON_OPTIONS: dict[str, str] = {}


def _run_python(name: str, csv: Path, parallelism: int, work: Path) -> tuple[float, list[tuple[int, ...]]]:
    from benchmarks.run import read_events
    from workbench.backends.flink import run_matchers

    events = read_events(csv)
    options = dict(PYTHON_OPTIONS)
    mode = options.pop("python.execution-mode", "thread")
    start = time.perf_counter()
    result = run_matchers(named(name), events, parallelism=parallelism, execution_mode=mode, config=options)
    seconds = time.perf_counter() - start
    return seconds, [d.seqs for d in result.detections if d.kind == "match"]


def native_refusal(name: str) -> str | None:
    """Why the benchmark pattern ``name`` cannot run on flink-sql (``None``: it can)."""
    from workbench.backends.flink.sql_query import sql_reasons

    if name in GROUP_TEXT:
        return "a reaction group (MATCH_RECOGNIZE runs sequence patterns)"
    return "; ".join(sql_reasons(benchmark_patterns()[name])) or None


def native_names(names: Sequence[str]) -> list[str]:
    """The patterns among ``names`` that flink-sql runs; each other one is named on stderr, with why."""
    out = []
    for name in names:
        why = native_refusal(name)
        if why is None:
            out.append(name)
        else:
            print(f"# {name}: not run on flink-sql: {why} (--backend flink runs it)", file=sys.stderr)
    return out


def time_pattern(
    name: str, csv: Path, backend: str, parallelism: int, startup_rows: int, *, warm_up: bool = False
) -> FlinkTiming:
    """Time one pattern: a start-up run over the file's head, then the whole file.

    ``warm_up`` first runs the head once untimed: the first job of a process also starts the JVM
    gateway and loads Flink's classes, which later jobs (and a long-running notebook) do not pay.
    """
    run = _run_sql if backend == "flink-sql" else _run_python
    with tempfile.TemporaryDirectory(prefix="cep-flink-bench-") as tmp:
        work = Path(tmp)
        head = head_rows(csv, startup_rows, work / "head.csv")
        if warm_up:
            run(name, head, parallelism, work)
        startup_s, _ = run(name, head, parallelism, work)
        seconds, matches = run(name, csv, parallelism, work)
    checksum = Checksum()
    for seqs in matches:
        checksum.add(seqs)
    # Why RUSAGE_SELF: the client (this process) only; the JVM gateway is a child process
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    engine = f"{backend}-p{parallelism}"
    return FlinkTiming(
        name, _rows(csv), checksum.matches, checksum.value, engine, startup_s, seconds, peak_mb
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Command line; see the module docstring."""
    ap = argparse.ArgumentParser(prog="python -m benchmarks.flink", description=__doc__.split("\n")[0])
    ap.add_argument("--backend", choices=("flink", "flink-sql"), default="flink-sql")
    ap.add_argument(
        "--csv",
        type=Path,
        help="workload CSV, or Parquet (flink-sql; default: benchmarks/data/w<N>.csv, made if missing)",
    )
    ap.add_argument("--n", type=int, default=200_000, help="workload size when --csv is not given")
    ap.add_argument("--parallelism", type=int, nargs="+", default=[1])
    ap.add_argument("--patterns", default="P1,P2,P4", help="comma-separated benchmark patterns")
    ap.add_argument("--startup-rows", type=int, default=2_000, help="rows of the start-up run")
    ap.add_argument("--execution-mode", choices=("thread", "process"), default="thread", help="Python path")
    ap.add_argument(
        "--config", action="append", default=[], metavar="KEY=VALUE", help="Flink option (either path)"
    )
    args = ap.parse_args(argv)
    PYTHON_OPTIONS.clear()
    SQL_OPTIONS.clear()
    PYTHON_OPTIONS["python.execution-mode"] = args.execution_mode
    for item in args.config:
        key, sep, value = item.partition("=")
        if not sep:
            ap.error(f"--config takes KEY=VALUE, got {item!r}")
        (SQL_OPTIONS if args.backend == "flink-sql" else PYTHON_OPTIONS)[key] = value
    csv = args.csv
    if csv is None:
        csv = Path(__file__).parent / "data" / f"w{args.n // 1000}k.csv"
        if not csv.exists():
            csv.parent.mkdir(parents=True, exist_ok=True)
            write_csv(WorkloadSpec(n=args.n), csv)
    known = [*benchmark_patterns(), *GROUP_TEXT]
    names = [p.strip() for p in args.patterns.split(",") if p.strip()]
    for name in names:
        if name not in known:
            ap.error(f"unknown pattern {name!r} (known: {', '.join(known)})")
    if any(p < 1 for p in args.parallelism):
        ap.error("--parallelism must be >= 1")
    if csv.suffix == ".parquet" and args.backend != "flink-sql":
        ap.error("a Parquet file runs on --backend flink-sql only")
    if args.backend == "flink-sql":
        names = native_names(names)
    status, first = 0, True
    for parallelism in args.parallelism:
        for name in names:
            timing = time_pattern(name, csv, args.backend, parallelism, args.startup_rows, warm_up=first)
            first = False
            print(timing.line(), flush=True)
            status |= "MISMATCH" in timing.line()
    return status


if __name__ == "__main__":
    sys.exit(main())
