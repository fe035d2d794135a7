"""Compressed capture files (``--compress gzip``), capture retention
(``snapshot --keep``, ``lag prune --snapshots``) and report retention (``lag prune --out``).
No Spark here (tests/lagjob/test_snapshot_gzip_spark.py reads the files with Spark)."""

from __future__ import annotations

import gzip
import os
from datetime import date
from pathlib import Path

import pytest
from conftest import run_cli

import mqctl.lagjob.retention as retention
import mqctl.snapshot as snapshot
from mqctl.errors import UsageError
from mqctl.remoting.codes import MUTATING_REQUESTS, request_name
from mqctl.snapshot import (
    Snapshot,
    apply_prune,
    list_captures,
    parse_capture_name,
    parse_keep,
    plan_prune,
    read_rows,
    snapshot_path,
    write,
)
from mqctl.timeparse import format_ms

DAY = 86_400_000
T0 = 1_717_236_000_123  # 2024-06-01T10:00:00.123Z


def a_snapshot(ts: int = T0, n: int = 3, cluster: str = "c1") -> Snapshot:
    rows = [{"schema": snapshot.SCHEMA, "capture_ts": ts, "capture_time": format_ms(ts),
             "cluster": cluster, "group": "G", "topic": "T", "broker": "b", "queue_id": i,
             "lag": 10 * i, "owner": "10.0.0.1@1#ü"} for i in range(n)]
    return Snapshot(ts, "ns:9876", cluster, ["G"], rows)


# ---- the file format ------------------------------------------------------------------------

def test_gzip_capture_holds_the_plain_bytes_and_is_reproducible(tmp_path):
    snap = a_snapshot()
    plain = write(snap, tmp_path / "p")
    gz = write(snap, tmp_path / "z", compress="gzip")
    assert plain is not None and gz is not None
    assert plain.name == "mqctl-snapshot-c1-20240601T100000.123Z.jsonl"
    assert gz.name == plain.name + ".gz" and gz.parent.name == "2024-06-01"
    raw = gz.read_bytes()
    assert raw[:2] == b"\x1f\x8b"  # a gzip member ...
    assert gzip.decompress(raw) == plain.read_bytes()  # ... of exactly the plain file
    assert int.from_bytes(raw[4:8], "little") == T0 // 1000  # header time = capture time
    assert raw[3] & 0x08 == 0  # no file name in the header
    again = write(snap, tmp_path / "z2", compress="gzip")
    assert again is not None and again.read_bytes() == raw
    assert read_rows(gz) == read_rows(plain) == snap.rows
    assert read_rows(gz)[0]["owner"] == "10.0.0.1@1#ü"
    assert not [p for p in tmp_path.rglob(".*")]  # no temporary file left


def test_concatenated_gzip_captures_read_as_one_file(tmp_path):
    """``cat a.jsonl.gz b.jsonl.gz > day.jsonl.gz`` (two gzip members) is valid gzip: every
    row of both is read."""
    a = write(a_snapshot(T0, 2), tmp_path, compress="gzip")
    b = write(a_snapshot(T0 + 60_000, 3), tmp_path, compress="gzip")
    assert a is not None and b is not None
    both = tmp_path / "both.jsonl.gz"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    rows = read_rows(both)
    assert [(r["capture_ts"], r["queue_id"]) for r in rows] == [
        (T0, 0), (T0, 1), (T0 + 60_000, 0), (T0 + 60_000, 1), (T0 + 60_000, 2)]


def test_unknown_compression_and_no_rows():
    with pytest.raises(UsageError, match="unknown compression 'zstd'"):
        snapshot_path("/x", "c", T0, compress="zstd")
    assert write(Snapshot(T0, "ns", "c", ["G"], []), "/nonexistent/never",
                 compress="gzip") is None


def test_the_lag_report_recognises_gzip_captures(tmp_path):
    from mqctl.lagjob.inputs import InputSpec, Kind, kind_from_name, path_meta
    from mqctl.lagjob.readers import list_local

    gz = write(a_snapshot(), tmp_path, compress="gzip")
    assert gz is not None
    assert kind_from_name(gz.name) == Kind.SNAPSHOT
    assert path_meta(str(gz), None, Kind.SNAPSHOT).capture_ts == T0
    listing = list_local([InputSpec(str(tmp_path))])
    assert [(Path(f.path).name, f.kind) for f in listing.files] == [(gz.name, Kind.SNAPSHOT)]


# ---- capture retention ----------------------------------------------------------------------

def test_capture_names_are_parsed_strictly():
    assert parse_capture_name("mqctl-snapshot-c_1.x-20240601T100000.123Z.jsonl.gz") == (
        "c_1.x", T0)
    assert parse_capture_name("mqctl-snapshot-c1-20240601T100000.123Z.jsonl") == ("c1", T0)
    for bad in ("mqctl-snapshot-c1-20240601T100000.123Z.jsonl.bak",
                "mqctl-snapshot-c1-20241301T100000.123Z.jsonl",  # month 13
                "mqctl-snapshot-c1-20240601T100000Z.jsonl", "other-20240601T100000.123Z.jsonl",
                "mqctl-snapshot-c1-20240601T100000.123Z.json"):
        assert parse_capture_name(bad) is None, bad


def make_captures(root: Path, specs: list[tuple[str, int]], compress: str = "gzip") -> None:
    for cluster, ts in specs:
        assert write(a_snapshot(ts, 1, cluster), root, compress=compress) is not None


def test_list_captures_sees_only_what_mqctl_wrote(tmp_path):
    make_captures(tmp_path, [("c1", T0)], "none")
    make_captures(tmp_path, [("c1", T0 + DAY)])
    day = tmp_path / "2024-06-01"
    (day / "notes.txt").write_text("mine")
    (day / "mqctl-snapshot-c1-20240602T100000.123Z.jsonl").write_text("{}\n")  # wrong day dir
    (tmp_path / "mqctl-snapshot-c1-20240601T090000.000Z.jsonl").write_text("{}\n")  # not in one
    (day / "mqctl-snapshot-c1-20240601T080000.000Z.jsonl").symlink_to(day / "notes.txt")
    (day / ".mqctl-snapshot-c1-20240601T070000.000Z.jsonl.gz.a1b2c3.tmp").write_bytes(b"x")
    (tmp_path / "misc").mkdir()
    found = {(f.path.relative_to(tmp_path).as_posix(), f.temporary)
             for f in list_captures(tmp_path)}
    assert found == {
        ("2024-06-01/mqctl-snapshot-c1-20240601T100000.123Z.jsonl", False),
        ("2024-06-02/mqctl-snapshot-c1-20240602T100000.123Z.jsonl.gz", False),
        ("2024-06-01/.mqctl-snapshot-c1-20240601T070000.000Z.jsonl.gz.a1b2c3.tmp", True)}
    assert list_captures(tmp_path / "missing") == []


def test_plan_prune_keeps_the_newest_of_each_cluster(tmp_path):
    now = T0 + 10 * DAY
    make_captures(tmp_path, [("c1", T0), ("c1", T0 + DAY), ("c1", T0 + 9 * DAY),
                             ("c2", T0), ("c2", T0 + 60_000),  # c2 stopped 10 days ago
                             ("c3", now - 7 * DAY)])  # exactly at the cutoff: kept
    plan = plan_prune(list_captures(tmp_path), keep_ms=7 * DAY, now=now)
    assert plan.cutoff_ms == now - 7 * DAY
    assert [(f.cluster, f.capture_ts) for f in plan.delete] == [
        ("c1", T0), ("c2", T0), ("c1", T0 + DAY)]
    assert [(f.cluster, f.capture_ts) for f in plan.kept_newest] == [("c2", T0 + 60_000)]
    assert plan.kept == 2
    with pytest.raises(UsageError):
        plan_prune([], keep_ms=0, now=now)


def test_apply_prune_deletes_files_and_emptied_day_dirs(tmp_path):
    now = T0 + 10 * DAY
    make_captures(tmp_path, [("c1", T0), ("c1", T0 + 60_000), ("c1", T0 + DAY),
                             ("c1", T0 + 9 * DAY)])
    (tmp_path / "2024-06-02" / "notes.txt").write_text("not ours")
    tmp = tmp_path / "2024-06-01" / ".mqctl-snapshot-c1-20240601T100000.123Z.jsonl.gz.xyz.tmp"
    tmp.write_bytes(b"half")
    plan = plan_prune(list_captures(tmp_path), keep_ms=7 * DAY, now=now)
    assert len(plan.delete) == 4
    plan.delete[0].path.unlink()  # gone meanwhile: skipped, not an error
    done = apply_prune(plan)
    assert len(done) == 3
    assert not (tmp_path / "2024-06-01").exists()  # emptied: removed
    assert sorted(p.name for p in (tmp_path / "2024-06-02").iterdir()) == ["notes.txt"]
    assert [f.capture_ts for f in list_captures(tmp_path)] == [T0 + 9 * DAY]


def test_apply_prune_names_a_file_it_may_not_delete(tmp_path, monkeypatch):
    import errno

    make_captures(tmp_path, [("c1", T0), ("c1", T0 + DAY), ("c1", T0 + 9 * DAY)])
    plan = plan_prune(list_captures(tmp_path), keep_ms=DAY, now=T0 + 10 * DAY)
    real_unlink = Path.unlink

    def refused(self, *a, **kw):  # as a directory the user may not write (EACCES) does
        if self.parent.name == "2024-06-02":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(self))
        return real_unlink(self, *a, **kw)

    monkeypatch.setattr(Path, "unlink", refused)
    with pytest.raises(UsageError, match=r"cannot delete capture file .*2024-06-02.*"
                                         r"Permission denied \(1 deleted before it\)"):
        apply_prune(plan)
    assert [f.capture_ts for f in list_captures(tmp_path)] == [T0 + DAY, T0 + 9 * DAY]


@pytest.mark.parametrize("text, ms", [("7d", 7 * DAY), ("36h", 36 * 3_600_000),
                                      ("P1D", DAY), ("90m", 5_400_000)])
def test_parse_keep(text, ms):
    assert parse_keep(text) == ms


@pytest.mark.parametrize("text, msg", [("7", "has no unit"), ("-7d", "plain duration"),
                                       ("0d", "longer than 0"), ("soon", "cannot parse")])
def test_parse_keep_refuses(text, msg):
    with pytest.raises(UsageError, match=msg):
        parse_keep(text)


# ---- report retention -----------------------------------------------------------------------

def make_report(root: Path, days: dict[str, list[str]]) -> None:
    for ds, ds_days in days.items():
        for d in ds_days:
            p = root / ds / f"date={d}"
            p.mkdir(parents=True)
            (p / "part-00000.snappy.parquet").write_bytes(b"P" * 100)
            (p / ".part-00000.snappy.parquet.crc").write_bytes(b"c")


def test_report_plan_goes_by_whole_utc_days_and_keeps_each_newest(tmp_path):
    make_report(tmp_path, {"lag": ["2024-06-01", "2024-06-02", "2024-06-03"],
                           "rebalance/events": ["2024-05-01"],
                           "quarantine": ["2024-06-02", "2024-06-03"]})
    (tmp_path / "lag" / "date=__HIVE_DEFAULT_PARTITION__").mkdir()
    (tmp_path / "lag" / "_SUCCESS").write_text("")
    make_report(tmp_path, {"state": ["2024-01-01"]})  # not a report dataset: never touched
    # the cutoff is 2024-06-03T00:00Z exactly: 2024-06-02 ends at it (deleted), 06-03 not
    now = 1_717_372_800_000 + 2 * DAY
    parts = retention.list_partitions(tmp_path)
    assert {(p.dataset, p.day.isoformat()) for p in parts} == {
        ("lag", "2024-06-01"), ("lag", "2024-06-02"), ("lag", "2024-06-03"),
        ("rebalance/events", "2024-05-01"), ("quarantine", "2024-06-02"),
        ("quarantine", "2024-06-03")}
    assert {(p.files, p.size) for p in parts} == {(2, 101)}
    plan = retention.plan_report_prune(tmp_path, parts, keep_ms=2 * DAY, now=now)
    assert [(p.dataset, p.day) for p in plan.delete] == [
        ("lag", date(2024, 6, 1)), ("lag", date(2024, 6, 2)),
        ("quarantine", date(2024, 6, 2))]
    assert [(p.dataset, p.day) for p in plan.kept_newest] == [
        ("rebalance/events", date(2024, 5, 1))]
    assert plan.kept == 2
    # one ms later 2024-06-03 would still reach past the cutoff: a day goes only when whole
    later = retention.plan_report_prune(tmp_path, parts, keep_ms=2 * DAY, now=now + DAY - 1)
    assert ("lag", date(2024, 6, 3)) not in [(p.dataset, p.day) for p in later.delete]


def test_report_prune_renames_out_of_sight_then_removes(tmp_path, monkeypatch):
    make_report(tmp_path, {"lag": ["2024-06-01", "2024-06-02", "2024-06-10"],
                           "group_status": ["2024-06-01", "2024-06-10"]})
    now = 1_717_977_600_000  # 2024-06-10T00:00Z
    plan = retention.plan_report_prune(tmp_path, retention.list_partitions(tmp_path),
                                       keep_ms=5 * DAY, now=now)
    assert len(plan.delete) == 3
    # a prune killed between the rename and the removal leaves a hidden directory only
    real_rmtree = retention.shutil.rmtree
    calls = []

    def killed(path, *a, **kw):
        calls.append(Path(path).name)
        raise KeyboardInterrupt

    monkeypatch.setattr(retention.shutil, "rmtree", killed)
    with pytest.raises(KeyboardInterrupt):
        retention.apply_report_prune(plan)
    assert calls == [f".date=2024-06-01.pruning-{os.getpid()}"]
    assert sorted(p.name for p in (tmp_path / "group_status").iterdir()) == [
        f".date=2024-06-01.pruning-{os.getpid()}", "date=2024-06-10"]
    monkeypatch.setattr(retention.shutil, "rmtree", real_rmtree)
    again = retention.plan_report_prune(tmp_path, retention.list_partitions(tmp_path),
                                        keep_ms=5 * DAY, now=now)
    assert [(p.dataset, p.day.isoformat(), p.leftover) for p in again.delete] == [
        ("group_status", "2024-06-01", True), ("lag", "2024-06-01", False),
        ("lag", "2024-06-02", False)]
    monkeypatch.setattr(retention.os, "rename", lambda a, b: (_ for _ in ()).throw(
        PermissionError(13, "Permission denied", str(a))))
    with pytest.raises(UsageError, match=r"cannot delete report partition .*lag/date=2024-06-01"
                                         r": Permission denied \(1 deleted before it\)"):
        retention.apply_report_prune(again)  # the leftover went, then the rename failed
    monkeypatch.undo()
    again = retention.plan_report_prune(tmp_path, retention.list_partitions(tmp_path),
                                        keep_ms=5 * DAY, now=now)
    done = retention.apply_report_prune(again)
    assert len(done) == 2
    left = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*")
                  if p.is_dir())
    assert left == ["group_status", "group_status/date=2024-06-10", "lag",
                    "lag/date=2024-06-10"]


def test_report_dir_checks():
    with pytest.raises(UsageError, match="local directories"):
        retention.local_dir("s3a://bucket/report", "report directory", "x")
    with pytest.raises(UsageError, match="does not exist"):
        retention.local_dir("file:///nonexistent/report", "report directory", "x")


# ---- the commands ---------------------------------------------------------------------------

def test_lag_prune_plans_then_executes(tmp_path):
    today = date.fromtimestamp(__import__("time").time())
    make_report(tmp_path / "rep", {"lag": ["2020-01-01", "2020-01-02", today.isoformat()],
                                   "quarantine": ["2020-01-05"]})
    make_captures(tmp_path / "snaps", [("c1", T0), ("c1", T0 + 60_000)])
    args = ["lag", "prune", "--out", str(tmp_path / "rep"), "--snapshots",
            str(tmp_path / "snaps"), "--keep", "30d"]
    r = run_cli([*args, "-o", "json"])
    assert r.exit_code == 0, r.stderr
    assert r.json["executed"] is False and r.json["files"] == 5 and r.json["bytes"] > 0
    assert [(x["what"], x["date"], x["action"]) for x in r.json["rows"]] == [
        ("lag", "2020-01-01", "delete"), ("lag", "2020-01-02", "delete"),
        ("quarantine", "2020-01-05", "keep (newest)"), ("snapshots", "2024-06-01", "delete"),
        ("snapshots", "2024-06-01", "keep (newest)")]
    assert (tmp_path / "rep" / "lag" / "date=2020-01-01").is_dir()  # a plan deletes nothing
    p = run_cli([*args, "-o", "plain"])
    assert "nothing was deleted (re-run with --execute)" in p.stdout
    x = run_cli([*args, "--execute", "-o", "json"])
    assert x.exit_code == 0, x.stderr
    assert [(y["what"], y["date"], y["action"]) for y in x.json["rows"]] == [
        ("lag", "2020-01-01", "deleted"), ("lag", "2020-01-02", "deleted"),
        ("quarantine", "2020-01-05", "keep (newest)"), ("snapshots", "2024-06-01", "deleted"),
        ("snapshots", "2024-06-01", "keep (newest)")]
    assert sorted(p.name for p in (tmp_path / "rep" / "lag").iterdir()) == [
        f"date={today.isoformat()}"]
    assert [f.capture_ts for f in list_captures(tmp_path / "snaps")] == [T0 + 60_000]
    again = run_cli([*args, "--execute", "-o", "plain"])
    assert again.exit_code == 0 and "nothing older than" in again.stdout


@pytest.mark.parametrize("args, msg", [
    (["--keep", "30d"], "say what to prune"),
    (["--keep", "30", "--out", "."], "has no unit"),
    (["--keep", "30d", "--out", "hdfs:///r"], "works on local directories"),
    (["--keep", "30d", "--snapshots", "/nonexistent/s"], "snapshot directory /nonexistent/s "
                                                         "does not exist")])
def test_lag_prune_bad_input(args, msg):
    r = run_cli(["lag", "prune", *args])
    assert r.exit_code == 2 and msg in r.stderr and "hint:" in r.stderr, r.stderr


def test_lag_prune_waits_for_no_capture(tmp_path):
    import fcntl

    make_captures(tmp_path, [("c1", T0), ("c1", T0 + DAY)])
    with open(tmp_path / ".mqctl-snapshot.lock", "a+") as fh:
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        plan = run_cli(["lag", "prune", "--snapshots", str(tmp_path), "--keep", "1d"])
        r = run_cli(["lag", "prune", "--snapshots", str(tmp_path), "--keep", "1d",
                     "--execute"])
    assert plan.exit_code == 0  # a plan reads only
    assert r.exit_code == 6 and "still writing" in r.stderr
    assert len(list_captures(tmp_path)) == 2


def test_lag_prune_waits_for_no_report_run(tmp_path):
    import fcntl

    make_report(tmp_path, {"lag": ["2020-01-01", "2020-01-02"]})
    with open(tmp_path / ".mqctl-lag.lock", "a+") as fh:  # a report run writing there
        fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        plan = run_cli(["lag", "prune", "--out", str(tmp_path), "--keep", "1d"])
        r = run_cli(["lag", "prune", "--out", str(tmp_path), "--keep", "1d", "--execute"])
    assert plan.exit_code == 0  # a plan reads only
    assert r.exit_code == 6 and "another mqctl lag report is still writing" in r.stderr
    assert (tmp_path / "lag" / "date=2020-01-01").is_dir()
    done = run_cli(["lag", "prune", "--out", str(tmp_path), "--keep", "1d", "--execute"])
    assert done.exit_code == 0 and not (tmp_path / "lag" / "date=2020-01-01").exists()


def test_snapshot_gzip_and_keep_against_the_sim(cli, sim, tmp_path):
    make_captures(tmp_path, [("DefaultCluster", T0), ("other", T0)])
    (tmp_path / "2024-06-01" / "keep-me.txt").write_text("not a capture")
    sim.advance(30)
    r = cli(["-n", sim.namesrv_addr, "snapshot", "--out", str(tmp_path), "-g", "GID_PAY",
             "--compress", "gzip", "--keep", "7d", "-o", "json"])
    assert r.exit_code == 0, r.stderr
    d = r.json
    assert d["file"].endswith(".jsonl.gz")
    rows = read_rows(d["file"])
    assert len(rows) == d["rows"] > 0 and {x["group"] for x in rows} == {"GID_PAY"}
    assert d["cluster"] == rows[0]["cluster"] == "DefaultCluster"
    # the old capture of this cluster is deleted (it is not its newest any more), the other
    # cluster's only capture stays, and so does the file mqctl did not write
    assert [Path(p).name for p in d["pruned"]] == [
        "mqctl-snapshot-DefaultCluster-20240601T100000.123Z.jsonl.gz"]
    names = sorted(p.name for p in tmp_path.rglob("*") if p.is_file())
    assert "keep-me.txt" in names and "mqctl-snapshot-other-20240601T100000.123Z.jsonl.gz" \
        in names and Path(d["file"]).name in names
    plain = cli(["-n", sim.namesrv_addr, "snapshot", "--out", str(tmp_path), "-g", "GID_PAY",
                 "--keep", "7d"])
    assert plain.exit_code == 0, plain.stderr
    assert "--keep 7d: no capture file to delete" in plain.stdout
    sent = {request_name(x.code) for x in sim.request_log if x.code in MUTATING_REQUESTS}
    assert sent == set()
    bad = cli(["-n", sim.namesrv_addr, "snapshot", "--out", str(tmp_path), "-g", "GID_PAY",
               "--keep", "7"])
    assert bad.exit_code == 2 and "has no unit" in bad.stderr


def test_gzip_capture_on_a_full_disk_leaves_nothing(tmp_path, monkeypatch):
    """ENOSPC while the compressed bytes are written: one usage error naming the file, no
    temporary file, no date directory (as for the plain format, tests/snapshot/test_out_errors)."""
    import errno

    real = gzip.GzipFile.write

    def full(self, data):
        real(self, data[:10])
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(gzip.GzipFile, "write", full)
    with pytest.raises(UsageError, match=r"cannot write the capture file .*\.jsonl\.gz: No "
                                         r"space left on device") as e:
        write(a_snapshot(), tmp_path / "out", compress="gzip")
    assert "nothing was left half written" in (e.value.hint or "")
    assert not any(tmp_path.rglob("*"))
