"""Resets against what real RocketMQ 4.9.3 and 5.3.3 answered (tests/reset/corpus, copied from
the recorded corpus), and the same states in the simulated cluster: never-committed queues
(issue 14 item 6), more read than write queues (item 7), a rewind the client already replayed
before verify read it (item 8)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode
from mqctl.reset.probe import committed_queue_ids

CORPUS = Path(__file__).parent / "corpus"
MQ = MessageQueue
ALL_OFFSETS = RequestCode.GET_ALL_CONSUMER_OFFSET
UPDATE = RequestCode.UPDATE_CONSUMER_OFFSET


def exchange(version: str, name: str) -> dict:
    return json.loads((CORPUS / version / name).read_text())


def body(version: str, name: str):
    return fastjson.loads(exchange(version, name)["response"]["body_text"])


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def writes(sim):
    return [r for r in sim.request_log
            if r.code in (UPDATE, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET)]


# ------------------------------------------------------------ item 6: never-committed queues

@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_the_brokers_offset_table_lists_only_committed_queues(version):
    b = body(version, "43_getAllConsumerOffset.broker-a.json")
    assert committed_queue_ids(b, "NC_T", "NC_ONE") == {0}
    assert committed_queue_ids(b, "NC_T", "NC_NEVER") == set()
    assert committed_queue_ids(b, "RW_T", "RW_G") == {0, 1, 2, 3}


def test_4x_answers_0_for_a_queue_never_committed_and_5x_not_found():
    """Why QUERY_CONSUMER_OFFSET alone cannot tell on 4.9.3: the same answer as a commit of 0."""
    old = exchange("4.9.3", "14_queryConsumerOffset_NC_NEVER_broker-a_q0.json")["response"]
    assert old["code"] == 0 and old["extFields"]["offset"] == "0"
    new = exchange("5.3.3", "14_queryConsumerOffset_NC_NEVER_broker-a_q0.json")["response"]
    assert new["code"] == 22


def _never_committed(version: str) -> dict:
    """One broker of ``version``; G_NEW exists (subscription group) and committed queue 0 only,
    with offset 0 (a real commit of 0, as CL_T@CL_G in the corpus); queue 1 never."""
    return {"name": "nc-" + version, "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a", "version": version}],
            "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "10m"}],
            "groups": [{"name": "G_NEW", "topics": []}]}


@pytest.mark.parametrize("version, asks_table", [("V4_9_3", True), ("V5_3_3", False)])
def test_never_committed_queue_is_none_in_plan_and_rollback_and_left_alone(
        cli, sim_factory, tmp_path, version, asks_table):
    s = sim_factory(_never_committed(version))
    s.call(lambda c: c.brokers["broker-a"].commit("G_NEW", "T", 0, 0))
    q1 = MQ("T", "broker-a", 1)
    assert s.call(lambda c: c.brokers["broker-a"].min_offset("T", 1)) == 0  # message 0 kept
    r = run(cli, s, "offsets", "reset", "-g", "G_NEW", "-t", "T", "--to-offset", "5")
    assert r.exit_code == 0, r.stderr
    row = {int(ln.split()[1]): ln.split() for ln in r.stdout.splitlines()
           if ln.startswith("broker-a ")}
    assert row[0][4] == "0" and row[1][4] == "none"  # CURRENT
    assert any(x.code == ALL_OFFSETS for x in s.request_log) is asks_table
    s.clear_request_log()
    rb = tmp_path / "rb.json"
    r = run(cli, s, "offsets", "reset", "-g", "G_NEW", "-t", "T", "--to-offset", "5",
            "--execute", "--rollback-file", str(rb), "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {q["queue_id"]: q["current"] for q in r.json["queues"]} == {0: 0, 1: None}
    saved = {q["queue_id"]: q["offset"] for q in json.loads(rb.read_text())["queues"]}
    assert saved == {0: 0, 1: "none"}
    assert s.call(lambda c: c.committed_offset("G_NEW", q1)) == 5
    s.clear_request_log()
    r = run(cli, s, "offsets", "rollback", str(rb), "--execute")
    assert r.exit_code == 0, r.stderr
    sent = [(x.ext_fields["queueId"], x.ext_fields.get("commitOffset", x.ext_fields.get(
        "offset"))) for x in writes(s)]
    assert sent == [("0", "0")]  # never an offset for the queue that had none
    assert ("broker-a:1 had no committed offset before: left as is (it keeps the offset "
            "the reset wrote)") in r.stdout
    assert s.call(lambda c: c.committed_offset("G_NEW", q1)) == 5


def test_rollback_files_of_earlier_versions_still_read(tmp_path):
    """``"offset": null`` (what earlier versions wrote for a missing offset) reads as none."""
    from mqctl.reset import read_rollback

    p = tmp_path / "old.json"
    p.write_text(json.dumps({"schema": "mqctl.rollback/1", "group": "G", "topic": "T",
                             "queues": [{"broker": "b", "queue_id": 0, "offset": None},
                                        {"broker": "b", "queue_id": 1, "offset": "none"},
                                        {"broker": "b", "queue_id": 2, "offset": 7}]}))
    _, _, target, notes = read_rollback(str(p))
    assert target.plan == {MQ("T", "b", 2): 7}
    assert sum("had no committed offset before" in n for n in notes) == 2
    p.write_text(p.read_text().replace('"none"', '"nothing"'))
    with pytest.raises(Exception, match="entry 2 is malformed"):
        read_rollback(str(p))


# ------------------------------------------------------- item 7: more read than write queues

def test_4x_topic_stats_cover_the_write_queues_and_consume_stats_the_read_queues():
    """Corpus read-gt-write (RW_T 4 read / 2 write per broker): what mqctl must plan around."""
    from mqctl.models import ConsumeStats, TopicRoute, TopicStats

    route = TopicRoute.from_body("RW_T", body("4.9.3", "105_getRouteInfoByTopic_RW_T.namesrv.json"))
    assert {(q.read_queue_nums, q.write_queue_nums) for q in route.queues} == {(4, 2)}
    for version, stats_queues in (("4.9.3", {0, 1}), ("5.3.3", {0, 1, 2, 3})):
        ts = TopicStats.from_body(body(version, "202_getTopicStatsInfo_RW_T.broker-a.json"))
        assert {m.queue_id for m in ts.offsets} == stats_queues
        cs = ConsumeStats.from_body(body(version, "208_getConsumeStats_RW_G.broker-a.json"))
        assert {m.queue_id for m in cs.offsets} == {0, 1, 2, 3}


@pytest.fixture
def stats_over_write_queues(monkeypatch):
    """A 4.x sim broker answers GET_TOPIC_STATS_INFO over writeQueueNums, as 4.9.3's
    AdminBrokerProcessor.getTopicStatsInfo does (corpus 4.9.3/read-gt-write/202_*), whether or
    not the sim already does it itself."""
    from mqctl.sim import broker as sim_broker
    from mqctl.versions import V5_0_0

    code = RequestCode.GET_TOPIC_STATS_INFO
    original = sim_broker.HANDLERS[code]

    def handler(b, cmd, conn, slave):
        resp = original(b, cmd, conn, slave)
        if b.version >= V5_0_0 or resp.code != 0:
            return resp
        write = b.topics[cmd.ext_fields["topic"]].write
        doc = fastjson.loads(resp.body)
        table = {m: v for m, v in doc["offsetTable"].items() if m.queue_id < write}
        return resp.with_(body=fastjson.dumps_fastjson({"offsetTable": table}).encode())

    monkeypatch.setitem(sim_broker.HANDLERS, code, handler)


def _read_gt_write(version: str, online: bool = False) -> dict:
    group: dict = {"name": "G", "topics": ["T"], "initial_lag": 10}
    if online:
        group["consumers"] = [{"id": "10.9.0.1@1", "behaviour": "stuck"}]
    return {"name": "rw-" + version, "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a", "version": version}],
            "topics": [{"name": "T", "queues": 4, "read_queues": 4, "write_queues": 2,
                        "rate": 1, "history": "10m"}],
            "groups": [group]}


def committed(sim, group="G", topic="T", queues=4):
    return {q: sim.call(lambda c, q=q: c.committed_offset(group, MQ(topic, "broker-a", q)))
            for q in range(queues)}


@pytest.mark.parametrize("version, path", [("V4_9_3", "legacy-update"),
                                           ("V5_3_3", "server-side")])
def test_every_readable_queue_is_planned_reset_and_verified(cli, sim_factory,
                                                            stats_over_write_queues, version,
                                                            path):
    s = sim_factory(_read_gt_write(version))
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--to-offset", "5", "--execute",
            "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert [q["queue_id"] for q in r.json["queues"]] == [0, 1, 2, 3]
    assert {b["path"] for b in r.json["brokers"]} == {path}
    assert r.json["summary"] == {"verified": 4}
    assert committed(s) == {0: 5, 1: 5, 2: 5, 3: 5}
    beyond = {q["queue_id"]: q for q in r.json["queues"] if q["queue_id"] >= 2}
    assert all(q["max"] == 600 and q["min"] == 0 for q in beyond.values())
    if version == "V4_9_3":
        assert all("GET_MIN_OFFSET/GET_MAX_OFFSET" in q["note"] for q in beyond.values())
    # only the queues beyond the write queues
    r = run(cli, s, "offsets", "reset", "-g", "G", "-t", "T", "--to-offset", "7",
            "--queues", "broker-a:2-3", "--execute", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["summary"] == {"verified": 2}
    assert committed(s) == {0: 5, 1: 5, 2: 7, 3: 7}


def test_offsets_show_has_the_bounds_of_every_readable_queue(cli, sim_factory,
                                                            stats_over_write_queues):
    s = sim_factory(_read_gt_write("V4_9_3"))
    r = run(cli, s, "offsets", "show", "-g", "G", "-t", "T", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert {x["queue_id"]: (x["min"], x["max"], x["current"]) for x in r.json} == {
        q: (0, 600, 590) for q in range(4)}
    reads = [x for x in s.request_log if x.code in (RequestCode.GET_MIN_OFFSET,
                                                    RequestCode.GET_MAX_OFFSET)]
    assert sorted(x.ext_fields["queueId"] for x in reads) == ["2", "3"]  # only where needed
    assert not [x for x in s.request_log if x.code in (UPDATE, ALL_OFFSETS)]
