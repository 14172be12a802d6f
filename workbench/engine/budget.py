"""A run's memory budget: what was shed to stay within it, and the warnings about it (once each).

Every plan applies the per-pattern cap (``max_partial_matches``, per key; the oldest partial
matches go first) and reports what it dropped here, so :attr:`Budget.dropped` is the run's total
(``Engine.stats["dropped"]``) even after the keys that dropped them were released. A cap or a
timer catch-up warns once per pattern and run, with text that does not change from one event to
the next (so Python's warnings registry holds one entry, not one per event).

>>> b = Budget()
>>> b.drop("p", 3); b.drop("q", 1); b.drop("p", 2)
>>> b.dropped, b.dropped_by_pattern
(6, {'p': 5, 'q': 1})
"""

from __future__ import annotations

import warnings

__all__ = ["Budget"]


class Budget:
    """Per run (kept in snapshots): partial matches dropped by caps, the warnings given, released ids."""

    __slots__ = ("dropped", "dropped_by_pattern", "released", "warned")

    def __init__(self) -> None:
        #: per pattern index, the highest instance id of a released key (``forget_idle_keys``)
        self.released: dict[int, int] = {}
        self.dropped = 0
        self.dropped_by_pattern: dict[str, int] = {}
        self.warned: set[tuple[str, str]] = set()

    def drop(self, pattern: str, count: int) -> None:
        """``pattern`` dropped ``count`` partial matches (or group instances) to stay within a cap."""
        self.dropped += count
        self.dropped_by_pattern[pattern] = self.dropped_by_pattern.get(pattern, 0) + count

    def warn_once(self, pattern: str, topic: str, message: str) -> bool:
        """Give ``message`` as a ``RuntimeWarning`` unless ``pattern`` already warned of ``topic``.

        >>> import warnings
        >>> b = Budget()
        >>> with warnings.catch_warnings(record=True) as seen:
        ...     warnings.simplefilter("always")
        ...     [b.warn_once("p", "cap", "too many") for _ in range(3)]
        [True, False, False]
        >>> len(seen)
        1
        """
        if (pattern, topic) in self.warned:
            return False
        self.warned.add((pattern, topic))
        warnings.warn(message, RuntimeWarning, stacklevel=3)
        return True
