"""One bad input file never stops the lag report (the lag report's hostile-input
catalogue; the rest of it is in tests/cli/test_output_paths_and_bounded_inputs.py).

* a file Spark cannot read (a truncated or corrupt ``.jsonl.gz``, one that is not gzip, an empty
  one, trailing bytes; a dangling symlink, a symlink loop, a FIFO, no permission; a directory
  that cannot be listed; a file deleted between the listing and Spark's read) is quarantined
  whole (reason ``unreadable file``, the cause in the detail), counted, and the report finishes,
  with no Java stack trace on the terminal;
* ``--state`` is checked like ``--out`` before Spark starts, and a second run into the same
  ``--out`` (or ``--state``) is refused before the JVM starts;
* snapshot lines: a wrong type names the field and the value, an empty or control-character
  name and a missing cluster are quarantined (never a series of their own), ``line`` is an
  integer.

Each case here failed on the code before (checked against the branch point's tree)."""

from __future__ import annotations

import errno
import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, run_cli

from mqctl.lagjob.inputs import InputSpec, Kind
from mqctl.lagjob.readers import list_local

from .builders import MIN, T0, iso_name, snap_row, write

LINES = b"".join(b'{"n":%d,"pad":"%s"}\n' % (i, b"x" * 40) for i in range(500))
GOOD = gzip.compress(LINES)


# ---- the gzip check: what Hadoop's gzip codec (Spark's reader of .gz) refuses ------------------

def _bad_crc() -> bytes:
    b = bytearray(GOOD)
    b[-8] ^= 0xFF  # the CRC-32 of the trailer (RFC 1952 section 2.3.1)
    return bytes(b)


def _bad_length() -> bytes:
    b = bytearray(GOOD)
    b[-1] ^= 0x01  # ISIZE
    return bytes(b)


@pytest.mark.parametrize("data, cause", [
    (GOOD[: len(GOOD) // 2], "truncated gzip"),
    (GOOD[:-8], "truncated gzip"),  # no trailer
    (GOOD[:10], "truncated gzip"),  # the header only
    (LINES[:300], "not gzip"),
    (b"", "empty gzip file"),
    (_bad_crc(), "corrupt gzip: CRC-32 mismatch"),
    (_bad_length(), "corrupt gzip: length mismatch"),
    (GOOD + b"\0" * 100, "trailing data after gzip member 1: 100 byte(s)"),
    (GOOD + b"garbage\n", "trailing data after gzip member 1"),
], ids=["half", "no-trailer", "header-only", "not-gzip", "empty", "crc", "length",
        "trailing-zeros", "trailing-garbage"])
def test_gzip_check_names_the_cause(tmp_path, data, cause):
    from mqctl.lagjob import probe

    f = tmp_path / "x.jsonl.gz"
    f.write_bytes(data)
    err = probe.check_local(str(f), len(data))
    assert err is not None and err.startswith(cause), err


def test_gzip_check_counts_the_readable_part_of_a_truncated_file():
    from mqctl.lagjob import probe

    data = GOOD[: len(GOOD) // 2]
    chunks = [data[i:i + 7] for i in range(0, len(data), 7)]  # tiny reads

    r = probe.check_gzip(lambda _n: chunks.pop(0) if chunks else b"", len(data))
    assert r.error and r.error.startswith("truncated gzip")
    assert r.lines == LINES[: r.out_bytes].count(b"\n") and 0 < r.lines < 500
    assert f"holds {r.lines} whole line(s)" in r.error


def test_gzip_check_reads_several_members_whole(tmp_path):
    from mqctl.lagjob import probe

    f = tmp_path / "day.jsonl.gz"  # cat a.jsonl.gz b.jsonl.gz > day.jsonl.gz
    f.write_bytes(GOOD + GOOD)
    assert probe.check_local(str(f), f.stat().st_size) is None
    with open(f, "rb") as fh:
        r = probe.check_gzip(fh.read)
    assert (r.error, r.lines, r.out_bytes) == (None, 1000, 2 * len(LINES))


def test_a_gzip_file_without_the_gz_name_is_checked_by_its_magic(tmp_path):
    from mqctl.lagjob import probe

    f = tmp_path / "consumerOffset.json"
    f.write_bytes(GOOD[:40])
    assert str(probe.check_local(str(f), 40)).startswith("truncated gzip")
    plain = tmp_path / "topics.json"
    plain.write_text("{}")
    assert probe.check_local(str(plain), 2) is None


# ---- the listing: every unreadable file is listed, with its cause, never dropped --------------

def _capture(root: Path, i: int, name: str | None = None, gz: bool = False) -> Path:
    ts = T0 + i * MIN
    rows = [snap_row(ts, "G", "T", q, 1000 + 10 * i, 990 + 5 * i, owner="a@1") for q in range(4)]
    text = "".join(json.dumps(r) + "\n" for r in rows)
    p = root / (name or f"mqctl-snapshot-c1-{iso_name(ts)}.jsonl" + (".gz" if gz else ""))
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(gzip.compress(text.encode()) if gz else text.encode())
    return p


def hostile_dir(root: Path) -> dict[str, str]:
    """Good captures 0 and 1 and one bad file of each class; name -> expected cause."""
    _capture(root, 0)
    _capture(root, 1, gz=True)
    t = _capture(root, 2, gz=True)
    t.write_bytes(t.read_bytes()[:-20])
    n = _capture(root, 3, gz=True)
    n.write_bytes(b"not gzip at all\n")
    os.symlink("/nonexistent/x.jsonl", root / f"mqctl-snapshot-c1-{iso_name(T0 + 4 * MIN)}.jsonl")
    os.symlink("loop2.jsonl", root / "loop1.jsonl")
    os.symlink("loop1.jsonl", root / "loop2.jsonl")
    os.mkfifo(root / f"mqctl-snapshot-c1-{iso_name(T0 + 5 * MIN)}.jsonl")
    (root / "consumerOffset.json.gz").write_bytes(gzip.compress(b'{"offsetTable":{}}')[:-3])
    (root / "rocketmq_client.log.gz").write_bytes(b"\x1f\x8b" + b"\0" * 30)
    return {t.name: "truncated gzip", n.name: "not gzip",
            f"mqctl-snapshot-c1-{iso_name(T0 + 4 * MIN)}.jsonl":
                "dangling symlink (-> /nonexistent/x.jsonl)",
            "loop1.jsonl": "symlink loop", "loop2.jsonl": "symlink loop",
            f"mqctl-snapshot-c1-{iso_name(T0 + 5 * MIN)}.jsonl": "not a regular file (FIFO)",
            "consumerOffset.json.gz": "truncated gzip",
            "rocketmq_client.log.gz": "corrupt gzip"}


def test_listing_marks_every_unreadable_file(tmp_path):
    expected = hostile_dir(tmp_path / "in")
    listing = list_local([InputSpec(str(tmp_path / "in"))])
    bad = {Path(f.path).name: f.unreadable for f in listing.unreadable()}
    assert set(bad) == set(expected)
    for name, cause in expected.items():
        assert str(bad[name]).startswith(cause), (name, bad[name])
    read = {Path(f.path).name for v in listing.by_kind().values() for f in v}
    assert read == {f"mqctl-snapshot-c1-{iso_name(T0)}.jsonl",
                    f"mqctl-snapshot-c1-{iso_name(T0 + MIN)}.jsonl.gz"}
    assert not listing.unknown()
    kinds = {Path(f.path).name: f.kind for f in listing.unreadable()}
    assert kinds["consumerOffset.json.gz"] == "consumer-offset"
    assert kinds["rocketmq_client.log.gz"] == "client-log"


def test_a_dangling_symlink_given_by_name_is_unreadable_not_unmatched(tmp_path):
    link = tmp_path / "x.jsonl"
    os.symlink(tmp_path / "gone.jsonl", link)
    listing = list_local([InputSpec(str(link))])
    assert not listing.unmatched
    assert [f.unreadable for f in listing.files] == [f"dangling symlink (-> {tmp_path}/gone.jsonl)"]


def test_no_permission_is_unreadable(tmp_path, monkeypatch):
    """(Tests run as root, which reads any file: the refusal is injected where mqctl opens.)"""
    p = _capture(tmp_path / "in", 0, gz=True)
    real_open = open

    def refuse(path, *a, **k):
        if str(path) == str(p):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real_open(path, *a, **k)
    monkeypatch.setattr("builtins.open", refuse)
    listing = list_local([InputSpec(str(tmp_path / "in"))])
    assert [f.unreadable for f in listing.files] == ["permission denied"]


def test_a_directory_that_cannot_be_listed_is_unreadable(tmp_path, monkeypatch):
    root = tmp_path / "in"
    _capture(root, 0)
    (root / "locked").mkdir()
    real = os.scandir

    def scandir(path="."):
        if str(path).endswith("locked"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))
        return real(path)
    monkeypatch.setattr(os, "scandir", scandir)
    listing = list_local([InputSpec(str(root))])
    bad = [(Path(f.path).name, f.unreadable) for f in listing.unreadable()]
    assert bad == [("locked", "cannot list directory: Permission denied")]
    assert len(listing.by_kind()[Kind.SNAPSHOT]) == 1


def test_symlinked_directories_are_followed_once(tmp_path):
    root, other = tmp_path / "in", tmp_path / "elsewhere"
    _capture(other, 0)
    root.mkdir()
    os.symlink(other, root / "linked")
    os.symlink(root, root / "linked" / "back")  # a cycle: in/linked/back -> in
    listing = list_local([InputSpec(str(root))])
    assert [Path(f.path).name for f in listing.files] == [f"mqctl-snapshot-c1-{iso_name(T0)}.jsonl"]


def test_files_the_state_holds_parsed_are_not_decompressed(tmp_path, monkeypatch):
    from mqctl.lagjob import probe

    root = tmp_path / "in"
    held = _capture(root, 0, gz=True)
    new = _capture(root, 1, gz=True)
    seen: list[int | None] = []
    real = probe.check_gzip

    def counted(read, size=None):
        seen.append(size)
        return real(read, size)
    monkeypatch.setattr(probe, "check_gzip", counted)
    st = held.stat()
    list_local([InputSpec(str(root))],
               lambda p, size, mtime: p == str(held) and size == st.st_size
               and mtime == int(st.st_mtime * 1000))
    assert seen == [new.stat().st_size]


def test_a_failed_spark_read_names_the_file_and_the_cause():
    from mqctl.lagjob.guards import failed_read

    text = ("An error occurred while calling o1069.parquet.\n: org.apache.spark.SparkException: "
            "[FAILED_READ_FILE.NO_HINT] Encountered error while reading file file:///in/x%20y."
            "jsonl.gz.  SQLSTATE: KD001\n\tat org.apache.spark.sql.errors.QueryExecutionErrors$"
            ".cannotReadFilesError(QueryExecutionErrors.scala:920)\nCaused by: java.io."
            "EOFException: Unexpected end of input stream\n\tat org.apache.hadoop.io.compress."
            "DecompressorStream.decompress(DecompressorStream.java:165)\n")
    assert failed_read(RuntimeError(text)) == ("file:///in/x%20y.jsonl.gz",
                                               "EOFException: Unexpected end of input stream")
    gone = "[PATH_NOT_FOUND] Path does not exist: file:/in/a.jsonl. SQLSTATE: 42K03"
    assert failed_read(RuntimeError(gone)) == (
        "file:/in/a.jsonl", "the file does not exist (deleted after it was listed)")
    assert failed_read(RuntimeError("java.lang.OutOfMemoryError: Java heap space")) is None


def test_any_other_spark_failure_is_one_line_without_the_java_trace():
    from mqctl.errors import ExitCode
    from mqctl.lagjob.guards import java_failure

    text = ("An error occurred while calling o77.parquet.\n: org.apache.spark.SparkException: "
            "[INTERNAL_ERROR] something broke.\n\tat org.apache.spark.X.y(X.scala:1)\n"
            "Caused by: java.lang.IllegalStateException: state\n\tat a.b.C.d(C.java:2)\n")
    err = java_failure(RuntimeError(text), "lag")
    assert err is not None and err.exit_code == ExitCode.INTERNAL
    assert err.message == ("Spark failed in the lag report's 'lag' step: org.apache.spark."
                           "SparkException: [INTERNAL_ERROR] something broke.; caused by "
                           "IllegalStateException: state")
    assert "\tat " not in err.message and "--debug" in str(err.hint)
    assert java_failure(ValueError("a Python bug"), "lag") is None


def test_spark_log_has_no_stack_traces_unless_debug():
    from mqctl.lagjob.session import log4j2_properties

    assert "alwaysWriteExceptions = false" in log4j2_properties()
    assert "alwaysWriteExceptions = true" in log4j2_properties(traces=True)


def test_store_file_names_with_a_newline_are_quarantined():
    from mqctl.lagjob import parsers as P
    from mqctl.lagjob.inputs import PathMeta

    text = json.dumps({"offsetTable": {"T\nX@G": {"0": 5}, "T@ G": {"0": 5}, "T@G": {"0": 7}}})
    recs = list(P.parse_file("consumer-offset", "/x/consumerOffset.json", text,
                             PathMeta(capture_ts=T0, broker="broker-a"), T0, None, "c1"))
    bad = [r for tag, r in recs if tag == P.BAD]
    obs = [r for tag, r in recs if tag == P.OBS]
    assert [b[3] for b in bad] == ["bad offsetTable key"] * 2
    assert bad[0][4] == 'topic: "T\\nX" (whitespace or a control character: never in a RocketMQ ' \
                        'name)'
    assert len(obs) == 1


# ---- start-up checks and the lock, before Spark starts ----------------------------------------

@pytest.fixture
def no_spark(monkeypatch):
    import mqctl.lagjob.session as S

    def boom(*a, **k):
        raise AssertionError("Spark was started")
    monkeypatch.setattr(S, "spark_session", boom)


def test_state_on_a_read_only_location_is_refused_before_spark(tmp_path, no_spark,
                                                                monkeypatch):
    from mqctl import fsutil

    _capture(tmp_path / "in", 0)
    real = fsutil.tempfile.mkstemp

    def refuse(*a, **k):
        if str(k.get("dir", "")).startswith(str(tmp_path / "ro")):
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), k.get("dir"))
        return real(*a, **k)
    monkeypatch.setattr(fsutil.tempfile, "mkstemp", refuse)
    (tmp_path / "ro").mkdir()
    r = run_cli(["lag", "report", str(tmp_path / "in"), "--out", str(tmp_path / "o"),
                 "--state", str(tmp_path / "ro" / "state")])
    assert r.exit_code == 2, r.stderr
    assert f"cannot write state directory {tmp_path}/ro/state: Read-only file system" in r.stderr
    assert "hint:" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o").exists()


def test_state_that_is_a_regular_file_is_refused_before_spark(tmp_path, no_spark):
    _capture(tmp_path / "in", 0)
    (tmp_path / "f").write_text("x")
    r = run_cli(["lag", "report", str(tmp_path / "in"), "--out", str(tmp_path / "o"),
                 "--state", str(tmp_path / "f")])
    assert r.exit_code == 2 and "cannot write state directory" in r.stderr, r.stderr
    assert "regular file" in r.stderr


def test_a_second_run_into_the_same_out_is_refused_before_the_jvm(tmp_path, no_spark):
    from mqctl.lagjob.guards import report_lock

    _capture(tmp_path / "in", 0)
    out = tmp_path / "o"
    with report_lock(str(out)):  # the first run, still running
        r = run_cli(["lag", "report", str(tmp_path / "in"), "--out", str(out)])
    assert r.exit_code == 6, r.stderr
    assert f"another mqctl lag report is still writing to {out}" in r.stderr


def test_a_second_run_sharing_a_state_is_refused_before_the_jvm(tmp_path, no_spark):
    from mqctl.lagjob.guards import state_lock

    _capture(tmp_path / "in", 0)
    st = tmp_path / "state"
    with state_lock(str(st), str(tmp_path / "o1")):
        r = run_cli(["lag", "report", str(tmp_path / "in"), "--out", str(tmp_path / "o2"),
                     "--state", str(st)])
    assert r.exit_code == 6, r.stderr
    assert f"still using the state directory {st}" in r.stderr


# ---- end to end (Spark) --------------------------------------------------------------------

@pytest.mark.spark
@pytest.mark.timeout(900)
def test_bad_files_are_quarantined_and_no_java_trace_reaches_the_terminal(tmp_path):
    """The issue's reproduction through the installed entry point (its own JVM: Spark's log
    goes to the process's stderr)."""
    expected = hostile_dir(tmp_path / "in")
    out = tmp_path / "out"
    env = dict(os.environ, PYTHONPATH=str(ROOT), SPARK_LOCAL_IP="127.0.0.1")
    p = subprocess.run([sys.executable, "-m", "mqctl", "-o", "json", "lag", "report",
                        str(tmp_path / "in"), "--out", str(out)],
                       capture_output=True, text=True, env=env, timeout=900)
    assert p.returncode == 0, p.stderr
    assert "\tat " not in p.stderr and "Exception" not in p.stderr, p.stderr
    assert "internal error" not in p.stderr
    data = json.loads(p.stdout)
    assert data["quarantine"]["by_reason"] == {"unreadable file": len(expected)}
    assert data["inputs"] == {"snapshot": 2, "unreadable": len(expected)}
    assert data["counts"]["lag_rows"] == 8  # the two good captures, 4 queues each
    assert any("could not be read and were quarantined" in n and "symlink loop" in n
               for n in data["notes"])


@pytest.mark.spark
def test_unreadable_file_rows_in_the_quarantine_dataset(spark, tmp_path):
    from mqctl.lagjob import run_report

    expected = hostile_dir(tmp_path / "in")
    res = run_report([str(tmp_path / "in")], str(tmp_path / "out"), spark=spark, tz="UTC")
    q = spark.read.parquet(str(tmp_path / "out" / "quarantine"))
    assert dict(q.dtypes)["line"] == "bigint"
    rows = {Path(r["source"]).name: r for r in q.collect()}
    assert set(rows) == set(expected)
    for name, cause in expected.items():
        assert rows[name]["reason"] == "unreadable file"
        assert rows[name]["detail"].startswith(cause) and rows[name]["line"] is None
    assert rows["consumerOffset.json.gz"]["source_kind"] == "consumer-offset"
    assert res.counts["lag_rows"] == 8


@pytest.mark.spark
def test_a_file_deleted_after_the_listing_is_quarantined_and_the_run_starts_over(
        spark, tmp_path, monkeypatch):
    from mqctl.lagjob import readers, run_report

    root = tmp_path / "in"
    for i in range(3):
        _capture(root, i, gz=True)
    victim = _capture(root, 3, gz=True)
    real = readers.list_local

    def list_then_delete(*a, **k):
        listing = real(*a, **k)
        victim.unlink()  # between the listing and Spark's read
        return listing
    monkeypatch.setattr(readers, "list_local", list_then_delete)
    said: list[str] = []
    res = run_report([str(root)], str(tmp_path / "out"), spark=spark, tz="UTC",
                     progress=said.append)
    assert any(str(victim) in m and "quarantined; computing again" in m for m in said), said
    assert res.quarantine == {"unreadable file": 1} and res.counts["lag_rows"] == 12
    assert res.inputs == {"snapshot": 3, "unreadable": 1}


@pytest.mark.spark
def test_snapshot_lines_name_the_field_and_never_make_a_series_of_their_own(spark, tmp_path):
    from mqctl.lagjob import run_report

    def row(**kw) -> str:
        r = snap_row(T0, "G", "T", 0, 1000, 990, owner="a@1")
        r.update(kw)
        return json.dumps(r)

    lines = [row(), row(queue_id=1, broker_offset="abc"), row(queue_id=2, group=""),
             row(queue_id=3, topic="T\nX"), row(queue_id=4, cluster=None),
             row(queue_id=1.5), row(queue_id=6, consumer_offset="123"),
             row(queue_id=7, members="a"), row(queue_id=8, online="yes"),
             row(queue_id=9, cluster=" "), row(queue_id=10, group="G\u202e")]
    path = write(tmp_path / "in" / f"mqctl-snapshot-c1-{iso_name(T0)}.jsonl",
                 "\n".join(lines) + "\n")
    for inc in (False, True):  # the two parsing paths: state (staging) and none
        out = tmp_path / f"out{inc}"
        res = run_report([str(path)], str(out), spark=spark, tz="UTC", incremental=inc)
        q = spark.read.parquet(str(out / "quarantine"))
        assert dict(q.dtypes)["line"] == "bigint"
        got = {r["line"]: (r["reason"], r["detail"]) for r in q.collect()}
        assert got == {
            2: ("wrong type", 'broker_offset: "abc" (expected a whole number)'),
            3: ("missing field", "group"),
            4: ("bad name", 'topic: "T\\nX" (whitespace or a control character: never in a '
                            "RocketMQ name)"),
            5: ("missing field", "cluster"),
            6: ("wrong type", "queue_id: 1.5 (expected a whole number)"),
            7: ("wrong type", 'consumer_offset: "123" (expected a whole number)'),
            8: ("wrong type", 'members: "a" (expected a list)'),
            9: ("wrong type", 'online: "yes" (expected true or false)'),
            10: ("missing field", "cluster"),
            11: ("bad name", 'group: "G\u202e" (whitespace or a control character: never in '
                             "a RocketMQ name)"),  # (raw in the data, as JSON keeps it)
        }, inc
        lag = spark.read.parquet(str(out / "lag"))
        assert [(r["cluster"], r["group"], r["topic"]) for r in lag.collect()] == [
            ("c1", "G", "T")]
        assert res.quarantined == 10


@pytest.mark.spark
def test_a_bad_file_and_the_manifest(spark, tmp_path):
    """An ingested file replaced by a truncated copy loses its rows (a full run over the same
    inputs has none of it) and is quarantined; fixed, it is read again; a bad file that stays
    bad does not keep later runs from being bounded re-runs, which equal a full run."""
    from .test_bounded import bounded, run, write_capture
    from .test_incremental import assert_same

    root, inc = tmp_path / "in", tmp_path / "inc"
    for i in range(5):
        write_capture(root, i)
    run(spark, root, inc)
    # capture 2 replaced by a truncated gzip copy (the plain one goes)
    plain = next(root.rglob(f"*{iso_name(T0_B + 2 * STEP_B)}.jsonl"))
    gz = plain.with_name(plain.name + ".gz")
    gz.write_bytes(gzip.compress(plain.read_bytes())[:-30])
    plain.unlink()
    said: list[str] = []
    r2 = run(spark, root, inc, said)
    assert not bounded(said)
    assert r2.quarantine == {"unreadable file": 1}
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert str(plain) not in man["files"] and str(gz) not in man["files"]
    rf = run(spark, root, tmp_path / "full1", incremental=False)
    assert_same(spark, inc, tmp_path / "full1", r2, rf)
    # new captures while the bad file stays: bounded, equal to a full run
    write_capture(root, 5)
    said = []
    r3 = run(spark, root, inc, said)
    assert bounded(said), said
    rf = run(spark, root, tmp_path / "full2", incremental=False)
    assert_same(spark, inc, tmp_path / "full2", r3, rf)
    # fixed: read again
    gz.write_bytes(gzip.compress(_plain_capture(2)))
    r4 = run(spark, root, inc)
    assert r4.quarantine == {}
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert man["files"][str(gz)]["bad"] is False
    rf = run(spark, root, tmp_path / "full3", incremental=False)
    assert not list((inc / "quarantine").rglob("*.parquet"))  # (its last date was removed)
    assert_same(spark, inc, tmp_path / "full3", r4, rf, skip=("quarantine",))


T0_B = 1717200000000
STEP_B = 3 * 3600_000


def _plain_capture(i: int) -> bytes:
    from .test_bounded import capture

    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in capture(i)).encode()
