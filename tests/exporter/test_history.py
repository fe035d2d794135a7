"""The exporter's owner history without a cluster: bounded by time, NaN for the rebalance
series until a group has two rounds, then the report's rules (mqctl.laghealth) over the
rounds held; a group not read in a round keeps its history."""

from __future__ import annotations

from mqctl.exporter.history import OwnerHistory, apply_verdicts
from mqctl.laghealth import HealthOptions

S = 1000


def row(ts_owner: str | None, qid: int = 0, *, group: str = "G", offset: int = 10) -> dict:
    return {"cluster": "C", "group": group, "topic": "T", "broker": "a", "queue_id": qid,
            "owner": ts_owner, "owner_unknown": False, "online": True,
            "consumer_offset": offset}


def group(ts: int, *, name: str = "G", status: int | None = 0, queues: int = 2) -> dict:
    return {"cluster": "C", "group": name, "capture_ts": ts, "group_status_code": status,
            "queues": queues, "online": True, "health": "OK", "health_code": 0,
            "unowned_now": 0}


def test_one_round_is_unknown_two_are_the_reports():
    h = OwnerHistory()
    h.add(0, [row("c1", 0), row("c1", 1)])
    g = [group(0)]
    apply_verdicts(g, h.verdicts(g))
    assert (g[0]["rebalances"], g[0]["storms"], g[0]["in_storm"], g[0]["unowned_share"]) == (
        None, None, None, None)
    assert g[0]["health"] == "OK"  # the status's, as before
    h.add(30 * S, [row("c1", 0), row("c2", 1)])
    g = [group(30 * S)]
    apply_verdicts(g, h.verdicts(g))
    assert (g[0]["rebalances"], g[0]["storms"], g[0]["in_storm"]) == (2, 0, False)
    assert g[0]["unowned_share"] == 0.0 and g[0]["health"] == "OK"


def test_history_is_bounded_by_twice_the_storm_window_and_the_longest_round():
    opts = HealthOptions(storm_window_ms=60 * S, storm_round_max_ms=10 * S)
    h = OwnerHistory(opts)
    assert h.horizon_ms == 130 * S
    for k in range(20):
        h.add(k * 30 * S, [row("c1", 0), row("c1", 1)])
    g = h.groups[("C", "G")]
    assert list(g.rounds) == [k * 30 * S for k in range(15, 20)]
    assert h.held() == 2  # (no change: one point per queue, its first owner)
    for k in range(20, 40):
        h.add(k * 30 * S, [row(f"c{k % 2}", 0), row("c1", 1)])  # a move every round
    assert len(g.changes) == 2 * 5 and min(c.ts for c in g.changes) >= 35 * 30 * S


def test_a_group_gone_longer_than_the_horizon_is_forgotten_one_not_read_is_kept():
    h = OwnerHistory(HealthOptions(storm_window_ms=60 * S, storm_round_max_ms=0))
    h.add(0, [row("c1", group="G"), row("c1", group="H")])
    h.add(30 * S, [row("c1", group="H")])  # G not read this round: its rounds stay
    assert ("C", "G") in h.groups
    h.add(200 * S, [row("c1", group="H")])
    assert ("C", "G") not in h.groups and ("C", "H") in h.groups


def test_flapping_owners_make_a_storm_and_err():
    h = OwnerHistory()
    for k in range(5):
        h.add(k * 30 * S, [row(f"c{k % 2}", 0), row("c9", 1)])
    g = [group(4 * 30 * S, status=1)]
    apply_verdicts(g, h.verdicts(g))
    assert g[0]["in_storm"] is True and g[0]["storms"] == 1
    assert g[0]["health"] == "ERR" and g[0]["health_code"] == 2  # not WARN: the storm


def test_round_by_round_equals_the_report_reference_on_random_histories():
    """Fed one round at a time (nothing trimmed), the history gives what the Spark
    transforms restated (tests/laghealth_reference.py) give over all the rounds at once."""
    import pytest
    from laghealth_reference import random_owner_histories, report_reference

    fields = ("rebalances", "storms", "in_storm", "unowned_share", "unowned_now",
              "health_code")
    for seed in (7, 8, 11):
        rows, latest = random_owner_histories(seed, groups=14)
        h = OwnerHistory(horizon_ms=1 << 50)
        for ts in sorted({r["capture_ts"] for r in rows}):
            h.add(ts, [r for r in rows if r["capture_ts"] == ts])
        got = h.verdicts([{**g, "queues": g["queues"]} for g in latest])
        want = report_reference(rows, latest)
        for g in latest:
            k = (g["cluster"], g["group"])
            if len({r["capture_ts"] for r in rows if r["group"] == g["group"]}) < 2:
                assert got[k] is None
                continue
            v = got[k]
            assert v is not None
            assert {f: getattr(v, f) for f in fields} == pytest.approx(
                {f: want[k][f] for f in fields}), (seed, k)


def test_the_exporter_serves_what_its_history_holds():
    from mqctl.exporter import Exporter, ExporterOptions
    from mqctl.exporter.window import RoundRead

    ex = Exporter(ExporterOptions())
    for k in range(3):
        rs = [{**row(f"c{k % 2}", 0), "broker_offset": 20, "lag": 10, "committed": True,
               "members": ["c0", "c1"], "consume_type": "CONSUME_PASSIVELY",
               "message_model": "CLUSTERING"}]
        ex.take(RoundRead(k * 30 * S, rs), [], 1, 0.0)
    text = ex.metrics() or ""
    assert f"mqctl_exporter_owner_history_entries {ex.history.held()}" in text
    assert ex.history.held() == 3 + 4  # 3 owner points, 2 moves of one loss and one gain
    assert 'mqctl_group_rebalance_events{cluster="C",group="G"} 4' in text
    assert "mqctl_lag_report_rebalance_storms 0" in text
