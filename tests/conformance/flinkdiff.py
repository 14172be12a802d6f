"""Random sequence patterns run by Flink CEP's own NFA and by this engine, compared.

``python -m tests.conformance.flinkdiff --cases 500 --seed 1`` draws random patterns (stages with
every contiguity, negations, quantifiers with inner contiguity, optional, greedy, ``until``,
conditions on the event and iterative ones on a stage's events so far, the pattern's window, a
stage's previous-to-current window, a quantifier's window, the five skip strategies, with and
without ``throwExceptionOnMiss``) and random event streams (equal times too), runs them through
Flink 2.3.0's NFA (``FlinkNfaOracle.java``, compiled against the jars in ``--flink-lib``, default
pyflink's ``lib``) the way Flink's NFA test harness does, writes each as a conformance case
(FORMAT.md) whose expectations are Flink's output, and runs it with
:func:`workbench.conformance.sequences.run_case`.
Cases that differ are written to ``--out`` (one JSON file each) and listed; the exit status is
1 when any differs.

Flink is the oracle, so a pattern Flink refuses, or a run Flink fails on purpose (a skip that
misses with ``throwExceptionOnMiss``), must be refused or fail here too (``expect_error``); a case
on which Flink itself fails (a NullPointerException in its compiler) has no expectation.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from workbench.conformance.runner import RunOptions
from workbench.conformance.sequences import run_case

HERE = Path(__file__).resolve().parent
NAMES = "abcd"
END_OF_INPUT = 9223372036854775807  # Long.MAX_VALUE, Flink's final watermark


@dataclass(frozen=True, slots=True)
class Drawn:
    """One random case: the conformance case without expectations, and its oracle text."""

    case: dict[str, Any]
    text: str


def _clause(rng: random.Random, stage: int) -> tuple[str, str]:
    """A condition clause of stage ``stage`` as (oracle text, expression)."""
    name = rng.choice(NAMES)
    roll = rng.random()
    if roll < 0.55:
        return name, f"e.name == '{name}'"
    op = rng.choice(("<", "<=", ">", ">="))
    if roll < 0.85:
        value = rng.randint(1, 8)
        return f"{name},{op},{value}", f"(e.name == '{name}' and e.price {op} {value})"
    # an iterative condition: the prices a stage has taken so far (this stage's or an earlier one's)
    of = rng.randint(0, stage)
    include = of == stage and rng.random() < 0.7
    value = rng.randint(2, 16)
    total = f"sum(x.price for x in matched('s{of}'))" + (" + e.price" if include else "")
    return f"{name},sum,s{of},{int(include)},{op},{value}", f"(e.name == '{name}' and {total} {op} {value})"


def _condition(rng: random.Random, stage: int, anything: bool = True) -> tuple[str, str | None]:
    """Oracle text and expression; ``anything``: may be no condition at all (``*``, ``None``)."""
    if anything and rng.random() < 0.05:
        return "*", None
    clauses = [_clause(rng, stage) for _ in range(1 if rng.random() < 0.75 else 2)]
    return "|".join(c[0] for c in clauses), " or ".join(c[1] for c in clauses)


def _stage(rng: random.Random, i: int) -> tuple[dict[str, Any], str]:
    name = f"s{i}"
    where_text, where = _condition(rng, i)
    if i == 0:
        contiguity, negated = "begin", False
    else:
        contiguity = rng.choice(
            ("next", "followedBy", "followedBy", "followedByAny", "notNext", "notFollowedBy")
        )
        negated = contiguity.startswith("not")
    lo, hi, optional, greedy, inner, until_text, until = 1, 1, False, False, "relaxed", "-", None
    if not negated and rng.random() < 0.45:
        kind = rng.choice(("oneOrMore", "timesOrMore", "times", "range"))
        lo = {"oneOrMore": 1, "timesOrMore": 2, "times": rng.randint(2, 3), "range": rng.randint(1, 2)}[kind]
        hi = {"oneOrMore": -1, "timesOrMore": -1, "times": lo, "range": lo + rng.randint(1, 2)}[kind]
        inner = rng.choice(("relaxed", "relaxed", "strict", "any"))
        greedy = rng.random() < 0.25
        if rng.random() < (0.25 if hi == -1 else 0.03):  # why bounded too: Flink refuses it
            until_text, until = _condition(rng, i, anything=False)
    if not negated and rng.random() < 0.15:
        optional = True
    # windows of one stage: times(n, w) and friends (Flink: previous-to-current, before the minimum),
    # and within(w, PREVIOUS_AND_CURRENT) (Flink ignores it on a quantified stage)
    window = rng.choice((2, 4, 8)) if hi != 1 and rng.random() < 0.15 else -1
    within_prev = rng.choice((2, 4, 8)) if i > 0 and rng.random() < 0.12 else -1
    spec_contiguity = {
        "begin": "strict",
        "next": "strict",
        "notNext": "strict",
        "followedBy": "relaxed",
        "notFollowedBy": "relaxed",
        "followedByAny": "nondeterministic_relaxed",
    }[contiguity]
    spec = {
        "name": name,
        "where": where,
        "contiguity": spec_contiguity,
        "negated": negated,
        "quantifier": {
            "min": lo,
            "max": None if hi == -1 else hi,
            "greedy": greedy,
            "optional": optional,
            "inner_contiguity": {"relaxed": "relaxed", "strict": "strict", "any": "nondeterministic_relaxed"}[
                inner
            ],
        },
        "until": until,
    }
    if window >= 0:
        spec["quantifier"]["window_ms"] = window
    if within_prev >= 0:
        spec["within_prev_ms"] = within_prev
    fields = [
        name,
        contiguity,
        lo,
        hi,
        int(optional),
        int(greedy),
        inner,
        where_text,
        until_text,
        window,
        within_prev,
    ]
    return spec, "stage\t" + "\t".join(map(str, fields))


def draw_events(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """``n`` random events in time order (equal times too), each with its ``id``, ``name``, ``price``."""
    t, events = 0, []
    for i in range(n):
        t += rng.choice((0, 1, 1, 2, 3, 6))  # why 0: equal times
        name = rng.choice(NAMES + "e")
        price = float(rng.randint(0, 9))
        events.append({"t": t, "type": name, "fields": {"id": i, "name": name, "price": price}})
    return events


def draw(rng: random.Random, index: int, *, skips: bool = True) -> Drawn:
    """One random pattern and stream (``skips``: any skip strategy, else ``no_skip``)."""
    n_stages = rng.randint(1, 5)
    stages, lines = [], []
    for i in range(n_stages):
        spec, line = _stage(rng, i)
        stages.append(spec)
        lines.append(line)
    within = rng.choice((None, None, 3, 5, 10, 20))
    skip = rng.choice(
        ("no_skip", "no_skip", "skip_to_next", "skip_past_last_event", "skip_to_first", "skip_to_last")
    )
    if not skips:
        skip = "no_skip"
    target = rng.choice([s["name"] for s in stages]) if skip in ("skip_to_first", "skip_to_last") else "-"
    final = END_OF_INPUT if rng.random() < 0.7 else None
    events = draw_events(rng, rng.randint(3, 22))
    event_lines = [f"event\t{e['t']}\t{e['type']}\t{e['fields']['price']}" for e in events]
    case_id = f"flinkdiff/{index}"
    throw = skip in ("skip_to_first", "skip_to_last") and rng.random() < 0.3
    limits = (within if within is not None else -1, final if final is not None else -1, int(throw))
    head = "\t".join(map(str, ("case", case_id, skip, target, *limits)))
    case: dict[str, Any] = {
        "id": case_id,
        "pattern": {
            "kind": "sequence",
            "stages": stages,
            "within_ms": within,
            "skip": skip if target == "-" else f"{skip}:{target}",
            "skip_throw_on_miss": throw,
        },
        "events": events,
        "order_matters": False,
    }
    if final is not None:
        case["final_advance_ms"] = final
    return Drawn(case, "\n".join([head, *lines, *event_lines, "end"]) + "\n")


def _indexes(stages_text: str) -> tuple[list[int], dict[str, list[int]]]:
    events: list[int] = []
    by_stage: dict[str, list[int]] = {}
    for part in stages_text.split(";"):
        name, _, ids = part.partition("=")
        taken = [int(x) for x in ids.split(",") if x]
        by_stage[name] = taken
        events.extend(taken)
    return events, by_stage


def oracle(drawn: list[Drawn], flink_lib: Path, build: Path) -> dict[str, dict[str, Any]]:
    """Flink's matches, timeouts or error per case id."""
    build.mkdir(parents=True, exist_ok=True)
    source = HERE / "FlinkNfaOracle.java"
    classes = build / "FlinkNfaOracle.class"
    classpath = f"{build}{os.pathsep}{flink_lib}/*"
    if not classes.exists() or classes.stat().st_mtime < source.stat().st_mtime:
        subprocess.run(
            ["javac", "-nowarn", "-d", str(build), "-cp", f"{flink_lib}/*", str(source)], check=True
        )
    text = "".join(d.text for d in drawn)
    done = subprocess.run(
        ["java", "-Xmx1g", "-cp", classpath, "FlinkNfaOracle"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    )
    out: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] = {}
    for line in done.stdout.splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "case":
            current = out[rest] = {"expected": [], "expected_timeouts": []}
        elif kind in ("match", "timeout"):
            when, _, stages_text = rest.partition("\t")
            events, by_stage = _indexes(stages_text)
            item = {"events": events, "t_emit": int(when), "kind": kind, "by_stage": by_stage}
            current["expected" if kind == "match" else "expected_timeouts"].append(item)
        elif kind in ("error", "crash"):
            current[kind] = rest
    return out


def compare(
    drawn: list[Drawn],
    flink: dict[str, dict[str, Any]],
    *,
    via_language: bool = False,
    flink_order: bool = True,
) -> list[tuple[dict[str, Any], list[str]]]:
    """The cases whose run here differs from Flink's, with the differences (``via_language``: each
    pattern is printed as ``%%cep`` text and compiled back first; ``flink_order`` off: the engine's
    own plans and order, so the drawn cases must not use a skip strategy)."""
    failed = []
    for d in drawn:
        case = dict(d.case)
        result = flink[case["id"]]
        if "crash" in result:  # why: Flink failed (a NullPointerException) or ran out of time: no oracle
            continue
        if "error" in result:
            case["expect_error"] = True
            case["expected"] = []
            case["semantics_notes"] = f"Flink refuses it: {result['error']}"
        else:
            case["expected"] = result["expected"]
            # why always: a stage's or a quantifier's window times partial matches out too
            case["expected_timeouts"] = result["expected_timeouts"]
        options = RunOptions(via_language=via_language, flink_order=flink_order)
        diffs = run_case(case, options)  # type: ignore[arg-type]
        if diffs:
            failed.append((case, diffs))
    return failed


def default_flink_lib() -> Path | None:
    for venv in (Path(".venv-flink"), Path(sys.prefix)):
        for lib in sorted(venv.glob("lib/python3*/site-packages/pyflink/lib")):
            if (lib / "flink-cep-2.3.0.jar").exists():
                return lib
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--flink-lib", type=Path, default=None)
    parser.add_argument("--build", type=Path, default=Path("/tmp/flinkdiff/classes"))
    parser.add_argument("--out", type=Path, default=Path("artifacts/flinkdiff"))
    parser.add_argument("--via-language", action="store_true", help="print each pattern as text, compile it")
    parser.add_argument(
        "--engine-order",
        action="store_true",
        help="run without flink_order (the engine's own plans; draws no skip strategy)",
    )
    args = parser.parse_args(argv)
    lib = args.flink_lib or default_flink_lib()
    if lib is None or shutil.which("javac") is None:
        print(
            "flinkdiff: needs javac and Flink 2.3.0's jars (--flink-lib, or make setup-flink)",
            file=sys.stderr,
        )
        return 2
    rng = random.Random(args.seed)
    drawn = [draw(rng, i, skips=not args.engine_order) for i in range(args.cases)]
    flink = oracle(drawn, lib, args.build)
    failed = compare(drawn, flink, via_language=args.via_language, flink_order=not args.engine_order)
    args.out.mkdir(parents=True, exist_ok=True)
    for case, diffs in failed:
        path = args.out / f"{case['id'].replace('/', '_')}.json"
        path.write_text(json.dumps(case, indent=1))
        print(f"{case['id']}: {path}")
        for line in diffs[:6]:
            print(f"    {line}")
    refused = sum("error" in r for r in flink.values())
    crashed = sum("crash" in r for r in flink.values())
    matched = sum(bool(r["expected"]) for r in flink.values())
    matches = sum(len(r["expected"]) for r in flink.values())
    timeouts = sum(len(r["expected_timeouts"]) for r in flink.values())
    print(
        f"# {len(drawn) - len(failed)}/{len(drawn)} cases as Flink's NFA (seed {args.seed}): "
        f"{refused} refused by Flink, {crashed} not run (Flink failed), "
        f"{matched} with matches ({matches} matches, {timeouts} timeouts)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
