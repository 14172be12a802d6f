"""A brute-force reference for the eight benchmark patterns, written from PATTERNS.md's plain words,
and for the two reaction groups of ``benchmarks.patterns.GROUP_TEXT`` (from their comments and the
group semantics of ``docs/reaction-groups.md``).

Deliberately naive and independent of the engine: per key it looks at the key's event list and
enumerates what the words say (every login, every later trade, every subset ...). Each function
returns the matches as tuples of event ids (positive events only).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence

from benchmarks.workload import Row

W = 10_000
W5 = 30_000
MIN_PRICE = 110.0
MIN_AVG = 105.0037

Match = tuple[int, ...]


def by_key(rows: Iterable[Row]) -> list[list[Row]]:
    groups: dict[str, list[Row]] = defaultdict(list)
    for r in rows:
        groups[r.key].append(r)
    return list(groups.values())


def big_trade(e: Row) -> bool:
    return e.type == "trade" and e.price > MIN_PRICE


def p1(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev[:-1]):
        b = ev[i + 1]
        if a.type == "login" and big_trade(b) and b.t - a.t < W:
            out.append((a.id, b.id))
    return out


def p2(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    runs: list[list[Row]] = []  # [login] or [login, update], in creation order
    for e in ev:
        runs = [r for r in runs if e.t - r[0].t < W]
        if e.type == "login":
            runs.append([e])
        elif e.type == "update":
            for r in runs:
                if len(r) == 1:
                    r.append(e)
        elif e.type == "trade":
            ready = [r for r in runs if len(r) == 2]
            if ready:
                first = min(ready, key=lambda r: r[0].t)
                out.append((first[0].id, first[1].id, e.id))
                runs = []
    return out


def p2any(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type != "login":
            continue
        for j in range(i + 1, len(ev)):
            b = ev[j]
            if b.type != "update":
                continue
            for c in ev[j + 1 :]:
                if c.type == "trade" and c.t - a.t < W:
                    out.append((a.id, b.id, c.id))
    return out


def _prefix_matches(
    ev: Sequence[Row], i: int, window: int, min_k: int, taken: Callable[[list[Row], Row], bool]
) -> list[Match]:
    """From login ``ev[i]``: walk later events, keep the trades ``taken`` accepts; for every ``k >=
    min_k`` the first logout after the k-th taken trade closes one match if it is in the window."""
    a = ev[i]
    out: list[Match] = []
    chosen: list[Row] = []
    for j in range(i + 1, len(ev)):
        e = ev[j]
        if e.t - a.t >= window:
            break
        if e.type != "trade" or not taken(chosen, e):
            continue
        chosen.append(e)
        if len(chosen) < min_k:
            continue
        logout = next((x for x in ev[j + 1 :] if x.type == "logout"), None)
        if logout is not None and logout.t - a.t < window:
            out.append((a.id, *(x.id for x in chosen), logout.id))
    return out


def p3(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type == "login":
            out += _prefix_matches(ev, i, W, 2, lambda chosen, e: True)
    return out


def p3any(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type != "login":
            continue
        for k in range(i + 1, len(ev)):
            c = ev[k]
            if c.type != "logout" or c.t - a.t >= W:
                continue
            trades = [x for x in ev[i + 1 : k] if x.type == "trade"]
            for size in (2, 3, 4):
                for subset in itertools.combinations(trades, size):
                    out.append((a.id, *(x.id for x in subset), c.id))
    return out


def p4(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type != "login":
            continue
        decider = next((x for x in ev[i + 1 :] if x.type == "logout" or big_trade(x)), None)
        if decider is not None and decider.type == "trade" and decider.t - a.t < W:
            out.append((a.id, decider.id))
    return out


def p4any(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type != "login":
            continue
        for j in range(i + 1, len(ev)):
            c = ev[j]
            if big_trade(c) and c.t - a.t < W and all(x.type != "logout" for x in ev[i + 1 : j]):
                out.append((a.id, c.id))
    return out


def _keeps_average(chosen: list[Row], e: Row) -> bool:
    total = 0.0
    for x in chosen:
        total += x.price
    return (total + e.price) / (len(chosen) + 1) > MIN_AVG


def p5(ev: Sequence[Row]) -> list[Match]:
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type == "login":
            out += _prefix_matches(ev, i, W5, 1, _keeps_average)
    return out


ORACLES: dict[str, Callable[[Sequence[Row]], list[Match]]] = {
    "P1": p1,
    "P2": p2,
    "P2any": p2any,
    "P3": p3,
    "P3any": p3any,
    "P4": p4,
    "P4any": p4any,
    "P5": p5,
}


def g1(ev: Sequence[Row]) -> list[Match]:
    """Per login: the first trade over 110 within 10 s (the end instant included: events come before
    the time-out), unless a logout from the login's address comes in that time; the initiator is
    not part of the detection."""
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type != "login":
            continue
        later = [e for e in ev[i + 1 :] if e.t <= a.t + W]
        if any(e.type == "logout" and e.ip == a.ip for e in later):
            continue
        big = [e for e in later if big_trade(e)]
        if big:
            out.append((big[0].id,))
    return out


def g2(ev: Sequence[Row]) -> list[Match]:
    """Per login: the trades over 108 within 30 s (end instant included), taken two by two, each pair
    one detection, at most three, until a logout from the login's address."""
    out: list[Match] = []
    for i, a in enumerate(ev):
        if a.type != "login":
            continue
        start = len(out)
        pair: list[int] = []
        for e in ev[i + 1 :]:
            if e.t > a.t + W5 or (e.type == "logout" and e.ip == a.ip) or len(out) - start == 3:
                break
            if e.type == "trade" and e.price > 108.0:
                pair.append(e.id)
                if len(pair) == 2:
                    out.append((pair[0], pair[1]))
                    pair = []
    return out


GROUP_ORACLES: dict[str, Callable[[Sequence[Row]], list[Match]]] = {"G1": g1, "G2": g2}


def matches(pattern: str, rows: Iterable[Row]) -> list[Match]:
    """All matches of one pattern over a workload, key by key."""
    fn = ORACLES[pattern] if pattern in ORACLES else GROUP_ORACLES[pattern]
    out: list[Match] = []
    for ev in by_key(rows):
        out += fn(ev)
    return out
