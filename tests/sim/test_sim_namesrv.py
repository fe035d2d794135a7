"""The simulated name server answers as the release it simulates.

Corpus: real 4.9.3 and 5.3.3 name servers (other-requests/105_*, 106_*, 206_*)."""

from __future__ import annotations

from typing import Any

import pytest
from test_sim_protocol import body, call

from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.sim.scenario import ScenarioError, load_scenario


def _scenario(broker_versions: list[str], namesrv: dict[str, Any] | None = None,
              cluster: str = "DefaultCluster") -> dict[str, Any]:
    sc: dict[str, Any] = {
        "name": "ns", "cluster": cluster, "clock": {"mode": "manual"},
        "brokers": [{"name": f"broker-{chr(97 + i)}", "version": v}
                    for i, v in enumerate(broker_versions)],
        "topics": [{"name": "T", "queues": 2, "rate": 0}],
        "groups": [{"name": "G", "topics": ["T"],
                    "consumers": [{"id": "10.0.0.1@1"}]}]}
    if namesrv is not None:
        sc["namesrv"] = namesrv
    return sc


@pytest.mark.parametrize(("versions", "namesrv", "want"), [
    (["V4_9_3", "V4_9_3"], None, 399),
    (["V5_3_3", "V5_3_3"], None, 479),
    (["V5_3_3", "V4_9_3"], None, 399),  # the lowest broker version
    (["V5_3_3", "V5_3_3"], {"version": "V4_9_3"}, 399),  # the scenario's own key wins
])
def test_namesrv_answers_with_its_version(sim_factory, versions, namesrv, want):
    s = sim_factory(_scenario(versions, namesrv))
    for code, ext in ((C.GET_ROUTEINFO_BY_TOPIC, {"topic": "T"}),
                      (C.GET_ROUTEINFO_BY_TOPIC, {"topic": "NO_SUCH_TOPIC"}),
                      (C.GET_BROKER_CLUSTER_INFO, None),
                      (C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, None)):
        assert call(s, "namesrv", code, ext).version == want, code


def test_namesrv_4x_broker_data_and_faq(sim_factory):
    """4.9.3 (other-requests/105_*, 106_*): no BrokerData.enableActingMaster (5.0.0), the old
    FAQ URL in the TOPIC_NOT_EXIST remark (105_*NO_SUCH_TOPIC*)."""
    old = sim_factory(_scenario(["V4_9_3", "V4_9_3"]))
    route = body(call(old, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "T"}))
    assert all("enableActingMaster" not in bd for bd in route["brokerDatas"])
    info = body(call(old, "namesrv", C.GET_BROKER_CLUSTER_INFO))
    assert all("enableActingMaster" not in bd for bd in info["brokerAddrTable"].values())
    miss = call(old, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "NO_SUCH_TOPIC"})
    assert (miss.code, miss.remark) == (
        R.TOPIC_NOT_EXIST, "No topic route info in name server for the topic: NO_SUCH_TOPIC\n"
        "See http://rocketmq.apache.org/docs/faq/ for further details.")
    new = sim_factory(_scenario(["V5_3_3"]))
    route = body(call(new, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "T"}))
    assert [bd["enableActingMaster"] for bd in route["brokerDatas"]] == [False]
    miss = call(new, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "NO_SUCH_TOPIC"})
    assert miss.remark.endswith("See https://rocketmq.apache.org/docs/bestPractice/06FAQ for "
                                "further details.")


def test_namesrv_version_key_is_validated():
    with pytest.raises(ScenarioError, match=r"namesrv\.version"):
        load_scenario(_scenario(["V4_9_3"], {"version": "V9_X"}))
    with pytest.raises(ScenarioError, match=r"namesrv\.port"):
        load_scenario(_scenario(["V4_9_3"], {"port": 9876}))


# The structural topics of the real lists (206_getAllTopicListFromNameserver), beside the
# cluster and broker names; TopicTest/TopicOrder and the GID_* groups' are smoke tests' topics
SYSTEM_493 = {"TBW102", "SELF_TEST_TOPIC", "BenchmarkTest", "OFFSET_MOVED_EVENT",
              "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "{c}_REPLY_TOPIC"}
SYSTEM_533 = SYSTEM_493 | {"RMQ_SYS_TRANS_OP_HALF_TOPIC", "rmq_sys_wheel_timer",
                           "rmq_sys_REVIVE_LOG_{c}", "rmq_sys_SYNC_BROKER_MEMBER_{b}"}


@pytest.mark.parametrize(("version", "cluster", "system"), [
    ("V4_9_3", "DefaultCluster", SYSTEM_493), ("V5_3_3", "DefaultCluster5", SYSTEM_533)])
def test_topic_list_has_the_structural_topics(sim_factory, version, cluster, system):
    s = sim_factory(_scenario([version, version], cluster=cluster))
    topics = body(call(s, "namesrv", C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))["topicList"]
    want = {t.format(c=cluster, b=b) for t in system for b in ("broker-a", "broker-b")}
    want |= {cluster, "broker-a", "broker-b", "T", "%RETRY%G"}
    assert set(topics) == want
    assert len(topics) == len(want)


def test_mqctl_topics_kind_system_shows_them(sim_factory):
    """``mqctl topics --kind system/all`` against the sim lists the brokers' system topics."""
    from conftest import run_cli

    s = sim_factory(_scenario(["V5_3_3", "V5_3_3"], cluster="DefaultCluster5"))
    r = run_cli(["-n", s.namesrv_addr, "topics", "--kind", "system", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    kinds = {x["topic"]: x["kind"] for x in r.json["topics"]}
    want = {t.format(c="DefaultCluster5", b=b) for t in SYSTEM_533 for b in ("broker-a",
                                                                             "broker-b")}
    assert {t for t, k in kinds.items() if k == "system"} == want
    assert kinds["DefaultCluster5"] == "cluster" and kinds["broker-b"] == "broker"
    r = run_cli(["-n", s.namesrv_addr, "topics", "--kind", "all", "-o", "json"])
    assert want | {"T", "%RETRY%G"} <= {x["topic"] for x in r.json["topics"]}
