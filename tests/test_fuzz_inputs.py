"""A bounded fuzzer over everything a user hands the workbench: nothing but a ``CepError`` escapes.

Events (malformed mappings, NaN, infinities, huge integers, wrong types, unicode, ``None`` and odd
keys, unsorted times) go through an engine of every pattern kind, one by one and as a DataFrame
replay; mutated pattern text is compiled and, when it compiles, run; mutated snapshot bytes are
restored. Hostile strings name a canary file that no code may create. Each fuzzer runs a few dozen
examples in the normal suite; ``pytest -m fuzz`` runs the long version (thousands of examples).
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from workbench.engine.events import Event
from workbench.engine.runtime import Engine
from workbench.engine.snapshot import _digest
from workbench.errors import CepError
from workbench.language import compile_text
from workbench.session.session import CepSession

QUICK = settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
LONG = settings(max_examples=1500, deadline=None, suppress_health_check=list(HealthCheck))

CANARY = Path(__file__).parent / "fuzz_canary_must_not_exist"
HOSTILE = [
    f"__import__('pathlib').Path({str(CANARY)!r}).touch()",
    f"open({str(CANARY)!r}, 'w')",
    "{{7*7}}",
    "'; DROP TABLE events; --",
]

PATTERNS = """
event tick(k, v, w, name)
sequence seq partition by k within 50ms
    aggregate total = sum(a.v)
    aggregate mean = avg(a.v)
    aggregate spread = std(a.w)
    begin a: tick where e.v > 0 one or more
    followed by b: tick where e.v > total / 10 and e.name != 'x'
sequence pair within 1s
    begin a: tick
    next b: tick where e.w == a.w or len(str(e.name)) > 3
group grp
    on tick(k as K)
    @or @timeout(30ms) {
        @size(2, 1, MapCounter(e.name)) c1: tick(k = K)
        @size(3, 2, SortedAccumulator(e.name, e.v, top=2)) c2: tick where e.v > 1
        @timer(10ms, 10ms, MapCounter(e.w)) c3: tick
    }
receive r @count(-1) tick(name = 'x') where e.v != e.w
"""

_KEYS = ["type", "time", "t", "key", "k", "v", "w", "name", "fields", "seq", "é", "", None, 0, 1.5, ("k",)]
_ATOMS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from([2**63, -(2**63) - 1, 10**30, 0, -1]),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=8),
    st.sampled_from(["tick", "x", "", "\x00", "é😀", "NaN", "1e999", *HOSTILE]),
    st.binary(max_size=4),
)
_VALUES = st.one_of(
    _ATOMS, st.lists(_ATOMS, max_size=3), st.dictionaries(st.text(max_size=3), _ATOMS, max_size=2)
)


@st.composite
def _event(draw: st.DrawFn) -> object:
    """A plausible event most of the time (so patterns advance), a broken one often."""
    shape = draw(st.integers(0, 9))
    if shape == 0:  # not a mapping at all
        return draw(st.one_of(_ATOMS, st.lists(_ATOMS, max_size=2)))
    raw: dict[Any, Any] = {
        "type": "tick",
        "time": draw(st.integers(0, 200)),
        "k": draw(st.sampled_from(["a", "b", 1])),
        "v": draw(st.one_of(st.integers(-5, 20), st.floats(-5, 20))),
        "w": draw(st.integers(0, 3)),
        "name": draw(st.sampled_from(["x", "y", "zzzz"])),
    }
    for _ in range(draw(st.integers(0, 3)) if shape > 3 else 0):
        raw[draw(st.sampled_from(_KEYS))] = draw(_VALUES)
    for gone in draw(st.lists(st.sampled_from(["type", "time", "k", "v"]), max_size=2)) if shape == 9 else []:
        raw.pop(gone, None)
    if shape == 8:
        return Event("tick", draw(_ATOMS), draw(_ATOMS), {"v": draw(_VALUES)})  # type: ignore[arg-type]
    return raw


_EVENTS = st.lists(_event(), max_size=25)


@contextmanager
def only_cep_errors() -> Iterator[None]:
    """Let a ``CepError`` pass (it is the expected answer to bad input); anything else fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # why: the fuzzer provokes every kind of warning on purpose
        try:
            yield
        except CepError as err:
            str(err)  # the message itself must build
    assert not CANARY.exists(), "fuzzed input ran code"


_COMPILED = [d.pattern for d in compile_text(PATTERNS)]
_SESSION = CepSession()
_NAMES = [d.pattern.name for d in _SESSION.define(PATTERNS)]


def _engine() -> Engine:
    return Engine(_COMPILED)


def feed_engine(events: list[object]) -> None:
    engine = _engine()
    for i, raw in enumerate(events):
        with only_cep_errors():
            engine.process(raw)  # type: ignore[arg-type]
        if isinstance(raw, dict) and i % 3 == 0:  # a watermark of whatever the event's time was
            with only_cep_errors():
                engine.advance_time(raw.get("time"))  # type: ignore[arg-type]
    with only_cep_errors():
        engine.finish()
    with only_cep_errors():
        _engine().process_many(events)  # type: ignore[arg-type]


def replay_frame(events: list[object]) -> None:
    rows = [e for e in events if isinstance(e, dict)]
    with only_cep_errors():
        _SESSION.replay(_NAMES, pd.DataFrame(rows), trace=False)
    with only_cep_errors():
        _SESSION.replay(_NAMES, events, trace=False, allow_missing_key=True)
    with only_cep_errors():  # only dicts: read as the table of their fields
        _SESSION.replay(_NAMES, rows, trace=False, allow_missing_key=True)


@QUICK
@given(_EVENTS)
def test_fuzzed_events_give_only_cep_errors(events: list[object]) -> None:
    feed_engine(events)
    replay_frame(events)


@pytest.mark.fuzz
@LONG
@given(_EVENTS)
def test_fuzzed_events_long(events: list[object]) -> None:
    feed_engine(events)
    replay_frame(events)


# ---- pattern text: byte and token mutations of working patterns, compiled and run ----------------

_SEEDS = [
    PATTERNS,
    *(
        p.read_text(encoding="utf-8")
        for p in sorted((Path(__file__).parent / "data" / "language").glob("*.cep"))
    ),
]
_PIECES = [
    "(",
    ")",
    "{",
    "}",
    "@",
    "@timer(0)",
    "@count(-1)",
    "within 0ms",
    "where",
    "e.",
    "1e999",
    "-",
    "'",
    "\n",
    " times 99999 ",
    "..",
    "partition by",
    "aggregate x = sum(a.v)",
    "é",
    "\x00",
    *HOSTILE,
]
_RUN_EVENTS = [
    {
        "type": t,
        "time": i * 3,
        "key": "k",
        "k": "k",
        "v": i % 7,
        "w": i % 2,
        "name": "x",
        "user": "u",
        "ip": str(i % 3),
    }
    for i, t in enumerate(["tick", "login", "logout", "tick", "login", "update", "tick", "a", "b", "c"] * 3)
]


def mutate(seed: str, rng: random.Random, edits: int) -> str:
    """``seed`` with ``edits`` random deletions, duplications and insertions of pieces or bytes."""
    text = seed
    for _ in range(edits):
        i = rng.randrange(len(text) + 1)
        j = min(len(text), i + rng.randrange(12))
        choice = rng.randrange(4)
        if choice == 0:
            text = text[:i] + text[j:]
        elif choice == 1:
            text = text[:i] + text[i:j] * 2 + text[j:]
        elif choice == 2:
            text = text[:i] + rng.choice(_PIECES) + text[i:]
        else:
            text = text[:i] + chr(rng.randrange(1, 0x3000)) + text[i:]
    return text


def compile_and_run(text: str) -> None:
    with only_cep_errors():
        defs = compile_text(text)
        engine = Engine([d.pattern for d in defs])
        engine.process_many(_RUN_EVENTS)
        engine.finish()
    with only_cep_errors():  # the session's replay of the same text (text that defines nothing too)
        session = CepSession()
        names = [d.pattern.name for d in session.define(text)]
        session.replay(names, pd.DataFrame(_RUN_EVENTS), trace=False)


def _fuzz_text(seed_index: int, rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    compile_and_run(mutate(_SEEDS[seed_index % len(_SEEDS)], rng, rng.randrange(1, 6)))


@QUICK
@given(st.integers(0, 1000), st.integers(0, 2**32))
def test_mutated_pattern_text_gives_only_cep_errors(seed_index: int, rng_seed: int) -> None:
    _fuzz_text(seed_index, rng_seed)


@pytest.mark.fuzz
@LONG
@given(st.integers(0, 1000), st.integers(0, 2**32))
def test_mutated_pattern_text_long(seed_index: int, rng_seed: int) -> None:
    _fuzz_text(seed_index, rng_seed)


# ---- snapshot bytes: mutations of real snapshots of a busy engine --------------------------------


def _busy_snapshot() -> tuple[bytes, Callable[[], Engine]]:
    engine = _engine()
    engine.process_many([{**e, "type": "tick"} for e in _RUN_EVENTS[:20]])
    return engine.snapshot(), _engine


_SNAPSHOT, _FRESH = _busy_snapshot()
_FORGED_VALUES = [
    None,
    1,
    -1,
    "x",
    {"$l": []},
    {"$l": [1, "a"]},
    {"$t": [1, 2]},
    {"$f": "nan"},
    {"$d": []},
    True,
]


def _fuzz_snapshot(rng_seed: int) -> None:
    rng = random.Random(rng_seed)
    blob = bytearray(_SNAPSHOT)
    for _ in range(rng.randrange(1, 8)):
        i = rng.randrange(len(blob))
        kind = rng.randrange(3)
        if kind == 0:
            blob[i] = rng.randrange(256)
        elif kind == 1:
            del blob[i : i + rng.randrange(1, 40)]
        else:
            blob[i:i] = rng.choice([b"{", b"}", b"[", b"]", b'"', b"null", b"1e999", b"-1", b"NaN", b"0"])
    if rng.randrange(2):  # a forged image: one field replaced, the checksum made right again
        envelope = json.loads(_SNAPSHOT)
        image = envelope["state"]["v"]
        image[rng.choice(sorted(image))] = rng.choice(_FORGED_VALUES)
        envelope["digest"] = _digest(envelope["state"])
        blob = bytearray(json.dumps(envelope).encode())
    engine = _FRESH()
    with only_cep_errors():
        engine.restore(bytes(blob))
        engine.process_many(_RUN_EVENTS)  # a restored engine runs (or the blob was refused)
        engine.finish()


@QUICK
@given(st.integers(0, 2**32))
def test_mutated_snapshot_bytes_give_only_cep_errors(rng_seed: int) -> None:
    _fuzz_snapshot(rng_seed)


@pytest.mark.fuzz
@LONG
@given(st.integers(0, 2**32))
def test_mutated_snapshot_bytes_long(rng_seed: int) -> None:
    _fuzz_snapshot(rng_seed)


def test_the_hostile_strings_name_the_canary() -> None:
    assert not CANARY.exists()
    assert sum(str(CANARY) in h for h in HOSTILE) == 2
