"""`mqctl demo` end to end: simulated hours -> snapshots over the wire -> the Spark report."""

from __future__ import annotations

import json

from mqctl.demo import run_demo


def test_demo_timeline_and_report(spark, tmp_path):
    cap, res = run_demo(tmp_path, hours=1.75, interval_s=600, spark=spark)
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
    assert "<script src=" not in html.replace("<script src=\"data:", "")
    assert res.quarantined == 0
