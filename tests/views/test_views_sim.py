"""Views against the simulated cluster with 4.9.3 brokers (which,
like the real ones, send no pullOffset and report topic stats and time spans over the write
queues only) and clients that run AVG_BY_CIRCLE or disagree on the strategy."""

from __future__ import annotations

import pytest

from mqctl.models import MessageQueue
from mqctl.remoting.codes import MUTATING_REQUESTS, RequestCode

SCENARIO = {
    "name": "views-493", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                {"name": "broker-b", "version": "V4_9_3"}],
    "topics": [{"name": "RW_T", "read_queues": 4, "write_queues": 2, "rate": 2.0},
               {"name": "CI_T", "queues": 4, "rate": 1.0}],
    "groups": [
        {"name": "RW_G", "topics": ["RW_T"], "initial_lag": 5,
         "consumers": [{"id": "10.9.0.1@1"}]},
        {"name": "CI_G", "topics": ["CI_T"], "strategy": "AVG_BY_CIRCLE",
         "consumers": [{"id": "10.9.1.1@1"}, {"id": "10.9.1.2@2"}, {"id": "10.9.1.3@3"}]},
        {"name": "MX_G", "topics": ["CI_T"],
         "consumers": [{"id": "10.9.2.1@1"}, {"id": "10.9.2.2@2"},
                       {"id": "10.9.2.3@3", "strategy": "AVG_BY_CIRCLE"}]},
    ],
}


@pytest.fixture
def s493(sim_factory):
    s = sim_factory(SCENARIO)
    s.advance(30)
    return s


def owned(sim, cid, topic):
    return {m for m in sim.call(lambda c: list(c.consumer(cid).pqs)) if m.topic == topic}


def test_progress_lists_every_readable_queue_with_unknowns_said(cli, s493):
    r = cli(["-n", s493.namesrv_addr, "group", "progress", "RW_G", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    rows = {(q["broker"], q["queue_id"]): q for q in r.json["queues"]}
    assert sorted(rows) == [(b, i) for b in ("broker-a", "broker-b") for i in range(4)]
    # GET_MIN_OFFSET only for the read-only queues 2-3 of each broker
    asked = [x for x in s493.request_log if x.code == RequestCode.GET_MIN_OFFSET]
    assert len(asked) == 4
    assert all(rows[(b, i)]["min_offset"] is not None for (b, i) in rows)
    for (_b, i), q in rows.items():
        if q["lag"] > 0 and i >= 2:
            assert q["time_lag"] == "-" and q["time_lag_unknown"] == "not-reported"
        # no pullOffset from a 4.9.3 broker: the owner's cache, marked client
        assert q["inflight_source"] in ("client", None)
        assert q["inflight_source"] != "broker"
    assert not {x.code for x in s493.request_log} & set(MUTATING_REQUESTS)


def test_allocate_live_uses_avg_by_circle_the_clients_run(cli, s493):
    r = cli(["-n", s493.namesrv_addr, "allocate", "-g", "CI_G", "-t", "CI_T", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["strategy"] == "avg-by-circle" and d["strategySource"] == "clients"
    for cid, qs in d["assignments"].items():
        assert {MessageQueue.from_dict(q) for q in qs} == owned(s493, cid, "CI_T"), cid


def test_allocate_live_per_client_equals_what_each_client_owns(cli, s493):
    r = cli(["-n", s493.namesrv_addr, "allocate", "-g", "MX_G", "-t", "CI_T", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["strategy"].startswith("per-client") and d["warnings"]
    assert d["clientStrategies"]["10.9.2.3@3"] == "avg-by-circle"
    for cid, qs in d["assignments"].items():
        assert {MessageQueue.from_dict(q) for q in qs} == owned(s493, cid, "CI_T"), cid
    assert d["unassigned"]  # the gap the disagreement leaves
    assert "clients run different strategies" in r.stderr


def test_progress_table_counts_unknown_time_lags_per_topic(cli, s493):
    r = cli(["-n", s493.namesrv_addr, "group", "progress", "RW_G", "-o", "json"])
    topics = {t["topic"]: t for t in r.json["topics"]}
    unknown = [q for q in r.json["queues"] if q["topic"] == "RW_T" and q["time_lag_s"] is None]
    assert topics["RW_T"]["time_lag_unknown"] == len(unknown)
    assert r.json["total"]["time_lag_unknown"] == len(unknown)
    caught_up = [q for q in r.json["queues"] if q["lag"] == 0]
    assert caught_up and all(q["time_lag"] == "0" for q in caught_up)
