"""Incremental aggregates: O(1) accumulators for pattern conditions and window accumulators.

Every aggregate follows one small protocol (:class:`Aggregate`, river style):

* ``update(x) -> None`` adds one value, ``revert(x) -> None`` removes a value added earlier,
* ``get() -> Any`` reads the current result,
* ``copy() -> Self`` returns an independent copy of the state. For the scalar aggregates (count,
  sum, avg, min, max, first, last, var, std) the copy is O(1): it copies a few numbers, never the
  values seen, so a branching partial match pays O(number of aggregates) per fork.

Optionally an aggregate has ``get_with(x) -> Any``: the result *as if* ``x`` had been added, without
changing the state. :func:`value_with` uses it (falling back to copy + update + get). That is how the
two conventions for "is the current event included?" are served at the same O(1) cost:

* **MATCH_RECOGNIZE** (SQL ``DEFINE``): the aggregate of the variable being defined includes the
  current row, tentatively: ``value_with(agg, x)``. A sequence pattern asks for it per aggregate
  (``AggregateSpec(include_current=True)``; ``aggregate m = avg(b.price) including current`` in
  ``%%cep`` text).
* **Flink CEP** (``IterativeCondition`` + ``ctx.getEventsForPattern``, IBM ``MatchRegex``): the
  aggregate covers only the events taken before the current one: ``agg.get()``.

Either way the value is read without recomputing anything from the matched events; Flink
recomputes it from the shared buffer on every evaluation (O(run length)).

Nulls follow the expression language (``docs/language.md``): ``count``, ``sum``, ``avg``, ``min``,
``max``, ``var`` and ``std`` ignore ``None``; an aggregate over no (non-null) value is ``None``, except
``count`` and ``sum``, which are ``0`` (so Flink's ``sum(a.v) + e.v < 5`` holds on the first event).
``first`` and ``last`` are navigation, so they keep ``None`` values. An aggregate reads an event's
field as conditions do (:func:`input_of`): a missing field, ``None`` and NaN are ``None``.
Per-instance state is plain picklable data (numbers, deques, dicts, and the name/parameters of
sub-aggregates, never a callable).

Revert and the non-invertible aggregates. ``min``, ``max``, ``first`` and ``last`` cannot undo an
update from O(1) state, so they take ``revert=``:

* ``"none"`` (default): O(1) update, get and copy; :meth:`~Min.revert` raises :class:`CepError`.
  This is what partial matches need: runs only grow, and expiry or skipping drops whole runs.
* ``"fifo"``: reverts come in the order of the updates (sliding windows: :class:`Rolling`,
  :class:`TimeRolling`). ``min``/``max`` keep a *monotonic deque* of the values that can still become
  the extreme (O(1) amortized per update and revert, O(window) memory); ``first``/``last`` keep the
  window's values. An out-of-order revert that can be detected raises :class:`CepError`.
* ``"any"``: reverts in any order. ``min``/``max`` keep a *counted multiset* ``{value: multiplicity}``
  plus the cached extreme; revert is O(1) unless it removes the last copy of the extreme, which
  rescans the distinct values. Copy is O(distinct values).

Floating-point sums that are reverted drift by rounding (``(a + b) - b`` need not equal ``a``);
a sum that becomes empty is reset to exactly ``0``. Without reverts, sums are accumulated in arrival
order, so they are bit-identical to a left-to-right recomputation (what Flink does).

Window accumulators for ``@timer``/``@size`` groups: :class:`CountBy` (Prova's ``MapCounter``),
:class:`GroupBy` (any aggregate per key, e.g. Prova's ``SortedAccumulator`` is
``GroupBy("collect")``), :class:`TopN` (the n largest values) and :class:`Collect`.

User-defined aggregates implement the same protocol and are registered by name:

>>> class Product:
...     def __init__(self):
...         self.p = 1.0
...     def update(self, x):
...         self.p *= x
...     def revert(self, x):
...         self.p /= x
...     def get(self):
...         return self.p
...     def copy(self):
...         c = Product()
...         c.p = self.p
...         return c
>>> register_aggregate("product_doc", Product, replace=True)
>>> agg = make_aggregate("product_doc")
>>> agg.update(2.0); agg.update(4.0); agg.get()
8.0
"""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Callable, Hashable, Iterable
from typing import Any, Literal, Protocol, Self, cast, runtime_checkable

from workbench.engine.events import Event
from workbench.engine.expr import clean
from workbench.errors import CepError, PatternError

__all__ = [
    "Aggregate",
    "Avg",
    "Collect",
    "Count",
    "CountBy",
    "First",
    "GroupBy",
    "Last",
    "Max",
    "Min",
    "RevertMode",
    "Rolling",
    "Std",
    "Sum",
    "TimeRolling",
    "TopN",
    "Var",
    "aggregate_names",
    "input_of",
    "make_aggregate",
    "register_aggregate",
    "value_with",
]

RevertMode = Literal["none", "fifo", "any"]
_MODES = ("none", "fifo", "any")


@runtime_checkable
class Aggregate(Protocol):
    """The protocol every aggregate implements (built-in or user-defined)."""

    def update(self, x: Any) -> None:
        """Add one value."""
        ...

    def revert(self, x: Any) -> None:
        """Remove a value that an earlier :meth:`update` added."""
        ...

    def get(self) -> Any:
        """The current result."""
        ...

    def copy(self) -> Self:
        """An independent copy of the state."""
        ...


def input_of(event: Event, field: str | None) -> Any:
    """What an aggregate over ``field`` (``None``: the events themselves) takes from ``event``.

    >>> from workbench.engine.events import Event
    >>> input_of(Event("a", 1, None, {"p": float("nan")}), "p") is None, input_of(Event("a", 1), "q")
    (True, None)
    """
    return event if field is None else clean(event.fields.get(field))


def value_with(agg: Aggregate, x: Any) -> Any:
    """The aggregate's result as if ``x`` were added, leaving ``agg`` unchanged.

    Uses ``agg.get_with(x)`` when the aggregate has it (all built-ins: O(1)), else copies.

    >>> s = Sum(); s.update(2)
    >>> value_with(s, 3), s.get()
    (5, 2)
    """
    get_with = getattr(agg, "get_with", None)
    if get_with is not None:
        return get_with(x)
    probe = agg.copy()
    probe.update(x)
    return probe.get()


def _check_mode(revert: str, name: str, allowed: tuple[str, ...] = _MODES) -> None:
    if revert not in allowed:
        msg = f"{name}: revert must be one of {list(allowed)}, got {revert!r}"
        raise PatternError(msg, element=name)


def _positive(value: object, what: str, element: str, *, integer: bool) -> None:
    kinds = (int,) if integer else (int, float)
    ok = isinstance(value, kinds) and not isinstance(value, bool) and value > 0
    if not ok:
        kind = "a positive integer" if integer else "a positive number"
        msg = f"{element}: {what} must be {kind}, got {value!r}"
        raise PatternError(msg, element=element)


def _no_revert(name: str) -> CepError:
    msg = (
        f"{name}(revert='none') cannot revert a value; create it with revert='fifo' (sliding windows) "
        f"or revert='any' (any order), e.g. make_aggregate({name!r}, revert='fifo')"
    )
    return CepError(msg)


class _Base:
    """Shared helpers: a readable repr and state equality over the slots."""

    __slots__ = ()

    def _fields(self) -> tuple[Any, ...]:
        return tuple(getattr(self, s) for c in type(self).__mro__ for s in getattr(c, "__slots__", ()))

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        assert isinstance(other, _Base)
        return self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable state

    def __repr__(self) -> str:
        return f"{type(self).__name__}(get={self.get()!r})"

    def get(self) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    @property
    def revertible(self) -> bool:
        """Whether :meth:`revert` is supported in this configuration."""
        return True


# ---------------------------------------------------------------------------------------------- scalar


class Count(_Base):
    """Number of non-null values (SQL ``COUNT(x)``; pass the event itself for ``COUNT(*)``).

    >>> c = Count(); c.update(1); c.update(None); c.get()
    1
    """

    __slots__ = ("n",)

    def __init__(self) -> None:
        self.n = 0

    def update(self, x: Any) -> None:
        if x is not None:
            self.n += 1

    def revert(self, x: Any) -> None:
        if x is not None:
            if self.n == 0:
                msg = "count: revert without a matching update"
                raise CepError(msg)
            self.n -= 1

    def get(self) -> int:
        return self.n

    def get_with(self, x: Any) -> int:
        return self.n + (x is not None)

    def copy(self) -> Count:
        c = Count.__new__(Count)
        c.n = self.n
        return c


class Sum(_Base):
    """Sum of the non-null values, in arrival order; ``None`` when there is none.

    >>> s = Sum(); s.update(1.5); s.update(2); s.get()
    3.5
    """

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.total: Any = 0
        self.n = 0

    def update(self, x: Any) -> None:
        if x is not None:
            self.total += x
            self.n += 1

    def revert(self, x: Any) -> None:
        if x is not None:
            if self.n == 0:
                msg = "sum: revert without a matching update"
                raise CepError(msg)
            self.n -= 1
            self.total = self.total - x if self.n else 0

    def get(self) -> Any:
        return self.total if self.n else 0

    def get_with(self, x: Any) -> Any:
        if x is None:
            return self.get()
        return self.total + x

    def copy(self) -> Sum:
        c = Sum.__new__(Sum)
        c.total, c.n = self.total, self.n
        return c


class Avg(Sum):
    """Arithmetic mean of the non-null values (``sum / count``); ``None`` when there is none.

    >>> a = Avg(); a.update(1); a.update(2); a.get()
    1.5
    """

    __slots__ = ()

    def get(self) -> Any:
        return self.total / self.n if self.n else None

    def get_with(self, x: Any) -> Any:
        if x is None:
            return self.get()
        return (self.total + x) / (self.n + 1)

    def copy(self) -> Avg:
        c = Avg.__new__(Avg)
        c.total, c.n = self.total, self.n
        return c


class _Extreme(_Base):
    """Min or max, with the three revert modes described in the module docstring."""

    __slots__ = ("_best", "_counts", "_n", "_popped", "_pushed", "_window", "mode")
    _name = "extreme"

    def __init__(self, revert: RevertMode = "none") -> None:
        _check_mode(revert, self._name)
        self.mode: str = revert
        self._best: Any = None
        self._n = 0  # non-null values held (mode "none": ever added)
        self._window: deque[tuple[int, Any]] | None = deque() if revert == "fifo" else None
        self._pushed = 0
        self._popped = 0
        self._counts: dict[Any, int] | None = {} if revert == "any" else None

    @property
    def revertible(self) -> bool:
        return self.mode != "none"

    def _better(self, a: Any, b: Any) -> bool:  # pragma: no cover - overridden
        raise NotImplementedError

    def update(self, x: Any) -> None:
        if x is None:
            return
        self._n += 1
        window = self._window
        if window is not None:
            better = self._better
            while window and better(x, window[-1][1]):
                window.pop()
            window.append((self._pushed, x))
            self._pushed += 1
            self._best = window[0][1]
            return
        if self._counts is not None:
            self._counts[x] = self._counts.get(x, 0) + 1
        if self._n == 1 or self._better(x, self._best):
            self._best = x

    def revert(self, x: Any) -> None:
        if x is None:
            return
        if self.mode == "none":
            raise _no_revert(self._name)
        if self._n == 0:
            msg = f"{self._name}: revert without a matching update"
            raise CepError(msg)
        window = self._window
        if window is not None:
            index = self._popped
            if window and window[0][0] == index:
                if window[0][1] != x:
                    oldest = window[0][1]
                    msg = f"{self._name}(revert='fifo'): reverted {x!r} but the oldest value is {oldest!r}"
                    raise CepError(msg)
                window.popleft()
            elif not window or not self._better(window[0][1], x):
                msg = f"{self._name}(revert='fifo'): revert of {x!r} is not in update order"
                raise CepError(msg)
            self._popped += 1
            self._n -= 1
            self._best = window[0][1] if window else None
            return
        counts = self._counts
        assert counts is not None
        have = counts.get(x, 0)
        if have == 0:
            msg = f"{self._name}(revert='any'): {x!r} was never added (or already reverted)"
            raise CepError(msg)
        self._n -= 1
        if have > 1:
            counts[x] = have - 1
            return
        del counts[x]
        if x == self._best:
            self._best = self._pick(counts) if counts else None

    def _pick(self, values: Iterable[Any]) -> Any:  # pragma: no cover - overridden
        raise NotImplementedError

    def get(self) -> Any:
        return self._best if self._n else None

    def get_with(self, x: Any) -> Any:
        if x is None:
            return self.get()
        if self._n == 0 or self._better(x, self._best):
            return x
        return self._best

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        c.mode, c._best, c._n, c._pushed, c._popped = (
            self.mode,
            self._best,
            self._n,
            self._pushed,
            self._popped,
        )
        c._window = None if self._window is None else deque(self._window)
        c._counts = None if self._counts is None else dict(self._counts)
        return c


class Min(_Extreme):
    """Smallest non-null value; ``None`` when there is none.

    >>> m = Min(revert="fifo"); m.update(3); m.update(1); m.update(2); m.revert(3); m.revert(1); m.get()
    2
    """

    __slots__ = ()
    _name = "min"

    def _better(self, a: Any, b: Any) -> bool:
        return bool(a < b)

    def _pick(self, values: Iterable[Any]) -> Any:
        return min(values)


class Max(_Extreme):
    """Largest non-null value; ``None`` when there is none.

    >>> m = Max(revert="any"); m.update(3); m.update(5); m.revert(5); m.get()
    3
    """

    __slots__ = ()
    _name = "max"

    def _better(self, a: Any, b: Any) -> bool:
        return bool(a > b)

    def _pick(self, values: Iterable[Any]) -> Any:
        return max(values)


class _Navigation(_Base):
    """First or last value (``None`` values included); ``revert`` in ``"fifo"`` mode only."""

    __slots__ = ("_first", "_last", "_n", "_window", "mode")
    _name = "navigation"

    def __init__(self, revert: RevertMode = "none") -> None:
        _check_mode(revert, self._name, ("none", "fifo"))
        self.mode: str = revert
        self._first: Any = None
        self._last: Any = None
        self._n = 0
        self._window: deque[Any] | None = deque() if revert == "fifo" else None

    @property
    def revertible(self) -> bool:
        return self.mode != "none"

    def update(self, x: Any) -> None:
        if self._n == 0:
            self._first = x
        self._last = x
        self._n += 1
        if self._window is not None:
            self._window.append(x)

    def revert(self, x: Any) -> None:
        window = self._window
        if window is None:
            raise _no_revert(self._name)
        if not window:
            msg = f"{self._name}: revert without a matching update"
            raise CepError(msg)
        if window[0] != x:
            msg = f"{self._name}(revert='fifo'): reverted {x!r} but the oldest value is {window[0]!r}"
            raise CepError(msg)
        window.popleft()
        self._n -= 1
        self._first = window[0] if window else None
        if not window:
            self._last = None

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        c.mode, c._first, c._last, c._n = self.mode, self._first, self._last, self._n
        c._window = None if self._window is None else deque(self._window)
        return c


class First(_Navigation):
    """The first value added (SQL ``FIRST``, MatchRegex ``First``).

    >>> f = First(); f.update("a"); f.update("b"); f.get()
    'a'
    """

    __slots__ = ()
    _name = "first"

    def get(self) -> Any:
        return self._first

    def get_with(self, x: Any) -> Any:
        return self._first if self._n else x


class Last(_Navigation):
    """The last value added (SQL ``LAST``, MatchRegex ``Last``).

    >>> f = Last(); f.update("a"); f.update("b"); f.get()
    'b'
    """

    __slots__ = ()
    _name = "last"

    def get(self) -> Any:
        return self._last

    def get_with(self, x: Any) -> Any:
        return x


class Var(_Base):
    """Variance of the non-null values by Welford's algorithm (numerically stable), with revert.

    ``ddof=1`` (default) is the sample variance (pandas ``var()``, ``statistics.variance``, SQL
    ``VAR_SAMP``); ``ddof=0`` the population variance. ``None`` while ``count <= ddof``.

    >>> v = Var(); v.update(1.0); v.update(2.0); v.update(3.0); v.get()
    1.0
    """

    __slots__ = ("ddof", "m2", "mean", "n")

    def __init__(self, ddof: int = 1) -> None:
        if ddof not in (0, 1):
            msg = f"var/std: ddof must be 0 or 1, got {ddof!r}"
            raise PatternError(msg, element="var")
        self.ddof = ddof
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0

    def update(self, x: Any) -> None:
        if x is None:
            return
        self.n += 1
        delta = x - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (x - self.mean)

    def revert(self, x: Any) -> None:
        if x is None:
            return
        if self.n == 0:
            msg = "var: revert without a matching update"
            raise CepError(msg)
        if self.n == 1:
            self.n, self.mean, self.m2 = 0, 0.0, 0.0
            return
        old_mean = self.mean
        self.n -= 1
        self.mean = (old_mean * (self.n + 1) - x) / self.n
        self.m2 = max(self.m2 - (x - self.mean) * (x - old_mean), 0.0)

    def _result(self, n: int, m2: float) -> float | None:
        return m2 / (n - self.ddof) if n > self.ddof else None

    def get(self) -> float | None:
        return self._result(self.n, self.m2)

    def get_with(self, x: Any) -> float | None:
        if x is None:
            return self.get()
        n = self.n + 1
        delta = x - self.mean
        mean = self.mean + delta / n
        return self._result(n, self.m2 + delta * (x - mean))

    def copy(self) -> Self:
        c = type(self).__new__(type(self))
        c.ddof, c.n, c.mean, c.m2 = self.ddof, self.n, self.mean, self.m2
        return c


class Std(Var):
    """Standard deviation: the square root of :class:`Var` (same ``ddof``).

    >>> s = Std(ddof=0); s.update(1.0); s.update(3.0); s.get()
    1.0
    """

    __slots__ = ()

    def _result(self, n: int, m2: float) -> float | None:
        v = super()._result(n, m2)
        return None if v is None else math.sqrt(v)


# ---------------------------------------------------------------------------------------------- windows


class Collect(_Base):
    """All non-null values in arrival order (holistic: O(n) memory and copy). Revert removes the oldest
    equal value. With ``keep_nulls`` the ``None`` values are kept too (Prova's ``SortedAccumulator``).

    >>> c = Collect(); c.update(2); c.update(None); c.update(1); c.get()
    [2, 1]
    >>> c = Collect(keep_nulls=True); c.update(None); c.get()
    [None]
    """

    __slots__ = ("keep_nulls", "values")

    def __init__(self, keep_nulls: bool = False) -> None:
        self.keep_nulls = keep_nulls
        self.values: list[Any] = []

    def update(self, x: Any) -> None:
        if x is not None or self.keep_nulls:
            self.values.append(x)

    def revert(self, x: Any) -> None:
        if x is None and not self.keep_nulls:
            return
        try:
            self.values.remove(x)
        except ValueError:
            msg = f"collect: {x!r} was never added (or already reverted)"
            raise CepError(msg) from None

    def get(self) -> list[Any]:
        return list(self.values)

    def copy(self) -> Collect:
        c = Collect.__new__(Collect)
        c.keep_nulls, c.values = self.keep_nulls, list(self.values)
        return c


class CountBy(_Base):
    """Occurrences per key (Prova's ``MapCounter``): ``update(k)`` counts ``k``.

    ``get()`` is a ``{key: count}`` dict in first-seen order (keys whose count fell to 0 are gone);
    :attr:`total` is the number of counted keys, :meth:`top` the most frequent ones.

    >>> c = CountBy()
    >>> for k in "abcab": c.update(k)
    >>> c.get(), c.total, c.top(1)
    ({'a': 2, 'b': 2, 'c': 1}, 5, [('a', 2)])
    """

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts: dict[Hashable, int] = {}
        self.total = 0

    def update(self, x: Hashable) -> None:
        self.counts[x] = self.counts.get(x, 0) + 1
        self.total += 1

    def revert(self, x: Hashable) -> None:
        have = self.counts.get(x, 0)
        if have == 0:
            msg = f"count_by: key {x!r} was never counted (or already reverted)"
            raise CepError(msg)
        if have == 1:
            del self.counts[x]
        else:
            self.counts[x] = have - 1
        self.total -= 1

    def get(self) -> dict[Hashable, int]:
        return dict(self.counts)

    def get_with(self, x: Hashable) -> dict[Hashable, int]:
        out = dict(self.counts)
        out[x] = out.get(x, 0) + 1
        return out

    def top(self, n: int) -> list[tuple[Hashable, int]]:
        """The ``n`` most frequent keys with their counts; ties keep first-seen order."""
        order = {k: i for i, k in enumerate(self.counts)}
        return heapq.nsmallest(n, self.counts.items(), key=lambda kv: (-kv[1], order[kv[0]]))

    def copy(self) -> CountBy:
        c = CountBy.__new__(CountBy)
        c.counts, c.total = dict(self.counts), self.total
        return c


class TopN(_Base):
    """The ``n`` largest non-null values, largest first (``largest=False``: the ``n`` smallest).

    Keeps a counted multiset of every value in the window, so any value can be reverted.

    >>> t = TopN(2)
    >>> for x in [5, 1, 9, 7]: t.update(x)
    >>> t.get()
    [9, 7]
    """

    __slots__ = ("counts", "largest", "n")

    def __init__(self, n: int, largest: bool = True) -> None:
        _positive(n, "n", "top_n", integer=True)
        self.n = n
        self.largest = largest
        self.counts: dict[Any, int] = {}

    def update(self, x: Any) -> None:
        if x is not None:
            self.counts[x] = self.counts.get(x, 0) + 1

    def revert(self, x: Any) -> None:
        if x is None:
            return
        have = self.counts.get(x, 0)
        if have == 0:
            msg = f"top_n: {x!r} was never added (or already reverted)"
            raise CepError(msg)
        if have == 1:
            del self.counts[x]
        else:
            self.counts[x] = have - 1

    def get(self) -> list[Any]:
        pick = heapq.nlargest if self.largest else heapq.nsmallest
        out: list[Any] = []
        for value in pick(self.n, self.counts):
            out.extend([value] * min(self.counts[value], self.n - len(out)))
            if len(out) >= self.n:
                break
        return out

    def copy(self) -> TopN:
        c = TopN.__new__(TopN)
        c.n, c.largest, c.counts = self.n, self.largest, dict(self.counts)
        return c


class GroupBy(_Base):
    """One aggregate per key: ``update((key, value))``; ``get()`` is ``{key: result}``.

    The per-key aggregates are built with :func:`make_aggregate` from a registered name and
    parameters, so the state stays picklable. Prova's ``SortedAccumulator`` is
    ``GroupBy("collect")``.

    >>> g = GroupBy("sum")
    >>> for kv in [("a", 1), ("b", 2), ("a", 3)]: g.update(kv)
    >>> g.get()
    {'a': 4, 'b': 2}
    """

    __slots__ = ("groups", "name", "params")

    def __init__(self, name: str, **params: Any) -> None:
        make_aggregate(name, **params)  # validate now, not at the first event
        self.name = name
        self.params = params
        self.groups: dict[Hashable, Aggregate] = {}

    def update(self, x: tuple[Hashable, Any]) -> None:
        key, value = x
        agg = self.groups.get(key)
        if agg is None:
            agg = self.groups[key] = make_aggregate(self.name, **self.params)
        agg.update(value)

    def revert(self, x: tuple[Hashable, Any]) -> None:
        key, value = x
        agg = self.groups.get(key)
        if agg is None:
            msg = f"group_by: key {key!r} has no values to revert"
            raise CepError(msg)
        agg.revert(value)

    def get(self) -> dict[Hashable, Any]:
        return {k: a.get() for k, a in self.groups.items()}

    def copy(self) -> GroupBy:
        c = GroupBy.__new__(GroupBy)
        c.name, c.params = self.name, dict(self.params)
        c.groups = {k: a.copy() for k, a in self.groups.items()}
        return c


# ---------------------------------------------------------------------------------------------- rolling


def _require_revert(agg: Aggregate, wrapper: str) -> None:
    if not getattr(agg, "revertible", True):
        msg = f"{wrapper} needs an aggregate that can revert; got {agg!r} (use revert='fifo')"
        raise PatternError(msg, element=wrapper)


class Rolling(_Base):
    """Any revertible aggregate over the last ``window_size`` values (count-based sliding window).

    >>> r = Rolling(Sum(), 2)
    >>> for x in [1, 2, 3]: r.update(x)
    >>> r.get()
    5
    """

    __slots__ = ("agg", "values", "window_size")

    def __init__(self, agg: Aggregate, window_size: int) -> None:
        _positive(window_size, "window_size", "rolling", integer=True)
        _require_revert(agg, "rolling")
        self.agg = agg
        self.window_size = window_size
        self.values: deque[Any] = deque()

    def update(self, x: Any) -> None:
        if len(self.values) == self.window_size:
            self.agg.revert(self.values.popleft())
        self.values.append(x)
        self.agg.update(x)

    def revert(self, x: Any) -> None:
        """Remove the oldest value (which must equal ``x``) before the window would."""
        if not self.values or self.values[0] != x:
            msg = f"rolling: can only revert the oldest value, got {x!r}"
            raise CepError(msg)
        self.agg.revert(self.values.popleft())

    def get(self) -> Any:
        return self.agg.get()

    def copy(self) -> Rolling:
        c = Rolling.__new__(Rolling)
        c.agg, c.window_size, c.values = self.agg.copy(), self.window_size, deque(self.values)
        return c


class TimeRolling(_Base):
    """Any revertible aggregate over the values of the last ``period`` (ms) of event time.

    ``update(x, t)`` adds ``x`` at time ``t`` (non-decreasing) and drops values with
    ``t - t_i >= period`` (strict window, like Flink's ``within``); :meth:`expire` drops them when time
    advances without a value (a timer).

    >>> r = TimeRolling(Count(), period=10)
    >>> r.update("a", t=0); r.update("b", t=5); r.update("c", t=10); r.get()
    2
    """

    __slots__ = ("agg", "now", "period", "values")

    def __init__(self, agg: Aggregate, period: int | float) -> None:
        _positive(period, "period (ms)", "time_rolling", integer=False)
        _require_revert(agg, "time_rolling")
        self.agg = agg
        self.period = period
        self.values: deque[tuple[int | float, Any]] = deque()
        self.now: int | float = -math.inf

    def update(self, x: Any, t: int | float | None = None) -> None:
        if t is None:
            msg = "time_rolling: update needs the value's time: update(x, t=...)"
            raise CepError(msg)
        self.expire(t)
        self.values.append((t, x))
        self.agg.update(x)

    def expire(self, now: int | float) -> None:
        """Advance the clock to ``now`` and drop the values that left the window."""
        if now < self.now:
            msg = f"time_rolling: time went backwards ({now!r} < {self.now!r})"
            raise CepError(msg)
        self.now = now
        values, horizon = self.values, now - self.period
        while values and values[0][0] <= horizon:
            self.agg.revert(values.popleft()[1])

    def revert(self, x: Any) -> None:
        """Remove the oldest value (which must equal ``x``) before the window would."""
        if not self.values or self.values[0][1] != x:
            msg = f"time_rolling: can only revert the oldest value, got {x!r}"
            raise CepError(msg)
        self.agg.revert(self.values.popleft()[1])

    def get(self) -> Any:
        return self.agg.get()

    def copy(self) -> TimeRolling:
        c = TimeRolling.__new__(TimeRolling)
        c.agg, c.period, c.now, c.values = self.agg.copy(), self.period, self.now, deque(self.values)
        return c


# ---------------------------------------------------------------------------------------------- registry

AggregateFactory = Callable[..., Aggregate]

_REGISTRY: dict[str, AggregateFactory] = {
    "count": Count,
    "sum": Sum,
    "avg": Avg,
    "mean": Avg,
    "min": Min,
    "max": Max,
    "first": First,
    "last": Last,
    "var": Var,
    "variance": Var,
    "std": Std,
    "stddev": Std,
    "collect": Collect,
    "count_by": CountBy,
    "top_n": TopN,
    "group_by": GroupBy,
}
_BUILTIN = frozenset(_REGISTRY)
_FIFO_CAPABLE = frozenset({"min", "max", "first", "last"})


def register_aggregate(name: str, factory: object, /, *, replace: bool = False) -> None:
    """Make ``factory(**params)`` available as ``make_aggregate(name, **params)``.

    Built-in names cannot be replaced; a user name can be re-registered with ``replace=True``
    (notebook cells are re-run).

    >>> register_aggregate("sum_doc", Sum)
    >>> make_aggregate("sum_doc").get()
    0
    """
    if not str(name).isidentifier():
        msg = f"aggregate name must be an identifier, got {name!r}"
        raise PatternError(msg)
    if not callable(factory):
        msg = f"aggregate {name!r}: factory must be callable, got {factory!r}"
        raise PatternError(msg, element=name)
    if name in _BUILTIN:
        msg = f"aggregate {name!r} is built in and cannot be replaced"
        raise PatternError(msg, element=name)
    if name in _REGISTRY and not replace and _REGISTRY[name] is not factory:
        msg = f"aggregate {name!r} is already registered; pass replace=True to redefine it"
        raise PatternError(msg, element=name)
    _REGISTRY[name] = cast("AggregateFactory", factory)


def aggregate_names() -> list[str]:
    """The registered aggregate names, sorted.

    >>> "avg" in aggregate_names()
    True
    """
    return sorted(_REGISTRY)


def make_aggregate(
    name: str, /, *, window: int | None = None, period: int | float | None = None, **params: Any
) -> Aggregate:
    """A fresh aggregate by registered name.

    ``window=n`` wraps it in :class:`Rolling`, ``period=ms`` in :class:`TimeRolling`; for ``min``,
    ``max``, ``first`` and ``last`` the revert mode then defaults to ``"fifo"``.

    >>> make_aggregate("max", window=2).get() is None
    True
    """
    factory = _REGISTRY.get(name)
    if factory is None:
        msg = f"unknown aggregate {name!r}; known: {', '.join(aggregate_names())}"
        raise PatternError(msg, element=name)
    if window is not None and period is not None:
        msg = f"aggregate {name!r}: give window= (count) or period= (time), not both"
        raise PatternError(msg, element=name)
    if (window is not None or period is not None) and name in _FIFO_CAPABLE:
        params.setdefault("revert", "fifo")
    try:
        agg = factory(**params)
    except TypeError as err:
        msg = f"aggregate {name!r}: bad parameters {params!r}: {err}"
        raise PatternError(msg, element=name) from None
    if window is not None:
        return Rolling(agg, window)
    if period is not None:
        return TimeRolling(agg, period)
    return agg
