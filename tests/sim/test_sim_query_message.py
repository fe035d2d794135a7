"""The simulated broker's QueryMessageProcessor and index (IndexService semantics), and the
retry / dead-letter copies that its failing consumers leave (consumerSendMsgBack)."""

from __future__ import annotations

import struct

from test_sim_protocol import call

from mqctl.models import DLQ_PREFIX, RETRY_PREFIX
from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.remoting.message import decode_messages


def _scenario(**consumer):
    return {"name": "query", "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
            "topics": [{"name": "T", "queues": 2, "rate": 2, "history": "10m"}],
            "groups": [{"name": "G", "topics": ["T"], "consumers": [
                {"id": "10.9.1.1@1", **consumer}]}]}


def _pull_one(s, broker, topic, qid, offset):
    resp = call(s, broker, C.PULL_MESSAGE, {
        "consumerGroup": "TOOLS_CONSUMER", "topic": topic, "queueId": qid,
        "queueOffset": offset, "maxMsgNums": 1, "sysFlag": 4, "commitOffset": 0,
        "suspendTimeoutMillis": 0, "subscription": "*", "subVersion": 0})
    assert resp.code == R.SUCCESS, resp.remark
    msgs, err = decode_messages(resp.body)
    assert err is None
    return msgs[0]


def _query(s, broker, topic, key, *, max_num=64, begin=0, end=(1 << 63) - 1, unique=False):
    ext = {"topic": topic, "key": key, "maxNum": max_num, "beginTimestamp": begin,
           "endTimestamp": end}
    if unique:
        ext["_UNIQUE_KEY_QUERY"] = "true"
    return call(s, broker, C.QUERY_MESSAGE, ext)


def test_query_by_key_and_unique_key_finds_the_message_with_index_fields(sim_factory):
    s = sim_factory(_scenario())
    m = _pull_one(s, "broker-a", "T", 1, 17)
    own_key = m.keys[0]
    resp = _query(s, "broker-a", "T", own_key)
    assert resp.code == R.SUCCESS and resp.remark is None
    got, _ = decode_messages(resp.body)
    assert [(x.queue_id, x.queue_offset) for x in got] == [(1, 17)]
    assert int(resp.ext("indexLastUpdateTimestamp")) >= m.store_timestamp
    assert int(resp.ext("indexLastUpdatePhyoffset")) > 0
    uniq = m.properties["UNIQ_KEY"]
    assert len(uniq) == 32 and bytes.fromhex(uniq)[:4] == bytes(
        int(p) for p in m.born_host.split(":")[0].split("."))
    got, _ = decode_messages(_query(s, "broker-a", "T", uniq, max_num=1, unique=True).body)
    assert [x.queue_offset for x in got] == [17]
    # the other broker holds no message with that key
    miss = _query(s, "broker-b", "T", own_key)
    assert miss.code == R.QUERY_NOT_FOUND
    assert miss.remark == "can not find message, maybe time range not correct"
    assert miss.ext("indexLastUpdateTimestamp") is not None


def test_a_shared_key_is_bounded_by_max_num_and_the_time_window(sim_factory):
    s = sim_factory({**_scenario(), "topics": [{"name": "T", "queues": 1, "rate": 0,
                                                "max_offset": 250001}]})
    m = _pull_one(s, "broker-a", "T", 0, 3)
    order = m.keys[1]
    assert order.startswith("ORD-")
    got, _ = decode_messages(_query(s, "broker-a", "T", order).body)
    offsets = sorted(x.queue_offset for x in got)
    assert 3 in offsets and all((o - 3) % 100000 == 0 for o in offsets) and len(offsets) == 3
    one, _ = decode_messages(_query(s, "broker-a", "T", order, max_num=1).body)
    assert [x.queue_offset for x in one] == [max(offsets)]  # the newest first
    early = _query(s, "broker-a", "T", order, end=m.store_timestamp)
    assert [x.queue_offset for x in decode_messages(early.body)[0]] == [3]
    assert _query(s, "broker-a", "T", order, begin=0, end=m.store_timestamp - 1
                  ).code == R.QUERY_NOT_FOUND


def test_view_message_by_id_reads_the_commit_log_offset_of_the_offset_msg_id(sim_factory):
    s = sim_factory(_scenario())
    m = _pull_one(s, "broker-b", "T", 0, 5)
    raw = bytes.fromhex(m.msg_id)
    phys = struct.unpack(">q", raw[8:16])[0]
    assert phys == m.commit_log_offset
    resp = call(s, "broker-b", C.VIEW_MESSAGE_BY_ID, {"offset": phys})
    got, _ = decode_messages(resp.body)
    assert (got[0].queue_id, got[0].queue_offset, got[0].msg_id) == (0, 5, m.msg_id)
    bad = call(s, "broker-b", C.VIEW_MESSAGE_BY_ID, {"offset": phys + 1})
    assert bad.code == R.SYSTEM_ERROR
    assert bad.remark == f"can not find message by the offset, {phys + 1}"


def test_failed_messages_become_copies_in_retry_then_dlq(sim_factory):
    s = sim_factory(_scenario(fail_ratio=1.0, max_reconsume_times=1))
    s.advance(120)
    retry = _pull_one(s, "broker-a", RETRY_PREFIX + "G", 0, 0)
    assert retry.reconsume_times == 1
    assert retry.properties["RETRY_TOPIC"] == "T"
    assert retry.properties["REAL_TOPIC"] == RETRY_PREFIX + "G"
    origin_id = retry.properties["ORIGIN_MESSAGE_ID"]
    phys = struct.unpack(">q", bytes.fromhex(origin_id)[8:16])[0]
    orig = decode_messages(call(s, "broker-a", C.VIEW_MESSAGE_BY_ID, {"offset": phys}).body)[0][0]
    assert orig.topic == "T" and orig.properties["UNIQ_KEY"] == retry.properties["UNIQ_KEY"]
    assert orig.body == retry.body and orig.born_timestamp == retry.born_timestamp
    # the retry topic's index holds the copy under the original's unique key
    hit = _query(s, "broker-a", RETRY_PREFIX + "G", retry.properties["UNIQ_KEY"], unique=True)
    assert [x.queue_offset for x in decode_messages(hit.body)[0]] == [0]
    dead = _pull_one(s, "broker-a", DLQ_PREFIX + "G", 0, 0)
    assert dead.reconsume_times == 2 and dead.properties["RETRY_TOPIC"] == "T"
    assert "ORIGIN_MESSAGE_ID" in dead.properties


def test_a_pull_takes_only_the_tags_of_its_subscription(sim_factory):
    s = sim_factory(_scenario())
    tags = [_pull_one(s, "broker-a", "T", 0, o).tags for o in range(6)]
    want = tags[0]

    def pull(expr, offset, n):
        return call(s, "broker-a", C.PULL_MESSAGE, {
            "consumerGroup": "TOOLS_CONSUMER", "topic": "T", "queueId": 0,
            "queueOffset": offset, "maxMsgNums": n, "sysFlag": 4, "commitOffset": 0,
            "suspendTimeoutMillis": 0, "subscription": expr, "subVersion": 0})
    got = pull(want, 0, 6)
    msgs, _ = decode_messages(got.body)
    assert [m.queue_offset for m in msgs] == [o for o, t in enumerate(tags) if t == want]
    assert int(got.ext("nextBeginOffset")) == 6
    none = pull("NoSuchTag", 0, 6)
    assert none.code == R.PULL_RETRY_IMMEDIATELY and none.remark == "NO_MATCHED_MESSAGE"
    assert int(none.ext("nextBeginOffset")) == 6


def test_a_pop_consumer_s_unacked_messages_are_copies_in_its_pop_retry_topic(sim_factory):
    sc = _scenario(fail_ratio=1.0)
    sc["brokers"] = [{"name": "broker-a", "version": "V5_3_3"}]
    sc["groups"][0]["consume_type"] = "CONSUME_POP"
    s = sim_factory(sc)
    s.advance(120)
    topic = f"{RETRY_PREFIX}G_T"
    assert s.call(lambda c: c.brokers["broker-a"].max_offset(topic, 0)) > 0
    copy = _pull_one(s, "broker-a", topic, 0, 0)
    assert copy.properties["RETRY_TOPIC"] == "T" and copy.reconsume_times == 1
    hit = _query(s, "broker-a", topic, copy.properties["UNIQ_KEY"], unique=True)
    assert hit.code == R.SUCCESS
