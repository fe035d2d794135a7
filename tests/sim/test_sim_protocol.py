"""Each request type of the simulated cluster against the scenario's expected values."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from mqctl.errors import BrokerError
from mqctl.models import ConsumeStats, MessageQueue, TopicRoute, TopicStats
from mqctl.remoting import fastjson
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.remoting.frame import RemotingCommand

MQ = MessageQueue


def call(sim, target: str, code: int, ext: dict[str, Any] | None = None, body: bytes = b"",
         *, version: int = 479, check: bool = False, timeout: float = 10) -> RemotingCommand:
    """One request from a fresh client (in the test thread's own event loop)."""
    addr = sim.namesrv_addr if target == "namesrv" else sim.cluster.servers[target].addr

    async def go() -> RemotingCommand:
        async with RemotingClient(ClientOptions(version=version, timeout=timeout)) as c:
            return await c.invoke(addr, code, ext, body, check=check)
    return asyncio.run(go())


def body(resp: RemotingCommand) -> Any:
    assert resp.code == 0, (resp.code, resp.remark)
    return fastjson.loads(resp.body)


def test_route_standard_and_nonstandard_json(sim):
    std = call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicPay"})
    assert b'"brokerAddrs":{"0":' in std.body
    old = call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicPay"}, version=121)
    assert b'"brokerAddrs":{0:' in old.body
    forced = call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC,
                  {"topic": "TopicPay", "acceptStandardJsonOnly": "true"}, version=121)
    assert b'{"0":' in forced.body
    r = TopicRoute.from_body("TopicPay", body(old))
    assert [b.broker_name for b in r.brokers] == ["broker-a", "broker-b"]
    assert r.broker("broker-a").addrs == {0: sim.cluster.broker_addr("broker-a"),
                                          1: sim.cluster.broker_addr("broker-a", slave=True)}
    assert len(r.subscribe_queues()) == 8


def test_route_unknown_topic_remark(sim):
    resp = call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "NoSuchTopic"})
    assert resp.code == R.TOPIC_NOT_EXIST
    assert resp.remark == ("No topic route info in name server for the topic: NoSuchTopic\n"
                           "See https://rocketmq.apache.org/docs/bestPractice/06FAQ for further "
                           "details.")


def test_cluster_info_and_topic_list(sim):
    info = body(call(sim, "namesrv", C.GET_BROKER_CLUSTER_INFO))
    assert info["clusterAddrTable"] == {"DefaultCluster": ["broker-a", "broker-b"]}
    assert info["brokerAddrTable"]["broker-b"]["brokerAddrs"] == {
        0: sim.cluster.broker_addr("broker-b")}
    topics = body(call(sim, "namesrv", C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))["topicList"]
    assert {"TopicPay", "%RETRY%GID_PAY", "DefaultCluster", "broker-a"} <= set(topics)
    assert "%RETRY%GID_REPLAY" not in topics  # never ran a push consumer


def test_membership_requests(sim):
    ids = body(call(sim, "broker-a", C.GET_CONSUMER_LIST_BY_GROUP,
                    {"consumerGroup": "GID_PAY"}))["consumerIdList"]
    assert sorted(ids) == ["10.0.1.11@4101#demo01", "10.0.1.12@4102#demo02",
                           "10.0.1.13@4103#demo03"]
    dup = body(call(sim, "broker-b", C.GET_CONSUMER_LIST_BY_GROUP,
                    {"consumerGroup": "GID_DUP"}))["consumerIdList"]
    assert sorted(dup) == ["172.17.0.2@1", "172.17.0.2@1", "172.17.0.3@1"]
    none = call(sim, "broker-a", C.GET_CONSUMER_LIST_BY_GROUP, {"consumerGroup": "GID_REPLAY"})
    assert (none.code, none.remark) == (R.SYSTEM_ERROR, "no consumer for this group, GID_REPLAY")
    conn = body(call(sim, "broker-a", C.GET_CONSUMER_CONNECTION_LIST,
                     {"consumerGroup": "GID_ORDER"}))
    assert conn["consumeType"] == "CONSUME_PASSIVELY" and conn["messageModel"] == "CLUSTERING"
    assert {c["clientAddr"] for c in conn["connectionSet"]} == {
        "10.0.3.31:50200", "10.0.3.32:50201", "10.0.3.33:50202"}
    assert set(conn["subscriptionTable"]) == {"TopicOrder", "%RETRY%GID_ORDER"}
    off = call(sim, "broker-a", C.GET_CONSUMER_CONNECTION_LIST, {"consumerGroup": "GID_REPLAY"})
    assert (off.code, off.remark) == (R.CONSUMER_NOT_ONLINE,
                                      "the consumer group[GID_REPLAY] not online")
    who = body(call(sim, "broker-a", C.QUERY_TOPIC_CONSUME_BY_WHO, {"topic": "TopicPay"}))
    # 5.3.3 (the demo's brokers) adds the subscribed topic's own name, not the online group
    # (ConsumerManager.registerConsumer, apache/rocketmq#9352); the groups come from offsets
    assert who["groupList"] == ["GID_PAY", "GID_REPLAY", "TopicPay"]


def test_consume_stats_match_ground_truth(sim):
    sim.advance(10)
    cs = ConsumeStats.from_body(body(call(sim, "broker-b", C.GET_CONSUME_STATS,
                                          {"consumerGroup": "GID_REPLAY", "topic": "TopicPay"})))
    assert sorted(cs.offsets) == [MQ("TopicPay", "broker-b", q) for q in range(4)]
    for mq, w in cs.offsets.items():
        assert w.broker_offset == sim.call(lambda c, mq=mq: c.max_offset(mq))
        assert w.consumer_offset == sim.call(lambda c, mq=mq: c.committed_offset("GID_REPLAY",
                                                                               mq))
        assert w.diff >= 500  # initial_lag 500, offline
    # without a topic: every topic the group has offsets for (online: only subscribed ones)
    cs = ConsumeStats.from_body(body(call(sim, "broker-a", C.GET_CONSUME_STATS,
                                          {"consumerGroup": "GID_ORDER"})))
    assert {mq.topic for mq in cs.offsets} == {"TopicOrder", "%RETRY%GID_ORDER"}
    many = ConsumeStats.from_body(body(call(sim, "broker-a", C.GET_CONSUME_STATS, {
        "consumerGroup": "GID_PAY", "topicList": "TopicPay;%RETRY%GID_PAY;"})))
    assert len(many.offsets) == 5


def test_topic_stats_and_offsets(sim):
    ts = TopicStats.from_body(body(call(sim, "broker-a", C.GET_TOPIC_STATS_INFO,
                                        {"topic": "TopicAudit"})))
    o = ts.offsets[MQ("TopicAudit", "broker-a", 2)]
    assert o.min_offset == 0 and o.max_offset == 20 * 7200  # 20/s for 2 h of history
    mq = MQ("TopicAudit", "broker-a", 2)
    assert o.last_update_timestamp == sim.call(
        lambda c: c.brokers["broker-a"].store_ts("TopicAudit", 2, o.max_offset - 1))
    bad = call(sim, "broker-a", C.GET_TOPIC_STATS_INFO, {"topic": "Nope"})
    assert (bad.code, bad.remark) == (R.TOPIC_NOT_EXIST, "topic[Nope] not exist")
    mx = call(sim, "broker-a", C.GET_MAX_OFFSET, {"topic": "TopicAudit", "queueId": 2})
    assert int(mx.ext("offset")) == sim.call(lambda c: c.max_offset(mq))
    mn = call(sim, "broker-a", C.GET_MIN_OFFSET, {"topic": "TopicAudit", "queueId": 2})
    assert mn.ext("offset") == "0"
    early = call(sim, "broker-a", C.GET_EARLIEST_MSG_STORETIME, {"topic": "TopicAudit",
                                                                 "queueId": 2})
    assert int(early.ext("timestamp")) == sim.clock.start_ms - 7_200_000


def test_time_span_delay_is_exact(sim):
    sim.advance(5)
    spans = body(call(sim, "broker-b", C.QUERY_CONSUME_TIME_SPAN,
                      {"topic": "TopicPay", "group": "GID_REPLAY"}))["consumeTimeSpanSet"]
    assert len(spans) == 4
    now = sim.clock.now_ms()
    b = sim.cluster.brokers["broker-b"]
    for s in spans:
        q = s["messageQueue"]["queueId"]
        co = sim.call(lambda c, q=q: c.committed_offset("GID_REPLAY", MQ("TopicPay", "broker-b",
                                                                         q)))
        assert s["delayTime"] == now - b.store_ts("TopicPay", q, co)
        # 500 messages behind at 5/s, then 5 s more
        assert s["delayTime"] == pytest.approx(105_000, abs=1000)
    caught_up = body(call(sim, "broker-a", C.QUERY_CONSUME_TIME_SPAN,
                          {"topic": "%RETRY%GID_PAY", "group": "GID_PAY"}))["consumeTimeSpanSet"]
    assert caught_up[0]["delayTime"] == 0


def test_query_and_update_consumer_offset(sim):
    ext = {"consumerGroup": "GID_REPLAY", "topic": "TopicPay", "queueId": 1}
    got = call(sim, "broker-a", C.QUERY_CONSUMER_OFFSET, {**ext, "setZeroIfNotFound": "false"})
    mq = MQ("TopicPay", "broker-a", 1)
    assert int(got.ext("offset")) == sim.call(lambda c: c.committed_offset("GID_REPLAY", mq))
    nf = call(sim, "broker-a", C.QUERY_CONSUMER_OFFSET,
              {**ext, "consumerGroup": "GID_NEW", "setZeroIfNotFound": "false"})
    assert (nf.code, nf.remark) == (R.QUERY_NOT_FOUND,
                                    "Not found, do not set to zero, maybe this group boot first")
    zero = call(sim, "broker-a", C.QUERY_CONSUMER_OFFSET, {**ext, "consumerGroup": "GID_NEW"})
    assert zero.code == 0 and zero.ext("offset") == "0"
    up = call(sim, "broker-a", C.UPDATE_CONSUMER_OFFSET, {**ext, "commitOffset": 0})
    assert up.code == 0 and sim.call(lambda c: c.committed_offset("GID_REPLAY", mq)) == 0
    nog = call(sim, "broker-a", C.UPDATE_CONSUMER_OFFSET,
               {**ext, "consumerGroup": "GID_NONE", "commitOffset": 1})
    assert (nog.code, nog.remark) == (R.SUBSCRIPTION_GROUP_NOT_EXIST, "Group GID_NONE not exist!")


def test_search_offset_by_timestamp(sim):
    b = sim.cluster.brokers["broker-a"]
    start = sim.clock.start_ms
    mx = b.max_offset("TopicPay", 0)
    ext = {"topic": "TopicPay", "queueId": 0}

    def search(ts: int, boundary: str | None = None) -> int:
        e = dict(ext, timestamp=ts)
        if boundary:
            e["boundaryType"] = boundary
        return int(call(sim, "broker-a", C.SEARCH_OFFSET_BY_TIMESTAMP, e).ext("offset"))

    t = b.store_ts("TopicPay", 0, 1234)
    assert search(t) == 1234 and search(t, "LOWER") == 1234 and search(t, "upper") == 1234
    assert search(t + 1) == 1235  # first message stored at or after
    assert search(t + 1, "UPPER") == 1234  # last message stored at or before
    assert search(start - 10 * 3_600_000) == 0  # all newer: min offset
    assert search(start - 10 * 3_600_000, "UPPER") == 0
    assert search(start + 3_600_000) == mx  # all older: max offset
    assert search(start + 3_600_000, "UPPER") == mx - 1


def test_search_with_equal_timestamps():
    from mqctl.sim.store import QueueLog

    lg = QueueLog.from_rate(0, 1_000_000, 1000, 5000.0)  # 5 messages per millisecond
    ts = lg.store_ts(12)
    same = [o for o in range(lg.max_offset(1_000_000)) if lg.store_ts(o) == ts]
    assert len(same) > 1
    assert lg.search(ts, 1_000_000, "LOWER") == same[0]
    assert lg.search(ts, 1_000_000, "UPPER") == same[-1]


def test_bulk_reads(sim):
    offsets = body(call(sim, "broker-a", C.GET_ALL_CONSUMER_OFFSET))
    assert "TopicPay@GID_REPLAY" in offsets["offsetTable"]
    assert offsets["groupTopicMap"]["GID_REPLAY"] == ["TopicPay"]
    groups = body(call(sim, "broker-a", C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG))
    assert groups["subscriptionGroupTable"]["GID_ORDER"]["consumeMessageOrderly"] is True
    topics = body(call(sim, "broker-b", C.GET_ALL_TOPIC_CONFIG))["topicConfigTable"]
    assert topics["TopicAudit"]["readQueueNums"] == 4
    cfg = call(sim, "broker-a", C.GET_BROKER_CONFIG)
    assert b"useServerSideResetOffset=true" in cfg.body
    rt = body(call(sim, "broker-a", C.GET_BROKER_RUNTIME_INFO))
    assert rt["table"]["brokerVersionDesc"] == "V5_3_3"


def test_unknown_request_code(sim):
    # (PULL_MESSAGE is answered since `mqctl message show`, QUERY_MESSAGE since `message
    # find`, SEND_MESSAGE since `group dlq resend`: SEND_BATCH_MESSAGE is not)
    resp = call(sim, "broker-a", C.SEND_BATCH_MESSAGE, {"topic": "TopicPay"})
    assert (resp.code, resp.remark) == (R.REQUEST_CODE_NOT_SUPPORTED,
                                        " request type 320 not supported")
    resp = call(sim, "namesrv", 9999)
    assert resp.code == R.REQUEST_CODE_NOT_SUPPORTED


def test_running_info_is_the_clients_real_view(sim):
    from mqctl.allocate import allocate_group
    from mqctl.models import ConsumerRunningInfo

    sim.advance(1)
    cid = "10.0.1.12@4102#demo02"
    ri = ConsumerRunningInfo.from_body(body(call(sim, "broker-b", C.GET_CONSUMER_RUNNING_INFO, {
        "consumerGroup": "GID_PAY", "clientId": cid, "jstackEnable": "false"})))
    queues = sim.call(lambda c: c.subscribe_queues("TopicPay"))
    members = ["10.0.1.11@4101#demo01", cid, "10.0.1.13@4103#demo03"]
    expected = set(allocate_group("AVG", queues, members)[cid])
    assert {mq for mq in ri.mq_table if mq.topic == "TopicPay"} == expected
    assert ri.strategy_class.endswith("AllocateMessageQueueAveragely")
    assert not ri.orderly and ri.properties["PROP_CLIENT_VERSION"] == "V5_3_3"
    gone = call(sim, "broker-a", C.GET_CONSUMER_RUNNING_INFO,
                {"consumerGroup": "GID_PAY", "clientId": "1.2.3.4@9", "jstackEnable": "false"})
    assert (gone.code, gone.remark) == (R.SYSTEM_ERROR,
                                        "The Consumer <GID_PAY> <1.2.3.4@9> not online")


def test_undecodable_frame_closes_the_connection(sim):
    host, port = sim.namesrv_addr.split(":")

    async def go() -> bytes:
        r, w = await asyncio.open_connection(host, int(port))
        w.write(b"\x00\x00\x00\x05\x09garbage")
        await w.drain()
        data = await asyncio.wait_for(r.read(100), 5)
        w.close()
        return data
    assert asyncio.run(go()) == b""


def test_broker_error_surfaces_in_client(sim):
    async def go() -> None:
        async with RemotingClient() as c:
            await c.invoke(sim.cluster.servers["broker-a"].addr, C.GET_TOPIC_STATS_INFO,
                           {"topic": "Nope"})
    with pytest.raises(BrokerError, match="TOPIC_NOT_EXIST"):
        asyncio.run(go())


def test_binary_header_request_gets_a_binary_header_answer(sim):
    """4.9.4+ brokers answer in the request's serialize type (ROCKETMQ binary here)."""
    from mqctl.remoting.frame import SerializeType, decode, encode

    host, port = sim.cluster.broker_addr("broker-a").split(":")
    req = RemotingCommand.request(C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": "1"}
                                  ).with_(opaque=77, serialize_type=SerializeType.ROCKETMQ)

    async def go() -> bytes:
        r, w = await asyncio.open_connection(host, int(port))
        w.write(encode(req))
        await w.drain()
        head = await asyncio.wait_for(r.readexactly(8), 5)
        rest = await asyncio.wait_for(r.readexactly(int.from_bytes(head[:4], "big") - 4), 5)
        w.close()
        return head + rest
    raw = asyncio.run(go())
    assert raw[4] == 1  # serialize type byte of headerInfo
    resp = decode(raw)
    assert (resp.opaque, resp.code, resp.serialize_type) == (77, 0, SerializeType.ROCKETMQ)
    assert int(resp.ext("offset")) == sim.call(
        lambda c: c.max_offset(MQ("TopicPay", "broker-a", 1)))


@pytest.mark.parametrize("frame", [
    b"\x00\x00\x00\x08\x00\x00\x00\x04{]}x",                     # broken JSON header
    b"\x00\x00\x00\x08\x09\x00\x00\x04abcd",                     # unknown serialize type 9
    b"\x00\x00\x00\x08\x00\x00\x00\x09abcd",                     # header longer than the frame
    b"\x00\x00\x00\x08\x01\x00\x00\x04\x00\x01\x00\x00",         # truncated binary header
    b"\x7f\xff\xff\xff" + b"\x00" * 8,                          # over the 16 MiB frame limit
    b"\x00\x00\x00\x02\x00\x00",                                 # length below 4
])
def test_bad_frames_close_the_connection_and_the_server_survives(sim, frame):
    host, port = sim.cluster.broker_addr("broker-b").split(":")

    async def go() -> bytes:
        r, w = await asyncio.open_connection(host, int(port))
        w.write(frame)
        await w.drain()
        data = await asyncio.wait_for(r.read(100), 5)
        w.close()
        return data
    assert asyncio.run(go()) == b""  # closed without an answer, as NettyDecoder does
    ok = call(sim, "broker-b", C.GET_MAX_OFFSET, {"topic": "TopicPay", "queueId": 0})
    assert ok.code == 0
