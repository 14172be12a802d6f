"""Incremental aggregates: O(1) accumulators for pattern conditions and window accumulators.

Every aggregate follows one small protocol (:class:`Aggregate`, river style):

* ``update(x) -> None`` adds one value, ``revert(x) -> None`` removes a value added earlier,
* ``get()`` reads the current result,
* ``copy() -> Self`` returns an independent copy of the state. For the scalar aggregates (count,
  sum, avg, min, max, first, last, var, std) the copy is O(1): it copies a few numbers, never the
  values seen, so a branching partial match pays O(number of aggregates) per fork.

Optionally an aggregate has ``get_with(x)``: the result *as if* ``x`` had been added, without
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
a sum that becomes empty is reset to exactly ``0``. The windows of conditions (``avg(e.x over
last 5min)``) use the exact aggregates of :mod:`~workbench.engine.aggregates.exact` instead.
Without reverts, sums are accumulated in arrival order, so they are bit-identical to a
left-to-right recomputation (what Flink does).

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

from workbench.engine.aggregates.base import Aggregate, RevertMode, input_of, value_with
from workbench.engine.aggregates.holistic import Collect, CountBy, TopN
from workbench.engine.aggregates.ordered import First, Last, Max, Min
from workbench.engine.aggregates.registry import GroupBy, aggregate_names, make_aggregate, register_aggregate
from workbench.engine.aggregates.rolling import Rolling, TimeRolling
from workbench.engine.aggregates.scalar import Avg, Count, Std, Sum, Var

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
