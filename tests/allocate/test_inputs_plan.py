"""Topology files, shorthand, assignment files; moves, membership changes, live comparison."""

from __future__ import annotations

import json

import pytest

from mqctl.allocate import (
    apply_membership,
    compare_with_reports,
    compute_allocation,
    compute_moves,
)
from mqctl.allocate.inputs import (
    generated_ids,
    load_assignment,
    load_topology,
    parse_consumer_spec,
    parse_queue_spec,
    parse_topology,
)
from mqctl.allocate.live import reports_from_infos, strategy_name
from mqctl.allocate.report import compact_queues
from mqctl.errors import UsageError
from mqctl.models import ConsumerRunningInfo, MessageQueue, ProcessQueueInfo


def test_queue_spec():
    qs = parse_queue_spec("broker-a:3, broker-b:2", "T")
    assert [(q.topic, q.short) for q in qs] == [("T", "broker-a:0"), ("T", "broker-a:1"),
                                                ("T", "broker-a:2"), ("T", "broker-b:0"),
                                                ("T", "broker-b:1")]
    assert parse_queue_spec("ns:broker:2")[1] == MessageQueue("TopicTest", "ns:broker", 1)
    for bad in ("broker-a", "broker-a:x", ":3", "broker-a:-1"):
        with pytest.raises(UsageError, match="bad entry"):
            parse_queue_spec(bad)
    with pytest.raises(UsageError, match="given twice"):
        parse_queue_spec("a:1,a:2")
    with pytest.raises(UsageError, match="no queues"):
        parse_queue_spec("a:0")


def test_consumer_spec_and_generated_ids():
    assert parse_consumer_spec("c1, c2,c1") == ["c1", "c2", "c1"]
    assert parse_consumer_spec("3") == ["10.0.0.1@1", "10.0.0.2@2", "10.0.0.3@3"]
    ids = generated_ids(600)
    assert ids[253] == "10.0.0.254@254" and ids[254] == "10.0.1.1@255"
    assert len(set(ids)) == 600
    with pytest.raises(UsageError, match="empty client id"):
        parse_consumer_spec("a,,b")
    with pytest.raises(UsageError, match="out of range"):
        parse_consumer_spec("0")


def test_topology_yaml_and_json(tmp_path):
    y = tmp_path / "t.yaml"
    y.write_text("group: G\ntopic: T\nqueues:\n  - broker-a:1\n"
                 "  - {topic: U, brokerName: broker-b, queueId: 0}\n  - {brokerName: c, "
                 "queueId: 2}\nconsumers: [x, y]\n")
    t = load_topology(str(y))
    assert t.group == "G" and t.consumers == ("x", "y")
    assert t.queues == (MessageQueue("T", "broker-a", 1), MessageQueue("U", "broker-b", 0),
                        MessageQueue("T", "c", 2))
    j = tmp_path / "t.json"
    j.write_text(json.dumps({"queues": [{"topic": "T", "brokerName": "b", "queueId": 0}],
                             "consumers": 2}))
    t2 = load_topology(str(j))
    assert t2.consumers == ("10.0.0.1@1", "10.0.0.2@2") and t2.group == ""


@pytest.mark.parametrize("data,msg", [
    ([], "expected a mapping"),
    ({"queues": []}, "missing key\\(s\\) consumers"),
    ({"consumers": []}, "missing key\\(s\\) queues"),
    ({"queues": {}, "consumers": []}, "'queues' must be a list"),
    ({"queues": [], "consumers": "abc"}, "'consumers' must be a list"),
    ({"queues": [], "consumers": [1]}, "consumers\\[0\\] is not a non-empty string"),
    ({"queues": [{"brokerName": "b", "queueId": 0}], "consumers": []}, "lacks topic"),
    ({"queues": [{"topic": "T", "brokerName": "b", "queueId": "0"}], "consumers": []},
     "queueId must be a non-negative integer"),
    ({"queues": [{"topic": "T", "brokerName": "b", "queueId": True}], "consumers": []},
     "queueId must be"),
    ({"queues": [7], "consumers": []}, "must be an object"),
    ({"group": 3, "queues": [], "consumers": []}, "'group' must be a string"),
])
def test_topology_errors(data, msg):
    with pytest.raises(UsageError, match=msg):
        parse_topology(data, "topology file 'x'")


def test_topology_file_errors(tmp_path):
    with pytest.raises(UsageError, match="does not exist"):
        load_topology(str(tmp_path / "missing.yaml"))
    with pytest.raises(UsageError, match="is a directory"):
        load_topology(str(tmp_path))
    bad = tmp_path / "bad.yaml"
    bad.write_text("queues: [a, b\nconsumers: x\n")
    with pytest.raises(UsageError, match="not valid YAML at line"):
        load_topology(str(bad))
    badj = tmp_path / "bad.json"
    badj.write_text("{'queues': []}")
    with pytest.raises(UsageError, match="not valid JSON"):
        load_topology(str(badj))
    binary = tmp_path / "bin.yaml"
    binary.write_bytes(b"\xff\xfe\x00bad")  # (a UTF-16 byte order mark: named as such)
    with pytest.raises(UsageError, match="is UTF-16 text"):
        load_topology(str(binary))


def test_assignment_files(tmp_path):
    prev = compute_allocation("avg", parse_queue_spec("broker-a:4", "T"), ["a", "b"])
    from mqctl.allocate.report import allocation_result
    from mqctl.render import to_json

    f = tmp_path / "prev.json"
    f.write_text(to_json(allocation_result(prev).data))
    assert load_assignment(str(f), None, "previous") == prev.assignments
    g = tmp_path / "cfg.yaml"
    g.write_text("a: [broker-a:0, broker-a:3]\nb: []\nc:\n")
    assert load_assignment(str(g), "T", "cfg") == {
        "a": [MessageQueue("T", "broker-a", 0), MessageQueue("T", "broker-a", 3)], "b": [],
        "c": []}
    h = tmp_path / "bad.yaml"
    h.write_text("- a\n- b\n")
    with pytest.raises(UsageError, match="expected a mapping of client id"):
        load_assignment(str(h), None, "cfg")
    h.write_text("a: broker-a:0\n")
    with pytest.raises(UsageError, match="must be a list"):
        load_assignment(str(h), None, "cfg")


def test_moves_single_owner():
    q = parse_queue_spec("b:6", "T")
    before = compute_allocation("avg", q, ["a", "b"])
    after = compute_allocation("avg", q, ["a", "b", "c"])
    moves = compute_moves(before, after)
    assert [(m.queue.queue_id, m.source, m.target) for m in moves] == [
        (2, "a", "b"), (4, "b", "c"), (5, "b", "c")]
    assert compute_moves(before, before) == []


def test_moves_multi_owner_and_unassigned():
    q = parse_queue_spec("b:2", "T")
    cfg1 = {"x": q, "y": [q[0]]}
    cfg2 = {"x": [q[1]], "z": [q[0]]}
    before = compute_allocation("config", q, ["x", "y"], config=cfg1)
    after = compute_allocation("config", q, ["x", "z"], config=cfg2)
    assert [(m.queue.queue_id, m.source, m.target) for m in compute_moves(before, after)] == [
        (0, "x", "z"), (0, "y", None)]
    gone = compute_allocation("avg", q, [])
    assert [(m.source, m.target) for m in compute_moves(before, gone)] == [
        ("x", None), ("y", None), ("x", None)]


def test_apply_membership():
    assert apply_membership(["a", "b", "b"], add=["c", "a"], remove=["b"]) == ["a", "c", "a"]
    with pytest.raises(UsageError, match="not a consumer of the group"):
        apply_membership(["a"], remove=["zz"])
    with pytest.raises(UsageError, match="non-empty"):
        apply_membership(["a"], add=[" "])


def test_compare_with_reports_finds_every_difference():
    q = parse_queue_spec("b:4", "T")
    pred = compute_allocation("avg", q, ["a", "b"])  # a: 0,1  b: 2,3
    reports = {"a": [q[0], q[1], MessageQueue("%RETRY%G", "b", 0)], "b": [q[2], q[1]]}
    diffs = compare_with_reports(pred, reports)
    assert [(d.queue.queue_id, d.predicted, d.reported, d.kind) for d in diffs] == [
        (1, ("a",), ("a", "b"), "owned by several clients"),
        (3, ("b",), (), "not owned by any client")]
    assert compare_with_reports(pred, {"a": q[:2], "b": q[2:]}) == []


def test_reports_from_running_infos():
    q = parse_queue_spec("b:3", "T")
    info = ConsumerRunningInfo(
        properties={"allocateMessageQueueStrategy": "org.apache.rocketmq.client.consumer."
                    "rebalance.AllocateMessageQueueConsistentHash@1b2c3d"},
        subscriptions=(), mq_table={q[0]: ProcessQueueInfo(), q[1]: ProcessQueueInfo(
            dropped=True), MessageQueue("Other", "b", 0): ProcessQueueInfo()})
    r = reports_from_infos({"a": info, "b": UsageError("timed out")}, "T")
    assert r.owned == {"a": (q[0],)}
    assert r.dropped == {"a": (q[1],)}
    assert r.strategies == {"a": "consistent-hash"}
    assert r.failures == {"b": "timed out"}
    assert strategy_name("com.acme.MyStrategy@12") == "MyStrategy"
    assert strategy_name(None) is None


def test_compact_queues():
    qs = parse_queue_spec("broker-a:4,broker-b:2", "T")
    assert compact_queues([qs[0], qs[1], qs[3], qs[5]]) == "broker-a:0-1,3 broker-b:1"
    assert compact_queues([qs[4]], with_topic=True) == "T/broker-b:0"
    assert compact_queues([]) == ""
