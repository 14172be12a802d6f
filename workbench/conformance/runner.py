"""Run conformance cases (the neutral JSON format of ``conformance/FORMAT.md``) through the engine.

Each case names a pattern kind. An *adapter* per kind builds the pattern with the engine's own
objects, feeds the events, and returns the list of differences from the case's expectations (empty
when the case passes). The runner prints ``PASS <id>`` or ``FAIL <id>: <what differed>`` per case
and, last, exactly ``N passed, N failed``.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar, cast

from workbench.conformance.case import Case
from workbench.engine.detection import Detection
from workbench.errors import CepError

__all__ = [
    "ADAPTERS",
    "CaseResult",
    "RunOptions",
    "compare_detections",
    "detection_to_expected",
    "iter_case_files",
    "load_case",
    "main",
    "pair_up",
    "run_case",
    "through_language",
]

BACKENDS = ("local", "flink")

_P = TypeVar("_P")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How to run a case: which backend, whether to build patterns through the language, and
    whether sequences keep Flink's order among partial matches that share their first event
    (``flink_order``, as the cases record it) or the engine's own (creation order: the same
    matches, in another order among such ties, unless a skip strategy must choose among them)."""

    backend: str = "local"
    via_language: bool = False
    flink_order: bool = True


@dataclass(frozen=True, slots=True)
class CaseResult:
    """The outcome of one case."""

    case_id: str
    path: str
    diffs: tuple[str, ...]

    @property
    def passed(self) -> bool:
        """True when nothing differed."""
        return not self.diffs


Adapter = Callable[[Case, RunOptions], list[str]]

#: pattern kind -> "module:function" of the adapter (imported lazily).
ADAPTERS: dict[str, str] = {
    "group": "workbench.conformance.groups:run_case",
    "filter": "workbench.conformance.groups:run_case",
    "not_applicable": "workbench.conformance.groups:run_case",
    "sequence": "workbench.conformance.sequences:run_case",
}


def through_language(pattern: _P, options: RunOptions) -> _P:
    """With ``--via-language``: print the pattern as ``%%cep`` text and compile that text back.

    Adapters pass every pattern object they build through this function, so the flag exercises the
    language front end on every case. Without the flag the pattern is returned unchanged.
    """
    if not options.via_language:
        return pattern
    from workbench.language import compile_pattern, format_pattern

    back = compile_pattern(format_pattern(pattern))
    if not isinstance(back, type(pattern)):
        msg = f"the language compiled a {type(pattern).__name__} back as a {type(back).__name__}"
        raise CepError(msg)
    return back


def _load_adapter(kind: str) -> Adapter | str:
    target = ADAPTERS.get(kind)
    if target is None:
        return f"unknown pattern kind {kind!r}; known: {sorted(ADAPTERS)}"
    module_name, func = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as err:
        if err.name == module_name:
            return f"pattern kind {kind!r} is not implemented yet ({module_name} missing)"
        raise
    adapter: Adapter = getattr(module, func)
    return adapter


def iter_case_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every ``*.json`` case file under the paths (files are taken as given), sorted."""
    for p in paths:
        path = Path(p)
        if path.is_dir():
            yield from sorted(q for q in path.rglob("*.json") if q.is_file())
        elif path.is_file():
            yield path
        else:
            msg = f"no such case file or directory: {path}"
            raise CepError(msg)


def load_case(path: Path) -> Case | str:
    """The case in the file ``path`` (a JSON object with a ``pattern`` object), or why it is unreadable."""
    try:
        case = json.loads(path.read_text(encoding="utf-8-sig"))
    except OSError as err:
        return str(err.strerror or err)
    except UnicodeDecodeError as err:
        return f"byte {err.start} is not UTF-8"
    except (ValueError, RecursionError) as err:  # why: JSONDecodeError is a ValueError; so is nesting
        return f"not JSON: {err}"
    if not isinstance(case, dict) or not isinstance(case.get("pattern"), dict):
        return f"a case is a JSON object with a 'pattern' object, got {type(case).__name__}"
    return cast("Case", case)


def run_case(case: Case, options: RunOptions = RunOptions(), path: str = "") -> CaseResult:
    """Run one parsed case and return its result (never raises for a failing case)."""
    raw: object = case  # why object: a caller may hand over any parsed JSON
    if not isinstance(raw, Mapping) or not isinstance(raw.get("pattern"), Mapping):
        return CaseResult(path, path, ("a case is a JSON object with a 'pattern' object",))
    case_id = str(case.get("id", path))
    kind = str(case["pattern"].get("kind"))
    adapter = _load_adapter(kind)
    if isinstance(adapter, str):
        return CaseResult(case_id, path, (adapter,))
    try:
        diffs = adapter(case, options)
    except CepError as err:
        diffs = [f"{type(err).__name__}: {err}"]
    except Exception as err:  # a crash is a failure of this case, not of the run
        diffs = [f"crashed with {type(err).__name__}: {err}"]
    return CaseResult(case_id, path, tuple(diffs))


def detection_to_expected(
    detection: Detection, index_of: Mapping[int, int] | None = None, absent_key: str = "absent_channel"
) -> dict[str, object]:
    """A detection in the case format: event indexes, negated entries, ``t_emit``, ``kind``.

    ``index_of`` maps an event's ``seq`` to its index in the case's ``events`` (identity if omitted).
    """
    idx = (lambda s: s) if index_of is None else index_of.__getitem__
    return {
        "events": [idx(e.seq) for e in detection.events],
        "negated": [{absent_key: n} for n in detection.negated],
        "t_emit": detection.time,
        "kind": detection.kind,
    }


def _canon(value: object) -> str:
    return json.dumps(value, sort_keys=True)


def pair_up(
    expected: Sequence[_T], actual: Sequence[_T], agrees: Callable[[_T, _T], bool]
) -> tuple[list[_T], list[_T]]:
    """A multiset comparison: each expected item takes the first unused actual item it agrees with.

    Returns the expected items that found no partner and the actual items that none took.
    """
    unused = list(actual)
    missing: list[_T] = []
    for exp in expected:
        for i, act in enumerate(unused):
            if agrees(exp, act):
                del unused[i]
                break
        else:
            missing.append(exp)
    return missing, unused


def compare_detections(
    expected: Sequence[Mapping[str, object]],
    actual: Sequence[Mapping[str, object]],
    *,
    order_matters: bool = False,
    label: str = "detections",
) -> list[str]:
    """Compare expected and actual detections in the case format.

    Each expected item is compared on the keys it gives among ``events``, ``negated``, ``t_emit``,
    ``kind`` and ``by_stage`` (``t_emit`` may be omitted, for example). Without ``order_matters`` the
    comparison is a multiset comparison: each expected item consumes one equal actual item.
    """

    def agrees(exp: Mapping[str, object], act: Mapping[str, object]) -> bool:
        return all(_canon(exp[k]) == _canon(act.get(k)) for k in _COMPARED if k in exp)

    def show(item: Mapping[str, object], like: Mapping[str, object] | None = None) -> str:
        keys = [k for k in _COMPARED if k in (like if like is not None else item)]
        return _canon({k: item.get(k) for k in keys})

    if order_matters:
        bad = len(expected) != len(actual) or not all(
            agrees(e, a) for e, a in zip(expected, actual, strict=False)
        )
        if not bad:
            return []
        ref = expected[0] if expected else None
        return [
            f"{label} differ (in order):\n    expected [{', '.join(show(e) for e in expected)}]"
            f"\n    actual   [{', '.join(show(a, ref) for a in actual)}]"
        ]
    missing, unused = pair_up(expected, actual, agrees)
    diffs = []
    ref = expected[0] if expected else None
    if missing:
        diffs.append(f"missing {label}: {', '.join(show(e) for e in missing)}")
    if unused:
        diffs.append(f"unexpected {label}: {', '.join(show(a, ref) for a in unused)}")
    return diffs


_COMPARED = ("events", "negated", "t_emit", "kind", "by_stage")


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status (0 iff no case failed)."""
    parser = argparse.ArgumentParser(prog="python -m workbench.conformance", description=__doc__)
    parser.add_argument("paths", nargs="+", help="case files or directories (searched recursively)")
    parser.add_argument("--backend", default="local", choices=BACKENDS, help="execution backend")
    parser.add_argument(
        "--via-language", action="store_true", help="build each pattern from %%cep text instead of objects"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="print only failures and the summary")
    args = parser.parse_args(argv)
    options = RunOptions(args.backend, args.via_language)
    if args.backend != "local":
        from workbench.backends import BackendError, get_backend

        try:
            get_backend(args.backend)
        except BackendError as err:
            print(f"error: --backend {args.backend} cannot run in {sys.executable}: {err}", file=sys.stderr)
            print(
                f"hint: run it from the PyFlink environment: .venv-flink/bin/python -m workbench.conformance "
                f"--backend {args.backend} ...",
                file=sys.stderr,
            )
            return 2
    passed = failed = 0
    try:
        files = list(iter_case_files(args.paths))
    except CepError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    for path in files:
        case = load_case(path)
        if isinstance(case, str):  # why: one unreadable case is one failure; the run goes on
            print(f"FAIL {path}: cannot read case: {case}")
            failed += 1
            continue
        result = run_case(case, options, str(path))
        if result.passed:
            passed += 1
            if not args.quiet:
                print(f"PASS {result.case_id}")
        else:
            failed += 1
            print(f"FAIL {result.case_id}: {'; '.join(result.diffs)}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1
