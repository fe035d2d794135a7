"""`mqctl demo` end to end: simulated hours -> snapshots over the wire -> the Spark report; and
the demo's own worst groups are told as they are."""

from __future__ import annotations

import json

import pytest


@pytest.mark.spark
def test_demo_timeline_and_report(demo_report):
    cap, res = demo_report
    assert cap.captures == 10
    files = sorted(cap.snapshots_dir.rglob("*.jsonl"))
    assert len(files) == 10
    rows = [json.loads(ln) for f in files for ln in f.read_text().splitlines()]
    assert len(rows) == cap.rows
    # the crash at 2m: GID_ORDER has two members from the first capture on
    order = [r for r in rows if r["group"] == "GID_ORDER"]
    assert {len(r["members"]) for r in order} == {2}
    # the join at 60m: GID_PAY has four members in the later captures
    pay_members = {r["capture_ts"]: len(r["members"]) for r in rows if r["group"] == "GID_PAY"}
    assert sorted(set(pay_members.values())) == [3, 4]
    # the burst at 80m: GID_PAY's lag peaks after it and comes down again
    pay = {}
    for r in rows:
        if r["group"] == "GID_PAY" and r["topic"] == "TopicPay":
            pay[r["capture_ts"]] = pay.get(r["capture_ts"], 0) + r["lag"]
    lags = [pay[t] for t in sorted(pay)]
    peak = max(lags)
    assert peak > 10 * max(lags[0], 1) and lags[-1] < peak
    # logs in RocketMQ's formats were written and read
    assert (cap.logs_dir / "brokers" / "broker-a" / "lock.log").exists()
    assert res.inputs.get("client-log", 0) > 0 and res.inputs.get("snapshot") == 10
    by = {(s["group"], s["topic"]): s for s in res.summary}
    assert by[("GID_REPLAY", "TopicPay")]["status"] == "STOP"
    assert by[("GID_AUDIT", "TopicAudit")]["status"] == "WARN"
    assert res.counts["rebalance_events"] > 0 and res.counts["lock_takeovers"] >= 1
    with open(res.paths["html"], encoding="utf-8") as fh:
        html = fh.read()
    assert "<script" not in html  # self-contained, and no script at all
    assert res.quarantined == 0
    # the simulated hours end when the report runs: it is generated after its captures
    with open(res.paths["summary_json"], encoding="utf-8") as fh:
        data = json.load(fh)
    assert data["generated_ts"] >= cap.sim_end_ms


@pytest.mark.spark
def test_demo_groups_are_told_as_they_are(demo_report):
    """Storms and health on the demo: GID_MIXED (members that take queues from each other
    every 20 s) is in a storm and not healthy although its lag status is OK; the broadcasting
    GID_NEWS is listed with its reason; GID_POP says it has no queue owners; GID_DUP's STALL
    says how many queues are stalled."""
    cap, res = demo_report
    groups = {g["group"]: g for g in res.groups}
    mixed = groups["GID_MIXED"]
    assert (mixed["group_status"], mixed["health"], mixed["in_storm"]) == ("OK", "ERR", True)
    assert "long-round" in mixed["storm_rule"] and res.counts["storms"] >= 1
    assert mixed["health_reasons"][0].startswith("rebalance storm from ")
    # every group of the demo is accounted for, the broadcast one with its reason
    assert set(groups) == {"GID_PAY", "GID_AUDIT", "GID_ORDER", "GID_MIXED", "GID_DUP",
                           "GID_NEWS", "GID_POP", "GID_REPLAY"}
    news = groups["GID_NEWS"]
    assert (news["group_status"], news["health"], news["total_lag"]) == (None, None, None)
    assert news["message_model"] == "BROADCASTING"
    assert news["health_reasons"] == ["broadcast: offsets are kept by the clients"]
    news_rows = [s for s in res.summary if s["group"] == "GID_NEWS"]
    assert [(r["topic"], r["status"], r["queues"]) for r in news_rows] == [("TopicNews", None, 4)]
    assert any(x.startswith("pop: no queue owners") for x in groups["GID_POP"]["health_reasons"])
    dup = next(s for s in res.summary if (s["group"], s["topic"]) == ("GID_DUP", "TopicAudit"))
    assert dup["status_text"] == f"STALL ({dup['status_queues']} of 8 queues)"
    assert 0 < dup["status_queues"] < 8
    assert groups["GID_DUP"]["health"] == "ERR"
    # its queues nobody holds (one client id on two containers) are the ones the last capture
    # shows without owner: the logs' open intervals (one holder to them) end where a capture
    # shows an owner
    last = max(cap.snapshots_dir.rglob("*.jsonl"))
    unowned = [r for r in map(json.loads, last.read_text().splitlines())
               if r["group"] == "GID_DUP" and r["owner"] is None]
    assert 0 < groups["GID_DUP"]["unowned_now"] == len(unowned) < 10
    # groups that rebalance a few times (a join, a leave, a crash) are not in a storm
    assert not groups["GID_PAY"]["in_storm"] and groups["GID_PAY"]["health"] == "OK"
    assert not groups["GID_ORDER"]["in_storm"]
