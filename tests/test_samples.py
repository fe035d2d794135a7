"""Every file in tests/samples decodes, with asserted field values."""

from __future__ import annotations

import pytest
from conftest import SAMPLES

from mqctl.models import (
    ClusterInfo,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    MessageQueue,
    TopicRoute,
    TopicStats,
    parse_offset_table_key,
)
from mqctl.remoting import fastjson
from mqctl.remoting.frame import SerializeType, decode, encode
from mqctl.remoting.protocol import parse_hex_capture

MQ = MessageQueue


def load(rel: str):
    return fastjson.loads((SAMPLES / rel).read_bytes())


def frame(rel: str):
    return decode(parse_hex_capture((SAMPLES / rel).read_text()))


def test_every_sample_file_is_covered():
    """A new sample without a test fails here, so nothing is silently skipped."""
    covered = {
        "wire/newlife_json_request_HEART_BEAT.hex", "wire/newlife_rocketmq_response_empty.hex",
        "wire/newlife_rocketmq_response_extfields.hex",
        "synthetic/json_request_GET_ROUTEINFO_BY_TOPIC.hex",
        "synthetic/json_response_GET_MAX_OFFSET.hex", "synthetic/json_response_TOPIC_NOT_EXIST.hex",
        "synthetic/rocketmq_request_GET_MAX_OFFSET.hex",
    }
    covered |= {f"bodies/{p.name}" for p in (SAMPLES / "bodies").iterdir()}
    covered |= {f"synthetic/{p.name}" for p in (SAMPLES / "synthetic").glob("*.json")}
    covered |= {f"synthetic/store/{p.name}" for p in (SAMPLES / "synthetic/store").iterdir()}
    covered |= {f"store/{p.name}" for p in (SAMPLES / "store").iterdir()}
    covered |= {f"mqadmin/{p.name}" for p in (SAMPLES / "mqadmin").iterdir()}
    covered |= {f"rocketmq-test-schema/{p.name}"
                for p in (SAMPLES / "rocketmq-test-schema").iterdir()}
    present = {str(p.relative_to(SAMPLES)) for p in SAMPLES.rglob("*")
               if p.is_file() and p.name != "README.md"}
    assert present - covered == set()
    # and the parametrized tests below really parse every body/store file
    assert set(BODY_EXPECT) == {p for p in covered if p.startswith(
        ("bodies/", "synthetic/store/", "store/")) or (p.startswith("synthetic/")
                                                       and p.endswith(".json"))}


# ------------------------------------------------------------------------------ real frames


def test_newlife_json_heartbeat_request():
    c = frame("wire/newlife_json_request_HEART_BEAT.hex")
    assert (c.code, c.flag, c.opaque, c.language, c.version) == (34, 0, 1575, "DOTNET", 373)
    assert c.remark == "HEART_BEAT"
    assert c.serialize_type == SerializeType.JSON and not c.is_response
    body = fastjson.loads(c.body)
    assert body["ClientID"] == "10.7.69.205@63284"
    assert [p["GroupName"] for p in body["ProducerDataSet"]] == [
        "DEFAULT_PRODUCER", "CLIENT_INNER_PRODUCER"]


def test_newlife_binary_empty_response():
    c = frame("wire/newlife_rocketmq_response_empty.hex")
    assert c.serialize_type == SerializeType.ROCKETMQ
    assert (c.code, c.language, c.version, c.opaque, c.flag) == (0, "JAVA", 373, 1575, 1)
    assert c.remark is None and c.ext_fields is None and c.body == b""
    assert c.is_response
    # re-encoding gives the captured bytes
    raw = parse_hex_capture((SAMPLES / "wire/newlife_rocketmq_response_empty.hex").read_text())
    assert encode(c) == raw


def test_newlife_binary_extfields_response():
    c = frame("wire/newlife_rocketmq_response_extfields.hex")
    assert c.opaque == 1576 and c.code == 0
    assert c.ext_fields == {"queueId": "6", "TRACE_ON": "true", "MSG_REGION": "DefaultRegion",
                            "msgId": "0A090F2800002A9F0000229E897CF382",
                            "queueOffset": "6379881"}
    raw = parse_hex_capture((SAMPLES / "wire/newlife_rocketmq_response_extfields.hex").read_text())
    assert encode(c) == raw  # dict order preserved -> byte-identical


@pytest.mark.parametrize("name", ["json_request_GET_ROUTEINFO_BY_TOPIC",
                                  "json_response_GET_MAX_OFFSET",
                                  "json_response_TOPIC_NOT_EXIST",
                                  "rocketmq_request_GET_MAX_OFFSET"])
def test_synthetic_frames_reencode_byte_identical(name):
    raw = parse_hex_capture((SAMPLES / f"synthetic/{name}.hex").read_text())
    assert encode(decode(raw)) == raw


def test_synthetic_frame_values():
    c = frame("synthetic/json_request_GET_ROUTEINFO_BY_TOPIC.hex")
    assert (c.code, c.opaque, c.version, c.ext_fields) == (105, 7, 479, {"topic": "TopicTest"})
    c = frame("synthetic/json_response_GET_MAX_OFFSET.hex")
    assert c.is_response and c.ext("offset") == "1533" and c.opaque == 8
    c = frame("synthetic/json_response_TOPIC_NOT_EXIST.hex")
    assert c.code == 17 and c.code_name == "TOPIC_NOT_EXIST"
    assert c.remark.startswith("No topic route info in name server for the topic: NoSuchTopic\n")
    c = frame("synthetic/rocketmq_request_GET_MAX_OFFSET.hex")
    assert c.serialize_type == SerializeType.ROCKETMQ and c.code == 30
    assert c.ext_fields == {"topic": "TopicTest", "queueId": "0", "bname": "broker-a"}


# ------------------------------------------------------------------------------ bodies


def _route_nonstandard(v):
    r = TopicRoute.from_body("TopicTest", v)
    assert r.broker("broker-a").addrs == {0: "10.0.0.11:10911", 1: "10.0.0.12:10911"}
    assert r.broker("broker-b").master_addr == "10.0.0.21:10911"
    assert [q.read_queue_nums for q in r.queues] == [4, 4]
    assert len(r.subscribe_queues()) == 8


def _cluster(v):
    c = ClusterInfo.from_body(v)
    assert c.clusters == {"DefaultCluster": ("broker-a", "broker-b")}
    assert c.brokers["broker-a"].addrs[1] == "10.0.0.12:10911"


def _consume_stats(v):
    cs = ConsumeStats.from_body(v)
    w = cs.offsets[MQ("TopicOrder", "broker-a", 1)]
    assert (w.broker_offset, w.consumer_offset, w.pull_offset, w.diff, w.inflight) == (
        1520, 1498, 1510, 22, 12)
    assert w.last_timestamp == 1717200000123
    assert cs.consume_tps == pytest.approx(3.3333333333333335)
    assert len(cs.offsets) == 3


def _consume_stats_list(v):
    assert v["totalDiff"] == 22 and v["totalInflightDiff"] == -3031
    stats = ConsumeStats.from_body(v["consumeStatsList"][0]["GID_ORDER"][0])
    assert stats.offsets[MQ("TopicOrder", "broker-a", 0)].consumer_offset == 1533


def _connection(v):
    cc = ConsumerConnection.from_body(v)
    assert [c.client_id for c in cc.connections] == ["10.0.0.5@12345#1717100000000000001",
                                                    "10.0.0.6@23456#1717100000000000002"]
    assert cc.consume_type == "CONSUME_PASSIVELY" and cc.message_model == "CLUSTERING"
    assert cc.subscriptions["TopicOrder"].expression == "*"
    assert cc.connections[0].version == 479 and cc.connections[0].client_addr == "10.0.0.5:53422"


def _running_info(v):
    ri = ConsumerRunningInfo.from_body(v)
    assert ri.orderly and ri.consume_type == "CONSUME_PASSIVELY"
    assert ri.strategy_class == ("org.apache.rocketmq.client.consumer.rebalance."
                                 "AllocateMessageQueueAveragely")
    q0 = ri.mq_table[MQ("TopicOrder", "broker-a", 0)]
    q1 = ri.mq_table[MQ("TopicOrder", "broker-a", 1)]
    assert q0.locked and q0.last_lock_timestamp == 1717200010000 and not q0.dropped
    assert not q1.locked and q1.cached_msg_count == 12 and q1.commit_offset == 1498


def _topic_stats(v):
    ts = TopicStats.from_body(v)
    assert ts.offsets[MQ("TopicOrder", "broker-a", 1)].max_offset == 1520
    assert ts.put_tps == 1.25


def _reset_body(v):
    t = fastjson.mq_map(v["offsetTable"])
    assert t == {MQ("TopicOrder", "broker-a", 1): 1400, MQ("TopicOrder", "broker-a", 0): 1411}


def _reset_body_for_c(v):
    t = fastjson.mq_map(v["offsetTable"])
    assert t == {MQ("TopicOrder", "broker-a", 0): 1411, MQ("TopicOrder", "broker-a", 1): 1400}


def _status_body(v):
    t = v["consumerTable"]["10.0.0.6@23456#1717100000000000002"]
    assert fastjson.mq_map(t) == {MQ("TopicOrder", "broker-a", 1): 1498}


def _store_offsets(v):
    table = v["offsetTable"]
    assert table["TopicOrder@GID_ORDER"] == {0: 1533, 1: 1498, 2: 1502, 3: 1490}
    assert parse_offset_table_key("TopicOrder@GID_BCAST@broadcast") == (
        "TopicOrder", "GID_BCAST", True)
    assert v["groupTopicMap"]["GID_ORDER"] == ["%RETRY%GID_ORDER", "TopicOrder"]


def _order_info(v):
    e = v["table"]["TopicFifo@GID_POP_FIFO"][0]
    assert e["o"] == [1500, 1, 2] and e["ot"] == {1501: 1717200060000} and e["oc"] == {1501: 2}


def _topics(v):
    t = v["topicConfigTable"]["TopicOrder"]
    assert t["attributes"]["message.type"] == "FIFO" and t["readQueueNums"] == 4


def _subgroup(v):
    g = v["subscriptionGroupTable"]["GID_ORDER"]
    assert g["consumeMessageOrderly"] is True and g["retryMaxTimes"] == 16


BODY_EXPECT = {
    "bodies/cluster_info.fastjson.rocketmq-rust-interop.json":
        lambda v: ClusterInfo.from_body(v).brokers["broker-a"].master_addr == "127.0.0.1:10911",
    "bodies/reset_offset_body.fastjson.rocketmq-client-go-issue-759.json":
        lambda v: fastjson.mq_map(v["offsetTable"]) == {MQ("topicB", "RaftNode00", i): 0
                                                       for i in range(4)},
    "bodies/reset_offset_body.fastjson.rocketmq-client-go-test.json":
        lambda v: fastjson.mq_map(v["offsetTable"])[MQ("topicB", "RaftNode00", 0)] == 11110,
    "bodies/reset_offset_body.gson-pairs.rocketmq-client-go-test.json":
        lambda v: (len(t := fastjson.mq_map(v["offsetTable"])) == 8
                   and t[MQ("zx_tst", "tjwqtst-common-rocketmq-raft0", 5)] == 23354233
                   and t[MQ("zx_tst", "tjwqtst-common-rocketmq-raft0", 0)] == 23373350),
    "bodies/topic_route_data.4x.rocketmq-issue-1445.reformatted.json":
        lambda v: (TopicRoute.from_body("T", v).queues[0].perm == 6
                   and TopicRoute.from_body("T", v).brokers[0].addrs == {
                       0: "172.168.0.104:10911"}),
    "bodies/topic_route_data.fastjson.rocketmq-rust-interop.json":
        lambda v: (v["topicQueueMappingByBroker"]["interopBroker"]["currIdMap"] == {0: 0}
                   and TopicRoute.from_body("TopicA", v).subscribe_queues()[3]
                   == MQ("TopicA", "interopBroker", 3)),
    "bodies/topic_stats_table.fastjson.rocketmq-rust-test.json":
        lambda v: TopicStats.from_body(v).offsets[MQ("TBW102", "broker-a", 0)].max_offset == 0
        and TopicStats.from_body(v).put_tps == 1.5,
    "synthetic/cluster_info.json": _cluster,
    "synthetic/consume_stats.json": _consume_stats,
    "synthetic/consume_stats_list.json": _consume_stats_list,
    "synthetic/consumer_connection.json": _connection,
    "synthetic/consumer_id_list.json":
        lambda v: v["consumerIdList"][1] == "10.0.0.6@23456#1717100000000000002",
    "synthetic/consumer_running_info.orderly.json": _running_info,
    "synthetic/get_consumer_status_body.json": _status_body,
    "synthetic/group_list.json": lambda v: v["groupList"] == ["GID_ORDER", "GID_AUDIT"],
    "synthetic/heartbeat_data.consumer.json":
        lambda v: v["consumerDataSet"][0]["groupName"] == "GID_ORDER",
    "synthetic/lock_batch_request.json":
        lambda v: [MQ.from_dict(m) for m in v["mqSet"]] == [MQ("TopicOrder", "broker-a", 0),
                                                             MQ("TopicOrder", "broker-a", 1)],
    "synthetic/lock_batch_response.json":
        lambda v: MQ.from_dict(v["lockOKMQSet"][0]) == MQ("TopicOrder", "broker-a", 0),
    "synthetic/query_assignment_request.json": lambda v: v["strategyName"] == "AVG",
    "synthetic/query_assignment_response.json":
        lambda v: MQ.from_dict(v["messageQueueAssignments"][1]["messageQueue"]).queue_id == 1,
    "synthetic/reset_offset_body.json": _reset_body,
    "synthetic/reset_offset_body_for_c.json": _reset_body_for_c,
    "synthetic/topic_list.json": lambda v: "%RETRY%GID_ORDER" in v["topicList"],
    "synthetic/topic_route_data.nonstandard.json": _route_nonstandard,
    "synthetic/topic_route_data.standard.json": _route_nonstandard,
    "synthetic/topic_stats_table.json": _topic_stats,
    "synthetic/store/consumerOffset.json": _store_offsets,
    "synthetic/store/consumerOrderInfo.json": _order_info,
    "synthetic/store/delayOffset.json": lambda v: v["offsetTable"] == {1: 10, 2: 0, 3: 57},
    "synthetic/store/subscriptionGroup.json": _subgroup,
    "synthetic/store/topics.json": _topics,
    "store/consumerFilter.json.lewee0215-youdao":
        lambda v: v["filterDataByTopic"]["vjr-points-mall-topic"]["groupFilterData"][
            "SQLConsumerGroupName"]["bloomFilterData"]["bitPos"] == [14, 59, 39],
    "store/consumerOffset.json.5x.blog-sample":
        lambda v: v["offsetTable"]["test@push_test"] == {0: 165243, 1: 165245, 2: 165243,
                                                         3: 165242}
        and v["lmqOffsetTable"] == {},
    "store/delayOffset.json.4x.lewee0215-youdao": lambda v: v["offsetTable"] == {2: 3, 5: 0},
}


@pytest.mark.parametrize("rel", sorted(BODY_EXPECT))
def test_body_samples(rel):
    value = load(rel)
    result = BODY_EXPECT[rel](value)
    assert result is None or result is True


def test_mqadmin_topic_route_capture_parses_as_route():
    v = load("mqadmin/topicRoute.4.x.blog-capture.txt")
    r = TopicRoute.from_body("T", v)
    assert r.brokers[0].addrs == {0: "172.31.10.10:10911"}
    assert r.queues[0].topic_sys_flag == 0  # legacy topicSynFlag spelling


def test_mqadmin_text_captures_are_text():
    # the tabular captures are parsed by the lag job (tests/lagjob); here: they are intact
    for name in ("consumerProgress.4.8.blog-capture.txt", "topicStatus.4.8.blog-capture.txt",
                 "consumerStatus.4.8.blog-capture.txt"):
        text = (SAMPLES / "mqadmin" / name).read_text()
        assert text.startswith("RocketMQLog:WARN")


def test_schema_files_list_request_codes():
    from mqctl.remoting.codes import RequestCode

    lines = (SAMPLES / "rocketmq-test-schema/common.protocol.RequestCode.schema").read_text()
    pairs = [ln.split() for ln in lines.splitlines() if ln.startswith("Field ")]
    table = {p[1]: int(p[-1]) for p in pairs}
    assert len(table) == 96
    for name, code in table.items():
        assert RequestCode[name] == code, name
    for f in (SAMPLES / "rocketmq-test-schema").glob("*Header.schema"):
        fields = [ln.split()[1] for ln in f.read_text().splitlines() if ln.startswith("Field ")]
        assert fields, f.name
