"""Allocation invariants under hypothesis."""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mqctl.allocate import compute_allocation, sort_inputs
from mqctl.allocate.base import AllocationStrategy, sort_queues
from mqctl.allocate.builtin import (
    Averagely,
    AveragelyByCircle,
    ByMachineRoom,
    ConsistentHash,
    MachineRoomNearby,
)
from mqctl.allocate.reference import (
    RefAveragely,
    RefAveragelyByCircle,
    RefByMachineRoom,
    RefConsistentHash,
    RefMachineRoomNearby,
    reference_loop,
)
from mqctl.models import MessageQueue

SETTINGS = settings(max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])

name_chars = st.sampled_from("abcxyz019.-@#_\u00e9\u6d88\U0001F600")
broker_names = st.one_of(st.sampled_from(["broker-a", "broker-b", "hz@broker-c", "sh@broker-d",
                                          "hz-broker-e", "sh-broker-f"]),
                         st.text(name_chars, min_size=1, max_size=8))


@st.composite
def queue_sets(draw, min_size: int = 1) -> list[MessageQueue]:
    topics = draw(st.lists(st.sampled_from(["TopicA", "TopicB", "T\u00f6pic"]), min_size=1,
                           max_size=2, unique=True))
    brokers = draw(st.lists(broker_names, min_size=1, max_size=4, unique=True))
    out = []
    for t in topics:
        for b in brokers:
            n = draw(st.integers(0, 9))
            out += [MessageQueue(t, b, i) for i in range(n)]
    if len(out) < min_size:
        out.append(MessageQueue(topics[0], brokers[0], 0))
    return out


@st.composite
def consumer_lists(draw, duplicates: bool = True) -> list[str]:
    ids = draw(st.lists(st.one_of(
        st.builds(lambda a, b, p: f"10.0.{a}.{b}@{p}", st.integers(0, 3), st.integers(1, 20),
                  st.integers(1, 99999)),
        st.text(name_chars, min_size=1, max_size=6)), min_size=1, max_size=14, unique=True))
    if duplicates and draw(st.booleans()):
        ids += draw(st.lists(st.sampled_from(ids), min_size=1, max_size=2))
    return ids


simple_names = st.sampled_from(["avg", "avg-by-circle", "consistent-hash"])
one_owner_names = st.sampled_from(["avg", "avg-by-circle", "consistent-hash", "machine-room",
                                   "machine-room-nearby", "sticky"])


def params_for(name: str, vnodes: int = 10) -> dict:
    if name == "consistent-hash":
        return {"virtual_nodes": vnodes}
    if name == "machine-room":
        return {"rooms": ["hz", "sh"]}
    if name == "machine-room-nearby":
        return {"broker_room_regex": r"(.)", "consumer_room_regex": r"(.)"}
    return {}


@SETTINGS
@given(name=one_owner_names, queues=queue_sets(), consumers=consumer_lists(),
       vnodes=st.integers(0, 12))
def test_every_queue_at_most_once(name, queues, consumers, vnodes):
    a = compute_allocation(name, queues, consumers, **params_for(name, vnodes))
    owned = Counter(mq for qs in a.assignments.values() for mq in qs)
    assert all(n == 1 for n in owned.values())
    assert set(owned) <= set(queues)
    assert set(a.assignments) == set(consumers)


@SETTINGS
@given(name=one_owner_names, queues=queue_sets(), consumers=consumer_lists(),
       seed=st.randoms(use_true_random=False))
def test_deterministic_under_shuffling(name, queues, consumers, seed):
    base = compute_allocation(name, queues, consumers, **params_for(name)).assignments
    q2, c2 = list(queues), list(consumers)
    seed.shuffle(q2)
    seed.shuffle(c2)
    assert compute_allocation(name, q2, c2, **params_for(name)).assignments == base


@SETTINGS
@given(name=st.sampled_from(["avg", "avg-by-circle"]), queues=queue_sets(),
       extra=st.integers(1, 6))
def test_consumers_beyond_queue_count_idle(name, queues, extra):
    n = len(set(queues))
    consumers = [f"c{i:03d}" for i in range(n + extra)]
    a = compute_allocation(name, queues, consumers)
    assert a.idle == consumers[n:]
    assert all(len(a.assignments[c]) == 1 for c in consumers[:n])


@SETTINGS
@given(name=simple_names, queues=queue_sets(), consumers=consumer_lists(duplicates=False),
       vnodes=st.integers(1, 12))
def test_union_covers_all_queues_without_duplicates(name, queues, consumers, vnodes):
    a = compute_allocation(name, queues, consumers, **params_for(name, vnodes))
    assert a.unassigned == []
    assert sort_queues(m for qs in a.assignments.values() for m in qs) == sort_queues(
        set(queues))


@SETTINGS
@given(name=st.sampled_from(["avg", "avg-by-circle"]), queues=queue_sets(),
       consumers=consumer_lists(duplicates=False))
def test_avg_and_circle_balanced(name, queues, consumers):
    b = compute_allocation(name, queues, consumers).balance()
    assert b.spread <= 1


REF = {"avg": (Averagely, RefAveragely), "avg-by-circle": (AveragelyByCircle,
                                                           RefAveragelyByCircle),
       "consistent-hash": (ConsistentHash, RefConsistentHash),
       "machine-room": (ByMachineRoom, RefByMachineRoom)}


@SETTINGS
@given(name=st.sampled_from(sorted(REF)), queues=queue_sets(), consumers=consumer_lists(),
       vnodes=st.integers(0, 12))
def test_whole_group_equals_per_consumer_java_loop(name, queues, consumers, vnodes):
    mq_all, cid_all = sort_inputs(set(queues), consumers)
    group_cls, ref_cls = REF[name]
    p = params_for(name, vnodes)
    whole = group_cls(**p).allocate_group("G", mq_all, cid_all)
    assert {c: sort_queues(v) for c, v in whole.items()} == {
        c: sort_queues(v) for c, v in reference_loop(ref_cls(**p), "G", mq_all, cid_all).items()}
    # and the Java contract derived from the group result answers per consumer the same
    for cid in dict.fromkeys(cid_all):
        assert sort_queues(group_cls(**p).allocate("G", cid, mq_all, cid_all)) == sort_queues(
            whole[cid])
    assert group_cls(**p).allocate("G", "not-a-member", mq_all, cid_all) == []


@SETTINGS
@given(inner=simple_names, queues=queue_sets(), consumers=consumer_lists())
def test_nearby_whole_group_equals_per_consumer_java_loop(inner, queues, consumers):
    mq_all, cid_all = sort_inputs(set(queues), consumers)
    p = {"broker_room_regex": r"(.)", "consumer_room_regex": r"(.)"}
    whole = MachineRoomNearby(inner=inner, virtual_nodes=3, **p).allocate_group(
        "G", mq_all, cid_all)
    ref_inner = REF[inner][1](virtual_nodes=3)
    ref = reference_loop(RefMachineRoomNearby(inner=ref_inner, **p), "G", mq_all, cid_all)
    assert {c: sort_queues(v) for c, v in whole.items()} == ref


class PerConsumerOnly(AllocationStrategy):
    """A strategy that implements only the Java contract (as a plugin may)."""

    name = "per-consumer-only"

    def allocate(self, group, current_cid, mq_all, cid_all):
        return RefAveragely().allocate(group, current_cid, mq_all, cid_all)


@SETTINGS
@given(queues=queue_sets(), consumers=consumer_lists())
def test_per_consumer_only_strategy_adapted_to_group(queues, consumers):
    a = compute_allocation(PerConsumerOnly(), queues, consumers)
    assert a.assignments == compute_allocation("avg", queues, consumers).assignments


@SETTINGS
@given(queues=queue_sets(), consumers=consumer_lists(duplicates=False),
       removed=st.integers(0, 13), added=st.text("abc", min_size=1, max_size=3))
def test_consistent_hash_moves_only_what_membership_change_requires(queues, consumers,
                                                                    removed, added):
    before = compute_allocation("consistent-hash", queues, consumers)
    gone = consumers[removed % len(consumers)]
    after_c = [c for c in consumers if c != gone] + [f"new-{added}"]
    after = compute_allocation("consistent-hash", queues, after_c)
    ob, oa = before.owners(), after.owners()
    for mq in ob:
        if ob[mq] != oa[mq]:
            assert ob[mq] == [gone] or oa[mq] == [f"new-{added}"]
