"""``mqctl groups``, the retry/DLQ section and pop groups in
``group progress``, produce TPS and ``--no-clients``, against the simulated cluster.

Every expected number is read from the simulated brokers and clients (their offsets, stores
and running state), never from the scenario's constants."""

from __future__ import annotations

import asyncio
import csv
import io
import json

import pytest
import yaml
from readonly import assert_read_only

from mqctl.complete import fetch
from mqctl.config import load_settings
from mqctl.models import DLQ_PREFIX, RETRY_PREFIX
from mqctl.remoting.codes import RequestCode, ResponseCode

FORMATS = ["table", "plain", "json", "yaml", "csv"]

SCENARIO = {
    "name": "groups", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
    "topics": [
        {"name": "T", "queues": 4, "rate": 10, "history": "1h"},
        {"name": "N", "queues": 2, "rate": 1, "history": "1h"},
        # a retry topic with messages waiting and a dead-letter topic on one broker
        {"name": "%RETRY%G_RETRY", "queues": 1, "rate": 0, "max_offset": 30},
        {"name": "%DLQ%G_RETRY", "queues": 1, "rate": 0, "max_offset": 7,
         "brokers": ["broker-a"]},
    ],
    "groups": [
        {"name": "G_OK", "topics": ["T"], "consumers": [{"id": "10.1.0.1@1"},
                                                       {"id": "10.1.0.2@2"}]},
        {"name": "G_LAG", "topics": ["T"], "initial_lag": 5000,
         "consumers": [{"id": "10.2.0.1@1", "behaviour": "slow", "rate": 2}]},
        {"name": "G_STOP", "topics": ["T"], "initial_lag": 20,
         "consumers": [{"id": "10.3.0.1@1", "behaviour": "stuck"}]},
        {"name": "G_OFF", "topics": ["T"], "initial_lag": 40},
        {"name": "G_EMPTY", "topics": []},
        {"name": "G_RETRY", "topics": ["T", "%RETRY%G_RETRY"], "initial_lag": 3},
        {"name": "G_POP", "consume_type": "CONSUME_POP", "topics": ["N"],
         "consumers": [{"id": "10.5.0.1@1"}, {"id": "10.5.0.2@2"}]},
        {"name": "G_BC", "model": "BROADCASTING", "topics": ["N"],
         "consumers": [{"id": "10.6.0.1@1"}]},
    ],
}


@pytest.fixture
def gsim(sim_factory):
    s = sim_factory(SCENARIO)
    s.advance(90)
    return s


def run(cli, sim, *args):
    return cli(["-n", sim.namesrv_addr, *args])


def sim_lag(sim, group, *, retry=False):
    """The group's lag from the brokers' own state: max offset - committed offset over the
    write queues of each topic it has offsets for (GET_BROKER_CONSUME_STATS's queues)."""
    def go(c):
        total = 0
        for b in c.brokers.values():
            for (t, g), table in b.offsets.items():
                if g != group or t.startswith(RETRY_PREFIX) != retry:
                    continue
                for q in range(b.topics[t].write):
                    total += max(0, b.max_offset(t, q) - max(0, table.get(q, 0)))
        return total
    return sim.call(go)


def sim_max_time_lag(sim, group):
    """max over the group's lagging queues of now - store time of the message at its committed
    offset (QUERY_CONSUME_TIME_SPAN's delayTime), 0 when none lags."""
    def go(c):
        now = c.clock.now_ms()
        out = 0
        for b in c.brokers.values():
            for (t, g), table in b.offsets.items():
                if g != group or t.startswith(RETRY_PREFIX):
                    continue
                for q in range(b.topics[t].write):
                    co = max(0, table.get(q, 0))
                    if co < b.max_offset(t, q):
                        out = max(out, now - b.msg_store_ts(t, q, co))
        return out
    return sim.call(go)


def sim_lagging_pairs(sim, group):
    def go(c):
        return {(b.name, t) for b in c.brokers.values() for (t, g), table in b.offsets.items()
                if g == group and not t.startswith(RETRY_PREFIX)
                for q in range(b.topics[t].write)
                if max(0, table.get(q, 0)) < b.max_offset(t, q)}
    return sim.call(go)


def sim_dlq(sim, group):
    def go(c):
        return sum(b.max_offset(DLQ_PREFIX + group, q) - b.min_offset(DLQ_PREFIX + group, q)
                   for b in c.brokers.values() if DLQ_PREFIX + group in b.topics
                   for q in range(b.topics[DLQ_PREFIX + group].write))
    return sim.call(go)


def by_group(r):
    return {g["group"]: g for g in r.json["groups"]}


# --------------------------------------------------------------------------- mqctl groups


def test_groups_rows_match_the_brokers_and_clients(cli, gsim):
    gsim.clear_request_log()
    r = run(cli, gsim, "groups", "-o", "json")
    assert r.exit_code == 0, r.stderr
    g = by_group(r)
    assert set(g) == {"G_OK", "G_LAG", "G_STOP", "G_OFF", "G_EMPTY", "G_RETRY", "G_POP",
                      "G_BC"}
    states = {k: v["state"] for k, v in g.items()}
    assert states == {"G_OK": "OK", "G_LAG": "LAGGING", "G_STOP": "STOPPED",
                      "G_OFF": "OFFLINE", "G_EMPTY": "EMPTY", "G_RETRY": "OFFLINE",
                      "G_POP": "OK", "G_BC": "UNKNOWN"}
    for name in ("G_OK", "G_LAG", "G_STOP", "G_OFF", "G_RETRY", "G_POP"):
        assert g[name]["lag"] == sim_lag(gsim, name), name
    assert g["G_LAG"]["lag"] > 1000 and g["G_STOP"]["lag"] > 0
    # members as the brokers list them; offline groups 0, not unknown
    members = gsim.call(lambda c: {n: len(c.brokers["broker-a"].members(n)) for n in g})
    assert {k: v["members"] for k, v in g.items()} == members
    assert g["G_OK"]["consume_type"] == "push" and g["G_POP"]["consume_type"] == "pop"
    assert g["G_OK"]["strategy"] == "AVG" and g["G_OK"]["orderly"] is False
    assert g["G_BC"]["message_model"] == "BROADCASTING" and g["G_BC"]["lag"] is None
    # retry backlog and dead letters from the brokers' stores
    assert g["G_RETRY"]["retry_lag"] == sim_lag(gsim, "G_RETRY", retry=True) > 0
    assert g["G_RETRY"]["dlq_messages"] == sim_dlq(gsim, "G_RETRY") > 0
    assert g["G_OK"]["dlq_messages"] == 0 and g["G_OK"]["dlq_topic"] is None
    # pop inflight: what the pop clients hold unacked
    wait = gsim.call(lambda c: sum(pq.last_batch for cs in c.consumers("G_POP")
                                   for pq in cs.pqs.values()))
    assert g["G_POP"]["inflight"] == wait
    assert g["G_OK"]["inflight"] is None  # 317 has no pullOffset: unknown, not 0
    # the time lag of the lagging group is positive, caught-up queues count 0
    assert g["G_LAG"]["max_time_lag_s"] > 0
    # nothing read (no offset, no member): EMPTY, and its lag and time lag unknown, not 0
    assert g["G_EMPTY"]["lag"] is None and g["G_EMPTY"]["max_time_lag_s"] is None
    assert g["G_BC"]["max_time_lag_s"] is None  # no lag known: no time lag either
    # the maximum is exact even where pairs were skipped by their upper bound
    for name in ("G_LAG", "G_STOP", "G_OFF", "G_OK"):
        assert g[name]["max_time_lag_s"] == round(sim_max_time_lag(gsim, name) / 1000, 3), name
        assert g[name]["time_lag_pairs_asked"] + g[name]["time_lag_pairs_skipped"] == len(
            {(mq_b, t) for mq_b, t in sim_lagging_pairs(gsim, name)})
    # one GET_BROKER_CONSUME_STATS per broker, no per-group GET_CONSUME_STATS
    codes = [x.code for x in gsim.request_log]
    assert codes.count(RequestCode.GET_BROKER_CONSUME_STATS) == 2
    assert RequestCode.GET_CONSUME_STATS not in codes
    assert_read_only(gsim)


@pytest.mark.parametrize("fmt", FORMATS)
def test_groups_every_format(cli, gsim, fmt):
    r = run(cli, gsim, "groups", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    if fmt == "json":
        assert {x["group"] for x in json.loads(r.stdout)["groups"]} >= {"G_OK", "G_LAG"}
    elif fmt == "yaml":
        assert {x["group"] for x in yaml.safe_load(r.stdout)["groups"]} >= {"G_OK", "G_LAG"}
    elif fmt == "csv":
        rows = list(csv.DictReader(io.StringIO(r.stdout)))
        d = {x["group"]: x for x in rows}
        assert d["G_OFF"]["state"] == "OFFLINE"
        assert int(d["G_OFF"]["lag"]) == sim_lag(gsim, "G_OFF")
        assert d["G_BC"]["lag"] == ""  # unknown: empty, not 0
    else:
        assert "G_STOP" in r.stdout and "STOPPED" in r.stdout and "LAGGING" in r.stdout
    assert_read_only(gsim)


def test_groups_filters_and_sort(cli, gsim):
    lag = run(cli, gsim, "groups", "--only-lagging", "--sort", "lag", "-o", "json")
    assert lag.exit_code == 0, lag.stderr
    names = [x["group"] for x in lag.json["groups"]]
    lags = [x["lag"] for x in lag.json["groups"]]
    assert lags == sorted(lags, reverse=True) and all(v > 0 for v in lags)
    assert "G_EMPTY" not in names and "G_BC" not in names and names[0] == "G_LAG"
    m = run(cli, gsim, "groups", "--match", "g_o*", "-o", "json")
    assert sorted(x["group"] for x in m.json["groups"]) == ["G_OFF", "G_OK"]
    m2 = run(cli, gsim, "groups", "--match", "retry", "-o", "json")
    assert [x["group"] for x in m2.json["groups"]] == ["G_RETRY"]
    assert not any(x["group"] == "TOOLS_CONSUMER" for x in m.json["groups"])
    sys_ = run(cli, gsim, "groups", "--include-system", "-o", "json")
    names = {x["group"] for x in sys_.json["groups"]}
    assert {"TOOLS_CONSUMER", "SELF_TEST_C_GROUP", "CID_RMQ_SYS_TRANS"} <= names
    plain = run(cli, gsim, "groups")
    assert "system group(s) hidden" in plain.stdout


def test_groups_no_clients_sends_no_running_info(cli, gsim):
    gsim.clear_request_log()
    r = run(cli, gsim, "groups", "--no-clients", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert RequestCode.GET_CONSUMER_RUNNING_INFO not in {x.code for x in gsim.request_log}
    g = by_group(r)
    assert g["G_OK"]["strategy"] is None and g["G_OK"]["members"] == 2
    assert g["G_POP"]["inflight"] is None
    assert_read_only(gsim)


def test_groups_no_time_lag_sends_no_time_spans(cli, gsim):
    gsim.clear_request_log()
    r = run(cli, gsim, "groups", "--no-time-lag", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert RequestCode.QUERY_CONSUME_TIME_SPAN not in {x.code for x in gsim.request_log}
    g = by_group(r)
    assert g["G_LAG"]["max_time_lag_s"] is None and g["G_LAG"]["state"] == "LAGGING"
    assert g["G_OFF"]["lag"] == sim_lag(gsim, "G_OFF")


def test_groups_partial_and_nothing_read(cli, gsim):
    gsim.call(lambda c: c.faults.error("broker-b", RequestCode.GET_BROKER_CONSUME_STATS,
                                       ResponseCode.SYSTEM_ERROR, "boom"))
    r = run(cli, gsim, "groups", "-o", "json")
    assert r.exit_code == 8, r.stderr
    g = by_group(r)
    # T lives on broker-b too: its groups' lag is unknown, the part read is kept
    assert g["G_LAG"]["lag"] is None and g["G_LAG"]["lag_at_least"] > 0
    assert g["G_LAG"]["state"] == "UNKNOWN" and g["G_LAG"]["not_included"] == ["broker-b"]
    assert g["G_LAG"]["consume_tps"] is None  # broker-b's share unknown: no partial sum
    assert r.json["total"]["brokers_not_included"] == ["broker-b"]
    t = run(cli, gsim, "groups")
    assert t.exit_code == 8 and "not included: broker-b" in t.stdout and ">=" in t.stdout
    for b in ("broker-a", "broker-b"):
        for code in (RequestCode.GET_BROKER_CONSUME_STATS,
                     RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG):
            gsim.call(lambda c, b=b, code=code: c.faults.error(
                b, code, ResponseCode.NO_PERMISSION, "check signature failed."))
    none = run(cli, gsim, "groups")
    assert none.exit_code == 5 and none.stdout == ""
    assert "no broker answered" in none.stderr and "hint:" in none.stderr
    assert "Traceback" not in none.stderr


def test_groups_every_broker_down_is_a_connection_failure(cli, gsim):
    for b in ("broker-a", "broker-b"):
        gsim.call(lambda c, b=b: c.faults.broker_down(b))
    gsim.advance(0.1)
    r = run(cli, gsim, "--timeout", "1", "groups")
    assert r.exit_code == 3, r.stderr
    assert r.stdout == "" and "no broker answered the group tables" in r.stderr
    assert "hint: no broker could be reached" in r.stderr


def test_groups_watch_refreshes(cli, gsim):
    r = run(cli, gsim, "groups", "--watch", "0.1", "--count", "2", "-o", "plain")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.count("# consumer groups") == 2


# ------------------------------------------------------------------ group progress additions


def test_progress_retry_and_dlq_section(cli, gsim):
    r = run(cli, gsim, "group", "progress", "G_RETRY", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert all(not q["topic"].startswith(RETRY_PREFIX) for q in d["queues"])
    assert d["total"]["lag"] == sim_lag(gsim, "G_RETRY")
    retry = [x for x in d["retry"] if x["kind"] == "retry"]
    dlq = [x for x in d["retry"] if x["kind"] == "dlq"]
    assert {x["topic"] for x in retry} == {"%RETRY%G_RETRY"}
    assert sum(x["backlog"] for x in retry) == d["retry_total"]["backlog"] == sim_lag(
        gsim, "G_RETRY", retry=True)
    assert [x["broker"] for x in dlq] == ["broker-a"]
    assert sum(x["backlog"] for x in dlq) == d["retry_total"]["dlq_messages"] == sim_dlq(
        gsim, "G_RETRY")
    t = run(cli, gsim, "group", "progress", "G_RETRY")
    assert "retry and dead-letter" in t.stdout and "dead letters: " in t.stdout
    gsim.clear_request_log()
    off = run(cli, gsim, "group", "progress", "G_RETRY", "--no-retry", "-o", "json")
    assert off.exit_code == 0 and "retry" not in off.json
    asked = [x.ext_fields.get("topic") for x in gsim.request_log
             if x.code == RequestCode.GET_ROUTEINFO_BY_TOPIC and x.ext_fields]
    assert DLQ_PREFIX + "G_RETRY" not in asked
    assert_read_only(gsim)


def _dlq_on_both_brokers(sim_factory):
    """``%DLQ%G_RETRY`` on both brokers, then deleted on broker-b alone: the name server's route
    still names broker-b, which answers GET_TOPIC_STATS_INFO with TOPIC_NOT_EXIST."""
    doc = json.loads(json.dumps(SCENARIO))
    for t in doc["topics"]:
        if t["name"] == DLQ_PREFIX + "G_RETRY":
            t["brokers"] = ["broker-a", "broker-b"]
    s = sim_factory(doc)
    s.advance(30)
    s.call(lambda c: c.delete_topic_in_broker(DLQ_PREFIX + "G_RETRY", "broker-b"))
    return s


def _dlq_asked(sim):
    return [x for x in sim.request_log if x.code == RequestCode.GET_TOPIC_STATS_INFO
            and x.ext_fields.get("topic") == DLQ_PREFIX + "G_RETRY"]


def test_progress_dlq_broker_without_the_topic_holds_none(cli, sim_factory):
    """One DLQ rule for both views (views/dlq.read_dlq_queues): a broker the route names that
    answers TOPIC_NOT_EXIST has no config for the topic, so no dead letter of it: known, not a
    failure (before, ``group progress`` said "dead letters unknown" and exited 8)."""
    s = _dlq_on_both_brokers(sim_factory)
    s.clear_request_log()
    r = run(cli, s, "group", "progress", "G_RETRY", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert len(_dlq_asked(s)) == 2  # broker-b was asked and answered TOPIC_NOT_EXIST
    dlq = [x for x in r.json["retry"] if x["kind"] == "dlq"]
    assert [x["broker"] for x in dlq] == ["broker-a"]
    assert r.json["retry_total"]["dlq_messages"] == sim_dlq(s, "G_RETRY") > 0
    t = run(cli, s, "group", "progress", "G_RETRY")
    assert t.exit_code == 0 and "dead letters unknown" not in t.stdout


def test_groups_dlq_broker_without_the_topic_holds_none(cli, sim_factory):
    s = _dlq_on_both_brokers(sim_factory)
    s.clear_request_log()
    r = run(cli, s, "groups", "-o", "json")
    assert r.exit_code == 0, r.stderr
    assert len(_dlq_asked(s)) == 2
    assert by_group(r)["G_RETRY"]["dlq_messages"] == sim_dlq(s, "G_RETRY") > 0


@pytest.mark.parametrize("view", ["groups", "progress"])
def test_dlq_broker_that_does_not_answer_is_unknown(cli, sim_factory, view):
    """Any other failure of a broker the route names leaves the dead letters unknown (null,
    exit 8) in both views, never 0."""
    s = _dlq_on_both_brokers(sim_factory)
    s.call(lambda c: c.faults.error("broker-a", RequestCode.GET_TOPIC_STATS_INFO,
                                    ResponseCode.SYSTEM_ERROR, "boom"))
    if view == "groups":
        r = run(cli, s, "groups", "-o", "json")
        assert r.exit_code == 8, r.stderr
        assert by_group(r)["G_RETRY"]["dlq_messages"] is None
    else:
        r = run(cli, s, "group", "progress", "G_RETRY", "-o", "json")
        assert r.exit_code == 8, r.stderr
        assert r.json["retry_total"]["dlq_messages"] is None


@pytest.mark.parametrize("fmt", FORMATS)
def test_progress_produce_tps_next_to_consume_tps(cli, gsim, fmt):
    r = run(cli, gsim, "group", "progress", "G_OK", "-o", fmt)
    assert r.exit_code == 0, r.stderr
    put = gsim.call(lambda c: sum(lg.segments[-1].rate for b in c.brokers.values()
                                  for (t, _q), lg in b.logs.items() if t == "T"))
    assert RequestCode.VIEW_BROKER_STATS_DATA not in {x.code for x in gsim.request_log}
    if fmt in ("json", "yaml"):
        d = json.loads(r.stdout) if fmt == "json" else yaml.safe_load(r.stdout)
        topic = d["topics"][0]
        assert topic["produce_tps"] == pytest.approx(put)
        tps = gsim.call(lambda c: sum(cs.consume_tps() for cs in c.consumers("G_OK")))
        assert topic["consume_tps_clients"] == pytest.approx(tps, abs=0.01)
        assert d["produce_tps"] == pytest.approx(put)
    elif fmt == "csv":
        assert "PRODUCE TPS" not in r.stdout  # csv: the queue table, machine keys
    else:
        assert "PRODUCE TPS" in r.stdout and f"produce TPS {put:.2f}" in r.stdout


def test_progress_produce_tps_on_4x_from_the_broker_stats(cli, sim_factory):
    """4.9.3's GET_TOPIC_STATS_INFO has no topicPutTps: the TOPIC_PUT_NUMS stats item
    (VIEW_BROKER_STATS_DATA, as mqadmin statsAll) gives it; 5.3.3 needs no extra request."""
    doc = json.loads(json.dumps(SCENARIO))
    for b in doc["brokers"]:
        b["version"] = "V4_9_3"
    s = sim_factory(doc)
    s.advance(30)
    s.clear_request_log()
    r = run(cli, s, "group", "progress", "G_OK", "-o", "json")
    assert r.exit_code == 0, r.stderr
    put = s.call(lambda c: sum(lg.segments[-1].rate for b in c.brokers.values()
                               for (t, _q), lg in b.logs.items() if t == "T"))
    assert r.json["topics"][0]["produce_tps"] == pytest.approx(put)
    asked = [x for x in s.request_log if x.code == RequestCode.VIEW_BROKER_STATS_DATA]
    assert len(asked) == 2 and {x.ext_fields["statsName"] for x in asked} == {"TOPIC_PUT_NUMS"}
    t = run(cli, s, "group", "progress", "G_OK")
    assert f"produce TPS {put:.2f}" in t.stdout
    # groups on 4.9.3 brokers (no pullOffset in 317, no CID_RMQ_SYS_TRANS system group)
    g = run(cli, s, "groups", "--include-system", "-o", "json")
    assert g.exit_code == 0, g.stderr
    rows = by_group(g)
    assert "CID_RMQ_SYS_TRANS" not in rows and "TOOLS_CONSUMER" in rows
    for name in ("G_OK", "G_LAG", "G_OFF", "G_RETRY"):
        assert rows[name]["lag"] == sim_lag(s, name), name
    assert rows["G_RETRY"]["dlq_messages"] == sim_dlq(s, "G_RETRY")


def test_progress_no_clients_sends_no_running_info(cli, gsim):
    gsim.clear_request_log()
    r = run(cli, gsim, "group", "progress", "G_OK", "--no-clients", "-o", "json")
    assert r.exit_code == 0, r.stderr
    codes = {x.code for x in gsim.request_log}
    assert RequestCode.GET_CONSUMER_RUNNING_INFO not in codes
    assert RequestCode.GET_CONSUMER_CONNECTION_LIST in codes  # membership is still read
    assert r.json["online"] is True and r.json["running_info_asked"] is False
    assert all(q["owner"] is None for q in r.json["queues"])
    assert all(t["unowned"] is None for t in r.json["topics"])  # unknown, not "all"
    assert r.json["total"]["lag"] == sim_lag(gsim, "G_OK")
    w = run(cli, gsim, "group", "progress", "G_OK", "--no-clients", "--watch", "0.1",
            "--count", "2", "-o", "plain")
    assert w.exit_code == 0 and w.stdout.count("# progress of G_OK") == 2
    assert RequestCode.GET_CONSUMER_RUNNING_INFO not in {x.code for x in gsim.request_log}
    assert_read_only(gsim)


def test_progress_pop_group_has_no_owners_and_shows_inflight(cli, gsim):
    r = run(cli, gsim, "group", "progress", "G_POP", "-o", "json")
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["pop"] is True
    # a 5.3.3 pop client keys waitAckCount per broker (queue id -1), so
    # per queue it is unknown, never 0; per broker and in all it is what the clients hold
    wait = gsim.call(lambda c: {mq.broker_name: sum(
        pq.last_batch for cs in c.consumers("G_POP") for m, pq in cs.pqs.items()
        if m.broker_name == mq.broker_name) for cs in c.consumers("G_POP") for mq in cs.pqs})
    assert sum(wait.values()) > 0
    assert all(q["inflight"] is None for q in d["queues"])
    assert {x["broker"]: x["inflight"] for x in d["pop_inflight"]} == wait
    assert d["total"]["pop_inflight"] == sum(wait.values())
    assert d["topics"][0]["pop_inflight"] == sum(wait.values())
    # `groups` at the same moment says the same (the clock stands still between the two)
    g = run(cli, gsim, "groups", "--match", "G_POP", "-o", "json").json["groups"][0]
    assert g["inflight"] == d["total"]["pop_inflight"]
    assert all(q["owner"] is None for q in d["queues"])
    assert all(t["unowned"] is None for t in d["topics"])
    t = run(cli, gsim, "group", "progress", "G_POP")
    assert "pop: no queue owners" in t.stdout and "UNOWNED" in t.stdout
    c = run(cli, gsim, "consumers", "G_POP", "-o", "json")
    ids = gsim.call(lambda cl: sorted(ch.client_id for ch in cl.brokers["broker-a"].members(
        "G_POP")))
    assert sorted(x["client_id"] for x in c.json["clients"]) == ids
    assert any(f["check"] == "pop" for f in c.json["findings"])


def test_max_time_lag_skips_pairs_bounded_below_it_and_stays_exact(cli, sim_factory):
    """SLOW's queues are 50 messages behind at 1 msg/s (50 s), FAST's 50 behind at 100 msg/s
    (0.5 s): once a SLOW pair answered, the FAST pairs' bound (now - lastTimestamp) is below
    the maximum and they are not asked; the maximum is the exact one."""
    s = sim_factory({
        "name": "bounds", "clock": {"mode": "manual"},
        "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
        "topics": [{"name": "SLOW", "queues": 2, "rate": 1, "history": "1h"},
                   {"name": "FAST", "queues": 2, "rate": 100, "history": "1h"}],
        "groups": [{"name": "G", "topics": ["SLOW", "FAST"], "initial_lag": 50}]})
    s.advance(5)
    s.clear_request_log()
    r = run(cli, s, "groups", "-o", "json")
    assert r.exit_code == 0, r.stderr
    g = by_group(r)["G"]
    assert g["max_time_lag_s"] == round(sim_max_time_lag(s, "G") / 1000, 3)
    assert g["time_lag_pairs_skipped"] > 0
    asked = [x.ext_fields.get("topic") for x in s.request_log
             if x.code == RequestCode.QUERY_CONSUME_TIME_SPAN]
    assert len(asked) == g["time_lag_pairs_asked"] < len(sim_lagging_pairs(s, "G"))
    assert "FAST" not in asked[:1]


def test_one_system_group_rule_for_groups_topic_consumers_and_completion(cli, sim_factory):
    """``groups``, ``topic consumers`` and completion hide the same groups: MixAll's predefined
    groups and the CID_RMQ_SYS_ prefix (mqctl.models.is_system_group). Before, ``groups`` hid a
    user's CID_SYS_RMQ_* group (a Java constant's name, not a group) and showed
    SCHEDULE_CONSUMER, and ``topic consumers`` showed CLIENT_INNER_PRODUCER."""
    system = {"SCHEDULE_CONSUMER", "CLIENT_INNER_PRODUCER", "CID_RMQ_SYS_X"}
    users = {"G_USER", "CID_SYS_RMQ_APP"}
    doc = {"name": "sysgroups", "clock": {"mode": "manual"},
           "brokers": [{"name": "broker-a"}],
           "topics": [{"name": "T", "queues": 2, "rate": 1, "history": "10m"}],
           "groups": [{"name": g, "topics": ["T"], "initial_lag": 3}
                      for g in sorted(system | users)]}
    s = sim_factory(doc)
    s.advance(5)
    g = run(cli, s, "groups", "-o", "json")
    assert g.exit_code == 0, g.stderr
    assert set(by_group(g)) == users
    tc = run(cli, s, "topic", "consumers", "T", "-o", "json")
    assert tc.exit_code == 0, tc.stderr
    assert {x["group"] for x in tc.json["groups"]} == users
    assert set(tc.json["hiddenSystemGroups"]) == system
    every = run(cli, s, "groups", "--include-system", "-o", "json")
    assert system | users <= set(by_group(every))

    _topics, names = asyncio.run(fetch(load_settings(flags={"namesrv": s.namesrv_addr},
                                                     env={}), 10.0))
    kinds = {n["name"]: n["kind"] for n in names or []}
    assert {n for n in system | users if kinds[n] == "system"} == system
