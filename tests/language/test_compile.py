"""Every construct of the language compiles to the expected engine objects."""

from __future__ import annotations

import re

import pytest

from workbench.engine import run
from workbench.engine.expr import parse_expr, print_expr
from workbench.engine.nfa.pattern import (
    AggregateSpec,
    AllOf,
    AnyOf,
    Contiguity,
    GroupStage,
    Quantifier,
    SequencePattern,
    SkipStrategy,
    Stage,
)
from workbench.engine.reactions.accumulators import MapCounter, SortedAccumulator
from workbench.engine.reactions.patterns import (
    Channel,
    Count,
    Exit,
    Initiator,
    Instance,
    ReactionGroup,
    Size,
    Timer,
    Var,
)
from workbench.errors import CepError
from workbench.language import (
    compile_pattern,
    compile_patterns,
    compile_text,
    format_pattern,
    parse_duration,
)

S, R, N = Contiguity.STRICT, Contiguity.RELAXED, Contiguity.NONDETERMINISTIC_RELAXED


def seq1(text: str) -> SequencePattern:
    p = compile_pattern(text)
    assert isinstance(p, SequencePattern)
    return p


def grp1(text: str) -> ReactionGroup:
    p = compile_pattern(text)
    assert isinstance(p, ReactionGroup)
    return p


# ---- durations ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ms"),
    [
        ("250ms", 250), ("10s", 10_000), ("2 sec", 2000), ("5min", 300_000), ("1h", 3_600_000),
        ("3d", 259_200_000), ("1.5s", 1500), ("0.5ms", 0.5),
    ],
)  # fmt: skip
def test_durations(text: str, ms: float) -> None:
    assert ms == parse_duration(text)
    assert ms == seq1(f"sequence s within {text} begin a").within_ms


# ---- sequences ------------------------------------------------------------------------------------


def test_contiguity_keywords() -> None:
    p = seq1(
        """
        sequence s
            begin a where e.x == 1
            next b
            followed by c
            followed by any d
            not next f
            followed by g
            not followed by h
            followed by i
        """
    )
    got = [(st.name, st.contiguity, st.negated) for st in p.stages]
    assert got == [
        ("a", R, False), ("b", S, False), ("c", R, False), ("d", N, False), ("f", S, True),
        ("g", R, False), ("h", R, True), ("i", R, False),
    ]  # fmt: skip
    assert p.stages[0].where == parse_expr("e.x == 1")
    assert p.stages[1].where is None


@pytest.mark.parametrize(
    ("clause", "quant"),
    [
        ("", Quantifier()),
        ("times 3", Quantifier(3, 3)),
        ("times 2..4", Quantifier(2, 4)),
        ("times 0..3", Quantifier(1, 3, optional=True)),
        ("times 2 or more", Quantifier(2, None)),
        ("one or more", Quantifier(1, None)),
        ("optional", Quantifier(optional=True)),
        ("one or more optional", Quantifier(1, None, optional=True)),
        ("one or more greedy", Quantifier(1, None, greedy=True)),
        ("times 2..3 greedy", Quantifier(2, 3, greedy=True)),
        ("one or more consecutive", Quantifier(1, None, inner=S)),
        ("times 3 allow combinations", Quantifier(3, 3, inner=N)),
        ("one or more optional greedy consecutive", Quantifier(1, None, True, True, S)),
        ("times 2 gaps within 3ms", Quantifier(2, 2, window_ms=3)),
    ],
)
def test_quantifiers(clause: str, quant: Quantifier) -> None:
    p = seq1(f"sequence s begin a where e.x > 0 {clause} followed by b")
    assert quant == p.stages[0].quantifier


def test_windows_skip_until_types() -> None:
    p = seq1(
        """
        sequence s within 10s skip to first b or fail
            begin a: login | logout where e.x > 1 within 5s
            followed by b one or more until e.stop == True
            followed by c within 2s of previous
        """
    )
    assert p.within_ms == 10_000
    assert SkipStrategy("skip_to_first", "b", True) == p.skip
    assert p.stages[0].types == ("login", "logout")
    assert p.stages[0].within_ms == 5000
    assert p.stages[1].until == parse_expr("e.stop == True")
    assert p.stages[2].within_prev_ms == 2000


@pytest.mark.parametrize(
    ("clause", "skip"),
    [
        ("no skip", SkipStrategy()),
        ("skip to next", SkipStrategy("skip_to_next")),
        ("skip past last event", SkipStrategy("skip_past_last_event")),
        ("skip to first a", SkipStrategy("skip_to_first", "a")),
        ("skip to last a", SkipStrategy("skip_to_last", "a")),
        ("skip to last a or fail", SkipStrategy("skip_to_last", "a", True)),
    ],
)
def test_skip_strategies(clause: str, skip: SkipStrategy) -> None:
    assert skip == seq1(f"sequence s {clause} begin a next b").skip


def test_where_chain_is_flinks_where_and_or() -> None:
    p = seq1("sequence s begin a where e.x > 1 where e.y > 2 or where e.z == 3")
    expected = AnyOf((AllOf((parse_expr("e.x > 1"), parse_expr("e.y > 2"))), parse_expr("e.z == 3")))
    assert expected == p.stages[0].where
    p = seq1("sequence s begin a where e.price == 2.0 or where e.price == 5.0")
    assert AnyOf((parse_expr("e.price == 2.0"), parse_expr("e.price == 5.0"))) == p.stages[0].where


def test_group_stage() -> None:
    (d,) = compile_text("sequence s begin a followed by (begin b next c) times 2 followed by d")
    p = d.pattern
    assert isinstance(p, SequencePattern)
    g = p.stages[1]
    assert isinstance(g, GroupStage)
    assert g.name == "(b c)"
    assert tuple(s.name for s in g.stages) == ("b", "c")
    assert Quantifier(2, 2) == g.quantifier
    assert g.stages[1].contiguity == S


GROUP_TEXT = """sequence s
    begin a where e.type == 'a'
    followed by (
        begin b where e.type == 'b'
        next c where e.type == 'c'
    ) times 2
"""


def test_group_stage_runs_like_the_python_api() -> None:
    p = compile_pattern(GROUP_TEXT)
    assert isinstance(p, SequencePattern)
    types = "a b c x b c b c"
    events = [{"type": t, "time": i} for i, t in enumerate(types.split())]
    got = [(d.kind, d.seqs) for d in run([p], events).detections]
    # (b next c) twice after a: b1 c2 then b4 c5; the strict 'next' keeps b4 c5 / b6 c7 apart from x
    assert ("match", (0, 1, 4, 2, 5)) in got
    assert all(d[1][0] == 0 for d in got)
    assert got == [(d.kind, d.seqs) for d in run([format_and_back(p)], events).detections]


def format_and_back(p: SequencePattern) -> SequencePattern:
    back = compile_pattern(format_pattern(p))
    assert isinstance(back, SequencePattern)
    return back


@pytest.mark.parametrize(
    ("text", "message", "column"),
    [
        ("sequence s begin a followed by (begin b next c) one or more greedy", "cannot be 'greedy'", 61),
        ("sequence s begin a not followed by (begin b next c)", "cannot be negated", 20),
        ("sequence s begin a followed by (begin b next c) within 5s of previous", "of previous", 56),
        ("sequence s begin a followed by (begin b next c) where e.x > 1", "has no 'where'", 55),
        ("sequence s begin a followed by (begin b next c) times 2 until e.x > 1", "looping", 32),
        ("sequence s begin a followed by (begin b not followed by c) times 2", "last stage of a group", 57),
        ("sequence s begin a followed by (begin b next a)", "defined twice", 46),
    ],
)
def test_group_stage_mistakes(text: str, message: str, column: int) -> None:
    with pytest.raises(CepError, match=re.escape(message)) as info:
        compile_text(text)
    span = getattr(info.value, "span", None)
    assert span is not None
    assert (span.line, span.column) == (1, column)


def test_stage_names_and_navigation_shorthands() -> None:
    p = seq1(
        """
        sequence s
            begin a one or more
            next b where e.p > last(a).p and e.p < first(a).p and len(a) > 1 and prev(a).p != 0
            next c where c.p > a.p and c.q == b.q
        """
    )
    # a stage name is the stage's events; last/first/prev/len are functions over them (printed as written)
    assert print_expr(p.stages[1].where, stages="names") == (
        "e.p > last(a).p and e.p < first(a).p and len(a) > 1 and prev(a).p != 0"
    )
    assert p.stages[1].where == parse_expr(
        "e.p > last(matched('a')).p and e.p < first(matched('a')).p and len(matched('a')) > 1 "
        "and prev(matched('a')).p != 0"
    )
    # MATCH_RECOGNIZE: c.p is the event being tested, a.p the last event a took
    assert p.stages[2].where == parse_expr("e.p > matched('a')[-1].p and e.q == matched('b')[-1].q")


def test_comprehension_variables_shadow_stage_names() -> None:
    text = "sum(x.price for x in matched('middle')) + e.price < 5.0"
    p = seq1(f"sequence s begin x followed by middle one or more where {text}")
    assert text == print_expr(p.stages[1].where)


def test_conditions_are_kept_verbatim() -> None:
    cond = "(lambda a, cur: cur.price == a[0].price and len(a) > 3)(matched('DOWN') + [e], e)"
    where = seq1(f"sequence s begin DOWN one or more next UP where {cond}").stages[1].where
    assert cond == print_expr(where)


def test_aggregates_inline_and_declared() -> None:
    p = seq1(
        """
        sequence s
            aggregate total = sum(a.price) including current
            begin a one or more where total < 100
            next b where e.price > avg(a.price) and count(a) >= 2
        """
    )
    assert (
        AggregateSpec("total", "sum", "a", "price", {}, True),
        AggregateSpec("avg_a_price", "avg", "a", "price"),
        AggregateSpec("count_a", "count", "a", None),
    ) == p.aggregates
    assert p.stages[1].where == parse_expr("e.price > avg_a_price and count_a >= 2")


def test_sequence_options() -> None:
    p = seq1("sequence s no timeouts max partial matches 50 begin a")
    assert not p.emit_timeouts
    assert p.max_partial_matches == 50
    assert seq1("sequence s max partial matches none begin a").max_partial_matches is None


def test_registered_functions_are_callable() -> None:
    from workbench.language import register_function

    register_function("spread_test", lambda a, b: a - b, replace=True)
    p = seq1("sequence s begin a where spread_test(e.hi, e.lo) > 2")
    assert p.stages[0].where == parse_expr("spread_test(e.hi, e.lo) > 2")


def test_comments_and_whitespace() -> None:
    p = seq1("# leading\nsequence s   # name\n  begin a # first\n\n  next b # second\n")
    assert [s.name for s in p.stages] == ["a", "b"]


def test_quoted_names() -> None:
    p = seq1("sequence `my pattern` skip to first `next` begin `a or c` where e.x == 1 next `next`")
    assert p.name == "my pattern"
    assert [s.name for s in p.stages] == ["a or c", "next"]


# ---- reaction groups -------------------------------------------------------------------------------


def test_group_and_not() -> None:
    g = grp1(
        """
        group and_not
            on login(user as User, ip as IP)
            @and @timeout(400ms) {
                @timeout(250ms) c_login: login(user = User) where e.ip != IP
                @not c_logout: logout(user = User, ip = IP)
            }
        """
    )
    assert (
        ReactionGroup(
            "and_not",
            "and",
            (
                Channel("c_login", "login", match={"user": Var("User")}, where="e.ip != IP", timeout_ms=250),
                Channel("c_logout", "logout", match={"user": Var("User"), "ip": Var("IP")}, negated=True),
            ),
            timeout_ms=400,
            initiator=Initiator("login", bind={"User": "user", "IP": "ip"}),
        )
        == g
    )


def test_every_channel_annotation() -> None:
    # objects only: the engine rejects mixing @count (AND) and @size/@timer (OR) in one group
    (d,) = compile_text(
        """
        group g
            state Basket = []
            on once start(id as Id)
            @or @timeout(1s) @timeout_channel @count(3) @size(1) {
                @id(id1) login(protocol = 'async')
                @stop end
                @stop(id1, id2) cancel
                @pause(id1) pause
                @resume(id1) resume
                @paused @optional id2: late
                @count(2) c2: a
                @count(-1) c3: a
                @count(1, -1) c4: a
                @count(1, 2, strict) c5: a
                @size(2) s1: b
                @size(1, 1) s2: b
                @size(5, 5, SortedAccumulator(e.k, e.v, top=3)) s3: b
                @timer(25ms) t1: c
                @timer(25ms, 50ms, MapCounter(e.i % 5)) t2: c
                @after(id1) @collect(Basket, e.id) x: d(id = Id)
            }
        """,
        validate=False,
    )
    g = d.pattern
    assert isinstance(g, ReactionGroup)
    ch = {c.id: c for c in g.channels if isinstance(c, Channel)}
    assert ch["id1"].match == (("protocol", "async"),)
    assert ch["end"].stop
    assert ch["cancel"].stop_ids == ("id1", "id2")
    assert ch["pause"].pause_ids == ("id1",)
    assert ch["resume"].resume_ids == ("id1",)
    assert Count(2, 2, "ignore") == ch["c2"].count
    assert Count(0, 0, "record") == ch["c3"].count
    assert Count(1, 1, "record") == ch["c4"].count
    assert Count(1, 2, "strict") == ch["c5"].count
    assert Size(2) == ch["s1"].size
    assert Size(1, 1) == ch["s2"].size
    assert Size(5, 5, SortedAccumulator("e.k", "e.v", 3)) == ch["s3"].size
    assert Timer(25) == ch["t1"].timer
    assert Timer(25, 50, MapCounter("e.i % 5")) == ch["t2"].timer
    assert ch["id2"].paused
    assert ch["id2"].optional
    assert ch["x"].after == ("id1",)
    assert ch["x"].collect == (("Basket", parse_expr("e.id")),)
    assert ch["x"].match == (("id", Var("Id")),)
    assert Exit(3, 1) == g.exit
    assert g.timeout_channel
    assert g.initiator is not None
    assert not g.initiator.mult
    assert g.initiator.state == (("Basket", []),)


def test_channel_ids_from_labels_and_id_annotation() -> None:
    g = grp1("group g instance 1 @and { @stop(b) a: x  @id(b) y  @id('c d') z }")
    assert [c.id for c in g.channels if isinstance(c, Channel)] == ["a", "b", "c d"]


def test_vars_and_group_where() -> None:
    g = grp1(
        """
        group where_join
            instance 'q1' at 0
            @and @timeout(1500ms) @timeout_channel @count(6) @where(IP1 != IP2 or N1 < N2) {
                @count(-1) @vars c_login: login(user as User, ip as IP1, n as N1)
                @count(-1) @vars c_logout: logout(user as User, ip as IP2, n as N2)
            }
        """
    )
    assert g.where == parse_expr("IP1 != IP2 or N1 < N2")
    assert (Instance("q1", 0),) == g.instances
    login = g.channels[0]
    assert isinstance(login, Channel)
    assert login.vars == (("User", "user"), ("IP1", "ip"), ("N1", "n"))
    assert login.binds == ()


def test_vars_with_a_list_keeps_the_rest_as_binds() -> None:
    g = grp1("group g instance 1 @and { @vars(U) a: login(user as U, ip as I) }")
    ch = g.channels[0]
    assert isinstance(ch, Channel)
    assert ch.vars == (("U", "user"),)
    assert ch.binds == (("I", "ip"),)


def test_constants_instances_and_template() -> None:
    g = grp1(
        """
        group g
            const Limit = 1.2
            @template @id(first) on create
            @and {
                high: price where e.price > Limit
                @after(high) low: price where e.price < Limit
            }
        """
    )
    assert g.constants == (("Limit", 1.2),)
    assert g.initiator == Initiator("create", template=True, id="first")


def test_nested_groups() -> None:
    g = grp1(
        """
        group outer
            on login(user as U)
            @or @timeout(1s) {
                a: logout(user = U)
                @and(inner) @timeout(500ms) {
                    b: query(user = U)
                    c: purchase(user = U)
                }
            }
        """
    )
    inner = g.channels[1]
    assert isinstance(inner, ReactionGroup)
    assert inner.name == "inner"
    assert inner.operator == "and"
    assert inner.timeout_ms == 500
    assert [c.id for c in inner.channels if isinstance(c, Channel)] == ["b", "c"]


def test_schema_declarations_check_fields_and_persist() -> None:
    defs = compile_text(
        "event login(user, ip)\ngroup g on login(user as U) @or { a: login(user = U) where e.ip != 'x' }"
    )
    assert defs[0].schema == {"login": ("user", "ip")}


def test_several_definitions_and_default_name() -> None:
    ps = compile_patterns("sequence a begin x\ngroup b instance 1 @or { c: y }")
    assert [p.name for p in ps] == ["a", "b"]
    assert compile_pattern("sequence begin x", default_name="fromcell").name == "fromcell"


def test_partition_by_is_reported() -> None:
    (d,) = compile_text("sequence s partition by symbol begin a")
    assert d.partition == "symbol"


def test_python_api_equality() -> None:
    built = SequencePattern(
        "p",
        (
            Stage("a", "e.name == 'a'"),
            Stage("b", "e.name == 'b'", S, quantifier=Quantifier.times(2, 3)),
        ),
        within_ms=10,
        skip=SkipStrategy("skip_past_last_event"),
    )
    assert built == compile_pattern(
        "sequence p within 10ms skip past last event "
        "begin a where e.name == 'a' next b where e.name == 'b' times 2..3"
    )


def test_flinks_iterative_condition_holds_on_the_first_event() -> None:
    # Flink's docs: "sum of the previous prices plus the current < 5"; with no event yet the sum is 0
    p = seq1("sequence s begin a one or more consecutive where sum(a.v) + e.v < 5 next b: stop")
    events = [{"type": "x", "time": t, "v": v} for t, v in enumerate([1, 2, 3, 1])]
    events.append({"type": "stop", "time": 4})
    result = run(p, events)
    assert sorted(d.seqs for d in result.detections) == [(2, 3, 4), (3, 4)]  # 3+1 < 5; 1 < 5
    assert result.errors == []


def test_provas_duration_strings_are_durations() -> None:
    # Prova writes @timeout('2 s') and @timeout('500 ms'); the language's own spelling is 2s
    (d,) = compile_text("group g instance 1 @and @timeout('2 s') { a: x @timeout('500 ms') b: y }")
    assert isinstance(d.pattern, ReactionGroup)
    assert d.pattern.timeout_ms == 2000
    assert [c.timeout_ms for c in d.pattern.channels] == [None, 500]  # annotations precede a channel


def test_an_empty_event_type_is_a_type() -> None:
    # Flink's test events may have an empty name: any string is a type, only a missing one is an error
    p = SequencePattern("s", (Stage("a", "e.type == ''"), Stage("b", "e.type == 'x'")))
    result = run(p, [{"type": "", "time": 0}, {"type": "x", "time": 1}])
    assert [d.seqs for d in result.detections] == [(0, 1)]
    with pytest.raises(CepError, match="missing event type"):
        run(p, [{"time": 0}])


def test_the_blogs_not_count_on_an_or_channel_is_not_size() -> None:
    # The Prova blog (or_not_count) writes @not @count(2) on an @or channel; it means @not @size(2)
    blog = """group or_not_count
    on login(user as U, ip as IP)
    @or @timeout(1s) {
        @not @{} c_login: login(user = U) where e.ip != IP
        c_logout: logout(user = U)
    }"""
    (written,) = compile_text(blog.replace("@{}", "@count(2)"))
    (ours,) = compile_text(blog.replace("@{}", "@size(2)"))
    assert format_pattern(written.pattern).count("@not @count(2)") == 1  # printed as the blog wrote it
    events = [
        {"type": "login", "time": t, "key": "u", "user": "u", "ip": ip}
        for t, ip in [(0, "1"), (10, "2"), (20, "3"), (3000, "1"), (3010, "2")]
    ]
    got = [(d.kind, d.seqs) for d in run(written.pattern, events).detections]
    assert got == [(d.kind, d.seqs) for d in run(ours.pattern, events).detections]
    assert got  # the 2nd other-IP login violates the first instance; later ones time out as [not]


def test_flink_order_keeps_the_match_flinks_nfa_keeps() -> None:
    # Flink CEP 2.3.0's NFA on these events (tests/conformance/FlinkNfaOracle.java) keeps, with skip
    # to next, s0=[1] s1=[2,3] s2=[4] among the matches that start at event 1; by creation order the
    # engine's default keeps s0=[1,2] s1=[3] s2=[4]
    text = """
    sequence s
        within 20ms
        skip to next
        {order}
        begin s0 one or more consecutive
        followed by s1 one or more consecutive
        followed by s2 where e.name == 'b'
    """
    names = ["d", "c", "e", "a", "b", "e", "a", "e", "c", "c", "d", "e", "c", "e"]
    times = (1, 7, 9, 10, 11, 14, 15, 18, 20, 20, 23, 23, 25, 28)
    events = [{"type": n, "time": t, "name": n} for n, t in zip(names, times, strict=True)]

    def kept(order: str) -> list[dict[str, list[int]]]:
        pattern = seq1(text.format(order=order))
        assert pattern.flink_order == (order == "flink order")
        assert compile_pattern(format_pattern(pattern)) == pattern
        found = run([pattern], events).detections
        return [{k: [e.seq for e in v] for k, v in d.by_stage().items()} for d in found if d.kind == "match"]

    flink = [
        {"s0": [0, 1, 2], "s1": [3], "s2": [4]},
        {"s0": [1], "s1": [2, 3], "s2": [4]},
        {"s0": [2], "s1": [3], "s2": [4]},
    ]
    assert sorted(kept("flink order"), key=str) == sorted(flink, key=str)
    assert {"s0": [1, 2], "s1": [3], "s2": [4]} in kept("")
