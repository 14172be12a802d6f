"""The elements every frontend reads, for the three families."""

from __future__ import annotations

from workbench.engine.shape import elements, event_types, fields_read, taking_elements
from workbench.language import compile_pattern

GROUP = """
group g
    on login(user as U, ip as IP)
    @or @timeout(1s) {
        again: login(user = U) where e.ip != IP
        @not quiet: logout
        @and {
            a: trade where e.price > 10
            b: trade where e.qty > 1
        }
    }
"""


def test_group_elements_flatten_nested_groups_and_keep_the_initiator_apart() -> None:
    p = compile_pattern(GROUP)
    names = [e.name for e in elements(p)]
    assert names[0] == "initiator"
    assert set(names) >= {"again", "quiet", "a", "b"}
    assert taking_elements(p) == ["again", "a", "b"]  # the negated channel takes nothing
    assert event_types(p) == {"login", "logout", "trade"}
    fields = fields_read(p)
    assert fields["again"] >= {"ip", "user"}
    assert fields["a"] == {"price"}
    assert fields["initiator"] >= {"user", "ip"}


def test_sequence_with_an_untyped_stage_listens_to_any_type() -> None:
    p = compile_pattern("sequence s begin a: login where e.x > 1 followed by b where e.y < 2")
    assert event_types(p) is None
    assert fields_read(p) == {"a": {"x"}, "b": {"y"}}
    assert taking_elements(p) == ["a", "b"]


def test_receive_is_one_element() -> None:
    p = compile_pattern("receive r\n    order(currency = 'EUR') where e.amount > 3")
    got = [(e.name, e.types, set(e.fields)) for e in elements(p)]
    assert got == [("r", frozenset({"order"}), {"amount", "currency"})]


def test_anything_else_has_no_elements() -> None:
    assert elements(object()) == ()
    assert event_types(object()) == frozenset()
