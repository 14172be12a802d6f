"""The order-independent match checksum of ``PATTERNS.md``.

``g(id) = (splitmix64(id) >> 1) mod 1_000_000_007`` (``1`` if that is ``0``); a match hashes to the
product of ``g`` over its positive events' ids, and the checksum is the sum of the match hashes, all
modulo ``1_000_000_007``. Being a sum of products, it does not depend on the order of the matches or
of the events inside a match, so shards and peers can be compared.

>>> match_hash([0, 1]) == g(0) * g(1) % MODULUS
True
>>> Checksum().add([3]).add([1, 2]).value == Checksum().add([2, 1]).add([3]).value
True
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

__all__ = ["MODULUS", "Checksum", "g", "match_hash", "splitmix64"]

MODULUS = 1_000_000_007
_MASK = (1 << 64) - 1


def splitmix64(x: int) -> int:
    """One step of the SplitMix64 mixer on a 64-bit unsigned integer.

    >>> splitmix64(0)
    16294208416658607535
    """
    z = (x + 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


@lru_cache(maxsize=1 << 20)
def g(event_id: int) -> int:
    """The per-event factor (never 0).

    >>> 0 < g(5) < MODULUS
    True
    """
    return ((splitmix64(event_id) >> 1) % MODULUS) or 1


def match_hash(ids: Iterable[int]) -> int:
    """The product of ``g`` over a match's event ids, modulo :data:`MODULUS`."""
    h = 1
    for i in ids:
        h = h * g(i) % MODULUS
    return h


class Checksum:
    """A running checksum and match count.

    >>> c = Checksum().add([1, 2])
    >>> c.matches, c.value == match_hash([1, 2])
    (1, True)
    """

    __slots__ = ("matches", "value")

    def __init__(self) -> None:
        self.matches = 0
        self.value = 0

    def add(self, ids: Iterable[int]) -> Checksum:
        """Count one match with these event ids."""
        self.matches += 1
        self.value = (self.value + match_hash(ids)) % MODULUS
        return self
