"""Owner gaps end to end: a simulated member whose GET_CONSUMER_RUNNING_INFO goes
unanswered while it stays a member (scenario ``silent_at``/``silent_for``), captured with
``mqctl snapshot`` over the wire, then ``mqctl lag report`` over the captures and the clients'
logs. Real 4.9.3: consumer e2 stalled about 40 s, its 307 did not come back in one capture,
it stayed a member and kept its queues; the report made 4 false losses, 4 false gains and an
unowned interval of them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

S = 1000
E1, E2 = "10.25.0.1@e1", "10.25.0.2@e2"

SCENARIO: dict[str, Any] = {
    "name": "silent-member", "clock": {"mode": "manual", "start": "2024-06-01T00:00:00Z"},
    "running_info_timeout": "0.3s",  # the broker's forward timeout (real: 10 s)
    "brokers": [{"name": "broker-a", "version": "V4_9_3"},
                {"name": "broker-b", "version": "V4_9_3"}],
    "topics": [{"name": "T", "queues": 4, "rate": 1, "history": "10m"}],
    "groups": [{"name": "G", "topics": ["T"], "consumers": [
        {"id": E1, "version": "V4_9_3"},
        {"id": E2, "version": "V4_9_3", "silent_at": "150s", "silent_for": "40s"}]}],
}


async def capture_every(out: Path, logs: Path, at_s: list[int]) -> list[list[dict[str, Any]]]:
    from mqctl.admin import Admin
    from mqctl.remoting.client import ClientOptions, RemotingClient
    from mqctl.sim import SimCluster
    from mqctl.snapshot import capture, write
    from mqctl.timeparse import set_clock

    cluster = SimCluster(SCENARIO, clock="manual", log_dir=str(logs))
    await cluster.start()
    set_clock(cluster.clock.now_ms)
    rows: list[list[dict[str, Any]]] = []
    try:
        async with RemotingClient(ClientOptions(timeout=5.0)) as client:
            admin = Admin(client, cluster.namesrv_addr)
            now = 0
            for t in at_s:
                await cluster.advance(t - now)
                now = t
                snap = await capture(admin, ["G"], namesrv=cluster.namesrv_addr)
                assert write(snap, out, compress="none") is not None
                rows.append(snap.rows)
    finally:
        set_clock(None)
        await cluster.stop()
    return rows


def test_silent_member_is_an_unknown_owner_not_a_rebalance(spark, tmp_path):
    from mqctl.lagjob import run_report

    snaps, logs = tmp_path / "snapshots", tmp_path / "logs"
    caps = asyncio.run(capture_every(snaps, logs, [60, 120, 160, 200, 260]))
    # the sim: e2 stays a member while its running info times out (160 s is in 150..190 s)
    silent = caps[2]
    assert {r["schema"] for r in silent} == {"mqctl.snapshot/1.2"}
    assert all(r["members"] == [E1, E2] and r["members_unanswered"] == [E2] for r in silent)
    mine = {(r["broker"], r["queue_id"]) for r in caps[1] if r["topic"] == "T"
            and r["owner"] == E2}
    assert len(mine) == 4  # AVG: e2 owns half of the 8 queues
    for r in silent:
        q = (r["broker"], r["queue_id"])
        if r["topic"] == "T" and q in mine:
            assert (r["owner"], r["owners"], r["owner_unknown"]) == (None, [], True)
        elif r["topic"] == "T":
            assert (r["owner"], r["owner_unknown"]) == (E1, False)
    from mqctl.snapshot import unanswered_notes

    # `mqctl snapshot` says so (4 queues of T and e2's %RETRY% queue)
    assert unanswered_notes(silent) == [
        f"G: owner unknown on 5 queue(s): {E2} did not answer GET_CONSUMER_RUNNING_INFO "
        "(still a member; rows say owner_unknown, not unowned)"]
    for cap in (caps[0], caps[1], caps[3], caps[4]):  # e2 answers again: nothing unknown
        assert not any(r["owner_unknown"] for r in cap) and cap[0]["members_unanswered"] == []
    assert {(r["broker"], r["queue_id"]) for r in caps[3] if r["topic"] == "T"
            and r["owner"] == E2} == mine  # the same queues: no rebalance happened

    out = tmp_path / "out"
    res = run_report([str(snaps), str(logs)], str(out), spark=spark, tz="UTC", log_tz="UTC")
    ev = spark.read.parquet(str(out / "rebalance" / "events"))
    # every event is a client's first set at start-up; none at the silent capture or after it
    late = ev.filter(f"ts > {caps[0][0]['capture_ts']}").collect()
    assert [(r.client, r.gained, r.lost) for r in late] == []
    # (an empty dataset is not written); the only moves are e1's queues going to e2 when e2
    # joined at start-up, before the first capture
    assert res.counts["unowned_intervals"] == 0
    moves = spark.read.parquet(str(out / "rebalance" / "moves")).collect()
    assert moves and all(m.ts < caps[0][0]["capture_ts"] and (m.from_client, m.to_client)
                         == (E1, E2) for m in moves)
    lag = spark.read.parquet(str(out / "lag"))
    unknown = lag.filter("owner_unknown").collect()
    assert sorted((r.broker, r.queue_id) for r in unknown if r.topic == "T") == sorted(mine)
    assert {r.capture_ts for r in unknown} == {silent[0]["capture_ts"]}
    assert all(list(r.members_unanswered) == [E2] and r.owner is None for r in unknown)
    assert res.counts["owner_unknown"] == len(unknown)
    assert any("owner unknown" in n for n in res.notes)
    summary = json.loads((out / "summary.json").read_text())
    # REBALANCES counts the start-up only (before: + 4 losses and 4 gains of e2's queues)
    early = ev.filter(f"ts < {caps[0][0]['capture_ts']}").count()
    assert early > 0 and {r["rebalances"] for r in summary["summary"]} == {early}
