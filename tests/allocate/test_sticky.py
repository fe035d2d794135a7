"""The mqctl-sticky example plugin: balanced, keeps queues, moves the minimum."""

from __future__ import annotations

from itertools import combinations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqctl.allocate import compute_allocation
from mqctl.allocate.base import sort_inputs
from mqctl.models import MessageQueue


def queues(n: int) -> list[MessageQueue]:
    return [MessageQueue("T", f"broker-{'ab'[i % 2]}", i // 2) for i in range(n)]


def moved(previous: dict, after: dict, members: set) -> int:
    """Queues whose previous owner is still a member but lost them."""
    owner = {q: c for c, qs in after.items() for q in qs}
    return sum(1 for c, qs in previous.items() if c in members for q in qs
               if q in owner and owner[q] != c)


def lower_bound(previous: dict, members: list, queue_set: set) -> int:
    """Fewest moves any balanced allocation needs (brute force over who gets +1)."""
    n, k = len(queue_set), len(members)
    base, extra = divmod(n, k)
    kept = {c: len([q for q in previous.get(c, []) if q in queue_set]) for c in members}
    best = None
    for plus in combinations(members, extra):
        cost = sum(max(0, kept[c] - base - (c in plus)) for c in members)
        best = cost if best is None else min(best, cost)
    return best or 0


def test_sticky_keeps_everything_when_nothing_changes(sticky_cls):
    q = queues(10)
    start = sticky_cls().allocate_group("G", *sort_inputs(q, ["a", "b", "c"]))
    again = sticky_cls(previous=start).allocate_group("G", *sort_inputs(q, ["a", "b", "c"]))
    assert again == start
    assert sorted(len(v) for v in start.values()) == [3, 3, 4]


def test_sticky_join_moves_only_to_the_newcomer(sticky_cls):
    q = queues(12)
    prev = {"a": q[:6], "b": q[6:]}
    after = sticky_cls(previous=prev).allocate_group("G", *sort_inputs(q, ["a", "b", "c"]))
    assert {c: len(v) for c, v in after.items()} == {"a": 4, "b": 4, "c": 4}
    assert set(after["a"]) <= set(prev["a"]) and set(after["b"]) <= set(prev["b"])
    assert moved(prev, after, {"a", "b", "c"}) == 4


def test_sticky_leave_spreads_the_orphans(sticky_cls):
    q = queues(9)
    prev = {"a": q[:3], "b": q[3:6], "c": q[6:]}
    after = sticky_cls(previous=prev).allocate_group("G", *sort_inputs(q, ["a", "c"]))
    assert set(prev["a"]) <= set(after["a"]) and set(prev["c"]) <= set(after["c"])
    assert sorted(len(v) for v in after.values()) == [4, 5]


def test_sticky_via_registry_what_if_from_avg(sticky_registered):
    q = queues(16)
    c = ["c1", "c2", "c3"]
    before = compute_allocation("avg", q, c)
    after = compute_allocation("sticky", q, [*c, "c4"], previous=before.assignments)
    assert after.balance().spread == 0
    assert moved(before.assignments, after.assignments, set(c) | {"c4"}) == lower_bound(
        before.assignments, [*c, "c4"], set(q))


@settings(max_examples=200, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(0, 30), old=st.lists(st.sampled_from("abcdefg"), min_size=1, max_size=6,
                                          unique=True),
       new=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=6, unique=True),
       gone=st.integers(0, 30), shuffle=st.randoms(use_true_random=False))
def test_sticky_properties(sticky_cls, n, old, new, gone, shuffle):
    q = queues(n)
    prev = compute_allocation("avg-by-circle", queues(n + gone % 5), old).assignments
    qs = list(q)
    shuffle.shuffle(qs)
    after = compute_allocation(sticky_cls(previous=prev), qs, new).assignments
    counts = [len(v) for v in after.values()]
    assert sum(counts) == n and max(counts) - min(counts) <= 1  # balanced, all assigned
    owned = [x for v in after.values() for x in v]
    assert len(owned) == len(set(owned))                        # each queue once
    assert moved(prev, after, set(new)) == lower_bound(prev, sorted(set(new)), set(q))
    # deterministic: previous given in another order
    prev2 = {c: list(reversed(v)) for c, v in reversed(list(prev.items()))}
    assert compute_allocation(sticky_cls(previous=prev2), q, list(reversed(new))).assignments \
        == after
