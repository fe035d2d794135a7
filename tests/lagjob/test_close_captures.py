"""Captures taken close together (less than --align apart) stay apart: real `mqctl snapshot`
files of the simulated cluster, four `--all-groups` captures 7 s apart, then the report.

A capture never holds two observations of one queue, and its span is bounded by its first
time (mqctl/lagjob/alignment.py): four files of the same queues 7 s apart are four captures,
each with its own file's lag, not one with the first file's time and the last file's lag (180
rows counted as "duplicates", "window 1 of 10", a group 30k behind and growing reported OK,
every rate NaN in the Prometheus file). The run says on stderr, in summary.json and at the top
of report.html that the captures are closer than --align."""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyspark")

S = 1000
AUDIT = "GID_AUDIT"

# a lagging group (two slow consumers, 80 msg/s against 160 msg/s produced, 30,000 behind at
# the start), an offline group with committed offsets (no members: its message model is not
# known) and a broadcasting one: the demo's GID_AUDIT, GID_REPLAY and GID_NEWS
SCENARIO: dict[str, Any] = {
    "name": "close-captures", "clock": {"mode": "manual", "start": "2024-06-01T00:00:00Z"},
    "brokers": [{"name": "broker-a"}, {"name": "broker-b"}],
    "topics": [{"name": "TopicAudit", "queues": 4, "rate": 20, "history": "2h"},
               {"name": "TopicPay", "queues": 2, "rate": 5, "history": "1h"},
               {"name": "TopicNews", "queues": 2, "rate": 1, "history": "1h"}],
    "groups": [
        {"name": AUDIT, "topics": ["TopicAudit"], "initial_lag": 3750, "consumers": [
            {"id": "10.0.2.21@4201#a1", "behaviour": "slow", "rate": 40},
            {"id": "10.0.2.22@4202#a2", "behaviour": "slow", "rate": 40}]},
        {"name": "GID_REPLAY", "topics": ["TopicPay"], "initial_lag": 500},
        {"name": "GID_NEWS", "model": "BROADCASTING", "topics": ["TopicNews"],
         "consumers": [{"id": "10.0.6.61@4601#n1"}]},
    ],
}


async def snapshots_at(out: Path, at_s: list[float]) -> list[list[dict[str, Any]]]:
    """`mqctl snapshot --all-groups` (its library: every group found, captured, written) at
    the simulated times ``at_s``; the rows of each file."""
    from mqctl.admin import Admin
    from mqctl.remoting.client import ClientOptions, RemotingClient
    from mqctl.sim import SimCluster
    from mqctl.snapshot import capture, discover_groups, write
    from mqctl.timeparse import set_clock

    cluster = SimCluster(SCENARIO, clock="manual")
    await cluster.start()
    set_clock(cluster.clock.now_ms)
    files: list[list[dict[str, Any]]] = []
    try:
        async with RemotingClient(ClientOptions(timeout=5.0)) as client:
            admin = Admin(client, cluster.namesrv_addr)
            now = 0.0
            for t in at_s:
                await cluster.advance(t - now)
                now = t
                groups = await discover_groups(admin)
                snap = await capture(admin, groups, namesrv=cluster.namesrv_addr)
                assert write(snap, out, compress="none") is not None
                files.append(snap.rows)
    finally:
        set_clock(None)
        await cluster.stop()
    return files


@pytest.fixture(scope="module")
def close_snapshots(tmp_path_factory) -> tuple[Path, list[list[dict[str, Any]]]]:
    snaps = tmp_path_factory.mktemp("close") / "snapshots"
    files = asyncio.run(snapshots_at(snaps, [60, 67, 74, 81]))
    return snaps, files


def _file_lag(rows: list[dict[str, Any]], group: str, topic: str) -> int:
    return sum(r["lag"] for r in rows if r["group"] == group and r["topic"] == topic)


def _prom_samples(text: str, name: str) -> dict[str, str]:
    return {m.group(1): m.group(2) for m in re.finditer(
        rf"^{name}(\{{[^}}]*\}}) (\S+)$", text, re.M)}


def test_close_captures_are_separate_captures_with_their_own_lag(spark, close_snapshots,
                                                                 tmp_path, capsys):
    from conftest import run_cli

    snaps, files = close_snapshots
    stamps = [f[0]["capture_ts"] for f in files]
    assert [b - a for a, b in itertools.pairwise(stamps)] == [7 * S] * 3
    growing = [_file_lag(f, AUDIT, "TopicAudit") for f in files]
    assert growing[0] > 29_000 and growing == sorted(growing) and len(set(growing)) == 4
    out, prom = tmp_path / "out", tmp_path / "f.prom"
    res = run_cli(["lag", "report", str(snaps), "--out", str(out), "--prom-file", str(prom),
                   "-o", "json"], env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert res.exit_code == 0, res.stderr
    data = json.loads((out / "summary.json").read_text())

    # four captures, each named by its file's time, each with its file's lag
    gs = spark.read.parquet(str(out / "group_status")).filter(
        f"`group` = '{AUDIT}' AND topic = 'TopicAudit'").orderBy("capture_ts").collect()
    assert [r["capture_ts"] for r in gs] == stamps
    assert [r["total_lag"] for r in gs] == growing
    lag = spark.read.parquet(str(out / "lag"))
    assert sorted(r[0] for r in lag.select("capture_ts").distinct().collect()) == stamps
    # every row's time is its capture's (one observation per queue and capture)
    assert lag.filter("observed_ts != capture_ts").count() == 0
    assert data["counts"]["duplicates"] == 0
    assert data["counts"]["observations"] == data["counts"]["lag_rows"] == sum(map(len, files))

    # a group 30k behind and growing is not OK
    g = {r["group"]: r for r in data["groups"]}
    assert g[AUDIT]["total_lag"] == growing[-1]
    assert g[AUDIT]["health"] != "OK" and g[AUDIT]["group_status"] == "WARN"
    top = next(r for r in data["summary"] if r["group"] == AUDIT)
    assert top["status_text"].endswith("window 4 of 10)") and top["captures"] == 4
    # the rates are finite: two captures exist (7 s between the last two)
    text = prom.read_text()
    for name in ("mqctl_consumer_consume_messages_per_second",
                 "mqctl_consumer_produce_messages_per_second"):
        audit = {k: v for k, v in _prom_samples(text, name).items() if f'group="{AUDIT}"' in k}
        assert len(audit) == 2, (name, audit)  # broker-a, broker-b
        assert all(math.isfinite(float(v)) and float(v) > 0 for v in audit.values()), audit
    # produced 20 msg/s on each of 4 queues of a broker
    produced = _prom_samples(text, "mqctl_consumer_produce_messages_per_second")
    assert {float(v) for k, v in produced.items() if f'group="{AUDIT}"' in k} == {80.0}

    # said on stderr, in summary.json and at the top of the page
    warning = ("3 capture(s) of cluster DefaultCluster came within --align 10s of the "
               "previous one (closest 7s apart) and observe queues it already observed: each "
               "is a capture of its own, not merged into the previous one.")
    assert len(data["warnings"]) == 1 and data["warnings"][0].startswith(warning)
    assert "mqctl: warning: " + warning in res.stderr
    page = (out / "report.html").read_text()
    head = page[:page.index("</header>")]
    assert 'id="warnings"' in head and warning in head
    assert "4 capture(s)" in head


def test_align_zero_and_distant_captures_say_nothing(spark, close_snapshots, tmp_path):
    """--align 0: exact times, nothing aligned, nothing close; the same four captures."""
    from mqctl.lagjob import run_report

    snaps, files = close_snapshots
    res = run_report([str(snaps)], str(tmp_path / "out"), spark=spark, align_ms=0)
    assert res.warnings == [] and res.counts["duplicates"] == 0
    gs = spark.read.parquet(str(tmp_path / "out" / "group_status")).filter(
        f"`group` = '{AUDIT}' AND topic = 'TopicAudit'").orderBy("capture_ts").collect()
    assert [r["total_lag"] for r in gs] == [_file_lag(f, AUDIT, "TopicAudit") for f in files]
