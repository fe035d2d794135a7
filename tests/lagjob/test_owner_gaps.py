"""Owner gaps in the lag report's transforms: a capture where the owner could not be read
(a member did not answer GET_CONSUMER_RUNNING_INFO: snapshot ``owner_unknown``) carries the
previous owner across, and one unowned period seen by both the captures and the logs is one
interval; a never-committed queue reads ``none``, with the whole-queue lag caveat."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark")

from mqctl.lagjob import transforms as X

from .kernel_frames import group_topic_frame, lag_frame, owner_frames
from .test_real_history import LOG_SCHEMA
from .test_transforms import obs_df

S = 1000
MIN = 60 * S


def real_case_rows() -> list[dict]:
    """An owner that did not answer, as snapshots see it (real 4.9.3): members e1 and e2; e2 owns
    b:0-3, e1
    b:4-7. At 120 s e2's running info did not come back: its queues have no owner in that
    capture, ``owner_unknown`` true; e2 stays a member and owns them again at 180 s."""
    rows = []
    for t in (0, 60, 120, 180, 240):
        for q in range(8):
            own = "e1" if q >= 4 else ("e2" if t != 120 else None)
            rows.append({"queue_id": q, "capture_ts": t * S, "broker_offset": 100,
                         "consumer_offset": 100, "owner": own, "online": True, "members": 2,
                         "owner_unknown": own is None})
    return rows


def test_owner_not_answering_is_no_loss_gain_or_unowned_interval(spark):
    o = obs_df(spark, real_case_rows())
    owners = owner_frames(o)
    changes = owners["changes"]
    # before: e2 lost b:0-3 at 120 s and gained them at 180 s (8 changes, 2 events)
    assert changes.count() == 0
    assert owners["unowned"].count() == 0  # before: 4 intervals of 60 s
    assert X.queue_moves(changes, 300 * S).count() == 0


def test_owner_not_answering_then_a_real_move_is_one_move_over_the_gap(spark):
    """After the gap the queue is e1's: e2 lost it and e1 gained it somewhere between the last
    capture that showed e2 (60 s) and the first that shows e1 (180 s), not at the gap."""
    rows = [r for r in real_case_rows() if r["queue_id"] in (0, 4)]
    for r in rows:
        if r["queue_id"] == 0 and r["capture_ts"] >= 180 * S:
            r["owner"] = "e1"
    changes = owner_frames(obs_df(spark, rows))["changes"]
    got = sorted((r.ts // S, r.window_start_ts // S, r.client, r.change)
                 for r in changes.collect())
    assert got == [(180, 60, "e1", "gained"), (180, 60, "e2", "lost")]


def test_a_log_of_that_member_wins_over_the_carried_owner(spark):
    """e2's own log says it lost queue 0 at 150 s (during the gap) and e1's that it gained it
    at 150.2 s: the report never carries e2 against its log. The capture change (e2 -> e1
    between 60 s and 180 s) is the logged one, once, with both sources."""
    rows = [r for r in real_case_rows() if r["queue_id"] in (0, 4)]
    for r in rows:
        if r["queue_id"] == 0 and r["capture_ts"] >= 180 * S:
            r["owner"] = "e1"
    o = obs_df(spark, rows)
    logs = spark.createDataFrame([
        (0, (0, 0), "fe2", None, "c", "client-log", "result", "G", "T", "e2", None,
         [("T", "b", 0)], "AVG", 8, 2, None),
        (150 * S, (0, 1), "fe2", None, "c", "client-log", "result", "G", "T", "e2", None,
         [], "AVG", 8, 2, None),
        (0, (1, 0), "fe1", None, "c", "client-log", "result", "G", "T", "e1", None,
         [("T", "b", 4)], "AVG", 8, 2, None),
        (150 * S + 200, (1, 1), "fe1", None, "c", "client-log", "result", "G", "T", "e1",
         None, [("T", "b", 0), ("T", "b", 4)], "AVG", 8, 2, None)], LOG_SCHEMA)
    changes = X.merge_changes(owner_frames(o)["changes"], X.log_changes(logs),
                              10 * S)
    got = sorted((r.ts, r.client, r.change, r.queue_id, r.source_kind)
                 for r in changes.filter("queue_id = 0").collect())
    assert got == [(0, "e2", "gained", 0, "client-log"),
                   (150 * S, "e2", "lost", 0, "client-log+snapshot"),
                   (150 * S + 200, "e1", "gained", 0, "client-log+snapshot")]
    # the stage materialises the join of both sources once (change_hits) and hands it in:
    # each pair is a capture change and the log change inside its interval, and the merge
    # over the materialised pairs gives the same rows
    captured = owner_frames(o)["changes"].localCheckpoint()
    logged = X.log_changes(logs).localCheckpoint()
    hits = X.change_hits(captured, logged, 10 * S)
    pairs = sorted((r.queue_id, r.client, r.change, r._cts, r._lts, r._lsrc, r._ck)
                   for r in hits.filter("queue_id = 0").collect())
    assert pairs == [(0, "e1", "gained", 180 * S, 150 * S + 200, "fe1", "snapshot"),
                     (0, "e2", "lost", 180 * S, 150 * S, "fe2", "snapshot")]
    def rows_of(df):  # (as multisets: the merge's row order is Spark's)
        return sorted(df.collect(), key=repr)

    assert rows_of(X.merge_changes(captured, logged, 10 * S, hits.localCheckpoint())) == rows_of(
        X.merge_changes(captured, logged, 10 * S))


def test_one_unowned_interval_per_queue_and_period_from_captures_and_logs(spark):
    """The %RETRY% case of an owner gap: the retry queue had no owner in the captures at 60 s and
    120 s (owned at 0 and 180 s); the clients' logs say it was lost at 45 s and gained at
    130 s. Before: two intervals (60-180 s from the snapshots, 45-130 s from the logs)."""
    rows = [{"topic": "%RETRY%G", "queue_id": 0, "capture_ts": t * S, "broker_offset": 5,
             "consumer_offset": 5, "owner": own, "online": True}
            for t, own in ((0, "e1"), (60, None), (120, None), (180, "e2"))]
    rows += [{"topic": "%RETRY%G", "queue_id": 1, "capture_ts": t * S, "broker_offset": 5,
              "consumer_offset": 5, "owner": "e3", "online": True} for t in (0, 60, 120, 180)]
    captured = owner_frames(obs_df(spark, rows))["unowned"]
    assert captured.count() == 1
    logs = spark.createDataFrame([
        (0, (0, 0), "fe1", None, "c", "client-log", "result", "G", "%RETRY%G", "e1", None,
         [("%RETRY%G", "b", 0)], "AVG", 2, 3, None),
        (45 * S, (0, 1), "fe1", None, "c", "client-log", "result", "G", "%RETRY%G", "e1", None,
         [], "AVG", 2, 3, None),
        (130 * S, (1, 0), "fe2", None, "c", "client-log", "result", "G", "%RETRY%G", "e2",
         None, [("%RETRY%G", "b", 0)], "AVG", 2, 3, None)], LOG_SCHEMA)
    changes = X.merge_changes(owner_frames(obs_df(spark, rows))["changes"],
                              X.log_changes(logs), 10 * S)
    logged = changes.filter("source_kind like 'client-log%'")
    merged = X.merge_unowned_sources(captured, X.unowned_from_logs(logged), 10 * S).collect()
    assert [(r.topic, r.queue_id, r.start_ts // S, r.end_ts // S, r.open, r.source_kind)
            for r in merged] == [("%RETRY%G", 0, 45, 130, False, "client-log+snapshot")]
    # the logs of the new owner were not given: the loss is logged, the end is the capture's
    only_e1 = logs.filter("source = 'fe1'")
    ch1 = X.merge_changes(owner_frames(obs_df(spark, rows))["changes"],
                          X.log_changes(only_e1), 10 * S)
    merged = X.merge_unowned_sources(
        captured, X.unowned_from_logs(ch1.filter("source_kind like 'client-log%'")), 10 * S
    ).collect()
    assert [(r.start_ts // S, r.end_ts // S, r.open, r.source_kind) for r in merged] == [
        (45, 180, False, "client-log+snapshot")]


# ---- never-committed queues read none --------------------------------------------------

def test_never_committed_queue_is_none_with_the_whole_queue_lag(spark):
    """A queue the group never committed (snapshot ``committed: false``; a 1.1 snapshot has
    ``consumer_offset: null`` there, a 1.0 one the broker's 0): the consumer offset is none,
    the lag counts the whole queue (mqadmin's Diff), the time lag is unknown and no Burrow rule
    judges the 0 placeholder. Before: consumer offset 0, a lower-bound time lag dated from
    the first capture, and STALL (the "offset" 0 never moved while online)."""
    rows = []
    for t in range(4):
        rows.append({"queue_id": 0, "capture_ts": t * MIN, "broker_offset": 30 + t,
                     "consumer_offset": None, "committed": False, "online": True})
        rows.append({"queue_id": 1, "capture_ts": t * MIN, "broker_offset": 30 + t,
                     "consumer_offset": 10 + t, "committed": True, "online": True})
    lagged = lag_frame(obs_df(spark, rows))
    q = {(r.queue_id, r.capture_ts): r for r in lagged.collect()}
    nc = q[(0, 3 * MIN)]
    assert (nc.consumer_offset, nc.lag, nc.lag_seconds, nc.lag_seconds_source) == (
        None, 33, None, "unknown")
    assert nc.status is None and nc.window_samples is None and nc.consume_rate is None
    assert q[(1, 3 * MIN)].status == "WARN"  # the committed queue keeps its verdict
    gt = {r.capture_ts: r for r in group_topic_frame(lagged).collect()}
    last = gt[3 * MIN]
    assert (last.total_lag, last.never_committed, last.queues, last.status) == (33 + 20, 1, 2,
                                                                                 "WARN")


def test_never_committed_queue_of_an_offline_group_is_stop_and_empty_one_ok(spark):
    rows = [{"queue_id": 0, "capture_ts": 0, "broker_offset": 30, "consumer_offset": None,
             "committed": False, "online": False},
            {"queue_id": 1, "capture_ts": 0, "broker_offset": 0, "consumer_offset": None,
             "committed": False, "online": False}]
    got = {r.queue_id: (r.lag, r.status) for r in lag_frame(obs_df(spark, rows)).collect()}
    assert got == {0: (30, "STOP"), 1: (0, "OK")}


def test_snapshot_rows_never_committed_1_0_and_1_1(spark):
    """A 1.0 row (``committed: false``, ``consumer_offset: 0``) and a 1.1 row
    (``consumer_offset: null``) both read as no consumer offset; a row without a consumer
    offset that does not say it was never committed is still a missing field; a 1.0 row
    without the owner marker reads as owner known."""
    import json

    from mqctl.lagjob import schemas

    base = {"schema": "mqctl.snapshot/1", "capture_ts": 1717236000000, "cluster": "c",
            "group": "G", "topic": "T", "broker": "b", "queue_id": 0, "broker_offset": 30}
    lines = [dict(base, consumer_offset=0, committed=False),
             dict(base, schema="mqctl.snapshot/1.1", queue_id=1, consumer_offset=None,
                  committed=False, owner_unknown=True, members_unanswered=["e2"]),
             dict(base, queue_id=2, consumer_offset=None),
             dict(base, queue_id=3, consumer_offset=7, committed=True)]
    df = spark.createDataFrame([("f", 0, i, 0, json.dumps(r)) for i, r in enumerate(lines)],
                               "source string, block long, rid long, mtime_ms long, "
                               "value string")
    obs, bad = X.parse_snapshot_lines(df, schemas.SNAPSHOT_JSON)
    got = {r.queue_id: (r.consumer_offset, r.committed, r.owner_unknown, r.members_unanswered)
           for r in obs.collect()}
    assert got == {0: (None, False, False, None), 1: (None, False, True, ["e2"]),
                   3: (7, True, False, None)}
    assert [(r.reason, r.detail) for r in bad.collect()] == [("missing field",
                                                              "consumer_offset")]


def test_report_reads_never_committed_queues_as_none(spark, tmp_path):
    """Never-committed queues end to end, with the snapshots mqctl wrote before 1.1 (``committed:
    false`` next
    to the broker's ``consumer_offset: 0``): lag/ says none (null) and ``committed`` false,
    the lag is the whole queue, the time lag and the status unknown (the group is online),
    group_status and the summary count the queue as never committed. Before: consumer offset
    0, STALL from the second capture on (the 0 "never moved")."""
    from mqctl.lagjob import run_report

    from .builders import T0, snap_row, write_snapshot

    for i in range(3):
        ts = T0 + i * MIN
        never = snap_row(ts, "GN", "T", 0, 40 + i, 0, owner="a@1")
        never.update(committed=False, delay_ms=ts)  # the broker's "now - 0"
        done = snap_row(ts, "GN", "T", 1, 40 + i, 40 + i, owner="a@1")
        done["committed"] = True
        write_snapshot(tmp_path / "in", "c1", ts, [never, done])
    res = run_report([str(tmp_path / "in")], str(tmp_path / "out"), spark=spark, tz="UTC")
    lag = {(r.queue_id, r.capture_ts): r for r in
           spark.read.parquet(str(tmp_path / "out" / "lag")).collect()}
    last = lag[(0, T0 + 2 * MIN)]
    assert (last.consumer_offset, last.lag, last.lag_seconds, last.lag_seconds_source,
            last.status) == (None, 42, None, "unknown", None)
    assert last.committed is False
    assert lag[(1, T0 + 2 * MIN)].committed is True and lag[(1, T0 + 2 * MIN)].status == "OK"
    assert res.counts["never_committed"] == 3
    (row,) = res.summary
    assert (row["never_committed"], row["total_lag"], row["status"]) == (1, 42, "OK")
    assert any("without a committed offset" in n and "none" in n for n in res.notes)
