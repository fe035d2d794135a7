"""`mqctl topic status` and `mqctl topic consumers` against the sim (4.9.3
and 5.3.3 brokers) and the real corpus's GET_TOPIC_STATS_INFO answers."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime

import pytest
import yaml
from conftest import REAL_CORPUS
from readonly import assert_read_only
from wire_capture_helpers import assert_clean_error

from mqctl.models import TopicStats
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode as C

FORMATS = ["table", "plain", "json", "yaml", "csv"]

SCENARIO = {
    "name": "topics", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                {"name": "broker-b", "version": "V5_3_3"}],
    "topics": [{"name": "RW_T", "read_queues": 4, "write_queues": 2, "rate": 2.0,
                "history": "10m"},
               {"name": "EMPTY_T", "queues": 2, "rate": 0.0, "history": "0s"}],
    "groups": [{"name": "RW_G", "topics": ["RW_T"], "initial_lag": 7,
                "consumers": [{"id": "10.9.0.1@1"}]},
               {"name": "OFF_G", "topics": ["RW_T"], "initial_lag": 30}],
}


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


@pytest.fixture
def tsim(sim_factory):
    s = sim_factory(SCENARIO)
    s.advance(3)
    return s


@pytest.mark.parametrize("fmt", FORMATS)
def test_topic_status_every_format(cli, sim, fmt):
    sim.advance(5)
    sim.clear_request_log()
    r = run(cli, sim, "topic", "status", "TopicPay", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    b = sim.cluster.brokers["broker-a"]
    mx = sim.call(lambda c: c.brokers["broker-a"].max_offset("TopicPay", 2))
    last = sim.call(lambda c: c.brokers["broker-a"].msg_store_ts("TopicPay", 2, mx - 1))
    if fmt == "json":
        rows = {(q["broker"], q["queue_id"]): q for q in r.json["queues"]}
        assert sorted(rows) == [(x, i) for x in ("broker-a", "broker-b") for i in range(4)]
        q = rows[("broker-a", 2)]
        assert (q["min_offset"], q["max_offset"], q["messages"]) == (
            b.min_offset("TopicPay", 2), mx, mx - b.min_offset("TopicPay", 2))
        assert q["last_update_ts"] == last and q["last_update_time"].endswith("Z")
        assert r.json["total"]["messages"] == sum(x["messages"] for x in rows.values())
        assert r.json["putTps"] is not None  # 5.3.3 brokers report topicPutTps
    elif fmt == "yaml":
        assert yaml.safe_load(r.stdout)["topic"] == "TopicPay"
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        row = next(x for x in rows if (x["broker"], x["queue_id"]) == ("broker-a", "2"))
        assert int(row["max_offset"]) == mx and row["last_update_time"].endswith("Z")
    else:
        assert "LAST UPDATED" in r.stdout and "put TPS" in r.stdout
    assert {x.code for x in sim.request_log} >= {C.GET_TOPIC_STATS_INFO}
    assert_read_only(sim)


def test_topic_status_4_9_3_read_only_queues_and_empty_queues(cli, tsim):
    r = run(cli, tsim, "topic", "status", "RW_T", "-o", "json")
    assert r.exit_code == 0, r.stderr
    rows = {(q["broker"], q["queue_id"]): q for q in r.json["queues"]}
    # every readable queue, on both versions (4.9.3's stats leave out queues 2-3)
    assert sorted(rows) == [(b, i) for b in ("broker-a", "broker-b") for i in range(4)]
    for i in (2, 3):
        a = rows[("broker-a", i)]
        assert a["last_update_ts"] is None and a["last_update_unknown"] == "not-reported"
        assert a["perm"] == "r-" and a["max_offset"] == tsim.call(
            lambda c, i=i: c.brokers["broker-a"].max_offset("RW_T", i))
        assert rows[("broker-b", i)]["last_update_ts"] is not None  # 5.3.3 reports them
    assert rows[("broker-a", 0)]["perm"] == "rw"
    asked = [x for x in tsim.request_log if x.code == C.GET_MIN_OFFSET and x.server == "broker-a"]
    assert len(asked) == 2
    # only 5.3.3 reports topicPutTps: the total is broker-b's (4.9.3 adds nothing), not 0
    assert r.json["putTps"] == pytest.approx(4.0)
    r = run(cli, tsim, "topic", "status", "EMPTY_T", "-o", "json")
    assert r.exit_code == 0
    assert all(q["last_update_ts"] is None and q["last_update_unknown"] == "empty"
               for q in r.json["queues"])
    r = run(cli, tsim, "topic", "status", "EMPTY_T", "-o", "plain")
    assert "LAST UPDATED `-` on 4 empty queue(s)" in r.stdout
    assert_read_only(tsim)


def test_topic_status_unknown_topic_and_broker_down(cli, tsim):
    assert_clean_error(run(cli, tsim, "topic", "status", "NoSuch"), 2, "has no route")
    tsim.call(lambda c: c.faults.broker_down("broker-a"))
    tsim.advance(0.1)
    r = run(cli, tsim, "--timeout", "1", "topic", "status", "RW_T", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert {q["broker"] for q in r.json["queues"]} == {"broker-b"}
    assert r.json["total"]["brokers_not_included"] == ["broker-a"]
    assert not r.json["total"]["complete"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_topic_consumers_every_format(cli, tsim, fmt):
    r = run(cli, tsim, "topic", "consumers", "RW_T", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    if fmt == "json":
        g = {x["group"]: x for x in r.json["groups"]}
        assert set(g) == {"RW_G", "OFF_G"}
        # the lag is the group's own computed total, read back from the brokers
        lag = tsim.call(lambda c: sum(
            c.brokers[b].max_offset("RW_T", q) - (c.brokers[b].committed("OFF_G", "RW_T", q)
                                                  or 0)
            for b in ("broker-a", "broker-b") for q in range(4)))
        assert g["OFF_G"]["lag"] == lag and g["OFF_G"]["queues"] == 8
        assert g["OFF_G"]["online"] is False and g["OFF_G"]["members"] == 0
        assert g["RW_G"]["online"] is True and g["RW_G"]["members"] == 1
        assert g["RW_G"]["subscription"] == "*" and g["RW_G"]["message_model"] == "CLUSTERING"
        assert g["RW_G"]["listed_by"] == ["broker-a", "broker-b"]
    elif fmt == "yaml":
        assert {x["group"] for x in yaml.safe_load(r.stdout)["groups"]} == {"RW_G", "OFF_G"}
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        assert {x["group"] for x in rows} == {"RW_G", "OFF_G"}
        assert next(x for x in rows if x["group"] == "OFF_G")["online"] == "false"
    else:
        assert "OFF_G" in r.stdout and "offline" in r.stdout
    assert_read_only(tsim)


def test_topic_consumers_lag_unknown_when_not_read(cli, tsim):
    tsim.call(lambda c: c.faults.broker_down("broker-b"))
    tsim.advance(0.1)
    r = run(cli, tsim, "--timeout", "1", "topic", "consumers", "RW_T", "-o", "json")
    assert r.exit_code == 8, r.stderr
    assert r.json["brokers_not_included"] == ["broker-b"]
    g = {x["group"]: x for x in r.json["groups"]}
    assert g["OFF_G"]["lag_not_included"] == ["broker-b"] and g["OFF_G"]["queues"] == 4
    tsim.call(lambda c: c.faults.broker_down("broker-a"))
    tsim.advance(0.1)
    r = run(cli, tsim, "--timeout", "1", "topic", "consumers", "RW_T")
    assert r.exit_code in (3, 5) and "no broker answered" in r.stderr


def test_topic_consumers_hides_system_groups_unless_asked(cli, tsim):
    tsim.call(lambda c: c.brokers["broker-a"].offsets.setdefault(("RW_T", "TOOLS_CONSUMER"),
                                                                 {0: 1}))
    r = run(cli, tsim, "topic", "consumers", "RW_T", "-o", "json")
    assert "TOOLS_CONSUMER" not in {x["group"] for x in r.json["groups"]}
    assert r.json["hiddenSystemGroups"] == ["TOOLS_CONSUMER"]
    r = run(cli, tsim, "topic", "consumers", "RW_T", "--include-system", "-o", "json")
    g = {x["group"]: x for x in r.json["groups"]}
    assert g["TOOLS_CONSUMER"]["system"] is True and g["TOOLS_CONSUMER"]["listed_by"] == [
        "broker-a"]


@pytest.mark.parametrize("version", ["4.9.3", "5.3.3"])
def test_real_topic_stats_answers_parse_as_mqadmin_prints_them(version):
    """202 of the real corpus: the offsets mqctl reads are the ones mqadmin topicStatus
    printed from the same broker (read-gt-write, broker-a rows)."""
    base = REAL_CORPUS / version / "read-gt-write"
    ex = json.loads((base / "202_getTopicStatsInfo_RW_T.broker-a.json").read_text())
    body = fastjson.loads(bytes.fromhex(ex["response"]["body_hex"]))
    stats = TopicStats.from_body(body)
    printed = {}
    for line in (base / "mqadmin_topicStatus_RW_T.txt").read_text().splitlines()[2:]:
        parts = line.split()
        if len(parts) >= 6 and parts[0] == "broker-a":
            # #Last Updated: UtilAll.formatDate(lastUpdateTimestamp), local time = UTC there
            when = datetime.strptime(f"{parts[4]} {parts[5]}", "%Y-%m-%d %H:%M:%S,%f")
            ms = int(when.replace(tzinfo=UTC).timestamp() * 1000)
            printed[int(parts[1])] = (int(parts[2]), int(parts[3]), ms)
    got = {mq.queue_id: (o.min_offset, o.max_offset, o.last_update_timestamp)
           for mq, o in stats.offsets.items()}
    assert got == printed
    # 4.9.3 reports the 2 write queues only, 5.3.3 all 4 read queues and topicPutTps
    assert len(got) == (2 if version == "4.9.3" else 4)
    assert ("topicPutTps" in body) == (version == "5.3.3")
    assert all(o.last_update_timestamp > 0 for o in stats.offsets.values())


def _news_493(sim_factory):
    """The demo's TopicNews groups (BROADCASTING, pop) on 4.9.3 brokers, whose
    QUERY_TOPIC_CONSUME_BY_WHO names the online groups subscribed to the topic."""
    s = sim_factory({
        "name": "news-493", "clock": {"mode": "manual"},
        "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                    {"name": "broker-b", "version": "V4_9_3"}],
        "topics": [{"name": "TopicNews", "queues": 2, "rate": 1, "history": "10m"}],
        "groups": [{"name": "GID_NEWS", "model": "BROADCASTING", "topics": ["TopicNews"],
                    "consumers": [{"id": "10.0.6.61@1"}, {"id": "10.0.6.62@2"}]},
                   {"name": "GID_PULL", "topics": ["TopicNews"],
                    "consumers": [{"id": "10.0.7.71@1"}]}]})
    s.advance(5)
    return s


def test_topic_consumers_broadcasting_lag_is_unknown(cli, sim_factory):
    s = _news_493(sim_factory)
    r = run(cli, s, "topic", "consumers", "TopicNews", "-o", "json")
    assert r.exit_code == 0, r.stderr
    g = {x["group"]: x for x in r.json["groups"]}
    assert g["GID_NEWS"]["message_model"] == "BROADCASTING"
    assert g["GID_NEWS"]["lag"] is None and g["GID_NEWS"]["lag_unknown"] == "broadcasting"
    assert g["GID_PULL"]["lag"] is not None and g["GID_PULL"]["lag_unknown"] is None
    r = run(cli, s, "topic", "consumers", "TopicNews", "-o", "plain")
    assert "LAG `-` for BROADCASTING groups" in r.stdout


def test_topic_consumers_drops_the_topic_name_5_3_3_lists_as_a_group(cli, sim):
    """real 5.3.3 answers QUERY_TOPIC_CONSUME_BY_WHO with
    {"groupList":["G","T"]}: ConsumerManager.registerConsumer puts the subscribed topic's own
    name into topicGroupTable (apache/rocketmq#9352). The demo's brokers are 5.3.3: the topic
    name is dropped with the reason, real groups (config or offsets) pass on; the online
    BROADCASTING group, which commits nothing, is not listed by such a broker at all."""
    raw = sim.call(lambda c: [sorted(c.brokers[b].topic_groups.get("TopicNews", ()))
                              for b in ("broker-a", "broker-b")])
    assert raw == [["TopicNews"], ["TopicNews"]]  # what the sim's 5.3.3 broker keeps
    r = run(cli, sim, "topic", "consumers", "TopicNews", "-o", "json")
    assert r.exit_code == 0, r.stderr
    names = [g["group"] for g in r.json["groups"]]
    assert "TopicNews" not in names and "GID_POP" in names  # GID_POP: committed offsets
    assert [d["name"] for d in r.json["dropped"]] == ["TopicNews"]
    assert r.json["dropped"][0]["listed_by"] == ["broker-a", "broker-b"]
    assert "no committed offset on TopicNews" in r.json["dropped"][0]["reason"]
    t = run(cli, sim, "topic", "consumers", "TopicNews", "-o", "plain")
    assert "dropped TopicNews (listed by broker-a, broker-b): not a group" in t.stdout
    assert "is not listed" in t.stdout
    assert_read_only(sim)


@pytest.mark.parametrize("args", [("topic", "status", "TopicPay"),
                                  ("topic", "consumers", "TopicPay"),
                                  ("group", "config", "GID_PAY"),
                                  ("message", "show", "-t", "TopicPay", "-b", "broker-a", "-q",
                                   "0", "--offset", "1")], ids=lambda a: " ".join(a[:2]))
def test_every_broker_refusing_is_exit_5_not_an_empty_answer(cli, sim, args):
    for b in ("broker-a", "broker-b"):
        sim.call(lambda c, b=b: c.faults.error(b, None, 16, remark="check signature failed."))
    r = run(cli, sim, *args, "-o", "json")
    assert r.exit_code == 5, (r.stdout, r.stderr)
    assert r.stdout == "" and "Traceback" not in r.stderr
    assert "NO_PERMISSION" in r.stderr and "hint:" in r.stderr


def test_topic_consumers_keeps_an_unproven_name_and_says_why(cli, sim):
    """Where a broker's subscription group table does not answer, a listed name without a
    committed offset cannot be proven a group or not: it stays, with a note, and the exit is
    8 (partial), never a silent drop."""
    sim.call(lambda c: c.faults.error("broker-a", C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, 1,
                                      remark="busy"))
    r = run(cli, sim, "topic", "consumers", "TopicNews", "-o", "json")
    assert r.exit_code == 8, r.stderr
    g = {x["group"]: x for x in r.json["groups"]}
    assert "broker-a did not" in g["TopicNews"]["unverified"]
    assert r.json["dropped"] == [] and g["GID_POP"]["unverified"] is None
