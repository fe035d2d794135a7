"""The exporter's rebalance, storm and unowned series and its group health over its own rounds
on the simulated cluster (in process, manual clock, 127.0.0.1): NaN while a group has one
round held (no change can be seen in one capture), then finite, and equal to the report's
rules (tests/laghealth_reference.py, the Spark transforms restated) over the same snapshot
rows; a consumer that joins makes rebalance events, members that come and go a storm."""

from __future__ import annotations

import asyncio
import math
import re

from laghealth_reference import report_reference

SCENARIO = {
    "name": "history", "clock": {"mode": "manual"},
    "brokers": [{"name": "broker-a"}],
    "topics": [{"name": "T", "queues": 4, "rate": 2, "history": "10m"}],
    "groups": [{"name": "G", "topics": ["T"], "consumers": [
        {"id": "10.0.0.1@1"}, {"id": "10.0.0.2@2", "join_at": "90s"}]},
        {"name": "F", "topics": ["T"], "consumers": [  # members that come and go: a storm
            {"id": "10.0.1.1@1"}, {"id": "10.0.1.2@2", "join_at": "40s", "leave_at": "100s"},
            {"id": "10.0.1.3@3", "join_at": "130s", "leave_at": "190s"}]}],
}
SERIES = ("mqctl_group_rebalance_events", "mqctl_group_rebalance_storms",
          "mqctl_group_rebalance_storm", "mqctl_group_unowned_ratio")


def values(text: str, name: str) -> dict[str, float]:
    out = {}
    for line in text.splitlines():
        m = re.match(rf'^{name}\{{[^}}]*group="([^"]*)"[^}}]*\}} (\S+)$', line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


async def _rounds(n: int, **opts) -> tuple[list[str], list[dict]]:
    from mqctl.admin import Admin
    from mqctl.exporter import Exporter, ExporterOptions
    from mqctl.remoting.client import ClientOptions, RemotingClient
    from mqctl.sim import SimCluster
    from mqctl.timeparse import set_clock

    cluster = SimCluster(SCENARIO, clock="manual")
    await cluster.start()
    set_clock(cluster.clock.now_ms)
    texts, rows = [], []
    try:
        async with RemotingClient(ClientOptions(timeout=5.0)) as client:
            admin = Admin(client, cluster.namesrv_addr)
            ex = Exporter(ExporterOptions(interval_s=30, **opts))
            for _ in range(n):
                await cluster.advance(30)
                read, errors, groups = await ex.read(admin, cluster.namesrv_addr)
                assert errors == []
                ex.take(read, errors, groups, 0.0)
                rows += [{**r, "capture_ts": read.capture_ts} for r in read.rows]
                texts.append(ex.metrics() or "")
    finally:
        set_clock(None)
        await cluster.stop()
    return texts, rows


def test_rebalance_series_are_nan_then_the_reports_values():
    texts, rows = asyncio.run(_rounds(8))
    for name in SERIES:
        assert math.isnan(values(texts[0], name)["G"]), name
        assert not math.isnan(values(texts[-1], name)["G"]), name
    last = texts[-1]
    obs = [{"cluster": r.get("cluster"), "group": r["group"], "topic": r["topic"],
            "broker": r["broker"], "queue_id": r["queue_id"], "capture_ts": r["capture_ts"],
            "owner": r.get("owner"), "owner_unknown": bool(r.get("owner_unknown")),
            "online": r.get("online"), "consumer_offset": r.get("consumer_offset")}
           for r in rows if r["group"] == "G"]
    latest = max(o["capture_ts"] for o in obs)
    queues = len({(o["topic"], o["broker"], o["queue_id"]) for o in obs
                  if o["capture_ts"] == latest})
    sev = int(values(last, "mqctl_group_status_severity")["G"])
    want = report_reference(obs, [{"cluster": obs[0]["cluster"], "group": "G",
                                   "capture_ts": latest, "group_status_code": sev,
                                   "queues": queues, "online": True}])
    (w,) = want.values()
    assert w["rebalances"] >= 2  # the second consumer's join: one gains, one loses
    assert values(last, "mqctl_group_rebalance_events")["G"] == w["rebalances"]
    assert values(last, "mqctl_group_rebalance_storms")["G"] == w["storms"]
    assert values(last, "mqctl_group_rebalance_storm")["G"] == float(w["in_storm"])
    assert values(last, "mqctl_group_unowned_ratio")["G"] == w["unowned_share"]
    assert values(last, "mqctl_group_health_severity")["G"] == w["health_code"] == 0
    assert values(last, "mqctl_group_rebalance_storm")["F"] == 1
    assert values(last, "mqctl_group_health_severity")["F"] == 2  # ERR: in a storm
    assert values(last, "mqctl_group_status_severity")["F"] < 2  # (not by its status)


def test_groups_selects_the_groups_served():
    """``--groups``: a glob or a substring of the names, as the views' ``--match``."""
    for pattern, want in (("f", {"F"}), ("[fg]", {"F", "G"}), ("X*", set())):
        texts, _ = asyncio.run(_rounds(1, groups=pattern))
        assert set(values(texts[0], "mqctl_group_queues")) == want, pattern
        assert set(values(texts[0], "mqctl_consumer_max_lag_messages")) == want, pattern
