"""Random input scripts for backend equivalence tests."""

from __future__ import annotations

import random
from typing import Any

from workbench.backends.base import AdvanceTime, Input


def random_script(rng: random.Random, n: int, *, keys: int = 3, disorder: int = 4) -> list[Input]:
    """``n`` events over a few keys, mostly in time order, some out of order, a few marks."""
    script: list[Input] = []
    t = 0
    for _ in range(n):
        t += rng.choice((0, 1, 1, 2, 3, 5))
        time: int | float = t - rng.randint(0, disorder) if rng.random() < 0.25 else t
        if rng.random() < 0.05:
            time += 0.5
        event: dict[str, Any] = {
            "type": rng.choice("aabbcd"),
            "time": time,
            "key": rng.choice([f"k{i}" for i in range(keys)] + [None]),
            "x": rng.randint(0, 9),
        }
        script.append(event)
        if rng.random() < 0.03:
            script.append(AdvanceTime(t - rng.randint(0, 3)))
    return script


def random_options(rng: random.Random) -> dict[str, Any]:
    """Random engine options: out-of-orderness, until, finish, trace."""
    finish = rng.random() < 0.8
    return {
        "out_of_orderness": rng.choice((0, 0, 2, 5)),
        "until": rng.choice((None, None, 20, 60)) if finish else None,
        "finish": finish,
        "trace": rng.random() < 0.5,
    }
