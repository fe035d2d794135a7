"""Lag report: output locations are checked before Spark starts, and
values outside a plausible range are quarantined with the field named.

Tests run as root, which ignores directory permissions: a read-only / no-permission location is
simulated by injecting OSError(EROFS/EACCES) where mqctl creates its probe file
(``tempfile.mkstemp`` in mqctl.fsutil), and a full disk by a ``statvfs`` result with no free
blocks (ENOSPC); a regular file in the path is real."""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import run_cli

from mqctl import fsutil

from .builders import T0, snap_row, write_snapshot


def tiny(root: Path) -> Path:
    snap = root / "snap"
    write_snapshot(snap, "c1", T0, [snap_row(T0, "G", "T", 0, 1000, 990, owner="a@1")])
    return snap


@pytest.fixture
def no_spark(monkeypatch):
    """Spark must not start: the output check comes first."""
    import mqctl.lagjob.session as S

    def boom(*a, **k):
        raise AssertionError("Spark was started before the output location was checked")
    monkeypatch.setattr(S, "spark_session", boom)


def _cli(tmp_path, *extra):
    return run_cli(["lag", "report", str(tiny(tmp_path)), *extra])


def test_out_is_a_regular_file(tmp_path, no_spark):
    (tmp_path / "f").write_text("x")
    r = _cli(tmp_path, "--out", str(tmp_path / "f"))
    assert r.exit_code == 2, r.stderr
    assert "cannot write report directory" in r.stderr and "regular file" in r.stderr
    assert "hint:" in r.stderr and "Traceback" not in r.stderr


def test_out_under_a_regular_file(tmp_path, no_spark):
    (tmp_path / "f").write_text("x")
    r = _cli(tmp_path, "--out", str(tmp_path / "f" / "report"))
    assert r.exit_code == 2, r.stderr
    assert "Not a directory" in r.stderr and "hint:" in r.stderr
    assert (tmp_path / "f").read_text() == "x"


@pytest.mark.parametrize("code,word", [(errno.EROFS, "read-only"),
                                       (errno.EACCES, "permissions")])
def test_out_read_only_or_not_permitted(tmp_path, no_spark, monkeypatch, code, word):
    def refuse(*a, **k):
        raise OSError(code, os.strerror(code), k.get("dir"))
    monkeypatch.setattr(fsutil.tempfile, "mkstemp", refuse)
    r = _cli(tmp_path, "--out", str(tmp_path / "o"))
    assert r.exit_code == 2, r.stderr
    assert os.strerror(code) in r.stderr and word in r.stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("flag", ["--out", "--prom-file"])
def test_full_disk(tmp_path, no_spark, monkeypatch, flag):
    monkeypatch.setattr(fsutil.os, "statvfs",
                        lambda p: SimpleNamespace(f_bavail=0, f_frsize=4096))
    args = (["--out", str(tmp_path / "o")] if flag == "--out" else
            ["--out", str(tmp_path / "o"), "--prom-file", str(tmp_path / "x.prom")])
    monkeypatch.setattr(fsutil, "MIN_FREE_BYTES", 1 << 20)
    r = _cli(tmp_path, *args)
    assert r.exit_code == 2, r.stderr
    assert os.strerror(errno.ENOSPC) in r.stderr and "free space" in r.stderr
    assert not (tmp_path / "o").exists() and not (tmp_path / "x.prom").exists()


def test_prom_file_missing_parent_is_refused(tmp_path, no_spark):
    r = _cli(tmp_path, "--out", str(tmp_path / "o"), "--prom-file",
             str(tmp_path / "missing" / "dir" / "x.prom"))
    assert r.exit_code == 2, r.stderr
    assert "does not exist" in r.stderr and "typo" in r.stderr
    assert not (tmp_path / "missing").exists()


def test_prom_file_is_a_directory(tmp_path, no_spark):
    (tmp_path / "d").mkdir()
    r = _cli(tmp_path, "--out", str(tmp_path / "o"), "--prom-file", str(tmp_path / "d"))
    assert r.exit_code == 2 and "Is a directory" in r.stderr


def test_writable_locations_pass(tmp_path):
    assert fsutil.output_location_error(tmp_path / "a" / "b", "x", directory=True) is None
    assert fsutil.output_location_error(tmp_path / "x.prom", "x", directory=False) is None
    assert list(tmp_path.iterdir()) == []  # the probe left nothing behind


# ---- one bad row never stops the report (Spark, end to end) ---------------------------

Y2099 = 4_070_908_800_000  # 2099-01-01T00:00:00Z
BIG = 1 << 62


def test_out_of_range_rows_are_quarantined_and_extremes_compute(spark, tmp_path):
    """Lines with an implausible capture time (1e18: CAST_OVERFLOW before; -5: date=1969),
    an offset beyond 2^63-1 and a negative queue id are quarantined with the field named;
    valid extremes (offsets near 2^62 on two queues, captures in 2099 with the clock there)
    go through every transform without an ANSI overflow."""
    from mqctl.lagjob import run_report
    from mqctl.timeparse import set_clock

    snap = tmp_path / "snap"
    for i in range(3):
        ts = Y2099 + i * 60_000
        rows = [snap_row(ts, "G", "T", q, BIG + 1000 * (i + 1), BIG - 5000 + 10 * i,
                         owner="a@1", last_timestamp=ts - 1000) for q in (0, 1)]
        # group H lags 2^62 on each of two queues: its total does not fit a long
        rows += [snap_row(ts, "H", "T", q, BIG + i, 0, owner="b@1") for q in (0, 1)]
        extra = []
        if i == 0:
            bad = snap_row(ts, "G", "T", 2, 10, 5, owner="a@1")
            extra = [json.dumps({**bad, "capture_ts": 1000000000000000000}),
                     json.dumps({**bad, "capture_ts": -5}),
                     json.dumps({**bad, "broker_offset": 1 << 63}),
                     json.dumps({**bad, "queue_id": -1}),
                     json.dumps({**bad, "last_timestamp": -(1 << 63)})]
        write_snapshot(snap, "c1", ts, rows, extra)
    set_clock(lambda: Y2099 + 10 * 60_000)
    try:
        res = run_report([str(snap)], str(tmp_path / "out"), spark=spark, tz="UTC")
    finally:
        set_clock(None)
    q = {(r["reason"], r["detail"].split("=")[0].split(":")[0]) for r in
         spark.read.parquet(str(tmp_path / "out" / "quarantine")).collect()}
    assert res.quarantined == 5, q
    assert q == {("value out of range", "capture_ts"), ("value out of range", "broker_offset"),
                 ("negative value", "queue_id"), ("negative value", "last_timestamp")}, q
    dates = sorted(p.name for p in (tmp_path / "out" / "lag").iterdir() if p.is_dir())
    assert dates == ["date=2099-01-01"]
    gt = {(r["group"], r["capture_ts"]): r for r in
          spark.read.parquet(str(tmp_path / "out" / "group_status")).collect()}
    last = gt["G", Y2099 + 120_000]
    assert last["total_lag"] == 2 * (3000 + 5000 - 20)  # 2 x (BIG+3000 - (BIG-5000+20))
    h = gt["H", Y2099 + 120_000]
    assert h["max_lag"] == BIG + 2
    assert h["total_lag"] is None  # 2^63 + 4 does not fit: unknown, never a wrapped number


# ---- one bad row, the other input kinds (pure Python: the parsers) --------------------------

def _bad_details(recs):
    from mqctl.lagjob import parsers as P

    i, j = P.BAD_FIELDS.index(("reason", "string")), P.BAD_FIELDS.index(("detail", "string"))
    return [(r[1][i], r[1][j]) for r in recs if r[0] == P.BAD]


def _n(recs, tag):
    return sum(1 for r in recs if r[0] == tag)


def test_store_file_values_out_of_range():
    from mqctl.lagjob import parsers as P
    from mqctl.lagjob.inputs import Kind, PathMeta

    from .builders import consumer_offset_json

    text = consumer_offset_json({"T@G": {0: 5, 1: 1 << 63, 70000: 3}})
    recs = list(P.parse_file(Kind.CONSUMER_OFFSET.value, "/s", text,
                             PathMeta(capture_ts=T0, broker="b"), None, None))
    assert _n(recs, P.OBS) == 1
    assert sorted(_bad_details(recs)) == [
        ("value out of range", "consumer_offset=9223372036854775808: beyond 2^63-1"),
        ("value out of range", "queue_id=70000: above 65535")]
    # a capture time of -5 (an epoch-0 modification time, a broken path stamp) dates nothing
    recs = list(P.parse_file(Kind.CONSUMER_OFFSET.value, "/s", text,
                             PathMeta(capture_ts=-5, broker="b"), None, None))
    assert _n(recs, P.OBS) == 0
    assert _bad_details(recs) == [("value out of range",
                                   "capture_ts=-5: before 2010-01-01")]


def test_mqadmin_values_out_of_range():
    from mqctl.lagjob import parsers as P
    from mqctl.lagjob.inputs import Kind

    from .builders import topic_status

    text = topic_status([("broker-a", 0, 0, 10, 0), ("broker-a", 1, 0, 1 << 64, 0)])
    recs = list(P.parse_file(Kind.TOPIC_STATUS.value, "/s", text, PathMeta_T(), None, None))
    assert _n(recs, P.POINT) == 1
    assert [d for _, d in _bad_details(recs)] == [
        "broker_offset=18446744073709551616: beyond 2^63-1"]


def PathMeta_T():
    from mqctl.lagjob.inputs import PathMeta
    return PathMeta(capture_ts=T0, topic="T")


def test_log_queue_id_out_of_range():
    from mqctl.lagjob import parsers as P

    from .builders import mq

    pre = "2024-06-01 18:00:00.000 INFO  [1] [RebalanceService] [x#y:1] - "
    r = P.parse_client_log_line(pre + "doRebalance, G, add a new mq, "
                                + mq("T", "b", 99999999999), None)
    assert r is not None and r[0] == "bad"
    assert r[1][0] == "value out of range" and r[1][1] == "queue_id=99999999999: above 65535"


def test_disk_full_during_the_run_says_what_was_written(spark, tmp_path, monkeypatch):
    """The checks passed, then the disk filled up while writing the Prometheus file (injected
    ENOSPC where mqctl writes it): a one-line usage error that names the file and lists exactly
    which outputs were already written (the Parquet datasets, summary.csv), not 'internal
    error'."""
    from mqctl.errors import UsageError
    from mqctl.lagjob import run_report
    from mqctl.lagjob import writers as W

    real = W.write_text

    def full(sp, path, text):
        if path.endswith(".prom"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), path)
        real(sp, path, text)
    monkeypatch.setattr(W, "write_text", full)
    out = tmp_path / "out"
    with pytest.raises(UsageError) as ei:
        run_report([str(tiny(tmp_path))], str(out), spark=spark, tz="UTC")
    msg = str(ei.value)
    assert f"{out}/mqctl_lag.prom: No space left on device" in msg, msg
    assert "already written: lag, group_status" in msg and "summary_csv" in msg, msg
    assert "free space" in (ei.value.hint or "")
    assert not (out / "mqctl_lag.prom").exists() and (out / "summary.csv").exists()


def test_relative_out_is_this_process_directory_not_the_jvms(spark, tmp_path, monkeypatch):
    """A relative --out names a directory under this process's working directory even when the
    JVM was started elsewhere (a reused session): every dataset lands there, none beside the
    JVM's working directory (found when a docs example left Parquet files in the checkout)."""
    import os

    from mqctl.lagjob.job import run_report

    from .builders import build_scenario

    jvm_cwd = os.getcwd()
    root = tmp_path / "in"
    build_scenario(root)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    name = f"rel-out-{os.getpid()}"
    run_report([str(root)], name, spark=spark, tz="UTC", log_tz="UTC")
    assert (work / name / "lag").is_dir() and (work / name / "report.html").is_file()
    assert not os.path.exists(os.path.join(jvm_cwd, name))


def test_a_run_leaves_no_checkpoint_blocks_in_a_reused_session(spark, tmp_path, monkeypatch):
    """Every run's localCheckpoint cuts are freed when it ends: a long-lived session (the test
    suite, a notebook) otherwise fills storage memory run after run until an aggregation cannot
    grow its hash map (CI: 'Could not allocate memory to grow BytesToBytesMap')."""
    from mqctl.lagjob import job
    from mqctl.lagjob import run as lagrun

    from .builders import build_scenario

    root = tmp_path / "in"
    build_scenario(root)

    def held() -> set[int]:
        return {int(k) for k in spark.sparkContext._jsc.getPersistentRDDs()}

    # A cache the session's user holds (a notebook's) must outlive the run.
    others = held()
    mine = spark.range(5).cache()
    assert mine.count() == 5
    before = held()
    users = before - others
    assert users, "the user's cache is not in storage"
    at_release: list[set[int]] = []
    release = lagrun._release_checkpoints

    def watched(session, ids):
        at_release.append(held() - before)
        release(session, ids)

    monkeypatch.setattr(lagrun, "_release_checkpoints", watched)
    try:
        job.run_report([str(root)], str(tmp_path / "out"), spark=spark, tz="UTC", log_tz="UTC")
        after = held()
    finally:
        mine.unpersist()
    # The run held cuts of its own until it ended, and none is left. An RDD held before the run
    # may be gone: Spark's ContextCleaner frees the RDDs of DataFrames an earlier test dropped
    # whenever the JVM collects garbage, during this run too (seen in a fresh-clone CI run).
    assert at_release and at_release[0], "the run held no cuts: nothing was tested"
    assert after - before == set()
    assert users <= after, "the run freed a cache it did not make"
