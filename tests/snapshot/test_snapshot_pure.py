"""Pure parts of inspection and snapshot: the consistency check, canonical rows, file layout."""

from __future__ import annotations

import json
import os
import threading

import pytest

from mqctl.admin import BrokerFailure
from mqctl.errors import ConnectError, RefusedError
from mqctl.models import (
    BrokerData,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    ProcessQueueInfo,
    Subscription,
    is_system_group,
)
from mqctl.snapshot import SCHEMA, rows_of, run_lock, snapshot_path
from mqctl.versions import version_name
from mqctl.views.members import ClientView, GroupMembers, check_members
from mqctl.views.progress import GroupProgress, QueueProgress
from mqctl.views.topics import is_system_topic

AVG = "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely@1"
CIRCLE = "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle@2"


def running(subs: dict[str, str], strategy: str = AVG, orderly: bool = False,
            consume_type: str = "CONSUME_PASSIVELY", mq_table=None) -> ConsumerRunningInfo:
    return ConsumerRunningInfo(
        properties={"allocateMessageQueueStrategy": strategy,
                    "PROP_CONSUMEORDERLY": str(orderly).lower(), "PROP_CONSUME_TYPE": consume_type},
        subscriptions=tuple(Subscription(t, e) for t, e in subs.items()),
        mq_table=mq_table or {})


def members(clients: dict[str, ClientView], per_broker: dict[str, list[str] | BrokerFailure],
            model: str = "CLUSTERING", queue_counts=None) -> GroupMembers:
    conn = ConsumerConnection((), "CONSUME_PASSIVELY", model, "CONSUME_FROM_LAST_OFFSET", {})
    brokers = [BrokerData("c", b, {0: f"10.0.0.{i}:10911"}) for i, b in enumerate(per_broker)]
    return GroupMembers("G", brokers, per_broker, conn, clients,
                        queue_counts if queue_counts is not None else {"T": 8}, [])


def test_healthy_group_has_no_findings():
    cs = {c: ClientView(c, running=running({"T": "*"})) for c in ("a@1", "b@2")}
    m = members(cs, {"broker-a": ["a@1", "b@2"], "broker-b": ["b@2", "a@1"]})
    assert check_members(m) == []


def test_each_planted_problem_is_found():
    cs = {
        "a@1": ClientView("a@1", running=running({"T": "*"})),
        "b@2": ClientView("b@2", running=running({"T": "tagA"})),
        "c@3": ClientView("c@3", running=running({"T": "*"}, CIRCLE)),
        "d@4": ClientView("d@4", connections=2, addr="10.1.1.1:1,10.1.1.2:2",
                          running=running({"T": "*"})),
        "e@5": ClientView("e@5", running_error="timed out"),
    }
    m = members(cs, {"broker-a": ["a@1", "b@2", "c@3", "d@4", "d@4", "e@5"],
                     "broker-b": ["a@1", "b@2", "d@4", "e@5"]},
                queue_counts={"T": 4})
    found = {f.check: f for f in check_members(m)}
    assert set(found) == {"membership", "duplicate-id", "subscription", "strategy", "idle",
                          "no-running-info"}
    assert "broker-b does not list c@3" in found["membership"].message
    assert found["duplicate-id"].clients == ("d@4",)
    assert "tagA: b@2" in found["subscription"].message
    assert "AVG_BY_CIRCLE: c@3" in found["strategy"].message
    assert "5 consumers for 4 queues of T: 1 consumer(s)" in found["idle"].message


def test_offline_broadcast_and_pop():
    assert check_members(members({}, {"broker-a": []}))[0].check == "offline"
    cs = {"a@1": ClientView("a@1", running=running({"T": "*"}))}
    assert [f.check for f in check_members(members(cs, {"b": ["a@1"]}, "BROADCASTING"))] == [
        "broadcasting"]
    cs = {"p@1": ClientView("p@1", running=running({"T": "*"}, consume_type="CONSUME_POP"))}
    assert [f.check for f in check_members(members(cs, {"b": ["p@1"]}))] == ["pop"]


def test_failed_broker_does_not_count_as_disagreement():
    cs = {"a@1": ClientView("a@1", running=running({"T": "*"}))}
    fail = BrokerFailure("broker-b", "x:1", ConnectError("down"))
    assert check_members(members(cs, {"broker-a": ["a@1"], "broker-b": fail})) == []


def test_topic_kinds():
    k = lambda t: is_system_topic(t, {"DefaultCluster"}, {"broker-a"})  # noqa: E731
    assert [k(t) for t in ("TopicOrder", "%RETRY%G", "%DLQ%G", "TBW102", "DefaultCluster",
                           "broker-a", "rmq_sys_wheel_timer")] == [
        "normal", "retry", "dlq", "system", "cluster", "broker", "system"]


def test_system_groups():
    assert is_system_group("TOOLS_CONSUMER") and is_system_group("CID_RMQ_SYS_TRANS")
    assert not is_system_group("GID_ORDER")
    # MixAll.PREDEFINE_GROUP_SET's values and the CID_RMQ_SYS_ prefix; CID_SYS_RMQ_TRANS is
    # the name of the constant whose value is CID_RMQ_SYS_TRANS, not a group
    for g in ("SCHEDULE_CONSUMER", "CLIENT_INNER_PRODUCER", "__MONITOR_CONSUMER",
              "DEFAULT_CONSUMER", "CID_ONSAPI_PULL", "CID_RMQ_SYS_ANY"):
        assert is_system_group(g), g
    assert not is_system_group("CID_SYS_RMQ_TRANS") and not is_system_group("CID_SYS_RMQ_APP")


def test_version_names():
    assert version_name(479) == "V5_3_3" and version_name(401) == "V4_9_4"
    assert version_name(10**6) == "HIGHER_VERSION"


def test_canonical_rows():
    mq = MessageQueue("T", "broker-a", 0)
    info = running({"T": "*"}, orderly=True, mq_table={mq: ProcessQueueInfo(locked=True)})
    cv = ClientView("a@1", running=info)
    m = members({"a@1": cv}, {"broker-a": ["a@1"]})
    q = QueueProgress(mq, broker_offset=120, consumer_offset=100, pull_offset=110,
                      last_timestamp=1_717_200_000_000, min_offset=5,
                      max_timestamp=1_717_200_050_000, delay_ms=40_000, owners=("a@1",),
                      locked=True, last_lock_ts=1_717_200_049_000)
    rows = rows_of(GroupProgress("G", 1, "DefaultCluster", [q], m, []),
                   capture_ts=1_717_200_060_000, cluster="DefaultCluster", namesrv="ns:1")
    assert len(rows) == 1
    r = rows[0]
    assert r["schema"] == SCHEMA and r["capture_time"] == "2024-06-01T00:01:00.000Z"
    assert (r["lag"], r["inflight"], r["delay_ms"], r["min_offset"]) == (20, 10, 40_000, 5)
    assert r["owner"] == "a@1" and r["members"] == ["a@1"] and r["online"] is True
    assert r["orderly"] is True and r["message_model"] == "CLUSTERING"
    # every documented field is present (docs/snapshot.md)
    doc = (os.path.dirname(__file__) + "/../../docs/snapshot.md")
    with open(doc) as fh:
        text = fh.read()
    example = json.loads(next(ln for ln in text.splitlines()
                              if ln.startswith('{"schema":"mqctl.snapshot/1')))
    assert set(example) == set(r)


def test_snapshot_path_layout(tmp_path):
    p = snapshot_path(tmp_path, "Default Cluster/1", 1_717_200_000_123)
    assert p.relative_to(tmp_path).as_posix() == (
        "2024-06-01/mqctl-snapshot-Default_Cluster_1-20240601T000000.123Z.jsonl")


def test_run_lock_refuses_overlap(tmp_path):
    entered = threading.Event()
    release = threading.Event()

    def hold():
        with run_lock(tmp_path):
            entered.set()
            release.wait(5)

    t = threading.Thread(target=hold)
    t.start()
    assert entered.wait(5)
    try:
        with pytest.raises(RefusedError, match="still writing"), run_lock(tmp_path):
            pass
    finally:
        release.set()
        t.join()
    with run_lock(tmp_path):  # free again
        pass
