"""The benchmark workload: a deterministic stream of user sessions (logins, trades, ...) plus noise.

This is our own implementation of the workload that ``PATTERNS.md`` describes (the shared
``gen_workload.py`` defines it); for the same options it writes a byte-identical CSV, which
``tests/benchmarks/test_workload.py`` checks. The random draws, in their exact order, are the
specification: per event one draw for the time gap, one for the user, one for noise-or-not, then
(for a logged-in user) one for the event type, the trade's price and quantity, and for a login one
for the address (and three more for a foreign address).

Columns: ``t`` (ms, strictly increasing), ``key`` (``u0000``..), ``type`` (login, logout, update,
trade, view), ``price`` (2 decimals; trades and views), ``qty`` (trades), ``ip``. The stream is
prefix-stable: the first n rows of a longer workload equal the n-row workload.

>>> rows = list(iter_rows(WorkloadSpec(n=3)))
>>> [r.type for r in rows]
['login', 'view', 'login']
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple, TextIO

__all__ = ["DEFAULT_MIX", "HEADER", "Row", "WorkloadSpec", "format_row", "iter_rows", "write_csv"]

HEADER = "t,key,type,price,qty,ip\n"
# Relative weights of a logged-in user's next relevant event, in the generator's draw order.
RELEVANT_TYPES = ("trade", "update", "logout", "login")
DEFAULT_MIX = (("trade", 0.55), ("update", 0.15), ("logout", 0.20), ("login", 0.10))
T0 = 1_700_000_000_000  # ms; fixed origin


class Row(NamedTuple):
    """One generated event (``id`` is the 0-based row index; ``price`` as parsed from the CSV)."""

    id: int
    t: int
    key: str
    type: str
    price: float
    qty: int
    ip: str


@dataclass(frozen=True, slots=True)
class WorkloadSpec:
    """The generator's options (defaults give the reference ``w200k.csv``)."""

    n: int = 200_000
    keys: int = 500
    seed: int = 1
    noise: float = 0.5
    mix: tuple[tuple[str, float], ...] = DEFAULT_MIX
    mean_gap_ms: float = 2.0
    skew: float = 0.0

    def __post_init__(self) -> None:
        if self.mean_gap_ms < 1.0:
            msg = "mean_gap_ms must be >= 1 (timestamps are strictly increasing ms)"
            raise ValueError(msg)
        if self.n < 0 or self.keys < 1:
            msg = f"need n >= 0 and keys >= 1, got n={self.n}, keys={self.keys}"
            raise ValueError(msg)
        names = [name for name, _ in self.mix]
        unknown = sorted(set(names) - set(RELEVANT_TYPES))
        if unknown or len(set(names)) != len(names):
            msg = f"mix must weight distinct types among {RELEVANT_TYPES}, got {names}"
            raise ValueError(msg)
        if sum(w for _, w in self.mix) <= 0:
            msg = "mix must have a positive weight"
            raise ValueError(msg)


def _type_thresholds(mix: tuple[tuple[str, float], ...]) -> list[tuple[float, str]]:
    """Cumulative probabilities in the fixed order trade, update, logout, login."""
    weights = dict(mix)
    total = sum(weights.values())
    out: list[tuple[float, str]] = []
    acc = 0.0
    for name in RELEVANT_TYPES:
        acc += weights.get(name, 0.0) / total
        out.append((acc, name))
    return out


def _home_address(user: int) -> str:
    return f"10.{(user >> 16) & 255}.{(user >> 8) & 255}.{user & 255}"


def iter_rows(spec: WorkloadSpec) -> Iterator[Row]:
    """Generate the workload's rows in order."""
    rng = random.Random(spec.seed)
    draw, gauss, randrange = rng.random, rng.gauss, rng.randrange
    users = spec.keys
    skewed = spec.skew != 0
    popularity: list[float] = []
    if skewed:
        acc = 0.0
        for rank in range(users):
            acc += 1.0 / ((rank + 1) ** spec.skew)
            popularity.append(acc)
    total_popularity = popularity[-1] if skewed else 0.0
    thresholds = _type_thresholds(spec.mix)
    fallback = thresholds[-1][1]
    online = [False] * users
    session = [""] * users
    extra_gap = max(spec.mean_gap_ms - 1.0, 0.0)
    rate = 1.0 / extra_gap if extra_gap > 0 else 0.0
    t = T0
    for row_id in range(spec.n):
        t += 1
        if extra_gap > 0:
            t += int(rng.expovariate(rate) + 0.5)
        if skewed:
            user = min(bisect.bisect_left(popularity, draw() * total_popularity), users - 1)
        else:
            user = randrange(users)
        price = 0.0
        qty = 0
        if draw() < spec.noise:
            kind = "view"
            price = max(1.0, gauss(100.0, 15.0))
        elif not online[user]:
            kind = "login"
        else:
            x = draw()
            kind = next((name for bound, name in thresholds if x < bound), fallback)
            if kind == "trade":
                price = max(1.0, gauss(100.0, 15.0))
                qty = rng.randint(1, 100)
        if kind == "login":
            online[user] = True
            if draw() < 0.9:
                session[user] = _home_address(user)
            else:
                a, b, c = randrange(16, 32), randrange(256), randrange(1, 255)
                session[user] = f"172.{a}.{b}.{c}"
        elif kind == "logout":
            online[user] = False
        # The CSV holds 2 decimals; the row carries the value a reader parses back from it.
        price = float(f"{price:.2f}")
        yield Row(row_id, t, f"u{user:04d}", kind, price, qty, session[user] or _home_address(user))


def format_row(row: Row) -> str:
    """The CSV line of a row (prices with 2 decimals), newline included."""
    return f"{row.t},{row.key},{row.type},{row.price:.2f},{row.qty},{row.ip}\n"


def write_csv(spec: WorkloadSpec, out: str | Path | TextIO) -> None:
    """Write the workload as CSV to a path or an open text file."""
    if isinstance(out, str | Path):
        with open(out, "w", newline="\n", buffering=1 << 20) as f:
            write_csv(spec, f)
        return
    out.write(HEADER)
    out.writelines(format_row(r) for r in iter_rows(spec))
