"""Views against the simulated cluster: a group whose offsets
exist on one broker only (the scenario key ``offsets_on``), queues without a committed
offset shown as ``none`` in every view, a group that exists but never consumed, and INFLIGHT
on a queue no client holds.

Real 4.9.3 / 5.3.3 behind it (../shared/samples/real, README there): a broker that holds no
offset of a group answers GET_CONSUME_STATS without a topic with an empty table
(``never-committed/208_getConsumeStats_NC_NEVER_no_topic.broker-a.json``) and with the topic
lists the topic's read queues with consumerOffset 0 (``never-committed/208_*``);
QUERY_CONSUMER_OFFSET on such a queue answers 0 on 4.9.3 and QUERY_NOT_FOUND on 5.3.3
(``never-committed/14_*``). Every expected number is read from the simulated brokers."""

from __future__ import annotations

import json

import pytest
from readonly import assert_read_only

from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode

VERSIONS = ["V4_9_3", "V5_3_3"]


def scenario(version: str) -> dict:
    """mqctl/sim/scenarios/partial-offsets.yaml, with brokers of ``version`` and a manual
    clock."""
    return {
        "name": "partial-offsets", "clock": {"mode": "manual"},
        "brokers": [{"name": "broker-a", "version": version},
                    {"name": "broker-b", "version": version}],
        "topics": [{"name": "T", "queues": 4, "rate": 1, "history": "30m"}],
        "groups": [{"name": "X", "topics": ["T"], "offsets_on": ["broker-a:0"]},
                   {"name": "NC_NEVER", "topics": ["T"], "offsets_on": []},
                   {"name": "G_LIVE", "topics": ["T"], "consumers": [{"id": "10.0.9.1@1"}]}],
    }


@pytest.fixture(params=VERSIONS)
def psim(request, sim_factory):
    s = sim_factory(scenario(request.param))
    s.advance(20)
    return s


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def truth(sim, group, topic="T"):
    """{(broker, qid): (max offset, committed or None)} as the simulated brokers hold it."""
    def read(c):
        return {(b, q): (c.brokers[b].max_offset(topic, q), c.brokers[b].committed(group, topic, q))
                for b in ("broker-a", "broker-b") for q in range(4)}
    return sim.call(read)


def test_the_bundled_scenario_has_offsets_on_one_broker_only(sim_factory):
    """The premise, as on real 4.9.3: broker-b holds no offset of X and answers
    GET_CONSUME_STATS without a topic as the real broker does for a group it holds no offset
    of (an empty table), with the topic it lists T's queues."""
    from mqctl.sim.scenario import load_scenario

    sc = load_scenario("partial-offsets")
    assert {g.name: g.offsets_on for g in sc.groups}["X"] == {"broker-a": frozenset({0})}
    s = sim_factory("partial-offsets", clock="manual")
    t = truth(s, "X")
    assert [k for k, (_mx, co) in t.items() if co is not None] == [("broker-a", 0)]
    from mqctl.remoting.client import ClientOptions, RemotingClient

    async def ask(topic):
        async with RemotingClient(ClientOptions(timeout=3)) as c:
            ext = {"consumerGroup": "X", **({"topic": topic} if topic else {})}
            return await c.invoke(s.cluster.servers["broker-b"].addr,
                                  RequestCode.GET_CONSUME_STATS, ext)

    import asyncio

    empty = fastjson.loads(asyncio.run(ask(None)).body)
    from conftest import REAL_CORPUS

    real = json.loads((REAL_CORPUS / "4.9.3/never-committed/"
                       "208_getConsumeStats_NC_NEVER_no_topic.broker-a.json").read_text())
    assert empty == fastjson.loads(real["response"]["body_text"].encode()) == {
        "consumeTps": 0.0, "offsetTable": {}}
    assert len(fastjson.loads(asyncio.run(ask("T")).body)["offsetTable"]) == 4


def test_group_progress_covers_the_broker_without_offsets(cli, psim):
    """`group progress X` listed broker-a's 4 queues, QUEUES 4, `complete: true`.
    Now every readable queue of T on both brokers, broker-b's (and broker-a's uncommitted
    ones) as none; the totals count all 8."""
    psim.clear_request_log()
    r = run(cli, psim, "group", "progress", "X", "-o", "json")
    assert r.exit_code == 0, r.stderr
    t = truth(psim, "X")
    rows = {(q["broker"], q["queue_id"]): q for q in r.json["queues"]}
    assert sorted(rows) == sorted(t)
    for k, (mx, co) in t.items():
        assert rows[k]["consumer_offset"] == co, k
        assert rows[k]["committed"] is (co is not None), k
        assert rows[k]["lag"] == mx - (co or 0), k
    total = r.json["total"]
    assert total["queues"] == 8 and total["complete"] is True
    assert total["brokers_not_included"] == [] and total["topics_not_covered"] == {}
    assert total["lag"] == sum(mx - (co or 0) for mx, co in t.values())
    assert total["no_offset_queues"] == 7
    # broker-b was asked with the topic once its answer without one came back empty
    asked = [(x.ext_fields.get("topic")) for x in psim.request_log
             if x.code == RequestCode.GET_CONSUME_STATS]
    assert "T" in asked and None in asked
    assert_read_only(psim)
    text = run(cli, psim, "group", "progress", "X", "-o", "plain").stdout
    assert "7 queue(s) have no committed offset for X (CONSUMER OFFSET none" in text
    assert "consumeFromWhere" in text
    assert text.count(" none ") >= 7


def test_offsets_show_says_none_and_covers_every_broker(cli, psim):
    t = truth(psim, "X")
    for args in ([], ["-t", "T"]):
        r = run(cli, psim, "offsets", "show", "-g", "X", *args, "-o", "json")
        assert r.exit_code == 0, r.stderr
        got = {(x["broker"], x["queue_id"]): x["current"] for x in r.json["queues"]}
        assert got == {k: co for k, (_mx, co) in t.items()}, args
    text = run(cli, psim, "offsets", "show", "-g", "X", "-o", "plain").stdout
    assert "8 queue(s)" in text and "7 queue(s) have no committed offset" in text
    assert "CURRENT none" in text


def test_groups_counts_the_same_queues_and_says_none(cli, psim):
    r = run(cli, psim, "groups", "-o", "json")
    assert r.exit_code == 0, r.stderr
    g = {x["group"]: x for x in r.json["groups"]}
    t = truth(psim, "X")
    assert g["X"]["queues"] == 8 and g["X"]["state"] == "OFFLINE"
    assert g["X"]["lag"] == sum(mx - (co or 0) for mx, co in t.values())
    assert g["X"]["no_offset_queues"] == 7
    assert g["X"]["lag_cell"].endswith("(7 none)")
    # the same figures as group progress at the same moment
    p = run(cli, psim, "group", "progress", "X", "-o", "json").json["total"]
    assert (p["queues"], p["lag"], p["no_offset_queues"]) == (
        g["X"]["queues"], g["X"]["lag"], g["X"]["no_offset_queues"])
    # exists, never consumed, no member: EMPTY, its lag unknown (nothing read), not 0
    assert g["NC_NEVER"]["state"] == "EMPTY"
    assert g["NC_NEVER"]["lag"] is None and g["NC_NEVER"]["lag_cell"] == "-"
    assert g["G_LIVE"]["no_offset_queues"] == 0
    assert_read_only(psim)


def test_group_progress_of_a_group_that_never_consumed_is_not_lag_0(cli, psim):
    """`total lag 0 message(s), max time lag 0ms ... no offsets found`: nothing read
    makes it 0."""
    r = run(cli, psim, "group", "progress", "NC_NEVER", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["queues"] == []
    assert r.json["total"]["lag"] is None and r.json["total"]["max_time_lag_s"] is None
    text = run(cli, psim, "group", "progress", "NC_NEVER", "-o", "plain").stdout
    assert "total lag 0" not in text and "max time lag 0" not in text
    assert "group NC_NEVER: lag unknown: no queue was read" in text
    assert "no offsets found for group NC_NEVER (group is offline)" in text


def test_snapshot_rows_cover_every_broker_with_none(cli, psim, tmp_path):
    r = run(cli, psim, "snapshot", "--out", str(tmp_path), "-g", "X", "--compress", "none")
    assert r.exit_code == 0, r.stderr
    (f,) = [p for p in tmp_path.rglob("*.jsonl")]
    rows = [json.loads(x) for x in f.read_text().splitlines()]
    got = {(x["broker"], x["queue_id"]): (x["consumer_offset"], x["committed"]) for x in rows
           if x["topic"] == "T"}
    t = truth(psim, "X")
    assert got == {k: (co, co is not None) for k, (_mx, co) in t.items()}


def test_inflight_of_a_queue_no_client_holds_is_0_not_the_pull_distance(cli, sim_factory):
    """a 5.x broker's pullOffset stays where the last owner pulled (real 5.3.3:
    INFLIGHT 404/403 where a short-lived owner pulled at the max offset and left). Once no
    client holds the queue, `pullOffset - consumerOffset` is not in flight. The simulated
    consumers pull from their consumed position, so the departed owner's pull at the max
    offset is written into the broker's pull offset table directly."""
    s = sim_factory({
        "name": "left", "clock": {"mode": "manual"},
        "brokers": [{"name": "broker-a", "version": "V5_3_3"}],
        "topics": [{"name": "T", "queues": 2, "rate": 5, "history": "10m"}],
        "groups": [{"name": "G", "topics": ["T"], "initial_lag": 400}]})
    s.advance(5)

    def pulled_at_max(c):
        b = c.brokers["broker-a"]
        for q in range(2):
            b.pulls[("G", "T", q)] = b.max_offset("T", q)
        return {q: b.max_offset("T", q) - b.committed("G", "T", q) for q in range(2)}

    distance = s.call(pulled_at_max)
    assert min(distance.values()) >= 400  # what INFLIGHT said before
    r = run(cli, s, "group", "progress", "G", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert r.json["online"] is False
    for q in r.json["queues"]:
        assert q["inflight"] == 0 and q["inflight_source"] == "no-owner", q
    text = run(cli, s, "group", "progress", "G", "-o", "plain").stdout
    assert "0 (no owner)" in text and "a former owner pulled and never committed" in text


def test_groups_coverage_falls_back_to_routes_when_a_topic_table_fails(cli, psim):
    """`groups` learns which brokers host a topic from each master's GET_ALL_TOPIC_CONFIG (one
    request per master, not a route per topic); where one does not answer, the route says it:
    X still counts 8 queues, nothing is left out."""
    psim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_ALL_TOPIC_CONFIG, 1,
                                       remark="busy"))
    psim.clear_request_log()
    r = run(cli, psim, "groups", "-o", "json")
    assert r.exit_code == 0, r.stderr
    g = {x["group"]: x for x in r.json["groups"]}
    assert g["X"]["queues"] == 8 and g["X"]["no_offset_queues"] == 7
    assert g["X"]["topics_not_covered"] == {}
    codes = [x.code for x in psim.request_log]
    assert codes.count(RequestCode.GET_ALL_TOPIC_CONFIG) == 2
    assert RequestCode.GET_ROUTEINFO_BY_TOPIC in codes
