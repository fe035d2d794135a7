"""Gzip captures with Spark (also several gzip members in one file, as `cat
a.jsonl.gz b.jsonl.gz` makes) go through the lag report as the plain ones do, and the hidden
directories `mqctl lag prune` renames partitions to are invisible to Spark."""

from __future__ import annotations

import shutil
from pathlib import Path

from mqctl.snapshot import Snapshot, read_rows, write

from .builders import T0, snap_row


def capture(ts: int, broker_offset: int, consumer_offset: int) -> Snapshot:
    row = snap_row(ts, "G", "T", 0, broker_offset, consumer_offset, owner="a@1")
    return Snapshot(ts, "ns", "c1", ["G"], [row])


def test_report_reads_gzip_and_multi_member_captures(spark, tmp_path):
    from mqctl.lagjob import run_report

    snaps = tmp_path / "snap"
    # lags 10, 20, 30 while the offset moves (Burrow's WARN): the first capture plain, the
    # other two gzip, then joined into ONE file of two gzip members
    first = write(capture(T0, 1000, 990), snaps)
    second = write(capture(T0 + 60_000, 1020, 1000), snaps, compress="gzip")
    third = write(capture(T0 + 120_000, 1040, 1010), snaps, compress="gzip")
    assert first and second and third
    second.write_bytes(second.read_bytes() + third.read_bytes())
    third.unlink()
    assert [r["capture_ts"] for r in read_rows(second)] == [T0 + 60_000, T0 + 120_000]
    # Spark's text source reads every member (Hadoop's gzip codec continues after the first)
    lines = spark.read.text(str(second)).collect()
    assert len(lines) == 2 and '"consumer_offset":1010' in lines[1].value

    out = tmp_path / "out"
    res = run_report([str(snaps)], str(out), spark=spark, tz="UTC")
    assert res.inputs.get("snapshot") == 2 and res.quarantined == 0
    assert [(s["group"], s["status"], s["total_lag"]) for s in res.summary] == [
        ("G", "WARN", 30)]
    lag = spark.read.parquet(str(out / "lag"))
    assert sorted(r.lag for r in lag.select("lag").collect()) == [10, 20, 30]

    # a partition `lag prune` renamed out of sight is not read
    part = next((out / "lag").glob("date=*"))
    hidden = part.with_name(".date=2020-01-01.pruning-1")
    shutil.copytree(part, hidden)
    again = spark.read.parquet(str(out / "lag"))
    assert again.count() == 3
    assert {str(r.date) for r in again.select("date").distinct().collect()} == {
        part.name.split("=", 1)[1]}
    assert Path(hidden).is_dir()
