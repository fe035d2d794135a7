"""The simulated broker's SendMessageProcessor: SEND_MESSAGE and SEND_MESSAGE_V2 store the
message as sent, index its keys and unique key, answer SendMessageResponseHeader, create a
%RETRY% topic and refuse an unknown topic, a bad queue and a slave; the request log shows the
sends."""

from __future__ import annotations

from test_sim_protocol import call

from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R
from mqctl.remoting.message import decode_messages, parse_offset_msg_id
from mqctl.remoting.send import send_header

SCENARIO = {"name": "send", "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a", "slave": True}],
            "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "1m"}],
            "groups": [{"name": "G", "topics": ["T"], "consumers": [{"id": "10.9.2.1@1"}]}]}


def _send(s, topic, qid, props, body=b"hello", *, v2=True, target="broker-a"):
    return call(s, target, C.SEND_MESSAGE_V2 if v2 else C.SEND_MESSAGE,
                send_header(group="P", topic=topic, queue_id=qid, properties=props,
                            born_ms=1000, flag=3, v2=v2), body)


def test_a_send_is_stored_indexed_and_answered(sim_factory):
    s = sim_factory(SCENARIO)
    before = s.call(lambda c: c.brokers["broker-a"].max_offset("T", 1))
    s.clear_request_log()
    resp = _send(s, "T", 1, {"UNIQ_KEY": "U1", "KEYS": "k1 k2", "TAGS": "TagZ"})
    assert resp.code == R.SUCCESS, resp.remark
    assert int(resp.ext("queueId")) == 1 and int(resp.ext("queueOffset")) == before
    assert [r.code for r in s.request_log] == [C.SEND_MESSAGE_V2]
    where = parse_offset_msg_id(resp.ext("msgId"))
    assert where is not None
    m = decode_messages(call(s, "broker-a", C.VIEW_MESSAGE_BY_ID,
                             {"offset": where[1]}).body)[0][0]
    assert (m.topic, m.queue_id, m.queue_offset, m.body, m.flag) == ("T", 1, before,
                                                                     b"hello", 3)
    assert m.properties["UNIQ_KEY"] == "U1" and m.properties["CLUSTER"]
    assert m.born_timestamp == 1000
    for key, unique in (("U1", "true"), ("k2", "false")):
        q = call(s, "broker-a", C.QUERY_MESSAGE, {"topic": "T", "key": key, "maxNum": 32,
                                                  "beginTimestamp": 0, "endTimestamp": 1 << 62,
                                                  "_UNIQUE_KEY_QUERY": unique})
        assert [x.queue_offset for x in decode_messages(q.body)[0]] == [before], key
    assert s.call(lambda c: c.brokers["broker-a"].max_offset("T", 1)) == before + 1
    v1 = _send(s, "T", 0, {"UNIQ_KEY": "U2"}, v2=False)
    assert v1.code == R.SUCCESS


def test_a_retry_topic_is_created_and_other_sends_are_refused(sim_factory):
    s = sim_factory(SCENARIO)
    assert _send(s, "%RETRY%G2", 0, {"UNIQ_KEY": "U"}).code == R.SUCCESS
    assert s.call(lambda c: c.brokers["broker-a"].max_offset("%RETRY%G2", 0)) == 1
    nope = _send(s, "NoSuchTopic", 0, {})
    assert nope.code == R.TOPIC_NOT_EXIST and "not exist" in (nope.remark or "")
    assert _send(s, "T", 9, {}).code == R.SYSTEM_ERROR
    slave = _send(s, "T", 0, {}, target="broker-a#1")
    assert slave.code == R.SERVICE_NOT_AVAILABLE
