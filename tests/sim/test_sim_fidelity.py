"""Details where the simulated cluster follows RocketMQ's code paths exactly: per-queue
production and explicit store times, store -1 semantics, group-level subscription tables, lock
renewal versus expired takeover, the legacy reset's remarks, running-info forwarding, scheduled
behaviours and faults."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_sim_behaviour import holder, lock_body, locked, reset_ext
from test_sim_protocol import body, call

from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.client import ClientOptions, RemotingClient
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.remoting.transport import Connection

MQ = MessageQueue
START = 1_717_200_000_000  # 2024-06-01T00:00:00Z

PRODUCTION: dict[str, Any] = {
    "name": "production", "clock": {"mode": "manual", "start": START},
    "brokers": ["broker-a", "broker-b"],
    "topics": [{
        "name": "T", "queues": 4, "rate": 2, "history": "10m",
        "per_queue": [
            {"queue": 0, "store_times": ["-10m", "-10m", "-10m", "-5m", "-5m", "0s", "+30s"]},
            {"queue": 1, "broker": "broker-b", "rate": 10, "start": "1m", "max_offset": 50},
            {"queue": 2, "min_offset": 1000, "max_offset": 1600, "history": "1h"},
        ]}],
    "groups": [{"name": "G", "topics": ["T"], "initial_lag": 0}],
}


def offset(s, broker: str, code: int, **ext: Any) -> int:
    r = call(s, broker, code, {"topic": "T", **ext})
    return int(r.ext("offset") if code != C.GET_EARLIEST_MSG_STORETIME else r.ext("timestamp"))


def search_queue0(s, ts: int, boundary: str | None = None) -> int:
    """SEARCH_OFFSET_BY_TIMESTAMP on broker-a, queue 0 of T."""
    ext: dict[str, Any] = {"queueId": 0, "timestamp": ts}
    if boundary:
        ext["boundaryType"] = boundary
    return offset(s, "broker-a", C.SEARCH_OFFSET_BY_TIMESTAMP, **ext)


def test_clock_start_and_per_queue_production(sim_factory):
    s = sim_factory(PRODUCTION)
    assert s.clock.now_ms() == START
    # queue 3 on both brokers: the topic's rate x history
    assert offset(s, "broker-a", C.GET_MAX_OFFSET, queueId=3) == 2 * 600
    # queue 1 on broker-b only: 50 messages, quiet until 1 minute, then 10/s
    assert offset(s, "broker-b", C.GET_MAX_OFFSET, queueId=1) == 50
    assert offset(s, "broker-a", C.GET_MAX_OFFSET, queueId=1) == 1200
    # queue 2 everywhere: retained range [1000, 1600) over the last hour
    assert offset(s, "broker-a", C.GET_MIN_OFFSET, queueId=2) == 1000
    assert offset(s, "broker-b", C.GET_MAX_OFFSET, queueId=2) == 1600
    assert offset(s, "broker-a", C.GET_EARLIEST_MSG_STORETIME, queueId=2) == START - 3_600_000
    # explicit store times: six messages stored by now, the seventh arrives at +30 s
    assert offset(s, "broker-a", C.GET_MAX_OFFSET, queueId=0) == 6
    assert offset(s, "broker-a", C.GET_EARLIEST_MSG_STORETIME, queueId=0) == START - 600_000
    s.advance(30)
    assert offset(s, "broker-a", C.GET_MAX_OFFSET, queueId=0) == 7
    s.advance(40)  # 1 m 10 s: broker-b queue 1 has produced for 10 s at 10/s
    assert offset(s, "broker-b", C.GET_MAX_OFFSET, queueId=1) == 150
    stats = body(call(s, "broker-b", C.GET_TOPIC_STATS_INFO, {"topic": "T"}))
    q1 = fastjson.mq_map(stats["offsetTable"])[MQ("T", "broker-b", 1)]
    assert q1["lastUpdateTimestamp"] == START + 60_000 + 9_900  # message 149 at 1 m + 9.9 s


def test_search_over_equal_store_times(sim_factory):
    s = sim_factory(PRODUCTION)

    def search(ts: int, boundary: str | None = None) -> int:
        return search_queue0(s, ts, boundary)

    ten, five = START - 600_000, START - 300_000
    assert search(ten) == 0 and search(ten, "UPPER") == 2  # three messages at -10 m
    assert search(five) == 3 and search(five, "upper") == 4  # two at -5 m
    assert search(ten + 1) == 3 and search(ten + 1, "UPPER") == 2  # between the groups
    assert search(START - 3_600_000) == 0 and search(START - 3_600_000, "UPPER") == 0
    assert search(START + 1) == 6 and search(START + 1, "UPPER") == 5  # all older: max


def test_time_span_and_stats_use_the_stores_minus_one(sim_factory):
    s = sim_factory(PRODUCTION)
    now = s.clock.now_ms()
    # a group with no committed offsets: consumerOffset -1, store time of offset -1 is -1,
    # so RocketMQ reports delayTime = now + 1 and consumeTimeStamp = the earliest message
    spans = body(call(s, "broker-a", C.QUERY_CONSUME_TIME_SPAN, {"topic": "T",
                                                                 "group": "NO_OFFSETS"}))
    q0 = next(x for x in spans["consumeTimeSpanSet"] if x["messageQueue"]["queueId"] == 0)
    assert q0["delayTime"] == now + 1
    assert q0["consumeTimeStamp"] == q0["minTimeStamp"] == START - 600_000
    assert q0["maxTimeStamp"] == START
    # the group G is caught up (initial_lag 0): no delay
    spans = body(call(s, "broker-a", C.QUERY_CONSUME_TIME_SPAN, {"topic": "T", "group": "G"}))
    assert {x["delayTime"] for x in spans["consumeTimeSpanSet"]} == {0}
    stats = fastjson.mq_map(body(call(s, "broker-a", C.GET_CONSUME_STATS,
                                      {"consumerGroup": "NO_OFFSETS", "topic": "T"}))[
        "offsetTable"])
    assert stats[MQ("T", "broker-a", 0)] == {"brokerOffset": 6, "consumerOffset": 0,
                                              "lastTimestamp": 0, "pullOffset": 0}


def test_query_offset_zero_only_for_a_young_queue(sim_factory):
    s = sim_factory(PRODUCTION)
    ext = {"consumerGroup": "NEW", "topic": "T"}
    young = call(s, "broker-a", C.QUERY_CONSUMER_OFFSET, {**ext, "queueId": 3})
    assert (young.code, young.ext("offset")) == (0, "0")  # message 0 still held
    purged = call(s, "broker-a", C.QUERY_CONSUMER_OFFSET, {**ext, "queueId": 2})
    assert (purged.code, purged.remark) == (
        R.QUERY_NOT_FOUND, "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")


def test_update_offset_parameter_checks(sim):
    ext = {"consumerGroup": "GID_REPLAY", "topic": "TopicPay"}
    r = call(sim, "broker-a", C.UPDATE_CONSUMER_OFFSET, {**ext, "commitOffset": 5})
    assert (r.code, r.remark) == (R.INVALID_PARAMETER, "QueueId is null, topic is TopicPay")
    r = call(sim, "broker-a", C.UPDATE_CONSUMER_OFFSET, {**ext, "queueId": 0,
                                                         "commitOffset": "x"})
    assert (r.code, r.remark) == (R.INVALID_PARAMETER, "Offset is null, topic is TopicPay")
    r = call(sim, "broker-a", C.UPDATE_CONSUMER_OFFSET, {**ext, "topic": "Nope", "queueId": 0,
                                                         "commitOffset": 1})
    assert (r.code, r.remark) == (R.TOPIC_NOT_EXIST, "Topic Nope not exist!")


# ---------------------------------------------------------------------------- membership

def test_consume_stats_drops_a_topic_the_online_group_does_not_subscribe(sim):
    # GID_DUP is online and subscribes TopicAudit only; a single topic is checked too
    empty = body(call(sim, "broker-a", C.GET_CONSUME_STATS,
                      {"consumerGroup": "GID_DUP", "topic": "TopicPay"}))
    assert fastjson.mq_map(empty["offsetTable"]) == {}
    # a topicList skips the subscription check
    listed = body(call(sim, "broker-a", C.GET_CONSUME_STATS,
                       {"consumerGroup": "GID_DUP", "topicList": "TopicPay"}))
    assert len(fastjson.mq_map(listed["offsetTable"])) == 4
    # an offline group has no subscriptions: nothing is dropped
    off = body(call(sim, "broker-a", C.GET_CONSUME_STATS,
                    {"consumerGroup": "GID_REPLAY", "topic": "TopicPay"}))
    assert len(fastjson.mq_map(off["offsetTable"])) == 4


def test_group_subscription_table_follows_heartbeats(sim):
    """ConsumerGroupInfo.updateSubscription: the first entry for a topic stays until a newer
    subVersion arrives; a heartbeat without a topic removes it and notifies the members."""
    addr = sim.cluster.servers["broker-a"].addr
    got: list[int] = []

    async def on_request(conn: Connection, cmd: Any) -> Any:
        got.append(cmd.code)
        return cmd.response(R.REQUEST_CODE_NOT_SUPPORTED, " request type not supported")

    def hb(topics: dict[str, int], cid: str = "10.9.9.9@1") -> bytes:
        return fastjson.dumps({"clientID": cid, "producerDataSet": [], "consumerDataSet": [{
            "groupName": "G_SUBS", "consumeType": "CONSUME_PASSIVELY",
            "messageModel": "CLUSTERING", "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET",
            "unitMode": False, "subscriptionDataSet": [
                {"topic": t, "subString": f"v{v}", "expressionType": "TAG", "subVersion": v,
                 "classFilterMode": False, "codeSet": [], "tagsSet": []}
                for t, v in topics.items()]}]}).encode()

    async def go() -> list[dict[str, Any]]:
        tables = []
        async with RemotingClient(ClientOptions(timeout=5), on_request=on_request) as c:
            for topics in ({"TopicPay": 5}, {"TopicPay": 3}, {"TopicPay": 9},
                           {"TopicAudit": 1}):
                await c.invoke(addr, C.HEART_BEAT, None, hb(topics))
                await asyncio.sleep(0.05)
                r = await c.invoke(addr, C.GET_CONSUMER_CONNECTION_LIST,
                                   {"consumerGroup": "G_SUBS"})
                tables.append(fastjson.loads(r.body)["subscriptionTable"])
            await asyncio.sleep(0.2)
        return tables

    tables = asyncio.run(asyncio.wait_for(go(), 30))
    assert [{t: v["subString"] for t, v in x.items()} for x in tables] == [
        {"TopicPay": "v5"}, {"TopicPay": "v5"}, {"TopicPay": "v9"}, {"TopicAudit": "v1"}]
    # join (new channel) and the removed topic notified; the version bumps did not
    assert got.count(C.NOTIFY_CONSUMER_IDS_CHANGED) == 2


def test_broadcasting_group_is_not_notified(sim):
    sim.advance(1)
    before = sim.call(lambda c: c.consumer("10.0.6.62@4602#demo13")._wakeup_pending)
    sim.call(lambda c: c.consumer("10.0.6.61@4601#demo12").leave())
    assert sim.call(lambda c: c.consumer("10.0.6.62@4602#demo13")._wakeup_pending) is before
    ids = body(call(sim, "broker-b", C.GET_CONSUMER_LIST_BY_GROUP,
                    {"consumerGroup": "GID_NEWS"}))["consumerIdList"]
    assert ids == ["10.0.6.62@4602#demo13"]


# ---------------------------------------------------------------------------- locks

def test_lock_expired_for_its_own_holder_is_a_logged_takeover(sim_factory, tmp_path):
    s = sim_factory({"name": "locks", "clock": {"mode": "manual"}, "brokers": ["broker-a"],
                     "topics": [{"name": "T", "queues": 2}]}, log_dir=str(tmp_path))
    q = MQ("T", "broker-a", 1)
    assert locked(s, "G", "a@1", [q]) == {q}
    s.advance(30)
    assert locked(s, "G", "a@1", [q]) == {q}  # renewal: no log line
    s.advance(61)
    assert locked(s, "G", "a@1", [q]) == {q}  # expired, taken over by its old holder
    call(s, "broker-a", C.UNLOCK_BATCH_MQ, None, lock_body("G", "b@2", [q]))
    call(s, "broker-a", C.UNLOCK_BATCH_MQ, None, lock_body("G", "a@1", [q]))
    call(s, "broker-a", C.UNLOCK_BATCH_MQ, None, lock_body("G", "a@1", [q]))
    call(s, "broker-a", C.UNLOCK_BATCH_MQ, None, lock_body("G2", "a@1", [q]))
    assert holder(s, "G", q) is None
    text = (tmp_path / "brokers" / "broker-a" / "lock.log").read_text()
    msgs = [ln.split(" - ", 1)[1] for ln in text.splitlines()]
    mq = "MessageQueue [topic=T, brokerName=broker-a, queueId=1]"
    assert msgs == [
        f"RebalanceLockManager#tryLockBatch: lock a message which has not been locked yet, "
        f"group=G, clientId=a@1, mq={mq}",
        f"RebalanceLockManager#tryLockBatch: try to lock a expired message queue, group=G, "
        f"mq={mq}, old client id=a@1, new client id=a@1",
        f"RebalanceLockManager#unlockBatch: mq locked by other client, group=G, locked "
        f"clientId=a@1, current clientId=b@2, mqs={mq}",
        f"RebalanceLockManager#unlockBatch: unlock mq, group=G, clientId=a@1, mqs={mq}",
        f"RebalanceLockManager#unlockBatch: mq not locked, group=G, clientId=a@1, mq={mq}",
        f"RebalanceLockManager#unlockBatch: group not exist, group=G2, clientId=a@1, "
        f"mqs=[{mq}]",
    ]
    # GMT+8, second resolution: the clock's start shifted by 8 hours
    from datetime import UTC, datetime, timedelta
    first = datetime.fromtimestamp(s.clock.start_ms / 1000, UTC) + timedelta(hours=8)
    assert text.startswith(first.strftime("%Y-%m-%d %H:%M:%S") + " INFO ")


# ---------------------------------------------------------------------------- resets

def test_legacy_reset_remarks_and_slave(sim_factory):
    from sim_fixtures import LEGACY_SCENARIO

    doc = {**LEGACY_SCENARIO, "brokers": [{"name": "broker-a", "slave": True, "config": {
        "useServerSideResetOffset": False}}]}
    s = sim_factory(doc)
    s.advance(1)
    nt = call(s, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET, reset_ext(topic="Nope",
                                                                        group="G_ON"))
    assert (nt.code, nt.remark) == (R.SYSTEM_ERROR, "[reset-offset] reset offset failed, no "
                                    "topic in this broker. topic=Nope")
    ng = call(s, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET, reset_ext(topic="T",
                                                                        group="G_NONE"))
    assert (ng.code, ng.remark) == (R.SYSTEM_ERROR, "THe consumer group <G_NONE> not exist")
    # the slave check belongs to the server-side path only: Broker2Client runs on a slave
    slave = call(s, "broker-a#1", C.INVOKE_BROKER_TO_RESET_OFFSET,
                 reset_ext(topic="T", group="G_ON", isForce="false"))
    assert slave.code == R.SUCCESS
    # a member older than V3_0_7_SNAPSHOT cannot take the push
    old = dict(LEGACY_SCENARIO, groups=[{"name": "G_OLD", "topics": ["T"], "consumers": [
        {"id": "10.9.0.2@1", "version": "V3_0_5"}]}])
    s2 = sim_factory(old)
    r = call(s2, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET, reset_ext(topic="T",
                                                                       group="G_OLD"))
    assert (r.code, r.remark) == (R.SYSTEM_ERROR, "the client does not support this feature. "
                                  "version=V3_0_5")


def test_server_side_reset_of_a_whole_topic_by_time_and_latest(sim):
    ts = sim.clock.start_ms - 600_000
    resp = call(sim, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
                reset_ext(group="GID_REPLAY", timestamp=ts, isForce="false"))
    table = fastjson.mq_map(body(resp)["offsetTable"])
    b = sim.cluster.brokers["broker-a"]
    assert table == {MQ("TopicPay", "broker-a", q): b.search("TopicPay", q, ts)
                     for q in range(4)}  # isForce is ignored: forward or backward
    latest = fastjson.mq_map(body(call(sim, "broker-a", C.INVOKE_BROKER_TO_RESET_OFFSET,
                                       reset_ext(group="GID_REPLAY")))["offsetTable"])
    assert latest == {mq: sim.call(lambda c, mq=mq: c.max_offset(mq)) for mq in table}


# ---------------------------------------------------------------------------- running info

def test_running_info_timeout_remark_and_old_client(sim_factory):
    s = sim_factory({"name": "ri", "clock": {"mode": "manual"}, "running_info_timeout": 0.3,
                     "brokers": ["broker-a"], "topics": [{"name": "T", "queues": 2}],
                     "groups": [{"name": "G", "topics": ["T"], "consumers": [
                         {"id": "10.1.1.1@1", "behaviour": "hang", "at": "10s"},
                         {"id": "10.1.1.2@2", "version": "V3_1_6"}]}]})
    ext = {"consumerGroup": "G", "jstackEnable": "false"}
    ok = call(s, "broker-a", C.GET_CONSUMER_RUNNING_INFO, {**ext, "clientId": "10.1.1.1@1"})
    assert ok.code == 0
    s.advance(11)
    hung = call(s, "broker-a", C.GET_CONSUMER_RUNNING_INFO, {**ext, "clientId": "10.1.1.1@1"})
    assert hung.code == R.CONSUME_MSG_TIMEOUT
    assert hung.remark.startswith(
        "consumer <G> <10.1.1.1@1> Timeout: org.apache.rocketmq.remoting.exception."
        "RemotingTimeoutException: wait response on the channel <10.1.1.1:50000> timeout, "
        "300(ms)")
    old = call(s, "broker-a", C.GET_CONSUMER_RUNNING_INFO, {**ext, "clientId": "10.1.1.2@2"})
    assert (old.code, old.remark) == (R.SYSTEM_ERROR, "The Consumer <10.1.1.2@2> Version "
                                      "<V3_1_6> too low to finish, please upgrade it to "
                                      "V3_1_8_SNAPSHOT")


# ---------------------------------------------------------------------------- scheduled

def test_scheduled_behaviours_and_faults(sim_factory):
    s = sim_factory({
        "name": "sched", "clock": {"mode": "manual"}, "brokers": ["broker-a", "broker-b"],
        "topics": [{"name": "T", "queues": 2, "rate": 10, "history": "1m"}],
        "groups": [{"name": "G", "topics": ["T"], "consumers": [
            {"id": "10.2.0.1@1", "behaviour": "crash", "at": "30s"},
            {"id": "10.2.0.2@2", "behaviour": "stuck", "at": "20s"},
            {"id": "10.2.0.3@3", "join_at": "40s"}]}],
        "faults": [
            {"action": "down", "broker": "broker-b", "at": "50s", "for": "10s"},
            {"action": "error", "broker": "broker-a", "request": "GET_MAX_OFFSET",
             "response": "SYSTEM_BUSY", "remark": "[REJECTREQUEST]system busy", "at": "5s",
             "times": 1}]})

    def members() -> list[str]:
        return sorted(s.call(lambda c: c.brokers["broker-a"].consumer_ids("G")))

    assert members() == ["10.2.0.1@1", "10.2.0.2@2"]
    mq = MQ("T", "broker-a", 0)
    assert call(s, "broker-a", C.GET_MAX_OFFSET, {"topic": "T", "queueId": 0}).code == 0
    s.advance(6)
    busy = call(s, "broker-a", C.GET_MAX_OFFSET, {"topic": "T", "queueId": 0})
    assert (busy.code, busy.remark) == (R.SYSTEM_BUSY, "[REJECTREQUEST]system busy")
    assert call(s, "broker-a", C.GET_MAX_OFFSET, {"topic": "T", "queueId": 0}).code == 0
    s.advance(20)  # 26 s: the stuck consumer stopped moving at 20 s
    stuck_pos = s.call(lambda c: {m: p.position for m, p in c.consumer("10.2.0.2@2").pqs.items()})
    assert stuck_pos
    s.advance(5)  # 31 s: crashed
    assert members() == ["10.2.0.2@2"]
    assert s.call(lambda c: {m: p.position for m, p in c.consumer("10.2.0.2@2").pqs.items()
                             if m in stuck_pos}) == stuck_pos
    s.advance(10)  # 41 s: joined
    assert members() == ["10.2.0.2@2", "10.2.0.3@3"]
    s.advance(10)  # 51 s: broker-b down
    assert s.call(lambda c: c.broker_up("broker-b")) is False
    s.advance(10)
    assert s.call(lambda c: c.broker_up("broker-b")) is True
    assert mq in s.call(lambda c: set(c.consumer("10.2.0.2@2").pqs) |
                        set(c.consumer("10.2.0.3@3").pqs))


def test_name_server_drops_a_broker_down_for_two_minutes(sim):
    queues = sim.call(lambda c: c.subscribe_queues("TopicPay"))
    sim.call(lambda c: c.faults.broker_down("broker-b"))
    sim.advance(100)  # still registered (unreachable): routes keep it
    route = body(call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicPay"}))
    assert [b["brokerName"] for b in route["brokerDatas"]] == ["broker-a", "broker-b"]
    sim.advance(25)  # > 120 s: scanNotActiveBroker removed it
    route = body(call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicPay"}))
    assert [b["brokerName"] for b in route["brokerDatas"]] == ["broker-a"]
    info = body(call(sim, "namesrv", C.GET_BROKER_CLUSTER_INFO))
    assert info["clusterAddrTable"] == {"DefaultCluster": ["broker-a"]}
    sim.advance(21)  # the clients' next rebalance: only broker-a's queues, split over 3
    owned = sim.call(lambda c: {cid: {m for m in c.consumer(cid).pqs if m.topic == "TopicPay"}
                                for cid in ("10.0.1.11@4101#demo01", "10.0.1.12@4102#demo02",
                                            "10.0.1.13@4103#demo03")})
    a_queues = [q for q in queues if q.broker_name == "broker-a"]
    assert set().union(*owned.values()) == set(a_queues)
    assert sorted(len(v) for v in owned.values()) == [1, 1, 2]
    sim.call(lambda c: c.faults.broker_up("broker-b"))
    import time
    time.sleep(0.2)
    route = body(call(sim, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicPay"}))
    assert len(route["brokerDatas"]) == 2


def test_fixture_installs_the_simulated_clock(sim):
    from mqctl.timeparse import now_ms

    assert now_ms() == sim.clock.now_ms()
    sim.advance(90)
    assert now_ms() == sim.clock.start_ms + 90_000


def test_crashed_consumer_joins_again_and_gets_its_share(sim):
    cid = "10.0.1.12@4102#demo02"
    sim.advance(5)
    sim.call(lambda c: c.consumer(cid).crash())
    assert cid not in sim.call(lambda c: c.brokers["broker-a"].consumer_ids("GID_PAY"))
    sim.call(lambda c: c.consumer(cid).join())
    sim.advance(1)
    ids = sorted(sim.call(lambda c: c.brokers["broker-a"].consumer_ids("GID_PAY")))
    assert cid in ids
    from mqctl.allocate import allocate_group

    queues = sim.call(lambda c: c.subscribe_queues("TopicPay"))
    want = set(allocate_group("AVG", queues, ids)[cid])
    assert sim.call(lambda c: {m for m in c.consumer(cid).pqs if m.topic == "TopicPay"}) == want


def test_search_before_5_1_1_returns_the_nearest_message(sim_factory):
    """A broker before 5.1.1 ignores boundaryType: ConsumeQueue.getOffsetInQueueByTime stops at
    the first probe stored exactly at the time, else takes the nearer neighbour (the older on a
    tie); a time after the last message gives that message, not the max offset. It also has no
    useServerSideResetOffset before 5.1.0, and reports its version in the runtime info."""
    import copy

    sc = copy.deepcopy(PRODUCTION)
    sc["brokers"] = [{"name": "broker-a", "version": "V4_9_8"}, "broker-b"]
    s = sim_factory(sc)

    def search(ts: int, boundary: str | None = None) -> int:
        return search_queue0(s, ts, boundary)

    # queue 0 holds 0-2 at -10 m, 3-4 at -5 m, 5 at 0 s
    ten, five = START - 600_000, START - 300_000
    assert search(ten) == 2 and search(ten, "UPPER") == 2  # the probe that hit, not the first
    assert search(five) == 4 and search(five, "LOWER") == 4
    assert search(ten + 1) == 2  # 1 ms after the older neighbour: it is nearer (LOWER: 3)
    assert search(START - 1) == 5  # 1 ms before message 5
    assert search(START - 450_000) == 2  # halfway: the older one
    assert search(START - 3_600_000) == 0  # all newer: the first message
    assert search(START + 1) == 5  # all older: the LAST message (LOWER: the max offset, 6)
    assert offset(s, "broker-b", C.SEARCH_OFFSET_BY_TIMESTAMP, queueId=0, timestamp=START + 1) \
        == offset(s, "broker-b", C.GET_MAX_OFFSET, queueId=0)
    assert b"useServerSideResetOffset" not in call(s, "broker-a", C.GET_BROKER_CONFIG).body
    # 4.x knows no setZeroIfNotFound: a group without an offset on a young queue reads 0
    q = {"consumerGroup": "NONE", "topic": "T", "queueId": 3, "setZeroIfNotFound": False}
    assert call(s, "broker-a", C.QUERY_CONSUMER_OFFSET, q).ext("offset") == "0"
    assert call(s, "broker-b", C.QUERY_CONSUMER_OFFSET, q).code == R.QUERY_NOT_FOUND
    rt = body(call(s, "broker-a", C.GET_BROKER_RUNTIME_INFO))["table"]
    assert (rt["brokerVersionDesc"], rt["brokerVersion"]) == ("V4_9_8", "409")


def test_broker_version_and_server_side_reset_in_the_scenario():
    from mqctl.errors import UsageError
    from mqctl.sim.scenario import parse

    def broker(**b: Any):
        return parse({"name": "x", "brokers": [{"name": "broker-a", **b}],
                      "topics": [{"name": "T", "queues": 1}]}).brokers[0]

    assert broker().server_side_reset is True  # 5.3.3: the 5.2.0+ default
    assert broker(version="V5_1_0").server_side_reset is False  # RIP-48, off by default
    assert broker(version="V5_1_0", config={"useServerSideResetOffset": True}).server_side_reset
    assert broker(version=409).server_side_reset is False
    try:
        broker(version="V4_9_8", config={"useServerSideResetOffset": True})
    except UsageError as exc:
        assert "brokers before 5.1.0 have no server-side reset" in exc.message
    else:
        raise AssertionError("a 4.x broker with useServerSideResetOffset was accepted")


# ---------------------------------------------------------------------- answers per version
# The brokers answer as real 4.9.3 (ordinal 399) and 5.3.3 (479) ones do; each test names the
# corpus file (../shared/samples/real/<version>/...) it was checked against.

def corpus_cluster(version: str) -> dict[str, Any]:
    """The corpus' never-committed and read-gt-write setup: NC_T 4/4 with 25 messages per
    queue, RW_T 4 read / 2 write queues (50 messages in queues 0-1, 25 in 2-3), groups NC_NEVER
    and NC_ONE without offsets, RW_G with everything consumed."""
    return {
        "name": f"corpus-{version}", "clock": {"mode": "manual", "start": START},
        "brokers": [{"name": "broker-a", "version": version},
                    {"name": "broker-b", "version": version}],
        "topics": [
            {"name": "NC_T", "queues": 4, "rate": 0, "max_offset": 25, "history": "1s"},
            {"name": "RW_T", "read_queues": 4, "write_queues": 2, "rate": 0, "history": "15s",
             "max_offset": 50, "per_queue": [{"queue": 2, "max_offset": 25},
                                             {"queue": 3, "max_offset": 25}]}],
        "groups": [{"name": "NC_NEVER"}, {"name": "NC_ONE"},
                   {"name": "RW_G", "topics": ["RW_T"], "initial_lag": 0}],
    }


def _stats(s, broker: str, ext: dict[str, Any], version: int) -> dict[str, Any]:
    return body(call(s, broker, C.GET_CONSUME_STATS, ext, version=version))


def test_consume_stats_pull_offset_only_from_5_1_0(sim_factory):
    """4.9.3's OffsetWrapper has no pullOffset (4.9.3/never-committed/208_*); 5.3.3 adds it
    (RIP-48, 5.1.0). Never-committed queues: consumerOffset 0, lastTimestamp 0 on both."""
    for name, ver in (("V4_9_3", 399), ("V5_3_3", 479)):
        s = sim_factory(corpus_cluster(name))
        s.call(lambda c: c.brokers["broker-a"].offsets.__setitem__(("NC_T", "NC_ONE"), {0: 25}))
        got = fastjson.mq_map(_stats(s, "broker-a", {"consumerGroup": "NC_ONE",
                                                     "topic": "NC_T"}, ver)["offsetTable"])
        q0, q1 = got[MQ("NC_T", "broker-a", 0)], got[MQ("NC_T", "broker-a", 1)]
        keys = {"brokerOffset", "consumerOffset", "lastTimestamp"}
        if ver == 479:
            keys.add("pullOffset")
        assert set(q0) == keys and set(q1) == keys, name
        assert (q1["brokerOffset"], q1["consumerOffset"], q1["lastTimestamp"]) == (25, 0, 0)
        assert q0["consumerOffset"] == 25 and q0["lastTimestamp"] > 0
        # no topic, no online consumer, no offsets: nothing (208_getConsumeStats_NC_NEVER_no_topic)
        empty = call(s, "broker-a", C.GET_CONSUME_STATS, {"consumerGroup": "NC_NEVER"},
                     version=ver)
        assert empty.body == b'{"consumeTps":0.0,"offsetTable":{}}'
        # a group that does not exist, with a topic: 0 everywhere (208_..._NO_SUCH_GROUP)
        none = fastjson.mq_map(_stats(s, "broker-a", {"consumerGroup": "NO_SUCH_GROUP",
                                                      "topic": "NC_T"}, ver)["offsetTable"])
        assert sorted(w["consumerOffset"] for w in none.values()) == [0, 0, 0, 0]


def test_consume_tps_is_each_brokers_own_share(sim_factory):
    """AdminBrokerProcessor.getConsumeStats adds
    BrokerStatsManager.tpsGroupGetNums(group, topic), the messages THIS broker handed the group
    (PullMessageProcessor.incGroupGetNums), so summing the brokers is right."""
    sc = {"name": "tps", "clock": {"mode": "manual", "start": START},
          "brokers": ["broker-a", "broker-b"],
          "topics": [{"name": "T", "queues": 4, "rate": 20, "history": "10m"}],
          "groups": [{"name": "G", "topics": ["T"], "initial_lag": 5000,
                      "consumers": [{"id": "10.0.0.1@1", "behaviour": "slow", "rate": 40}]}]}
    s = sim_factory(sc)
    ext = {"consumerGroup": "G", "topic": "T"}

    def consumed() -> int:  # committed offsets summed over both brokers
        return sum(w["consumerOffset"] for bn in ("broker-a", "broker-b") for w in
                   _stats(s, bn, ext, 479)["offsetTable"].values())

    s.advance(20)
    before = consumed()
    s.advance(60)
    rate = (consumed() - before) / 60  # what the group really consumed per second
    assert rate > 20
    a = _stats(s, "broker-a", ext, 479)["consumeTps"]
    b = _stats(s, "broker-b", ext, 479)["consumeTps"]
    assert a + b == pytest.approx(rate, rel=0.1), (a, b, rate)
    assert a == pytest.approx(rate / 2, rel=0.15) and b == pytest.approx(rate / 2, rel=0.15)
    s.advance(120)  # the consumer keeps going: still its rate, not twice it
    assert sum(_stats(s, bn, ext, 479)["consumeTps"] for bn in ("broker-a", "broker-b")) == \
        pytest.approx(rate, rel=0.1)


def test_topic_stats_write_queues_before_5_3_and_put_tps_from_5_3_3(sim_factory):
    """GET_TOPIC_STATS_INFO: 4.9.3 iterates writeQueueNums and has no topicPutTps
    (4.9.3/read-gt-write/202_*); 5.3.0 iterates max(read, write) (apache/rocketmq#7951) and
    5.3.3 adds topicPutTps (#9297) (5.3.3/read-gt-write/202_*)."""
    for name, ver, queues in (("V4_9_3", 399, [0, 1]), ("V5_3_0", 473, [0, 1, 2, 3]),
                              ("V5_3_3", 479, [0, 1, 2, 3])):
        s = sim_factory(corpus_cluster(name))
        got = body(call(s, "broker-a", C.GET_TOPIC_STATS_INFO, {"topic": "RW_T"}, version=ver))
        table = fastjson.mq_map(got["offsetTable"])
        assert sorted(mq.queue_id for mq in table) == queues, name
        assert [table[MQ("RW_T", "broker-a", q)]["maxOffset"] for q in queues] == \
            [50, 50, 25, 25][:len(queues)]
        assert ("topicPutTps" in got) == (ver == 479), name


def test_time_span_over_write_queues_with_the_string_fields(sim_factory):
    """QUERY_CONSUME_TIME_SPAN iterates writeQueueNums on both versions (read-gt-write/303_*).
    A queue without a committed offset: consumeTimeStamp = minTimeStamp, delayTime = now - (-1)
    (never-committed/303_*_NC_NEVER); fully consumed: delayTime 0, consumeTimeStamp =
    maxTimeStamp; QueueTimeSpan's getters add the *Str fields ("yyyy-MM-dd#HH:mm:ss:SSS")."""
    for name, ver in (("V4_9_3", 399), ("V5_3_3", 479)):
        s = sim_factory(corpus_cluster(name))
        s.call(lambda c: c.brokers["broker-a"].offsets.__setitem__(("NC_T", "NC_ONE"), {0: 25}))
        rw = body(call(s, "broker-a", C.QUERY_CONSUME_TIME_SPAN,
                       {"topic": "RW_T", "group": "RW_G"}, version=ver))["consumeTimeSpanSet"]
        assert [x["messageQueue"]["queueId"] for x in rw] == [0, 1], name
        assert all(x["delayTime"] == 0 and x["consumeTimeStamp"] == x["maxTimeStamp"]
                   for x in rw)
        nc = body(call(s, "broker-a", C.QUERY_CONSUME_TIME_SPAN,
                       {"topic": "NC_T", "group": "NC_ONE"}, version=ver))["consumeTimeSpanSet"]
        q0, q1 = nc[0], nc[1]
        assert q0["delayTime"] == 0 and q0["consumeTimeStamp"] == q0["maxTimeStamp"]
        assert q1["consumeTimeStamp"] == q1["minTimeStamp"]
        assert q1["delayTime"] == START + 1  # now - getMessageStoreTimeStamp(-1) = now + 1
        assert q1["minTimeStampStr"] == _human(q1["minTimeStamp"])
        assert q1["consumeTimeStampStr"] == _human(q1["consumeTimeStamp"])
        assert q1["maxTimeStampStr"] == _human(q1["maxTimeStamp"])


def _human(ms: int) -> str:
    import datetime as dt
    t = dt.datetime.fromtimestamp(ms / 1000, dt.UTC)
    return t.strftime("%Y-%m-%d#%H:%M:%S:") + f"{ms % 1000:03d}"


def test_query_offset_and_small_answers_per_version(sim_factory):
    """QUERY_CONSUMER_OFFSET for a never-committed young queue: 4.9.3 code 0 offset 0, 5.3.3
    (setZeroIfNotFound=false) 22 with extFields {} (never-committed/14_*). GET_MIN_OFFSET: 5.x
    answers remark "" (other-requests/31_*). GET_ALL_CONSUMER_OFFSET: 4.9.3 only offsetTable
    (other-requests/43_*). The response header carries the broker's version."""
    for name, ver in (("V4_9_3", 399), ("V5_3_3", 479)):
        s = sim_factory(corpus_cluster(name))
        q = {"consumerGroup": "NC_NEVER", "topic": "NC_T", "queueId": 0}
        if ver == 479:
            q["setZeroIfNotFound"] = "false"
        r = call(s, "broker-b", C.QUERY_CONSUMER_OFFSET, q, version=ver)
        if ver == 399:
            assert (r.code, r.ext_fields, r.remark) == (0, {"offset": "0"}, None)
        else:
            assert (r.code, r.ext_fields, r.remark) == (
                R.QUERY_NOT_FOUND, {}, "Not found, do not set to zero, maybe this group boot "
                "first")
        assert r.version == ver
        mn = call(s, "broker-a", C.GET_MIN_OFFSET, {"topic": "NC_T", "queueId": 0},
                  version=ver)
        assert mn.remark == ("" if ver == 479 else None)
        allo = body(call(s, "broker-a", C.GET_ALL_CONSUMER_OFFSET, version=ver))
        assert sorted(allo) == (["dataVersion", "groupTopicMap", "offsetTable"] if ver == 479
                                else ["offsetTable"])
        cfg = call(s, "broker-a", C.GET_BROKER_CONFIG, version=ver)
        assert ("stateVersion" in cfg.ext("version")) == (ver == 479)
        groups = body(call(s, "broker-a", C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, version=ver))
        entry = groups["subscriptionGroupTable"]["NC_ONE"]
        assert ("forbiddenTable" in groups, "attributes" in entry,
                "consumeMessageOrderly" in entry) == ((True,) * 3 if ver == 479 else (False,) * 3)


def test_consume_stats_topic_list_only_from_5_3_2(sim_factory):
    """GetConsumeStatsRequestHeader.topicList came with 5.3.2 (apache/rocketmq#9153); a 4.9.3
    broker ignores it and answers for the group's topics with offsets (whichTopicByConsumer)."""
    for name, ver, topics in (("V4_9_3", 399, {"RW_T"}), ("V5_3_3", 479, {"NC_T", "RW_T"})):
        s = sim_factory(corpus_cluster(name))
        got = _stats(s, "broker-a", {"consumerGroup": "RW_G", "topicList": "NC_T;RW_T"}, ver)
        assert {mq.topic for mq in fastjson.mq_map(got["offsetTable"])} == topics, name


def test_query_offset_of_an_empty_queue_per_version(sim_factory):
    """ConsumerManageProcessor.queryConsumerOffset without an offset: before 5.1.0 it answers
    0 when minOffset <= 0 and message 0 is NOT on disk (checkInDiskByConsumeOffset: an empty
    queue too); from 5.1.0 only when message 0 is in memory (checkInMemByConsumeOffset)."""
    for name, ver, want in (("V4_9_3", 399, (0, "0")), ("V5_0_0", 413, (0, "0")),
                            ("V5_3_3", 479, (R.QUERY_NOT_FOUND, None))):
        sc = corpus_cluster(name)
        sc["topics"].append({"name": "EMPTY", "queues": 1, "rate": 0, "max_offset": 0})
        s = sim_factory(sc)
        r = call(s, "broker-a", C.QUERY_CONSUMER_OFFSET,
                 {"consumerGroup": "NC_NEVER", "topic": "EMPTY", "queueId": 0}, version=ver)
        assert (r.code, r.ext("offset")) == want, name
        if ver == 479:
            assert r.remark == "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first"
