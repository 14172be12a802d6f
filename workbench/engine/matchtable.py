"""Plain matches held as columns, and a detection list built from them only when someone looks.

A vectorised replay finds tens of thousands of matches as arrays. Building a
:class:`~workbench.engine.detection.Detection` (and an :class:`~workbench.engine.events.Event` per
row it holds) for each costs more than finding them, and the usual next step, a DataFrame of the
detections, needs none of those objects: :class:`MatchTable` has its columns, and
:class:`LazyDetections` is the list a run returns, built on first access (length, indexing,
iteration, comparison) and equal to the one the engine would have returned.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass
from typing import overload

from workbench.engine.detection import Detection

__all__ = ["LazyDetections", "MatchTable"]


@dataclass(frozen=True, slots=True)
class MatchTable:
    """Matches (``kind == "match"``, no ``negated``, initiator, ``extra`` or measures) as columns,
    one entry per detection in output order.

    Attributes:
        pattern / key / instance / time: each detection's fields.
        seqs / types / channels: each detection's events' ``seq`` and type, and their channels.
        times: every detection's event times, detection after detection (``len(seqs[i])`` each).
    """

    pattern: list[str]
    key: list[Hashable]
    instance: list[int]
    time: list[int | float]
    seqs: list[tuple[int, ...]]
    types: list[tuple[str, ...]]
    channels: list[tuple[str, ...]]
    times: list[int | float]

    def __len__(self) -> int:
        return len(self.pattern)


class LazyDetections(Sequence[Detection]):
    """The detections of a :class:`MatchTable`, built by ``build()`` on first use (then kept).

    It reads as the list the engine returns: ``len``, indexing and slicing, iteration, ``==`` with
    a list, ``+``; pickling gives that plain list.
    """

    __slots__ = ("_build", "_items", "measured", "table")

    def __init__(
        self, table: MatchTable, build: Callable[[], list[Detection]], *, measured: bool = False
    ) -> None:
        self.table = table
        self._build: Callable[[], list[Detection]] | None = build
        self._items: list[Detection] | None = None
        #: the detections carry measures the table does not hold (a DataFrame reads them from the items)
        self.measured = measured

    def items(self) -> list[Detection]:
        """The detections as a list (built now if not yet)."""
        if self._items is None:
            assert self._build is not None
            self._items = self._build()
            self._build = None  # why: the closure holds the replay's columns
        return self._items

    def __len__(self) -> int:
        return len(self.table)

    @overload
    def __getitem__(self, i: int) -> Detection: ...
    @overload
    def __getitem__(self, i: slice) -> list[Detection]: ...
    def __getitem__(self, i: int | slice) -> Detection | list[Detection]:
        return self.items()[i]

    def __iter__(self) -> Iterator[Detection]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyDetections):
            other = other.items()
        return isinstance(other, list) and self.items() == other

    __hash__ = None  # type: ignore[assignment]  # like a list

    def __add__(self, other: Sequence[Detection]) -> list[Detection]:
        return [*self.items(), *other]

    def __radd__(self, other: Sequence[Detection]) -> list[Detection]:
        return [*other, *self.items()]

    def __reduce__(self) -> tuple[type[list[Detection]], tuple[list[Detection]]]:
        return list, (self.items(),)

    def __repr__(self) -> str:
        return repr(self.items())
