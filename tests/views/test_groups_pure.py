"""The pure parts of ``mqctl groups`` (state rule, --match, pop retry topics) and the simulated
broker's GET_BROKER_CONSUME_STATS against AdminBrokerProcessor.fetchAllConsumeStatsInBroker."""

from __future__ import annotations

import pytest

from mqctl.cli.groups import STATE_HELP
from mqctl.models import ConsumeStats, MessageQueue, OffsetWrapper
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode
from mqctl.views.groups import (
    STATE_RULE,
    STATES,
    GroupSummary,
    _pop_retry_owner,
    group_state,
    match_group,
)

MQ = MessageQueue("T", "broker-a", 0)


def summary(**kw):
    s = GroupSummary("G")
    s.queues = {MQ: OffsetWrapper(100, 100 - kw.pop("lag_q", 0), None, 1)} if kw.pop(
        "offsets", True) else {}
    for k, v in kw.items():
        setattr(s, k, v)
    return s


@pytest.mark.parametrize("kw, state", [
    ({"members": None, "lag": 0}, "UNKNOWN"),
    ({"members": 2, "lag": None, "not_included": ["broker-b"]}, "UNKNOWN"),
    ({"members": 1, "lag": None, "message_model": "BROADCASTING", "offsets": False}, "UNKNOWN"),
    ({"members": 0, "lag": 0, "offsets": False}, "EMPTY"),
    ({"members": 0, "lag": 5, "lag_q": 5}, "OFFLINE"),
    ({"members": 2, "lag": 5, "lag_q": 5, "consume_tps": 0.0}, "STOPPED"),
    ({"members": 2, "lag": 5000, "lag_q": 5000, "consume_tps": 10.0}, "LAGGING"),
    ({"members": 2, "lag": 5, "lag_q": 5, "consume_tps": 10.0, "max_time_lag_ms": 61_000},
     "LAGGING"),
    ({"members": 2, "lag": 5, "lag_q": 5, "consume_tps": 10.0, "max_time_lag_ms": 2_000}, "OK"),
    ({"members": 2, "lag": 0, "consume_tps": 0.0}, "OK"),  # idle but caught up
])
def test_state_rule(kw, state):
    got, reason = group_state(summary(**kw))
    assert got == state
    assert (reason == "") == (state == "OK")


def test_thresholds_are_the_callers():
    s = summary(members=1, lag=50, lag_q=50, consume_tps=1.0, max_time_lag_ms=5_000)
    assert group_state(s)[0] == "OK"
    assert group_state(s, lag_threshold=50)[0] == "LAGGING"
    assert group_state(s, time_lag_threshold_ms=5_000)[0] == "LAGGING"


def test_help_and_docs_state_every_state_in_rule_order():
    order = ["UNKNOWN", "PAUSED", "EMPTY", "OFFLINE", "STOPPED", "LAGGING", "OK"]
    assert set(order) == set(STATES)
    for text in (STATE_RULE, STATE_HELP):
        pos = [text.index(f"{st}:") for st in order]
        assert pos == sorted(pos), text


@pytest.mark.parametrize("name, pattern, hit", [
    ("GID_PAY", None, True), ("GID_PAY", "pay", True), ("GID_PAY", "PAY", True),
    ("GID_PAY", "gid_p*", True), ("GID_PAY", "*ORDER", False), ("GID_PAY", "order", False),
    ("GID_PAY", "gid_[pq]ay", True),
])
def test_match_group(name, pattern, hit):
    assert match_group(name, pattern) is hit


def test_pop_retry_topics_are_not_groups():
    groups, topics = {"G", "G_X"}, {"T", "X"}
    assert _pop_retry_owner("G+T", groups, topics)  # v2: %RETRY%G+T
    assert _pop_retry_owner("G_T", groups, topics)  # v1: %RETRY%G_T
    assert not _pop_retry_owner("G_Y", groups, topics)  # a group's own retry topic
    assert not _pop_retry_owner("H", groups, topics)


SCENARIO = {
    "name": "bcs", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a", "version": "V5_3_3"},
                {"name": "broker-b", "version": "V4_9_3"}],
    "topics": [{"name": "RW", "read_queues": 4, "write_queues": 2, "rate": 1},
               {"name": "ORD", "queues": 2, "rate": 1, "order": True}],
    "groups": [{"name": "G1", "topics": ["RW"], "initial_lag": 3},
               {"name": "G2", "topics": ["ORD"], "initial_lag": 1}],
}


def _call(sim, broker, ext):
    """One GET_BROKER_CONSUME_STATS from a fresh client."""
    import asyncio

    from mqctl.remoting.client import ClientOptions, RemotingClient

    async def go():
        async with RemotingClient(ClientOptions(timeout=10)) as c:
            return await c.invoke(sim.cluster.servers[broker].addr,
                                  RequestCode.GET_BROKER_CONSUME_STATS, ext, b"", check=False)
    return asyncio.run(go())


@pytest.mark.parametrize("broker", ["broker-a", "broker-b"])
def test_sim_broker_consume_stats_shape(sim_factory, broker):
    s = sim_factory(SCENARIO)
    resp = _call(s, broker, {"isOrder": "false"})
    assert resp.code == 0
    body = fastjson.loads(resp.body)
    assert body["brokerAddr"] == s.cluster.broker_addr(broker)
    groups = {g: v for entry in body["consumeStatsList"] for g, v in entry.items()}
    # every group of the table, the system groups too (no offsets: an empty list)
    assert groups["TOOLS_CONSUMER"] == [] and {"G1", "G2"} <= set(groups)
    stats = [ConsumeStats.from_body(x) for x in groups["G1"]]
    queues = sorted(mq.queue_id for cs in stats for mq in cs.offsets)
    assert queues == [0, 1]  # write queues only (RW has 4 read, 2 write)
    b = s.cluster.brokers[broker]
    for cs in stats:
        for mq, w in cs.offsets.items():
            assert w.broker_offset == b.max_offset(mq.topic, mq.queue_id)
            assert w.consumer_offset == b.committed("G1", mq.topic, mq.queue_id)
    total = sum(w.diff for g in groups.values() for x in g
                for w in ConsumeStats.from_body(x).offsets.values())
    assert body["totalDiff"] == total
    if broker == "broker-a":  # 5.x: pullOffset never set, totalInflightDiff negative
        assert all(w.pull_offset == 0 for cs in stats for w in cs.offsets.values())
        assert body["totalInflightDiff"] < 0
    else:  # 4.9.3's OffsetWrapper and ConsumeStatsList have neither
        assert all(w.pull_offset is None for cs in stats for w in cs.offsets.values())
        assert "totalInflightDiff" not in body
    ordered = fastjson.loads(_call(s, broker, {"isOrder": "true"}).body)
    og = {g: v for entry in ordered["consumeStatsList"] for g, v in entry.items()}
    assert og["G1"] == [] and len(og["G2"]) == 1  # only topics with order=true
