"""Incremental runs: a sequence of runs over growing, changing inputs, kept in
the ingested table under OUT/_state, ends with exactly the outputs of one full run over the
final inputs (every dataset row for row, the summaries, the counts)."""

from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from .builders import snap_row, write_snapshot

T0 = 1717200000000  # 2024-06-01T00:00:00Z
STEP = 5 * 3600_000  # a capture every 5 hours: the captures span several dates
DATASETS = ("lag", "group_status", "rebalance/events", "rebalance/moves", "rebalance/storms",
            "rebalance/unowned", "rebalance/locks", "quarantine")
GROUPS = ("G_OK", "G_SLOW", "G_STALL", "G_MOVE", "G_INTERP")


def capture(i: int, bump: int = 0) -> list[dict]:
    """Capture ``i``: five groups over two topics x three queues with distinct behaviours
    (caught up, falling behind, stalled, owners moving, time lag needing interpolation)."""
    rng = random.Random(i)
    ts = T0 + i * STEP
    rows = []
    for g in GROUPS:
        for t in ("TopicA", "TopicB"):
            for q in range(3):
                b = 1000 + i * (200 + 50 * q) + bump
                c = {"G_OK": b, "G_SLOW": b - 40 * i - q, "G_STALL": 900,
                     "G_MOVE": b - rng.randrange(0, 30),
                     "G_INTERP": max(0, b - 350 - 10 * (i % 3))}[g]
                members = ["c1@1", "c2@2"] if g != "G_MOVE" else (
                    ["c1@1", "c2@2"] if i % 3 else ["c1@1", "c3@3"])
                owner = members[q % len(members)] if g != "G_STALL" or i % 4 else None
                delay = None if g == "G_INTERP" else (max(0, b - c) * 100)
                rows.append(snap_row(ts, g, t, q, b, c, owner=owner, members=members,
                                     delay_ms=delay, last_timestamp=ts - 1000))
    return rows


def write_capture(root: Path, i: int, bump: int = 0, extra: list[str] | None = None) -> Path:
    return write_snapshot(root, "c1", T0 + i * STEP, capture(i, bump), extra)


def dataset_rows(spark, out: Path, name: str) -> list[str]:
    if not (out / name).exists():
        return []
    return sorted(repr(sorted(r.asDict(recursive=True).items()))
                  for r in spark.read.parquet(str(out / name)).collect())


def assert_same(spark, inc: Path, full: Path, ri, rf, skip: tuple[str, ...] = ()) -> None:
    """The outputs of ``inc`` (result ``ri``) are those of the full run ``full`` (``rf``):
    every dataset row for row (but ``skip``: datasets without rows), the summaries, the
    counts."""
    for name in DATASETS:
        if name in skip:
            continue
        assert dataset_rows(spark, inc, name) == dataset_rows(spark, full, name), name
    assert ri.counts == rf.counts and ri.quarantine == rf.quarantine
    assert ri.summary == rf.summary and ri.groups == rf.groups and ri.dates == rf.dates
    a = json.loads((inc / "summary.json").read_text())
    b = json.loads((full / "summary.json").read_text())
    for k in ("counts", "dates", "summary", "groups", "quarantine"):
        assert a[k] == b[k], k
    assert (inc / "summary.csv").read_text() == (full / "summary.csv").read_text()


def run(spark, root: Path, out: Path, **kw):
    from mqctl.lagjob import run_report

    return run_report([str(root)], str(out), spark=spark, tz="UTC", window=3, **kw)


# many small reports in one test: 164-208 s on this 2-core machine, near the global 300 s when
# another process shares the cores (a timeout inside a JVM call breaks the worker's session)
@pytest.mark.timeout(600)
def test_incremental_runs_equal_one_full_run(spark, tmp_path):
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"
    for i in range(6):
        write_capture(root, i)
    r1 = run(spark, root, inc)
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert len(man["files"]) == 6 and man["batches"] == [1] and man["pending"] == []
    assert sorted({d for f in man["files"].values() for d in f["dates"]}) == [
        "2024-06-01", "2024-06-02"]
    assert r1.counts["lag_rows"] == 6 * 30

    # three later captures (a new date), one of them with a bad line
    for i in range(6, 8):
        write_capture(root, i)
    bad = write_capture(root, 8, extra=['{"schema":"mqctl.snapshot/1","capture_ts":"soon"}'])
    r2 = run(spark, root, inc)
    assert r2.counts["lag_rows"] == 9 * 30 and r2.quarantined == 1
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert man["batches"] == [1, 2] and man["files"][str(bad)]["bad"] is True

    # nothing new: nothing parsed, lag and group_status not rewritten; the staging directory
    # a dead run left behind (its files were never committed) is removed
    assert not list((inc / "_state").glob("staging*"))
    dead = inc / "_state" / "staging-9" / "date=2024-06-01"
    dead.mkdir(parents=True)
    (dead / "part-0.parquet").write_bytes(b"PAR1")
    r3 = run(spark, root, inc)
    assert not list((inc / "_state").glob("staging*"))
    assert "write lag" not in r3.timings and "write group_status" not in r3.timings
    assert r3.counts == r2.counts

    # a changed earlier file (a re-export of capture 6) and a vanished one (capture 2)
    changed = write_capture(root, 6, bump=7)
    os.utime(changed, (1_800_000_000, 1_800_000_000))
    gone = write_capture(root, 2)
    gone.unlink()
    write_capture(root, 9)
    r4 = run(spark, root, inc)
    assert r4.counts["lag_rows"] == 9 * 30  # 10 captures, one gone
    assert "write lag" in r4.timings
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert str(gone) not in man["files"] and man["files"][str(changed)]["mtime_ms"] == \
        1_800_000_000_000

    rf = run(spark, root, full, incremental=False)
    assert not (full / "_state").exists()
    assert_same(spark, inc, full, r4, rf)
    # the run that saw no change wrote nothing it did not have to, and left no temp files
    assert not list((inc / "_state").glob(".*"))


def test_full_flag_and_changed_options_rewrite_every_date(spark, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    for i in range(6):
        write_capture(root, i)
    run(spark, root, out)
    # other options: the earlier dates were computed differently, so all are rewritten
    r = run(spark, root, out, allowed_lag=5)
    assert "write lag" in r.timings
    man = json.loads((out / "_state" / "manifest.json").read_text())
    batches = man["batches"]
    r = run(spark, root, out, allowed_lag=5, full=True)
    man = json.loads((out / "_state" / "manifest.json").read_text())
    assert man["batches"] == [1] and batches == [1]  # --full re-ingested from scratch
    assert "parse snapshots" in r.timings and "write lag" in r.timings


def test_since_until_bound_the_report(spark, tmp_path):
    root, out = tmp_path / "in", tmp_path / "out"
    for i in range(8):
        write_capture(root, i)
    res = run(spark, root, out, since="2024-06-02T00:00:00Z", until="2024-06-02T08:00:00Z")
    # captures 5 (01:00) and 6 (06:00) of June 2 are reported; 7 (11:00) is after --until
    times = {r["capture_time"] for r in res.summary}
    assert times == {"2024-06-02T06:00:00.000Z"}
    assert {r["captures"] for r in res.summary} == {2}
    assert res.dates == ["2024-06-02"]
    lag = spark.read.parquet(str(out / "lag"))
    assert sorted(str(r["date"]) for r in lag.select("date").distinct().collect()) == [
        "2024-06-02"]
    assert lag.agg({"capture_ts": "max"}).collect()[0][0] == T0 + 6 * STEP


def test_since_after_until_is_a_usage_error(tmp_path):
    from mqctl.errors import UsageError
    from mqctl.lagjob import run_report

    root = tmp_path / "in"
    write_capture(root, 0)
    with pytest.raises(UsageError, match="--since is after --until"):
        run_report([str(root)], str(tmp_path / "out"), since="2024-06-03", until="2024-06-02",
                   tz="UTC")
