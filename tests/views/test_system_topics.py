"""System topics as the real name servers list them
(../shared/samples/real/<v>/other-requests/206_getAllTopicListFromNameserver, 106_*)."""

from __future__ import annotations

import pytest
from corpus_views import VERSIONS, body

from mqctl.models import ClusterInfo
from mqctl.views.topics import is_system_topic, topic_rows

CLUSTER = {"4.9.3": "DefaultCluster", "5.3.3": "DefaultCluster5"}


def _corpus(version):
    names = body(version, "other-requests/206_getAllTopicListFromNameserver.namesrv.json")
    info = ClusterInfo.from_body(body(version,
                                      "other-requests/106_getBrokerClusterInfo.namesrv.json"))
    return sorted(names["topicList"]), info


@pytest.mark.parametrize("version", VERSIONS)
def test_kind_all_lists_every_topic_the_name_server_lists(version):
    """mqadmin topicList prints the cluster- and broker-name topics; mqctl left them out."""
    names, info = _corpus(version)
    rows = topic_rows(names, set(info.clusters), set(info.brokers), "all")
    assert [r["topic"] for r in rows] == names
    kinds = {r["topic"]: r["kind"] for r in rows}
    cl = CLUSTER[version]
    assert kinds[cl] == "cluster"
    assert kinds["broker-a"] == kinds["broker-b"] == "broker"
    # TopicConfigManager: addSystemTopic(clusterName + "_" + MixAll.REPLY_TOPIC_POSTFIX)
    assert kinds[f"{cl}_REPLY_TOPIC"] == "system"
    for t in ("TBW102", "SCHEDULE_TOPIC_XXXX", "BenchmarkTest", "OFFSET_MOVED_EVENT",
              "SELF_TEST_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC"):
        assert kinds[t] == "system", t
    assert kinds["RW_T"] == "normal" and kinds["%RETRY%RW_G"] == "retry"
    if version == "5.3.3":
        for t in ("rmq_sys_wheel_timer", "RMQ_SYS_TRANS_OP_HALF_TOPIC",
                  "rmq_sys_REVIVE_LOG_DefaultCluster5", "rmq_sys_SYNC_BROKER_MEMBER_broker-a"):
            assert kinds[t] == "system", t


@pytest.mark.parametrize("version", VERSIONS)
def test_kind_system_includes_cluster_broker_and_reply_topics(version):
    names, info = _corpus(version)
    system = {r["topic"] for r in topic_rows(names, set(info.clusters), set(info.brokers),
                                             "system")}
    cl = CLUSTER[version]
    assert {cl, "broker-a", "broker-b", f"{cl}_REPLY_TOPIC", "TBW102"} <= system
    normal = {r["topic"] for r in topic_rows(names, set(info.clusters), set(info.brokers),
                                             "normal")}
    assert not normal & system
    assert f"{cl}_REPLY_TOPIC" not in normal and "NC_T" in normal
    # every name is in exactly one of the kinds
    kinds = ("normal", "retry", "dlq", "system")
    total = sum(len(topic_rows(names, set(info.clusters), set(info.brokers), k)) for k in kinds)
    assert total == len(names)


def test_checkpoint_topic_is_system():
    """5.3.3 TopicValidator.RMQ_SYS_ROCKSDB_OFFSET_TOPIC."""
    assert is_system_topic("CHECKPOINT_TOPIC", set(), set()) == "system"
    assert is_system_topic("X_REPLY_TOPIC", {"Y"}, set()) == "normal"
