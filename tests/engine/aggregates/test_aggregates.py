"""Contract tests for workbench.engine.aggregates: pickle, revert, copy, and agreement with pandas."""

from __future__ import annotations

import functools
import math
import pickle
import statistics
from collections import Counter
from collections.abc import Callable
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workbench.engine.aggregates import (
    Aggregate,
    Avg,
    Collect,
    Count,
    CountBy,
    First,
    GroupBy,
    Last,
    Max,
    Min,
    Rolling,
    Std,
    Sum,
    TimeRolling,
    TopN,
    Var,
    aggregate_names,
    make_aggregate,
    register_aggregate,
    value_with,
)
from workbench.errors import CepError, PatternError

floats = st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False)
ints = st.integers(-1000, 1000)
float_lists = st.lists(floats, max_size=60)
int_lists = st.lists(ints, max_size=60)

# Factories for every built-in configuration, by whether revert is supported.
SCALAR: dict[str, Callable[[], Aggregate]] = {
    "count": Count,
    "sum": Sum,
    "avg": Avg,
    "var": Var,
    "var0": lambda: Var(ddof=0),
    "std": Std,
    "min": Min,
    "max": Max,
    "min_fifo": lambda: Min(revert="fifo"),
    "max_fifo": lambda: Max(revert="fifo"),
    "min_any": lambda: Min(revert="any"),
    "max_any": lambda: Max(revert="any"),
    "first": First,
    "last": Last,
    "first_fifo": lambda: First(revert="fifo"),
    "last_fifo": lambda: Last(revert="fifo"),
    "collect": Collect,
    "top_n": lambda: TopN(3),
    "bottom_n": lambda: TopN(2, largest=False),
}
ANY_ORDER_REVERT = ["count", "sum", "avg", "min_any", "max_any", "top_n", "bottom_n"]
FIFO_REVERT = ["count", "sum", "avg", "min_fifo", "max_fifo", "first_fifo", "last_fifo", "min_any", "collect"]
NO_REVERT = ["min", "max", "first", "last"]


def fed(factory: Callable[[], Aggregate], xs: list[Any]) -> Aggregate:
    agg = factory()
    for x in xs:
        agg.update(x)
    return agg


def close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6)
    return bool(a == b)


# ------------------------------------------------------------------------------------------------ pickle


@pytest.mark.parametrize("name", sorted(SCALAR))
@given(xs=int_lists)
@settings(max_examples=25)
def test_pickle_round_trip(name: str, xs: list[int]) -> None:
    agg = fed(SCALAR[name], xs)
    back = pickle.loads(pickle.dumps(agg))
    assert back == agg
    assert back.get() == agg.get()
    back.update(7)
    agg.update(7)
    assert back.get() == agg.get()


def test_pickle_wrappers_and_groups() -> None:
    aggs: list[Any] = [
        Rolling(Min(revert="fifo"), 3),
        TimeRolling(Sum(), 10),
        GroupBy("avg"),
        CountBy(),
        make_aggregate("max", period=5),
    ]
    for agg in aggs:
        for i, x in enumerate([3, 1, 4, 1, 5]):
            if isinstance(agg, TimeRolling):
                agg.update(x, t=i * 2)
            elif isinstance(agg, GroupBy):
                agg.update((x % 2, x))
            else:
                agg.update(x)
        back = pickle.loads(pickle.dumps(agg))
        assert back == agg
        assert back.get() == agg.get()


# ------------------------------------------------------------------------------------------------ revert


@pytest.mark.parametrize("name", ANY_ORDER_REVERT)
@given(xs=int_lists, x=ints, data=st.data())
@settings(max_examples=40)
def test_revert_undoes_update_any_order(name: str, xs: list[int], x: int, data: st.DataObject) -> None:
    factory = SCALAR[name]
    position = data.draw(st.integers(0, len(xs)))
    agg = fed(factory, [*xs[:position], x, *xs[position:]])
    agg.revert(x)
    assert agg.get() == fed(factory, xs).get()


@pytest.mark.parametrize("name", FIFO_REVERT)
@given(xs=st.lists(ints, min_size=1, max_size=60), drop=st.integers(0, 60))
@settings(max_examples=40)
def test_revert_in_update_order(name: str, xs: list[int], drop: int) -> None:
    drop = min(drop, len(xs))
    agg = fed(SCALAR[name], xs)
    for x in xs[:drop]:
        agg.revert(x)
    assert agg.get() == fed(SCALAR[name], xs[drop:]).get()


@given(xs=float_lists, x=floats)
def test_revert_undoes_update_welford(xs: list[float], x: float) -> None:
    for ddof in (0, 1):
        agg = fed(functools.partial(Var, ddof=ddof), [*xs, x])
        agg.revert(x)
        want = fed(functools.partial(Var, ddof=ddof), xs).get()
        got = agg.get()
        if want is None:
            assert got is None
        else:
            # Reverting adds rounding relative to the magnitude of the data.
            scale = max([1.0, *(v * v for v in [*xs, x])])
            assert got is not None
            assert abs(got - want) <= 1e-7 * scale


@pytest.mark.parametrize("name", NO_REVERT)
def test_revert_none_mode_raises(name: str) -> None:
    agg = fed(SCALAR[name], [1, 2])
    with pytest.raises(CepError, match="revert='fifo'"):
        agg.revert(1)
    assert not getattr(agg, "revertible", True)


def test_fifo_out_of_order_is_detected() -> None:
    m = fed(lambda: Min(revert="fifo"), [5, 1, 3])
    with pytest.raises(CepError, match="not in update order"):
        m.revert(1)  # the oldest is 5 (dominated by 1): reverting 1 first is out of order
    m2 = fed(lambda: Max(revert="fifo"), [5, 1, 3])
    with pytest.raises(CepError, match="oldest value is 5"):
        m2.revert(3)
    f = fed(lambda: First(revert="fifo"), ["a", "b"])
    with pytest.raises(CepError, match="oldest value is 'a'"):
        f.revert("b")


def test_revert_of_unknown_value_raises() -> None:
    for agg in (Min(revert="any"), TopN(2), CountBy(), Collect()):
        agg.update(1)
        with pytest.raises(CepError, match="never"):
            agg.revert(2)
    for agg2 in (Count(), Sum(), Var()):
        with pytest.raises(CepError, match="without a matching update"):
            agg2.revert(1)


# ------------------------------------------------------------------------------------------------ values


@given(xs=float_lists)
def test_results_equal_pandas_and_statistics(xs: list[float]) -> None:
    s = pd.Series(xs, dtype="float64")
    n = len(xs)
    assert fed(Count, xs).get() == n == s.count()
    assert fed(Sum, xs).get() == sum(xs)  # arrival order: bit-identical; 0 for no values (as pandas)
    if n:
        assert close(fed(Sum, xs).get(), float(s.sum()))
        assert close(fed(Avg, xs).get(), float(s.mean()))
        assert close(fed(Avg, xs).get(), statistics.fmean(xs))
        assert fed(Min, xs).get() == s.min() == min(xs)
        assert fed(Max, xs).get() == s.max() == max(xs)
        assert fed(First, xs).get() == xs[0]
        assert fed(Last, xs).get() == xs[-1]
        assert fed(Collect, xs).get() == xs
        assert fed(lambda: TopN(3), xs).get() == sorted(xs, reverse=True)[:3]
    else:
        for empty in (Avg, Min, Max, Var, Std, First, Last):
            assert fed(empty, xs).get() is None
    scale = max([1.0, *(x * x for x in xs)])
    for ddof in (0, 1):
        var = fed(functools.partial(Var, ddof=ddof), xs).get()
        std = fed(functools.partial(Std, ddof=ddof), xs).get()
        if n <= ddof:
            assert var is None
            assert std is None
            continue
        assert var is not None
        assert std is not None
        assert abs(var - float(s.var(ddof=ddof))) <= 1e-9 * scale
        ref = statistics.pvariance(xs) if ddof == 0 else statistics.variance(xs)
        assert abs(var - ref) <= 1e-9 * scale
        assert math.isclose(std, math.sqrt(max(var, 0.0)))


def test_welford_is_numerically_stable() -> None:
    # The naive sum-of-squares formula loses every digit here; Welford keeps them.
    xs = [1e9 + 4, 1e9 + 7, 1e9 + 13, 1e9 + 16]
    assert fed(Var, xs).get() == pytest.approx(30.0, rel=1e-12)


def test_nulls_follow_sql() -> None:
    xs = [None, 2, None, 4]
    assert fed(Count, xs).get() == 2
    assert fed(Sum, xs).get() == 6
    assert fed(Avg, xs).get() == 3
    assert fed(Min, xs).get() == 2
    assert fed(Var, xs).get() == 2.0
    assert fed(Sum, [None]).get() == 0  # a sum over no values is 0 (pandas, and the expression language)
    assert fed(Count, [None]).get() == 0
    assert fed(First, xs).get() is None  # navigation keeps nulls
    assert fed(Last, [*xs, None]).get() is None


@pytest.mark.parametrize("name", sorted(SCALAR))
@given(xs=int_lists, x=st.one_of(ints, st.none()))
@settings(max_examples=25)
def test_value_with_includes_current_without_committing(name: str, xs: list[int], x: int | None) -> None:
    agg = fed(SCALAR[name], xs)
    before = agg.copy()
    want = fed(SCALAR[name], [*xs, x]).get()
    assert close(value_with(agg, x), want)
    assert agg == before


def test_value_with_falls_back_to_copy() -> None:
    class Plain:
        def __init__(self) -> None:
            self.items: list[int] = []

        def update(self, x: int) -> None:
            self.items.append(x)

        def revert(self, x: int) -> None:
            self.items.remove(x)

        def get(self) -> int:
            return len(self.items)

        def copy(self) -> Plain:
            c = Plain()
            c.items = list(self.items)
            return c

    p = Plain()
    p.update(1)
    assert value_with(p, 2) == 2
    assert p.get() == 1


# ------------------------------------------------------------------------------------------------ copy


@pytest.mark.parametrize("name", sorted(SCALAR))
@given(xs=int_lists, ys=int_lists, zs=int_lists)
@settings(max_examples=25)
def test_copy_is_independent(name: str, xs: list[int], ys: list[int], zs: list[int]) -> None:
    factory = SCALAR[name]
    original = fed(factory, xs)
    clone = original.copy()
    assert clone == original
    for y in ys:
        original.update(y)
    for z in zs:
        clone.update(z)
    assert original.get() == fed(factory, [*xs, *ys]).get()
    assert clone.get() == fed(factory, [*xs, *zs]).get()


def test_scalar_copies_do_not_grow_with_history() -> None:
    # O(1) copy: the copied state of the partial-match aggregates is a fixed handful of numbers.
    for name in ("count", "sum", "avg", "min", "max", "first", "last", "var", "std"):
        agg = fed(SCALAR[name], list(range(10_000)))
        state = pickle.dumps(agg.copy())
        assert len(state) < 300, name


# ------------------------------------------------------------------------------------------------ windows


@given(xs=st.lists(ints, max_size=80), w=st.integers(1, 8))
@settings(max_examples=60)
def test_rolling_equals_pandas(xs: list[int], w: int) -> None:
    s = pd.Series(xs, dtype="float64")
    checks: dict[str, Callable[[], Aggregate]] = {
        "sum": Sum,
        "mean": Avg,
        "min": lambda: Min(revert="fifo"),
        "max": lambda: Max(revert="fifo"),
        "var": Var,
        "std": Std,
    }
    for method, factory in checks.items():
        r = Rolling(factory(), w)
        ref = getattr(s.rolling(w, min_periods=1), method)().tolist()
        for x, want in zip(xs, ref, strict=True):
            r.update(x)
            got = r.get()
            if got is None:
                assert math.isnan(want)
                continue
            # Reverting accumulates rounding relative to the data's magnitude (|x| <= 1000 here).
            tol = 1e-3 if method == "std" else 1e-6 * max(1.0, abs(want))
            assert abs(got - want) <= tol, method


@given(
    steps=st.lists(st.tuples(st.integers(0, 7), ints), max_size=60),
    period=st.integers(1, 20),
)
def test_time_rolling_equals_brute_force(steps: list[tuple[int, int]], period: int) -> None:
    r = TimeRolling(Max(revert="fifo"), period)
    c = make_aggregate("count", period=period)
    assert isinstance(c, TimeRolling)
    t = 0
    seen: list[tuple[int, int]] = []
    for gap, x in steps:
        t += gap
        r.update(x, t=t)
        c.update(x, t=t)
        seen.append((t, x))
        live = [v for (ti, v) in seen if t - ti < period]
        assert r.get() == max(live)
        assert c.get() == len(live)
    r.expire(t + period)
    assert r.get() is None


def test_time_rolling_rejects_time_going_backwards() -> None:
    r = TimeRolling(Sum(), 10)
    r.update(1, t=5)
    with pytest.raises(CepError, match="backwards"):
        r.update(1, t=4)
    with pytest.raises(CepError, match="needs the value's time"):
        r.update(1)


def test_rolling_requires_revertible_aggregate() -> None:
    with pytest.raises(PatternError, match="revert='fifo'"):
        Rolling(Min(), 3)
    with pytest.raises(PatternError, match="window_size"):
        Rolling(Sum(), 0)
    with pytest.raises(PatternError, match="period"):
        TimeRolling(Sum(), -1)


@given(keys=st.lists(st.sampled_from("abcde"), max_size=50), drop=st.integers(0, 50))
def test_count_by_equals_counter(keys: list[str], drop: int) -> None:
    c = CountBy()
    for k in keys:
        c.update(k)
    drop = min(drop, len(keys))
    for k in keys[:drop]:
        c.revert(k)
    want = Counter(keys[drop:])
    assert c.get() == dict(want)
    assert c.total == sum(want.values())


@given(pairs=st.lists(st.tuples(st.sampled_from("abc"), ints), max_size=40))
def test_group_by_equals_pandas_groupby(pairs: list[tuple[str, int]]) -> None:
    g = GroupBy("sum")
    coll = GroupBy("collect")
    for kv in pairs:
        g.update(kv)
        coll.update(kv)
    if pairs:
        df = pd.DataFrame(pairs, columns=["k", "v"])
        assert g.get() == {k: int(v) for k, v in df.groupby("k", sort=False)["v"].sum().items()}
        assert coll.get() == {k: list(v) for k, v in df.groupby("k", sort=False)["v"]}
    else:
        assert g.get() == {}


def test_top_n_with_duplicates() -> None:
    assert fed(lambda: TopN(3), [4, 9, 9, 9, 1]).get() == [9, 9, 9]
    assert fed(lambda: TopN(3, largest=False), [4, 9, 1, 1]).get() == [1, 1, 4]


# ------------------------------------------------------------------------------------------------ registry


def test_make_aggregate_builds_every_registered_name() -> None:
    for name in aggregate_names():
        params = {"n": 2} if name == "top_n" else {"name": "count"} if name == "group_by" else {}
        agg = make_aggregate(name, **params)
        assert isinstance(agg, Aggregate)


def test_make_aggregate_windows() -> None:
    r = make_aggregate("min", window=2)
    assert isinstance(r, Rolling)
    for x in [1, 5, 7]:
        r.update(x)
    assert r.get() == 5
    with pytest.raises(PatternError, match="not both"):
        make_aggregate("sum", window=2, period=3)


def test_registry_errors() -> None:
    with pytest.raises(PatternError, match="unknown aggregate 'median'"):
        make_aggregate("median")
    with pytest.raises(PatternError, match="bad parameters"):
        make_aggregate("sum", ddof=1)
    with pytest.raises(PatternError, match="revert must be one of"):
        make_aggregate("first", revert="any")
    with pytest.raises(PatternError, match="built in"):
        register_aggregate("sum", Sum)
    with pytest.raises(PatternError, match="identifier"):
        register_aggregate("not a name", Sum)
    with pytest.raises(PatternError, match="callable"):
        register_aggregate("thing", 3)


def test_user_defined_aggregate_through_registry() -> None:
    class Range:
        """max - min over the values (reverting by a counted multiset)."""

        def __init__(self, offset: float = 0.0) -> None:
            self.lo = Min(revert="any")
            self.hi = Max(revert="any")
            self.offset = offset

        def update(self, x: float) -> None:
            self.lo.update(x)
            self.hi.update(x)

        def revert(self, x: float) -> None:
            self.lo.revert(x)
            self.hi.revert(x)

        def get(self) -> float | None:
            lo, hi = self.lo.get(), self.hi.get()
            return None if lo is None else hi - lo + self.offset

        def copy(self) -> Range:
            c = Range(self.offset)
            c.lo, c.hi = self.lo.copy(), self.hi.copy()
            return c

    register_aggregate("test_range", Range, replace=True)
    with pytest.raises(PatternError, match="already registered"):
        register_aggregate("test_range", lambda: Range())
    r = make_aggregate("test_range", offset=0.5, window=3)
    for x in [1.0, 10.0, 4.0, 6.0]:
        r.update(x)
    assert r.get() == 6.5  # window [10, 4, 6]
