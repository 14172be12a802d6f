"""Forged snapshots (digest recomputed, as an attacker would) of every documented example.

``test_snapshot_fuzz`` mutates snapshots of a few patterns built here; this file takes the
patterns *and* their events from the ``cep``/``events`` examples of ``docs/*.md`` (silences with a
continuation over the key's stream, hopping windows, nested groups, measures, ...), so every
family's state and timers are forged. The engine refuses a forged blob with a CepError at restore,
or runs on without any other exception. Two hand-made forgeries pin what the fuzzer first found: a
dict key whose hash walks an exponential tree of shared references, and group timer tokens.
"""

from __future__ import annotations

import contextlib
import copy
import json
import random
import re
import time
import warnings
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from workbench.engine.nfa import SequencePattern, Stage
from workbench.engine.runtime import Engine
from workbench.engine.snapshot import _digest
from workbench.errors import CepError
from workbench.language.compile import compile_text

DOCS = Path(__file__).resolve().parents[2] / "docs"


@cache
def examples() -> list[tuple[str, list[dict[str, Any]]]]:
    """``(pattern text, events)`` of every docs example that shows both."""
    out = []
    for path in sorted(DOCS.glob("*.md")):
        text: str | None = None
        for kind, body in re.findall(r"```(\w+)\n(.*?)```", path.read_text(encoding="utf-8"), re.S):
            if kind == "cep":
                text = body
            elif kind == "events" and text is not None:
                rows = [json.loads(line) for line in body.splitlines() if line.strip().startswith("{")]
                if rows:
                    out.append((text, rows))
                text = None
    return out


def compiled(text: str) -> list[Any]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [d.pattern for d in compile_text(text)]


def shuffled_events(rng: random.Random, rows: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` events like the example's, in time order (the example's rows, re-timed)."""
    out = []
    t = 0
    for _ in range(n):
        t += rng.choice((0, 1, 50, 400, 2_000))
        row = dict(rng.choice(rows))
        row["time"] = t
        out.append(row)
    return out


def _nodes(node: Any, at: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    found = [(at, node)]
    if isinstance(node, dict):
        for k, v in node.items():
            found.extend(_nodes(v, (*at, k)))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            found.extend(_nodes(v, (*at, i)))
    return found


def _forge(rng: random.Random, state: dict[str, Any]) -> None:
    """One change anywhere in a decoded state: a scalar swapped, a container cut, grown, emptied
    or reversed, a field dropped."""
    path, value = rng.choice(_nodes(state)[1:])
    new: Any
    if isinstance(value, bool):
        new = rng.choice([not value, 0, None])
    elif isinstance(value, int):
        new = rng.choice([-1, 0, value + 1, value - 1, 10**30, {"$f": "inf"}, True, 1.5, "x"])
    elif isinstance(value, float):
        new = rng.choice([{"$f": "nan"}, -value, 0, 1e308])
    elif isinstance(value, str):
        new = rng.choice(["", "zz", 1, None, value + "x"])
    elif isinstance(value, list):
        choice = rng.randrange(4)
        if choice == 0 and value:
            new = value[:-1]
        elif choice == 1 and value:
            new = [*value, copy.deepcopy(rng.choice(value))]
        elif choice == 2:
            new = value[::-1]
        else:
            new = []
    elif isinstance(value, dict) and value and rng.random() < 0.5:
        new = dict(value)
        del new[rng.choice(list(value))]
    else:
        new = {"$l": []} if value is not None else 0
    parent = state
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = new


def _resume(patterns: list[Any], blob: bytes, rest: list[dict[str, Any]]) -> None:
    engine = Engine(patterns)
    engine.restore(blob)
    engine.process_many(rest)
    engine.advance_time(rest[-1]["time"] + 100_000 if rest else 100_000)
    Engine(patterns).restore(engine.snapshot())
    engine.finish()


@pytest.mark.parametrize("block", range(4))
def test_forged_snapshots_of_the_documented_examples(block: int) -> None:
    cases = examples()
    assert len(cases) > 40  # the docs' examples: every family
    for seed in range(block * 150, (block + 1) * 150):
        rng = random.Random(seed)
        text, rows = cases[seed % len(cases)]
        try:
            patterns = compiled(text)
        except CepError:
            continue  # an example that needs a registered function
        events = shuffled_events(rng, rows, 30)
        cut = rng.randrange(3, 27)
        engine = Engine(patterns)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            engine.process_many(events[:cut])
            envelope = json.loads(engine.snapshot())
            for _ in range(rng.randint(1, 3)):
                _forge(rng, envelope["state"])
            envelope["digest"] = _digest(envelope["state"])
            with contextlib.suppress(CepError):  # refused: fine; anything else fails the test
                _resume(patterns, json.dumps(envelope).encode(), events[cut:])


def _pattern() -> list[Any]:
    return [SequencePattern("p", (Stage("a", types=("a",)), Stage("b", types=("b",))))]


@pytest.mark.parametrize("tag", ["$t", "$z"])
def test_a_key_built_from_shared_references_is_refused_before_it_is_hashed(tag: str) -> None:
    engine = Engine(_pattern())
    engine.process({"type": "a", "time": 1, "key": "k"})
    envelope = json.loads(engine.snapshot())
    node: dict[str, Any] = {tag: [1], "#": 0}
    for i in range(1, 41):  # 2**40 values as a tree, in two kilobytes
        node = {"$t": [node, {"$r": i - 1}], "#": i}
    envelope["state"]["v"]["counters"] = {"$d": [[node, 0]]}
    envelope["digest"] = _digest(envelope["state"])
    started = time.perf_counter()
    with pytest.raises(CepError, match="counting each shared reference again"):
        Engine(_pattern()).restore(json.dumps(envelope).encode())
    assert time.perf_counter() - started < 30  # (without the bound: days)


GROUP = """
group g
    on login(user as User)
    @and @timeout(1s) {
        @timeout(500ms) c: purchase(user = User)
    }
"""


@pytest.mark.parametrize(
    ("token", "message"),
    [
        (["ct", 1, {"$t": []}], "a group's timer"),
        (["start", 99], "declares no instance 99"),
        (["ct", 1, {"$t": [3]}, 0], "nested-group path"),
        (["tick", "1", {"$t": []}, 0], "a group's timer"),
    ],
)
def test_a_group_timer_token_is_checked_at_restore(token: list[Any], message: str) -> None:
    engine = Engine(compiled(GROUP))
    engine.process({"type": "login", "time": 0, "key": "u", "user": "u"})
    envelope = json.loads(engine.snapshot())
    timers = envelope["state"]["v"]["timers"]["$l"]
    plain = next(t for t in timers if '"#"' not in json.dumps(t))  # no later timer refers into it
    plain["$t"][4] = {"$t": token}
    envelope["digest"] = _digest(envelope["state"])
    with pytest.raises(CepError, match=re.escape(message)):
        Engine(compiled(GROUP)).restore(json.dumps(envelope).encode())
