"""End to end: every input kind in one `mqctl lag report` run (through the real CLI boundary),
checked against values worked out by hand, then a re-run of the same window."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from .builders import MIN, T0, build_scenario
from .test_thresholds_writers import validate_exposition

approx = pytest.approx

FAIL_ON = ["group=G_STALL:status>=STALL", "lag_seconds>100000", "quarantined>0"]


def _run_cli(args, env):
    from conftest import run_cli  # tests/conftest.py: the real CLI boundary, in-process

    return run_cli(args, env=env)


@pytest.fixture(scope="module")
def report(spark, tmp_path_factory):
    root = tmp_path_factory.mktemp("inputs")
    out = tmp_path_factory.mktemp("out")
    paths = build_scenario(root)
    args = ["lag", "report", str(root), "--out", str(out), "--tz", "UTC", "--log-tz", "UTC",
            "-o", "json", "--limit", "50"]
    for f in FAIL_ON:
        args += ["--fail-on", f]
    res = _run_cli(args, {"XDG_CONFIG_HOME": str(tmp_path_factory.mktemp("xdg"))})
    return {"root": root, "out": out, "paths": paths, "cli": res, "data": json.loads(res.stdout)}


def rows(spark, out: Path, name: str) -> list[dict]:
    return [r.asDict(recursive=True) for r in spark.read.parquet(str(out / name)).collect()]


def test_exit_code_9_after_writing_everything(report):
    cli = report["cli"]
    assert cli.exit_code == 9, cli.stderr
    assert "2 threshold(s) breached: group=G_STALL:status>=STALL, quarantined>0" in cli.stderr
    b = report["data"]["breaches"]
    assert {(x["expr"], x["group"], x["value"]) for x in b} == {
        ("group=G_STALL:status>=STALL", "G_STALL", "STALL"), ("quarantined>0", None, 11)}
    for name in ("summary.json", "summary.csv", "report.html", "mqctl_lag.prom"):
        assert (report["out"] / name).is_file()
    assert "lag report: writing lag" in cli.stderr  # progress on stderr, data on stdout


def test_latest_status_per_group(report):
    s = {(r["group"], r["topic"]): r for r in report["data"]["summary"]}
    got = {k: (r["status"], r["total_lag"], r["lag_seconds"], r["lag_seconds_source"])
           for k, r in s.items()}
    assert got == {
        # capture 4 (10:04Z); max offset 1400; history 1000..1400 every minute
        # delay_ms 3000; lag 50 never fell (Burrow: WARN), but 3 s is within the default
        # --allowed-lag-seconds 10 (two commit intervals): caught up
        ("G_EXACT", "T"): ("OK", 50, 3.0, "exact"),
        # 1350: the 51st of the 100 messages stored between 10:03 and 10:04
        ("G_INTERP", "T"): ("OK", 50, approx(60 * 50 / 101), "interpolated"),
        ("G_STALL", "T"): ("STALL", 500, 240.0, "lower_bound"),  # 900 < first capture's 1000
        ("G_STOP", "T"): ("STOP", 450, 240.0, "lower_bound"),  # no members
        # 1100: the first message after 10:01 (B=1100 then), of 100 by 10:02
        ("G_REWIND", "T"): ("REWIND", 300, approx(180 - 60 / 101), "interpolated"),
        ("G_MOVE", "T2"): ("OK", 0, 0.0, "exact"),
        # store files + topicStatus: 130 is the 31st of the 60 messages stored between
        # 100@10:00 and 160@10:02 -> 10:00 + 31/61 * 120 s;
        # consumerProgress' group list says G_STORE had no members at 10:04 -> STOP
        ("G_STORE", "TS"): ("STOP", 70, approx(240 - 120 * 31 / 61), "interpolated"),
        ("go_client_dev", "TestTopic-6"): ("OK", 2, 0.0, "exact"),
        ("go_client_dev", "%RETRY%go_client_dev"): ("OK", 0, 0.0, "exact"),
        ("G_CP", "TP"): ("OK", 20, None, "unknown"),
        ("G_BCS", "TB"): ("OK", 10, None, "unknown"),
        # seen only in client logs: listed with the reason, nothing judged
        ("GID_FB", None): (None, None, None, None),
        ("GID_LOG", None): (None, None, None, None),
    }
    for g in ("GID_FB", "GID_LOG"):
        assert s[(g, None)]["health"] is None and s[(g, None)]["health_reasons"] == [
            "no offsets in the inputs: seen only in client or broker logs"]
    assert s[("G_MOVE", "T2")]["rebalances"] == 4
    # 5 captures of a 10-capture window: no queue's window is full yet
    assert s[("G_EXACT", "T")]["complete"] == 0.0
    assert s[("G_INTERP", "T")]["consume_rate"] == pytest.approx(100 / 60)
    assert s[("G_STORE", "TS")]["consume_rate"] == pytest.approx(30 / 120)
    assert s[("G_STORE", "TS")]["produce_rate"] == pytest.approx(40 / 120)
    assert s[("G_STALL", "T")]["peak_lag"] == 500 and s[("G_STALL", "T")]["captures"] == 5
    # worst first
    assert [r["status"] for r in report["data"]["summary"][:2]] == ["STOP", "STOP"]


def test_counts_and_quarantine(report, spark):
    d = report["data"]
    assert d["counts"] == {
        "observations": 53, "lag_rows": 46, "duplicates": 7,  # capture 0 given twice
        "group_topic_rows": 37, "rebalance_events": 8, "queue_moves": 3,
        "reset_events": 1,  # G_REWIND: 1150 -> 1020 at capture 3, owner D@1 unchanged
        "unowned_intervals": 4, "storms": 1, "lock_events": 3, "lock_takeovers": 2,
        "owner_unknown": 0, "never_committed": 0}
    assert d["quarantine"]["by_reason"] == {
        "malformed JSON": 1, "wrong type": 1, "unsupported schema": 1, "missing field": 1,
        "negative value": 1, "malformed store JSON": 1, "malformed row": 1, "topic unknown": 1,
        "truncated result set": 1, "unparsed lock line": 1, "unrecognised input": 1}
    assert d["inputs"] == {"snapshot": 6, "consumer-offset": 4, "topics": 1,
                           "subscription-group": 1, "consumer-progress": 3,
                           "broker-consume-stats": 1, "topic-status": 5, "client-log": 3,
                           "lock-log": 2, "unrecognised": 1, "ignored": 1}
    q = rows(spark, report["out"], "quarantine")
    got = sorted((Path(r["source"]).name, r["line"], r["reason"]) for r in q)
    snap4 = report["paths"]["snap4"].name
    assert got == sorted([
        (snap4, 8, "malformed JSON"), (snap4, 9, "unsupported schema"),
        (snap4, 10, "missing field"), (snap4, 11, "negative value"),
        (snap4, 13, "wrong type"),  # queue_id "x"; line 12 is blank: skipped
        ("brokerConsumeStats.broker-a.2024-06-01T10-00-00.txt", 3, "malformed row"),
        ("consumerOffset.json", 3, "malformed store JSON"),
        ("topicStatus.txt", None, "topic unknown"),
        ("rocketmq_client.log", 7, "truncated result set"),
        ("lock.log", 3, "unparsed lock line"),
        ("notes.txt", None, "unrecognised input")])
    # bad lines are dated by their own capture (a re-run replaces the same partition)
    by = {(Path(r["source"]).name, r["line"]): r for r in q}
    assert str(by[("rocketmq_client.log", 7)]["date"]) == "2024-06-01"
    assert by[(snap4, 8)]["observed_ts"] == T0 + 4 * MIN
    assert "\t\t\"TS@G_STORE\":{0:" in by[("consumerOffset.json", 3)]["content"]


def test_lag_dataset_rows(report, spark):
    lag = rows(spark, report["out"], "lag")
    assert len(lag) == 46
    keys = [(r["cluster"], r["group"], r["topic"], r["broker"], r["queue_id"], r["capture_ts"])
            for r in lag]
    assert len(set(keys)) == len(keys)  # no duplicates after the merge
    k = {(r["group"], r["capture_ts"]): r for r in lag if r["queue_id"] == 0}
    a = k[("G_INTERP", T0 + MIN)]  # C=1050: the 51st of 100 between 1000@10:00, 1100@10:01
    assert (a["lag"], a["lag_seconds"], a["lag_seconds_source"], a["status"], str(a["date"]),
            a["capture_time"]) == (50, approx(60 * 50 / 101), "interpolated", "OK", "2024-06-01",
                                   "2024-06-01T10:01:00.000Z")
    # C=100 at 10:02: the max offset was 100 at 10:00 (offsets 0..99), so message 100 is the
    # first of the 60 stored by 10:02 -> 10:00 + 120/61 s
    s2 = k[("G_STORE", T0 + 2 * MIN)]
    assert (s2["broker_offset"], s2["lag"], s2["lag_seconds"], s2["lag_seconds_source"],
            s2["lower_bound"], s2["source_kind"]) == (160, 60, approx(120 - 120 / 61),
                                                       "interpolated", False, "consumer-offset")
    s0 = k[("G_STORE", T0)]
    assert (s0["orderly"], s0["consume_enable"], s0["lag"]) == (True, True, 0)
    assert k[("G_STORE", T0 + 4 * MIN)]["online"] is False
    cp = k[("G_CP", T0)]  # consumerProgress 5.1 -s: inflight 5, LastTime 09:59:00
    assert (cp["owner"], cp["pull_offset"], cp["inflight"], cp["lag_seconds_upper"]) == (
        "10.0.0.9", 485, 5, 60.0)
    assert k[("G_BCS", T0)]["lag_seconds_upper"] == 30.0
    go = [r for r in lag if r["group"] == "go_client_dev" and r["topic"] == "TestTopic-6"
          and r["lag"] == 1]
    # 4.8 sample: captured 06:30:00 (path, --tz UTC), last consumed 06:26:29 -> <= 211 s
    assert len(go) == 2 and {r["lag_seconds_upper"] for r in go} == {211.0}
    assert {str(r["date"]) for r in go} == {"2021-02-13"}


def test_group_status_dataset(report, spark):
    gs = {(r["group"], r["capture_ts"]): r for r in rows(spark, report["out"], "group_status")}
    st = gs[("G_STORE", T0 + 4 * MIN)]
    assert (st["status"], st["group_status"], st["online"], st["total_lag"]) == (
        "STOP", "STOP", False, 70)
    assert gs[("G_REWIND", T0 + 3 * MIN)]["status"] == "REWIND"  # 1150 -> 1020
    assert gs[("G_REWIND", T0 + 2 * MIN)]["status"] == "WARN"
    assert gs[("G_STALL", T0)]["status"] == "OK"  # one sample: no verdict yet


def test_rebalance_outputs(report, spark):
    out = report["out"]
    ev = sorted((r["group"], r["client"], r["ts"], tuple(r["gained"]), tuple(r["lost"]),
                 r["source_kind"]) for r in rows(spark, out, "rebalance/events"))
    assert ev == sorted([
        ("G_MOVE", "E@1", T0 + 2 * MIN, (), ("broker-a:1",), "snapshot"),
        ("G_MOVE", "F@1", T0 + 3 * MIN, ("broker-a:1",), (), "snapshot"),
        ("G_MOVE", "E@1", T0 + 4 * MIN, (), ("broker-a:0",), "snapshot"),
        ("G_MOVE", "F@1", T0 + 4 * MIN, ("broker-a:0",), (), "snapshot"),
        # 5.x client log, 18:00:00.102 GMT+8; the identical set at 18:01:10 is not an event
        ("GID_LOG", "10.0.0.5@1", T0 + 102, ("broker-c:0", "broker-c:1"), (), "client-log"),
        ("GID_LOG", "10.0.0.5@1", T0 + 60_001, (), ("broker-c:1",), "client-log"),
        # 4.x client log, 10:01:05,001 in --log-tz UTC
        ("GID_LOG", "10.0.0.6@2", T0 + 65_001, ("broker-c:1",), (), "client-log"),
        # add lines only: the file's directory names the client, one event per second
        ("GID_FB", "10.0.0.7", T0 + 120_000, ("broker-c:0", "broker-c:1"), (), "client-log"),
        # the offset went back (1150 -> 1020) while D@1 kept the queue: a reset event
        ("G_REWIND", "D@1", T0 + 3 * MIN, (), (), "snapshot"),
    ])
    assert {r["cause"] for r in rows(spark, out, "rebalance/events")
            if r["group"] == "G_REWIND"} == {"reset"}
    moves = sorted((r["group"], r["queue_id"], r["from_client"], r["to_client"], r["gap_ms"])
                   for r in rows(spark, out, "rebalance/moves"))
    assert moves == [("GID_LOG", 1, "10.0.0.5@1", "10.0.0.6@2", 5000),
                     ("G_MOVE", 0, "E@1", "F@1", 0), ("G_MOVE", 1, "E@1", "F@1", MIN)]
    un = sorted((r["group"], r["queue_id"], r["start_ts"], r["end_ts"], r["duration_ms"],
                 r["open"]) for r in rows(spark, out, "rebalance/unowned"))
    assert un == [("GID_LOG", 1, T0 + 60_001, T0 + 65_001, 5000, False),
                  ("G_MOVE", 1, T0 + 2 * MIN, T0 + 3 * MIN, MIN, False),
                  ("G_STOP", 0, T0, None, 4 * MIN, True),
                  ("G_STORE", 0, T0 + 4 * MIN, None, 0, True)]
    storms = rows(spark, out, "rebalance/storms")
    assert [(s["group"], s["start_ts"], s["end_ts"], s["rounds"], s["events"], s["clients"])
            for s in storms] == [("G_MOVE", T0 + 2 * MIN, T0 + 4 * MIN, 3, 4, ["E@1", "F@1"])]
    locks = sorted((r["ts"], r["event"], r["client"], r["prev_client"], r["takeover"],
                    r["queue_id"]) for r in rows(spark, out, "rebalance/locks"))
    assert locks == [(T0 + 1000, "acquire", "10.0.0.5@1", None, False, 1),
                     (T0 + 2 * MIN, "takeover", "10.0.0.6@2", "10.0.0.5@1", True, 1),
                     (T0 + 3 * MIN, "takeover", "10.0.0.5@1", "10.0.0.6@2", True, 1)]


def test_summary_files_html_and_prometheus(report):
    out = report["out"]
    data = json.loads((out / "summary.json").read_text())
    assert data["counts"] == report["data"]["counts"]
    assert data["dates"] == ["2021-02-13", "2024-06-01", data["dates"][-1]]  # + notes.txt mtime
    csv_lines = (out / "summary.csv").read_text().splitlines()
    assert csv_lines[0].startswith("cluster,group,topic,capture_time,health,status,")
    assert csv_lines[0].endswith(",health_reasons")
    assert len(csv_lines) == 14  # header + 11 group/topic rows + 2 groups seen only in logs
    # the group health ERR (Burrow's word for STALL), 1 of its 1 queues stalled, and why
    assert any(line.startswith("c1,G_STALL,T,2024-06-01T10:04:00.000Z,ERR,STALL,1,STALL,")
               and line.endswith(",STALL (1 of 1 queue); status over an incomplete window 5 of "
                                 "10 captures") for line in csv_lines)
    page = (out / "report.html").read_text()
    assert not re.search(r"<script[^>]*\bsrc\s*=", page, re.I) and "G_STALL" in page
    fam = validate_exposition((out / "mqctl_lag.prom").read_text())
    assert any(x.startswith('mqctl_consumer_lag_messages{cluster="c1",group="G_STALL",topic="T",'
                            'broker="') and x.endswith(" 500")
               for x in fam["mqctl_consumer_lag_messages"])
    assert 'mqctl_group_status{cluster="",group="G_STORE",status="STOP"} 1' in fam[
        "mqctl_group_status"]
    assert 'mqctl_group_status_severity{cluster="",group="G_STORE"} 4' in fam[
        "mqctl_group_status_severity"]
    assert fam["mqctl_lag_report_quarantined_records"] == [
        "mqctl_lag_report_quarantined_records 11"]
    assert fam["mqctl_lag_report_threshold_breaches"] == [
        "mqctl_lag_report_threshold_breaches 2"]


def test_rerun_replaces_partitions_without_duplicates(report, spark):
    """The same window again (after fixing one bad input): every dataset has the same rows,
    the quarantine partition of that input's date no longer lists it."""
    from mqctl.lagjob import run_report

    out = report["out"]
    before = {name: sorted(map(repr, rows(spark, out, name))) for name in (
        "lag", "group_status", "rebalance/events", "rebalance/moves", "rebalance/unowned",
        "rebalance/storms", "rebalance/locks")}
    dirs_before = sorted(p.name for p in (out / "lag").iterdir() if p.is_dir())
    report["paths"]["unknown"].unlink()  # the unrecognised file is gone now
    res = run_report([str(report["root"])], str(out), spark=spark, tz="UTC", log_tz="UTC")
    assert not res.breaches and res.quarantined == 10
    for name, old in before.items():
        assert sorted(map(repr, rows(spark, out, name))) == old, name
    assert sorted(p.name for p in (out / "lag").iterdir() if p.is_dir()) == dirs_before
    q = rows(spark, out, "quarantine")
    assert len(q) == 10 and not any(Path(r["source"]).name == "notes.txt" for r in q)
    assert res.summary[0]["group"] in ("G_STOP", "G_STORE")
