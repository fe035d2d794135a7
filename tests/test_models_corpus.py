"""mqctl's model parsers (mqctl/models.py) read every GET_CONSUME_STATS (208),
GET_TOPIC_STATS_INFO (202), QUERY_CONSUME_TIME_SPAN (303), GET_CONSUMER_RUNNING_INFO (307),
GET_CONSUMER_CONNECTION_LIST (203), GET_CONSUMER_LIST_BY_GROUP (38), route (105) and
cluster-info (106) answer real 4.9.3 and 5.3.3 brokers gave (../shared/samples/real).

Each body is also read by an independent, deliberately simple reader (regular expressions over
the fastjson text: object keys that are objects, unquoted integer keys), and the two must
agree value for value; then specific fields are asserted by hand from the README's notes.
"""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from corpus_views import REAL, VERSIONS, body

from mqctl.models import (
    BrokerData,
    ClusterInfo,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    MessageQueue,
    QueueTimeSpan,
    TopicRoute,
    TopicStats,
)

MQ = MessageQueue
CODES = ("208", "202", "303", "307", "203", "38", "105", "106")
FILES = sorted(str(p.relative_to(REAL)) for v in VERSIONS for c in CODES
               for p in (REAL / v).glob(f"*/{c}_*.json"))
KEYED = re.compile(r'\{"brokerName":"([^"]+)","queueId":(\d+),"topic":"([^"]+)"\}:(\{[^{}]*\})')


def raw(rel: str) -> dict:
    return json.loads((REAL / rel).read_text())


def keyed_values(text: str) -> dict[MessageQueue, dict]:
    """The independent reader: ``{MessageQueue-object}:{flat object}`` pairs."""
    return {MQ(t, b, int(q)): json.loads(v) for b, q, t, v in KEYED.findall(text)}


def plain_json(text: str):
    """fastjson's unquoted integer map keys (``{0:"addr"}``) quoted, then strict JSON."""
    return json.loads(re.sub(r'([{,])(-?\d+):', r'\1"\2":', text))


def test_every_file_of_these_codes_is_here():
    """A new recording of one of these codes must be read by a test below (counts per
    version are the corpus's: see its README)."""
    per = Counter((f.split("/")[0], f.rsplit("/", 1)[1].split("_")[0]) for f in FILES)
    for v in VERSIONS:
        assert [per[(v, c)] for c in CODES] == [19, 1, 3, 3, 4, 2, 3, 1], v


def _split(rel: str) -> tuple[str, str, dict]:
    v, name = rel.split("/")[0], rel.rsplit("/", 1)[1]
    return v, name.split("_")[0], raw(rel)


@pytest.mark.parametrize("rel", FILES)
def test_parser_agrees_with_the_independent_reader(rel):
    v, code, ex = _split(rel)
    resp = ex["response"]
    text = resp.get("body_text") or ""
    if resp["code"] != 0:  # error answers carry no body (203 offline, 307 offline, 105 missing)
        assert text == "" and resp["remark"]
        return
    b = body(v, rel.split("/", 1)[1])
    if code == "208":
        cs = ConsumeStats.from_body(b)
        want = keyed_values(text)
        assert set(cs.offsets) == set(want)
        for mq, w in cs.offsets.items():
            r = want[mq]
            assert (w.broker_offset, w.consumer_offset, w.last_timestamp) == (
                r["brokerOffset"], r["consumerOffset"], r["lastTimestamp"])
            # 4.9.3's OffsetWrapper has no pullOffset: unknown, not the consumer offset
            assert w.pull_offset == r.get("pullOffset")
            assert (w.pull_offset is None) == (v == "4.9.3")
            assert (w.inflight is None) == (v == "4.9.3")
        assert cs.consume_tps == pytest.approx(float(
            re.search(r'"consumeTps":([\d.E-]+)', text).group(1)))
    elif code == "202":
        ts = TopicStats.from_body(b)
        want = keyed_values(text)
        assert {mq: (o.min_offset, o.max_offset, o.last_update_timestamp)
                for mq, o in ts.offsets.items()} == {
            mq: (r["minOffset"], r["maxOffset"], r["lastUpdateTimestamp"])
            for mq, r in want.items()}
    elif code == "303":
        spans = [QueueTimeSpan.from_body(s) for s in b["consumeTimeSpanSet"]]
        want = json.loads(text)["consumeTimeSpanSet"]
        assert [(s.mq.to_dict(), s.min_timestamp, s.max_timestamp, s.consume_timestamp,
                 s.delay_time) for s in spans] == [
            (w["messageQueue"], w["minTimeStamp"], w["maxTimeStamp"], w["consumeTimeStamp"],
             w["delayTime"]) for w in want]
    elif code == "307":
        info = ConsumerRunningInfo.from_body(b)
        want = keyed_values(text.split('"properties"')[0])
        assert set(info.mq_table) == set(want)
        for mq, pq in info.mq_table.items():
            r = want[mq]
            assert (pq.cached_msg_count, pq.cached_msg_min_offset, pq.cached_msg_max_offset,
                    pq.commit_offset, pq.locked, pq.dropped, pq.last_lock_timestamp) == (
                r["cachedMsgCount"], r["cachedMsgMinOffset"], r["cachedMsgMaxOffset"],
                r["commitOffset"], r["locked"], r["droped"], r["lastLockTimestamp"])
    elif code == "203":
        cc = ConsumerConnection.from_body(b)
        want = json.loads(text)
        assert [c.client_id for c in cc.connections] == sorted(
            c["clientId"] for c in want["connectionSet"])
        assert set(cc.subscriptions) == set(want["subscriptionTable"])
        assert (cc.consume_type, cc.message_model, cc.consume_from_where) == (
            want["consumeType"], want["messageModel"], want["consumeFromWhere"])
    elif code == "38":
        assert b["consumerIdList"] == json.loads(text)["consumerIdList"]
    elif code == "105":
        topic = ex["request"]["extFields"]["topic"]
        route = TopicRoute.from_body(topic, b)
        want = plain_json(text)
        assert {bd.broker_name: bd.addrs for bd in route.brokers} == {
            w["brokerName"]: {int(k): a for k, a in w["brokerAddrs"].items()}
            for w in want["brokerDatas"]}
        assert {(q.broker_name, q.read_queue_nums, q.write_queue_nums, q.perm)
                for q in route.queues} == {
            (w["brokerName"], w["readQueueNums"], w["writeQueueNums"], w["perm"])
            for w in want["queueDatas"]}
    elif code == "106":
        info = ClusterInfo.from_body(b)
        want = plain_json(text)
        assert {n: bd.addrs for n, bd in info.brokers.items()} == {
            n: {int(k): a for k, a in w["brokerAddrs"].items()}
            for n, w in want["brokerAddrTable"].items()}
        assert info.clusters == {c: tuple(sorted(bs))
                                 for c, bs in want["clusterAddrTable"].items()}
    else:  # pragma: no cover - CODES and the branches above go together
        raise AssertionError(code)


# ------------------------------------------------------------------ specific field values

def _stats(v: str, rel: str) -> ConsumeStats:
    return ConsumeStats.from_body(body(v, rel))


@pytest.mark.parametrize("version", VERSIONS)
def test_never_committed_values(version):
    """NC_ONE consumed broker-a/0 only (25 messages); the other queues read 0/0 on both
    versions (not -1), 5.3.3 adds pullOffset 0."""
    one = _stats(version, "never-committed/208_getConsumeStats_NC_ONE.broker-a.json")
    q = {mq.queue_id: w for mq, w in one.offsets.items()}
    assert (q[0].broker_offset, q[0].consumer_offset) == (25, 25) and q[0].last_timestamp > 0
    for i in (1, 2, 3):
        assert (q[i].broker_offset, q[i].consumer_offset, q[i].last_timestamp) == (25, 0, 0)
        assert q[i].pull_offset == (None if version == "4.9.3" else 0)
    assert q[0].pull_offset == (None if version == "4.9.3" else 25)
    assert one.consume_tps == pytest.approx(0.625 if version == "4.9.3" else 0.8333333333)
    never = _stats(version, "never-committed/208_getConsumeStats_NC_NEVER.broker-b.json")
    assert {(mq.broker_name, mq.queue_id, w.consumer_offset, w.last_timestamp)
            for mq, w in never.offsets.items()} == {("broker-b", i, 0, 0) for i in range(4)}
    empty = _stats(version, "never-committed/208_getConsumeStats_NC_NEVER_no_topic"
                            ".broker-a.json")
    assert empty.offsets == {} and empty.consume_tps == 0.0
    ghost = _stats(version, "other-requests/208_getConsumeStats_NO_SUCH_GROUP.broker-a.json")
    assert [w.consumer_offset for w in ghost.offsets.values()] == [0, 0, 0, 0]


@pytest.mark.parametrize("version", VERSIONS)
def test_never_committed_time_spans(version):
    """303: consumeTimeStamp == minTimeStamp and delayTime = now - 0 for unconsumed queues;
    QueueTimeSpan.delay_is_bogus says so, and not for the consumed queue 0."""
    rel = "never-committed/303_queryConsumeTimeSpan_NC_ONE.broker-a.json"
    now = raw(f"{version}/{rel}")["request"]["_sent_at_ms"]
    spans = {s.mq.queue_id: s for s in (QueueTimeSpan.from_body(x) for x in
                                        body(version, rel)["consumeTimeSpanSet"])}
    assert spans[0].delay_time == 0 and not spans[0].delay_is_bogus(now)
    for i in (1, 2, 3):
        s = spans[i]
        assert s.consume_timestamp == s.min_timestamp
        assert abs(s.delay_time - now) < 60_000  # about an epoch-ms
        assert s.delay_is_bogus(now)
    never = [QueueTimeSpan.from_body(x) for x in body(
        version, "never-committed/303_queryConsumeTimeSpan_NC_NEVER.broker-a.json")
        ["consumeTimeSpanSet"]]
    assert len(never) == 4 and all(s.delay_is_bogus(now) for s in never)


@pytest.mark.parametrize("version", VERSIONS)
def test_read_gt_write_shapes(version):
    """202 covers the write queues 0-1 on 4.9.3, the 4 read queues on 5.3.3 (+ topicPutTps);
    303 covers 0-1 on both; 208 covers 0-3 on both; the route says 4 read / 2 write."""
    ts = TopicStats.from_body(body(version, "read-gt-write/202_getTopicStatsInfo_RW_T"
                                            ".broker-a.json"))
    assert sorted(mq.queue_id for mq in ts.offsets) == ([0, 1] if version == "4.9.3"
                                                       else [0, 1, 2, 3])
    assert ts.put_tps == (0.0 if version == "4.9.3" else 3.0)
    assert [ts.offsets[MQ("RW_T", "broker-a", 0)].max_offset] == [50]
    spans = body(version, "read-gt-write/303_queryConsumeTimeSpan_RW_G.broker-a.json")
    assert sorted(QueueTimeSpan.from_body(s).mq.queue_id
                  for s in spans["consumeTimeSpanSet"]) == [0, 1]
    cs = _stats(version, "read-gt-write/208_getConsumeStats_RW_G.broker-b.json")
    assert {mq.queue_id: w.broker_offset for mq, w in cs.offsets.items()} == {
        0: 50, 1: 50, 2: 25, 3: 25}
    route = TopicRoute.from_body("RW_T", body(version, "read-gt-write/105_getRouteInfoByTopic"
                                                       "_RW_T.namesrv.json"))
    assert {(q.broker_name, q.read_queue_nums, q.write_queue_nums) for q in route.queues} == {
        ("broker-a", 4, 2), ("broker-b", 4, 2)}
    assert len(route.subscribe_queues()) == 8
    assert route.broker("broker-b").addrs == {0: "127.0.0.1:21911" if version == "4.9.3"
                                              else "127.0.0.1:31911"}


@pytest.mark.parametrize("version", VERSIONS)
def test_reset_series_values(version):
    """The recorded reset: 4.9.3 (legacy) still reads 50 on broker-a at +12 s and shows the
    re-consumption 32-33 at +25 s; 5.3.3 (server side) reads 0 at once, 50 again at +25 s."""
    a12 = _stats(version, "reset/208_after_12s.broker-a.json")
    a25 = _stats(version, "reset/208_after_25s.broker-a.json")
    before = _stats(version, "reset/208_before.broker-a.json")
    assert {w.consumer_offset for w in before.offsets.values()} == {50}
    if version == "4.9.3":
        assert {w.consumer_offset for w in a12.offsets.values()} == {50}
        assert sorted(w.consumer_offset for w in a25.offsets.values()) == [32, 32, 32, 33]
    else:
        assert {(w.consumer_offset, w.pull_offset) for w in a12.offsets.values()} == {(0, 50)}
        assert {w.consumer_offset for w in a25.offsets.values()} == {50}


@pytest.mark.parametrize("version", VERSIONS)
def test_running_info_values(version):
    """307: code 0 with remark 'not set any response code'; cachedMsgCount 50 per queue of the
    concurrent client, retry queues' commitOffset 0 (4.9.3) / -1 (5.3.3), the strategy class
    property; the orderly client holds its locks."""
    rel = "running-info/307_getConsumerRunningInfo_concurrent.json"
    assert raw(f"{version}/{rel}")["response"]["remark"] == "not set any response code"
    info = ConsumerRunningInfo.from_body(body(version, rel))
    assert info.strategy_class == ("org.apache.rocketmq.client.consumer.rebalance."
                                   "AllocateMessageQueueAveragely")
    assert info.consume_type == "CONSUME_PASSIVELY" and not info.orderly
    retry = [pq for mq, pq in info.mq_table.items() if mq.topic == "%RETRY%RI_G"]
    assert retry and {pq.commit_offset for pq in retry} == {0 if version == "4.9.3" else -1}
    counts = [pq.cached_msg_count for mq, pq in info.mq_table.items() if mq.topic == "RI_T"]
    assert len(counts) == 8 and max(counts) == 50
    if version == "4.9.3":
        a2 = info.mq_table[MQ("RI_T", "broker-a", 2)]
        assert (a2.cached_msg_count, a2.cached_msg_min_offset, a2.cached_msg_max_offset,
                a2.commit_offset) == (36, 14, 49, 14)
    orderly = ConsumerRunningInfo.from_body(
        body(version, "running-info/307_getConsumerRunningInfo_orderly.json"))
    assert orderly.orderly
    assert all(pq.locked for mq, pq in orderly.mq_table.items() if mq.topic == "RI_OT")


@pytest.mark.parametrize("version", VERSIONS)
def test_connection_member_and_cluster_values(version):
    ip = "127.0.1" if version == "4.9.3" else "127.0.2"
    cc = ConsumerConnection.from_body(body(version, "running-info/203_getConsumerConnection"
                                                    "List_RI_OG.json"))
    assert [c.client_id for c in cc.connections] == [f"{ip}.62@rio"]
    assert cc.connections[0].version == (399 if version == "4.9.3" else 479)
    assert set(cc.subscriptions) == {"RI_OT", "%RETRY%RI_OG"}
    assert cc.message_model == "CLUSTERING"
    ids = body(version, "running-info/38_getConsumerListByGroup_RI_OG.json")["consumerIdList"]
    assert ids == [f"{ip}.62@rio"]
    info = ClusterInfo.from_body(body(version, "other-requests/106_getBrokerClusterInfo"
                                               ".namesrv.json"))
    cluster = "DefaultCluster" if version == "4.9.3" else "DefaultCluster5"
    assert info.clusters == {cluster: ("broker-a", "broker-b")}
    port = 20911 if version == "4.9.3" else 30911
    assert info.brokers["broker-a"] == BrokerData(cluster, "broker-a",
                                                  {0: f"127.0.0.1:{port}"})
    offline = raw(f"{version}/other-requests/203_getConsumerConnectionList_NC_NEVER_offline"
                  ".broker-a.json")["response"]
    assert offline["code"] == 206
    missing = raw(f"{version}/other-requests/105_getRouteInfoByTopic_NO_SUCH_TOPIC.namesrv"
                  ".json")["response"]
    assert missing["code"] == 17
