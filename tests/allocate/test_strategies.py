"""Each strategy against worked examples: RocketMQ's unit tests' facts and the docs' vectors."""

from __future__ import annotations

import random

import pytest

from mqctl.allocate import allocate_group, compute_allocation, sort_inputs
from mqctl.allocate.base import java_key
from mqctl.allocate.builtin import java_split
from mqctl.allocate.hashring import HashRing, md5_hash
from mqctl.errors import UsageError
from mqctl.models import MessageQueue


def mqs(n: int, topic: str = "topic", broker: str = "brokerName") -> list[MessageQueue]:
    return [MessageQueue(topic, broker, i) for i in range(n)]


def ids(result: dict[str, list[MessageQueue]]) -> dict[str, list[int]]:
    return {c: [q.queue_id for q in qs] for c, qs in result.items()}


CP4 = [f"CID_PREFIX{i}" for i in range(4)]


# ------------------------------------------------------------------ RocketMQ unit tests' facts

def test_averagely_java_unit_test_sizes():
    # AllocateMessageQueueAveragelyTest: 10 queues, 4 consumers -> sizes 3, 3, 2, 2
    got = allocate_group("avg", mqs(10), CP4)
    assert [len(got[c]) for c in CP4] == [3, 3, 2, 2]
    assert ids(got) == {"CID_PREFIX0": [0, 1, 2], "CID_PREFIX1": [3, 4, 5],
                        "CID_PREFIX2": [6, 7], "CID_PREFIX3": [8, 9]}


def test_by_circle_java_unit_test():
    # AllocateMessageQueueAveragelyByCircleTest
    got = ids(allocate_group("AVG_BY_CIRCLE", mqs(10), CP4))
    assert got == {"CID_PREFIX0": [0, 4, 8], "CID_PREFIX1": [1, 5, 9], "CID_PREFIX2": [2, 6],
                   "CID_PREFIX3": [3, 7]}


def test_by_config_java_unit_test():
    # AllocateMessageQueueByConfigTest: both consumers get the configured 4 queues
    cfg = {c: mqs(4) for c in CP4[:2]}
    got = ids(allocate_group("config", mqs(4), CP4[:2], config=cfg))
    assert got == {"CID_PREFIX0": [0, 1, 2, 3], "CID_PREFIX1": [0, 1, 2, 3]}


def test_by_machine_room_java_unit_test():
    # AllocateMessageQueueByMachineRoomTest: room1 = queues 0..4, consumers in room1
    qs = [MessageQueue("topic", "room1@broker-a" if i < 5 else "room2@broker-b", i)
          for i in range(10)]
    got = ids(allocate_group("machine-room", qs, CP4[:2], rooms={"room1"}))
    assert got == {"CID_PREFIX0": [0, 1, 4], "CID_PREFIX1": [2, 3]}


def test_consistent_hash_java_unit_test_properties():
    # AllocateMessageQueueConsitentHashTest.testAllocate: 3 virtual nodes; all queues covered;
    # removing a consumer moves only its queues; adding one moves queues only to it
    for qn, cn in ((20, 10), (10, 20), (7, 3), (1, 1)):
        q = mqs(qn, "topic_test")
        c = [f"CID-{i}" for i in range(cn)]
        before = allocate_group("consistent-hash", q, c, virtual_nodes=3)
        owner = {mq: cid for cid, ms in before.items() for mq in ms}
        assert set(owner) == set(q)
        removed = c[0]
        after = allocate_group("consistent-hash", q, c[1:], virtual_nodes=3)
        owner2 = {mq: cid for cid, ms in after.items() for mq in ms}
        if cn > 1:
            assert set(owner2) == set(q)
            assert all(owner2[m] == owner[m] for m in q if owner[m] != removed)
        added = allocate_group("consistent-hash", q, [*c[1:], "CID-NEW"], virtual_nodes=3)
        owner3 = {mq: cid for cid, ms in added.items() for mq in ms}
        assert all(owner3[m] == owner2[m] for m in q if owner3[m] != "CID-NEW")


def test_consistent_hash_current_not_in_cid_all_gets_nothing():
    from mqctl.allocate.builtin import ConsistentHash

    assert ConsistentHash().allocate("", str(2**31 - 1), mqs(6), ["CID-0", "CID-1"]) == []


def test_machine_room_nearby_java_unit_test_idc_sizes_equal():
    # AllocateMachineRoomNearByTest.testWhenIDCSizeEquals: every queue to a same-room consumer
    for qn, cn in ((20, 10), (20, 20), (20, 30)):
        q = [MessageQueue("topic_test", f"IDC{r}-brokerName", i) for r in range(1, 6)
             for i in range(qn)]
        c = [f"IDC{r}-CID-{i}" for r in range(1, 6) for i in range(cn)]
        got = allocate_group("machine-room-nearby", q, c, inner="avg")
        allocated = [m for ms in got.values() for m in ms]
        assert sorted(allocated) == sorted(q)  # all, exactly once
        for cid, ms in got.items():
            assert all(m.broker_name.split("-")[0] == cid.split("-")[0] for m in ms)


def test_machine_room_nearby_consumer_rooms_fewer_than_broker_rooms():
    # testWhenConsumerIDCIsLess(5, 2, 10, n): IDC4 and IDC5 have no consumer: shared by all,
    # and each healthy room still takes all of its own queues
    q = [MessageQueue("topic_test", f"IDC{r}-brokerName", i) for r in range(1, 6)
         for i in range(10)]
    c = [f"IDC{r}-CID-{i}" for r in range(1, 4) for i in range(5)]
    got = allocate_group("machine-room-nearby", q, c)
    allocated = [m for ms in got.values() for m in ms]
    assert sorted(allocated) == sorted(q)
    for room in ("IDC1", "IDC2", "IDC3"):
        mine = {m for cid, ms in got.items() if cid.startswith(room + "-") for m in ms}
        assert {m for m in q if m.broker_name.startswith(room + "-")} <= mine
    # AVG over all 15 consumers, room by room: 10 queues -> the first 10 ids get one of each
    orphans = {cid: sum(m.broker_name.startswith(("IDC4", "IDC5")) for m in ms)
               for cid, ms in got.items()}
    first10 = sorted(c)[:10]
    assert orphans == {cid: (2 if cid in first10 else 0) for cid in c}


# ----------------------------------------------------------------- docs' vectors and examples

DOC_C = ["10.0.0.5@12345#1", "10.0.0.6@23456#2", "10.0.0.7@34567#3"]
DOC_Q = [MessageQueue("TopicOrder", b, q) for b in ("broker-a", "broker-b") for q in range(4)]


def short(result: dict[str, list[MessageQueue]]) -> list[list[str]]:
    return [[m.short.replace("broker-", "").replace(":", "") for m in result[c]] for c in DOC_C]


def test_protocol_doc_vector():
    # rocketmq-protocol.md section 10 (consistent hash produced by the real Java class)
    q = list(reversed(DOC_Q))
    c = list(reversed(DOC_C))
    assert short(allocate_group("avg", q, c)) == [["a0", "a1", "a2"], ["a3", "b0", "b1"],
                                                  ["b2", "b3"]]
    assert short(allocate_group("avg-by-circle", q, c)) == [["a0", "a3", "b2"],
                                                            ["a1", "b0", "b3"], ["a2", "b1"]]
    assert short(allocate_group("consistent-hash", q, c)) == [["a0", "a1", "b1"],
                                                              ["a2", "b0"], ["a3", "b2", "b3"]]


def test_consumer_doc_examples():
    # rocketmq-consumer.md 1.3/1.4/1.6 examples
    five = mqs(5)
    assert ids(allocate_group("avg", five, ["A", "B"])) == {"A": [0, 1, 2], "B": [3, 4]}
    assert ids(allocate_group("avg", mqs(4), ["C1", "C2", "C3"])) == {
        "C1": [0, 1], "C2": [2], "C3": [3]}
    assert ids(allocate_group("avg-by-circle", five, ["A", "B"])) == {"A": [0, 2, 4],
                                                                      "B": [1, 3]}
    rq = [MessageQueue("t", "hz@b", i) for i in range(5)]
    assert ids(allocate_group("machine-room", rq, ["c0", "c1"], rooms=["hz"])) == {
        "c0": [0, 1, 4], "c1": [2, 3]}


def test_consistent_hash_eight_queues_five_consumers_is_uneven():
    q = [MessageQueue("TopicOrder", "broker-a", i) for i in range(8)]
    c = [f"10.0.0.{i}@{i}" for i in range(1, 6)]
    counts = sorted(len(v) for v in allocate_group("consistent-hash", q, c).values())
    assert sum(counts) == 8 and counts[-1] - counts[0] >= 2


# ------------------------------------------------------------------------------- edge cases

def test_more_consumers_than_queues_tail_idle():
    c = [f"c{i:02d}" for i in range(6)]
    for s in ("avg", "avg-by-circle"):
        a = compute_allocation(s, mqs(4), c)
        assert a.idle == ["c04", "c05"]
        assert [len(a.assignments[x]) for x in c[:4]] == [1, 1, 1, 1]


def test_zero_virtual_nodes_gives_nobody_anything():
    a = compute_allocation("consistent-hash", mqs(5), ["a", "b"], virtual_nodes=0)
    assert a.assignments == {"a": [], "b": []}
    assert len(a.unassigned) == 5


def test_negative_virtual_nodes_rejected():
    with pytest.raises(UsageError, match="illegal virtual node count: -1"):
        allocate_group("consistent-hash", mqs(2), ["a"], virtual_nodes=-1)
    with pytest.raises(UsageError, match="must be an integer"):
        allocate_group("consistent-hash", mqs(2), ["a"], virtual_nodes="3")
    with pytest.raises(ValueError):
        HashRing(["a"], -1)


def test_duplicate_client_id_both_copies_same_share_and_queues_lost():
    c = ["a", "b", "b", "c"]
    for s in ("avg", "avg-by-circle"):
        a = compute_allocation(s, mqs(8), c)
        assert a.duplicates == {"b": 2}
        assert len(a.unassigned) == 2  # the second 'b' slot's share has no consumer
        assert sum(len(v) for v in a.assignments.values()) == 6
    # avg: b (index 1) gets 2..3; index 2's block 4..5 belongs to nobody
    assert ids(allocate_group("avg", mqs(8), c)) == {"a": [0, 1], "b": [2, 3], "c": [6, 7]}


def test_duplicate_client_id_consistent_hash_continues_replica_index():
    # getExistingReplicas: the second copy adds "b-10".."b-19" (b owns 20 ring entries)
    ring = HashRing(["a", "b", "b"], 10)
    owners = [o for _, o in ring.entries()]
    assert owners.count("b") == 20 and owners.count("a") == 10
    single = {h for h, o in HashRing(["b"], 20).entries()}
    assert {h for h, o in ring.entries() if o == "b"} == single


def test_hash_collision_later_put_wins():
    # a custom hash that maps everything to 7: one ring entry, owned by the last put
    ring = HashRing(["a", "b"], 3, hash_function=lambda _k: 7)
    assert ring.entries() == [(7, "b")]
    assert ring.route("anything") == "b"


def test_md5_hash_is_first_four_bytes_big_endian_unsigned():
    import hashlib

    d = hashlib.md5(b"10.0.0.5@12345#1-0").digest()
    assert md5_hash("10.0.0.5@12345#1-0") == int.from_bytes(d[:4], "big")
    assert 0 <= md5_hash("x") < 2**32
    # UTF-8 bytes: non-ASCII ids hash their UTF-8 encoding
    assert md5_hash("\u00e9") == int.from_bytes(hashlib.md5("\u00e9".encode()).digest()[:4],
                                                "big")


def test_ring_wraps_to_first_entry():
    ring = HashRing(["a", "b"], 1, hash_function=lambda k: {"a-0": 100, "b-0": 200}.get(k, 300))
    assert ring.route("q") == "a"  # 300 is past the last entry: wraps
    ring2 = HashRing(["a", "b"], 1, hash_function=lambda k: {"a-0": 100, "b-0": 200}.get(k, 150))
    assert ring2.route("q") == "b"
    ring3 = HashRing(["a", "b"], 1, hash_function=lambda k: {"a-0": 100, "b-0": 200}.get(k, 100))
    assert ring3.route("q") == "a"  # tailMap is inclusive


@pytest.mark.parametrize("s,expected", [
    ("hz@broker-a", ["hz", "broker-a"]), ("a@", ["a"]), ("@", []), ("@b", ["", "b"]),
    ("r@b@c", ["r", "b", "c"]), ("plain", ["plain"]), ("a@@", ["a"]), ("", [""]),
    ("@@b", ["", "", "b"])])
def test_java_split(s, expected):
    assert java_split(s, "@") == expected


def test_machine_room_split_semantics_in_allocation():
    names = ["hz@a", "a@", "@", "@b", "r@b@c", "hz"]
    q = [MessageQueue("t", n, 0) for n in names]
    got = allocate_group("machine-room", q, ["c"], rooms={"hz", "a", "r", ""})
    assert sorted(m.broker_name for m in got["c"]) == ["@b", "hz@a"]


def test_machine_room_requires_rooms():
    with pytest.raises(UsageError, match="needs the consumers' machine rooms"):
        allocate_group("machine-room", mqs(2), ["a"])


def test_config_strategy_ignores_route_and_membership():
    outside = MessageQueue("topic", "elsewhere", 9)
    cfg = {"a": [outside], "stranger": mqs(1)}
    a = compute_allocation("config", mqs(2), ["a", "b"], config=cfg)
    assert a.assignments == {"a": [outside], "b": []}
    assert a.idle == ["b"]
    assert {m.queue_id for m in a.unassigned} == {0, 1}
    from mqctl.allocate.builtin import ByConfig

    assert ByConfig(config=cfg).allocate("", "stranger", mqs(2), ["a"]) == mqs(1)
    with pytest.raises(UsageError, match="needs the per-consumer queue lists"):
        allocate_group("config", mqs(2), ["a"])


def test_nearby_room_errors_and_regex_checks():
    q = [MessageQueue("t", "hz-a", 0)]
    with pytest.raises(UsageError, match="machine room is empty for consumer 'x'"):
        allocate_group("machine-room-nearby", q, ["x"], consumer_room_regex=r"(\w+)-")
    with pytest.raises(UsageError, match="machine room is empty for queue"):
        allocate_group("machine-room-nearby", [MessageQueue("t", "-a", 0)], ["hz-c"])
    with pytest.raises(UsageError, match="no capture group"):
        allocate_group("machine-room-nearby", q, ["hz-c"], broker_room_regex="hz")
    with pytest.raises(UsageError, match="bad broker room regex"):
        allocate_group("machine-room-nearby", q, ["hz-c"], broker_room_regex="(")
    with pytest.raises(UsageError, match="cannot be its own inner"):
        allocate_group("machine-room-nearby", q, ["hz-c"], inner="MACHINE_ROOM_NEARBY")


def test_nearby_orphan_rooms_each_allocated_over_whole_group():
    # two orphan rooms with 1 queue each, AVG inner: the first consumer gets both (skew)
    q = [MessageQueue("t", "hz-b", 0), MessageQueue("t", "bj-b", 0), MessageQueue("t", "gz-b", 0)]
    got = ids(allocate_group("machine-room-nearby", q, ["hz-1", "hz-2"]))
    assert got == {"hz-1": [0, 0, 0], "hz-2": []}


def test_nearby_java_name_with_inner_and_display_name():
    q = [MessageQueue("t", f"{r}-b", i) for r in ("hz", "sh") for i in range(3)]
    c = ["hz-1", "sh-1", "sh-2"]
    a = compute_allocation("MACHINE_ROOM_NEARBY-AVG_BY_CIRCLE", q, c)
    assert a.strategy == "machine-room-nearby-avg-by-circle"
    b = compute_allocation("machine-room-nearby", q, c, inner="avg-by-circle")
    assert a.assignments == b.assignments
    assert ids(a.assignments) == {"hz-1": [0, 1, 2], "sh-1": [0, 2], "sh-2": [1]}


def test_strategy_names_case_and_separator_insensitive():
    base = allocate_group("avg-by-circle", mqs(7), ["a", "b"])
    for name in ("AVG_BY_CIRCLE", "Avg_By-Circle", " avg-by-circle ",
                 "org.apache.rocketmq.client.consumer.rebalance."
                 "AllocateMessageQueueAveragelyByCircle@6d06d69c"):
        assert allocate_group(name, mqs(7), ["a", "b"]) == base


def test_unknown_strategy_lists_known():
    with pytest.raises(UsageError) as e:
        allocate_group("round-robin", mqs(2), ["a"])
    assert "unknown strategy 'round-robin'" in e.value.message
    for n in ("avg", "avg-by-circle", "consistent-hash", "config", "machine-room",
              "machine-room-nearby"):
        assert n in e.value.message


def test_empty_inputs_give_empty_shares():
    for s in ("avg", "avg-by-circle", "consistent-hash"):
        assert allocate_group(s, [], ["a", "b"]) == {"a": [], "b": []}
        assert allocate_group(s, mqs(3), []) == {}


# ---------------------------------------------------------------------------------- sorting

def test_sort_inputs_like_collections_sort():
    q = [MessageQueue("T", "broker-b", 0), MessageQueue("T", "broker-a", 10),
         MessageQueue("T", "broker-a", 9), MessageQueue("S", "broker-z", 0)]
    sq, sc = sort_inputs(q, ["10.0.0.9@x", "10.0.0.10@x"])
    assert [m.short for m in sq] == ["broker-z:0", "broker-a:9", "broker-a:10", "broker-b:0"]
    assert sc == ["10.0.0.10@x", "10.0.0.9@x"]  # String.compareTo, not numeric


def test_java_key_utf16_order():
    # U+1F600 is the surrogate pair D83D DE00: below U+FFFF in Java, above it in code points
    words = ["a\uffff", "a\U0001F600", "a\ue000", "a"]
    assert sorted(words, key=java_key) == ["a", "a\U0001F600", "a\ue000", "a\uffff"]
    assert sorted(words) != sorted(words, key=java_key)


def test_group_result_independent_of_input_order():
    rng = random.Random(7)
    q = [MessageQueue("T", f"broker-{b}", i) for b in "abc" for i in range(5)]
    c = [f"10.0.0.{i}@{i}" for i in range(1, 8)]
    for s in ("avg", "avg-by-circle", "consistent-hash"):
        base = allocate_group(s, q, c)
        for _ in range(5):
            q2, c2 = q[:], c[:]
            rng.shuffle(q2)
            rng.shuffle(c2)
            assert allocate_group(s, q2, c2) == base
