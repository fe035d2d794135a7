"""Bounded re-runs: a run whose new captures follow the ingested ones computes
only those, over a look-back of ``window + 1`` captures and the derived state, and appends them.
The judge is a full run over the same inputs: every dataset row for row, the summaries, the
counts. The behaviours are chosen to cross the bound: owners moving, an unowned interval open
over several runs, an offline group, an offset reset, a group that appears late, a queue that
is missing for longer than the look-back (which makes that run a full one)."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from .builders import snap_row, write_snapshot
from .test_incremental import assert_same

T0 = 1717200000000  # 2024-06-01T00:00:00Z
STEP = 3 * 3600_000  # a capture every 3 hours: the runs cross dates
WINDOW = 3


def capture(i: int) -> list[dict]:
    rng = random.Random(i)
    ts = T0 + i * STEP
    rows = []

    def add(g: str, t: str, q: int, b: int, c: int, owner: str | None, members: list[str],
            online: bool | None = None, delay: int | None = None) -> None:
        rows.append(snap_row(ts, g, t, q, b, c, owner=owner, members=members, online=online,
                             delay_ms=delay, last_timestamp=ts - 1000))

    for t in ("TopicA", "TopicB"):
        for q in range(3):
            b = 1000 + i * (200 + 50 * q)
            two = ["c1@1", "c2@2"]
            add("G_OK", t, q, b, b, two[q % 2], two, delay=0)
            # owners move every third capture; no delay: the time lag is interpolated
            moving = two if i % 3 else ["c1@1", "c3@3"]
            add("G_MOVE", t, q, b, b - rng.randrange(1, 300), moving[q % 2], moving)
            # queue 2 has no owner from capture 5 to 8 (open over several runs)
            gone = q == 2 and 5 <= i <= 8
            add("G_GONE", t, q, b, b - 100, None if gone else two[q % 2], two)
            # an offline group: nobody owns anything, the lag grows
            add("G_OFF", t, q, b, 900, None, [], online=False)
            # an offset reset at capture 12: the offset goes back with the same owner
            add("G_RESET", t, q, b, (b - 50) if i != 12 else 500, "c1@1", ["c1@1"])
            if i >= 11:  # a group that appears late
                add("G_LATE", t, q, b, b - 10, "c9@9", ["c9@9"])
            if not (t == "TopicB" and q == 0 and 3 <= i <= 8):  # missing for 6 captures
                add("G_GAP", t, q, b, b - 5 * i, "c1@1", ["c1@1"])
    return rows


def write_capture(root: Path, i: int) -> Path:
    return write_snapshot(root, "c1", T0 + i * STEP, capture(i))


def run(spark, root: Path, out: Path, said: list[str] | None = None, **kw):
    from mqctl.lagjob import run_report

    return run_report([str(root)], str(out), spark=spark, tz="UTC", window=WINDOW,
                      progress=(said.append if said is not None else None), **kw)


def bounded(said: list[str]) -> bool:
    return (any("a bounded re-run" in m for m in said)
            and not any("not a bounded re-run" in m for m in said))


def _page(out: Path) -> str:
    """report.html without the time it was generated at."""
    import re

    return re.sub(r"generated [^;<]*", "generated -", (out / "report.html").read_text())


def _prom(out: Path) -> str:
    """mqctl_lag.prom without the run's own time (when it ended, how long it took)."""
    import re

    return re.sub(r"^(mqctl_lag_report_(?:last_success_timestamp|duration)_seconds) .*$",
                  r"\1 -", (out / "mqctl_lag.prom").read_text(), flags=re.M)


# many small reports in one test: 164-208 s on this 2-core machine, near the global 300 s when
# another process shares the cores (a timeout inside a JVM call breaks the worker's session)
@pytest.mark.timeout(600)
def test_bounded_reruns_equal_one_full_run(spark, tmp_path):
    root, inc = tmp_path / "in", tmp_path / "inc"
    for i in range(5):
        write_capture(root, i)
    said: list[str] = []
    run(spark, root, inc, said)
    assert not any("bounded" in m for m in said)  # the first run computes everything
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert len(man["derived"]) == 1
    assert (inc / "_state" / "derived" / "history").is_dir()

    outcome, res = {}, None
    for new in ([5], [6, 7], [8], [9], [10], [11, 12]):
        for i in new:
            write_capture(root, i)
        said = []
        res = run(spark, root, inc, said)
        outcome[new[0]] = bounded(said)
        assert "bound" in res.timings
    # capture 9 brings back G_GAP's queue after 6 captures, more than the look-back of 4
    # (window + 1); at 10 it has one sample of the two its window needs: both runs compute
    # everything. Every other one is bounded.
    assert outcome == {5: True, 6: True, 8: True, 9: False, 10: False, 11: True}
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert len(man["derived"]) == 2  # the full run at 10 wrote one batch, 11 another
    assert sorted(p.name for p in (inc / "_state" / "derived" / "history").iterdir()
                  if p.name.startswith("batch=")) == [f"batch={b}" for b in man["derived"]]

    full = tmp_path / "full"
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, res, rf)
    assert _page(full) == _page(inc)  # (the page too, byte for byte but its run time)
    # (and the Prometheus file: its per-broker rows read the latest captures back from lag)
    assert _prom(full) == _prom(inc) and "mqctl_consumer_lag_messages{" in _prom(full)
    ri = run(spark, root, inc)  # nothing new: the same outputs again
    assert_same(spark, inc, full, ri, rf)
    # the behaviours really are there
    assert rf.counts["reset_events"] >= 1 and rf.counts["unowned_intervals"] >= 1
    assert rf.counts["queue_moves"] >= 1
    unowned = spark.read.parquet(str(full / "rebalance" / "unowned")).filter(
        "group = 'G_GONE'").collect()
    assert {(r["start_ts"], r["end_ts"]) for r in unowned} == {
        (T0 + 5 * STEP, T0 + 9 * STEP)}


def test_a_group_that_is_gone_keeps_its_last_rows_in_a_bounded_rerun(spark, tmp_path):
    """A group deleted after capture 4 has no rows in the new captures: its latest rows are
    from capture 4, before the re-run's look-back. The bounded re-run reads them back as the
    full run does (the summaries and the Prometheus file's per-broker rows)."""
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"

    def with_dropped(i: int) -> list[dict]:
        ts = T0 + i * STEP
        return capture(i) + [snap_row(ts, "G_DROPPED", "TopicA", q, 1000 + 90 * i, 900 + 60 * i,
                                      owner="c7@7", members=["c7@7"], last_timestamp=ts - 1000)
                             for q in range(3)]

    for i in range(5):
        write_snapshot(root, "c1", T0 + i * STEP, with_dropped(i))
    run(spark, root, inc)
    for i in (5, 6, 7, 8):  # more than the look-back (window + 1 = 4 captures) after it
        write_capture(root, i)
    said: list[str] = []
    ri = run(spark, root, inc, said)
    assert bounded(said), said
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, ri, rf)
    prom = _prom(full)
    assert _prom(inc) == prom
    dropped = [ln for ln in prom.splitlines()
               if ln.startswith("mqctl_consumer_lag_messages{") and 'group="G_DROPPED"' in ln]
    assert len(dropped) == 1 and dropped[0].endswith(" 660")  # 3 queues x (1360 - 1140)


def kept_capture(i: int) -> list[dict]:
    """Groups that keep up (a time lag to interpolate, no stuck offset), so the derived state
    keeps only the recent part of the broker history; G_RW rewinds at capture 8 into the
    part it no longer keeps."""
    ts = T0 + i * STEP
    rows = []
    for q in range(2):
        b = 1000 + (200 + 50 * q) * i
        rw = b - 120 if i < 8 else 1250 + 100 * (i - 8)
        for g, c, delay in (("G_OK", b, 0), ("G_MOVE", b - 150, None), ("G_RW", rw, None)):
            rows.append(snap_row(ts, g, "TopicA", q, b, c, owner="c1@1", members=["c1@1"],
                                 delay_ms=delay, last_timestamp=ts - 1000))
    return rows


def test_the_derived_history_keeps_only_what_later_time_lags_need(spark, tmp_path,
                                                                   monkeypatch):
    """a bounded re-run does not read the whole broker history back. A
    bounded run over a long history (here: any, ``CUT_AFTER`` and ``CUT_BYTES`` 0) keeps, per
    queue, the bracket points from the look-back's lowest offset on and the first point of
    their segment (``bounded.history_frame``); the next re-run brackets from those and equals
    a full run, and one with an offset rewound into the dropped points is a full one (it
    would be bracketed wrongly)."""
    from mqctl.lagjob import bounded as B

    monkeypatch.setattr(B, "CUT_AFTER", 0)
    monkeypatch.setattr(B, "CUT_BYTES", 0)
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"
    for i in range(6):
        write_snapshot(root, "c1", T0 + i * STEP, kept_capture(i))
    run(spark, root, inc)

    def part(name: str) -> list:
        return spark.read.parquet(str(inc / "_state" / "derived" / name)).collect()

    outcome = {}
    for i in (6, 7, 8):
        write_snapshot(root, "c1", T0 + i * STEP, kept_capture(i))
        said: list[str] = []
        res = run(spark, root, inc, said)
        outcome[i] = bounded(said)
        if i == 6:
            # look-back of capture 3..6: the lowest offset is G_MOVE's at 3 (queue 0:
            # 1600 - 150; queue 1: 1750 - 150), bracketed from capture 2 (1400; 1500) on:
            # capture 1 is dropped, capture 0 (the segment's first point) kept
            cuts = {r["queue_id"]: (r["cut_t"], r["cut_b"], r["first_b"]) for r in part("cuts")}
            assert cuts == {0: (T0 + 2 * STEP, 1400, 1000), 1: (T0 + 2 * STEP, 1500, 1000)}
            kept = sorted((r["queue_id"], (r["t"] - T0) // STEP) for r in part("history"))
            assert kept == [(q, i) for q in range(2) for i in (0, 2, 3, 4, 5, 6)]
            # the next run compacts the parts without cutting again: the cuts go with them
            monkeypatch.setattr(B, "COMPACT_AFTER", 1)
            monkeypatch.setattr(B, "CUT_BYTES", 1 << 40)
        if i == 7:
            man = json.loads((inc / "_state" / "manifest.json").read_text())
            assert man["history_cut"] is True and len(man["derived"]) == 1
            assert {r["queue_id"]: (r["cut_t"], r["cut_b"], r["first_b"])
                    for r in part("cuts") if r["batch"] == man["derived"][0]} == cuts
        if i == 8:  # G_RW rewound to 1250: below the cut
            assert any("not a bounded re-run (an offset is below the broker history" in m
                       for m in said), said
    assert outcome == {6: True, 7: True, 8: False}
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, res, rf)
    assert _page(full) == _page(inc) and _prom(full) == _prom(inc)
    # the rewound group's time lags really were interpolated from early points
    lag = spark.read.parquet(str(full / "lag")).filter(
        f"`group` = 'G_RW' AND capture_ts >= {T0 + 8 * STEP}").collect()
    assert lag and all(r["lag_seconds_source"] == "interpolated" for r in lag), lag


def test_a_capture_before_the_last_one_is_not_bounded(spark, tmp_path):
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"
    for i in (0, 1, 2, 4, 5):
        write_capture(root, i)
    run(spark, root, inc)
    write_capture(root, 3)  # arrives late
    said: list[str] = []
    ri = run(spark, root, inc, said)
    assert any("not a bounded re-run (a new capture is earlier" in m for m in said)
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, ri, rf)


def test_plan_picks_the_look_back_per_cluster():
    from mqctl.lagjob.bounded import NotBounded, plan

    s = 60_000
    # (cluster, time, its capture as reported, new)
    times = [("a", t * s, t * s, False) for t in range(10)] + [("a", 10 * s, None, True)]
    # window 3: the 4th capture before the new one (times 6, 7, 8, 9 minutes)
    b = plan(times, window=3)
    assert (b.new_ts, b.from_ts) == (10 * s, 6 * s)
    # a capture spread over two times (aligned into one): it counts once, named by its first
    times2 = times + [("a", 8 * s + 5_000, 8 * s, False)]
    assert plan(times2, window=3).from_ts == 6 * s
    # another cluster with a longer interval: the earliest look-back of the two
    times3 = times + [("b", t * 5 * s, t * 5 * s, False) for t in range(2)] + [
        ("b", 10 * s + 1, None, True)]
    assert plan(times3, window=3).from_ts == 0
    # a new time within --align of the last capture: the captures stage decides whether it
    # joins it (NotBounded there) or is a capture of its own (the run stays bounded)
    assert plan(times + [("a", 9 * s + 5_000, None, True)], window=3).new_ts == 9 * s + 5_000
    with pytest.raises(NotBounded, match="no new capture"):
        plan([("a", 0, 0, False)], window=3)
    with pytest.raises(NotBounded, match="no capture of an earlier time"):
        plan([("a", 0, None, False), ("a", s, None, True)], window=3)


def test_captures_that_aged_out_stay_in_the_report(spark, tmp_path):
    """`snapshot --keep` deletes old capture files: a bounded run does not recompute the
    report's history for it (`lag prune` ages the report out): its outputs equal a full run over
    the inputs as they were ingested. Their rows stay in the ingested table until their whole
    date is gone, then that partition goes at once."""
    root, inc = tmp_path / "in", tmp_path / "inc"
    paths = {i: write_capture(root, i) for i in range(13)}  # 8 captures on June 1, 5 on June 2
    run(spark, root, inc)
    table = inc / "_state" / "snapshots"

    def judge(restore: range, name: str):
        # a full run over the inputs as they were ingested (the same paths)
        for i in restore:
            write_capture(root, i)
        rf = run(spark, root, tmp_path / name, incremental=False)
        for i in restore:
            write_capture(root, i).unlink()
        return rf

    for i in (0, 1):  # the first date's first captures age out
        paths[i].unlink()
    write_capture(root, 13)  # its look-back (captures 9-12) is on June 2
    said: list[str] = []
    ri = run(spark, root, inc, said)
    assert bounded(said), said
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert sorted(p for p, m in man["files"].items() if m.get("aged")) == sorted(
        str(paths[i]) for i in (0, 1))
    assert spark.read.parquet(str(table)).filter(f"observed_ts < {T0 + 2 * STEP}").count() > 0
    assert_same(spark, inc, tmp_path / "full1", ri, judge(range(2), "full1"))

    for i in range(2, 8):  # the rest of June 1
        paths[i].unlink()
    write_capture(root, 14)
    said = []
    ri = run(spark, root, inc, said)
    assert bounded(said), said
    assert not (table / "date=2024-06-01").exists()
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert sorted(d for m in man["files"].values() for d in m["dates"]) == ["2024-06-02"] * 7
    assert_same(spark, inc, tmp_path / "full2", ri, judge(range(8), "full2"))

    # a capture file of the look-back's dates gone: every capture is computed again
    paths[12].unlink()
    write_capture(root, 15)
    said = []
    run(spark, root, inc, said)
    assert any("not a bounded re-run (an input file of the look-back's dates is gone)" in m
               for m in said), said
    man = json.loads((inc / "_state" / "manifest.json").read_text())
    assert len(man["files"]) == 7 and not any(m.get("aged") for m in man["files"].values())


def test_merge_unowned_keeps_what_the_look_back_cannot_see(spark):
    from mqctl.lagjob import bounded as B

    key = ("c1", "G", "T", "broker-a")
    cols = B.UNOWNED_DDL
    old = spark.createDataFrame([
        (*key, 0, None, 10, 20, 10, False, "snapshot"),   # ended before the look-back
        (*key, 1, 40, 50, None, 30, True, "snapshot"),    # open when the look-back starts
        (*key, 2, 60, 70, None, 10, True, "snapshot"),    # started at the look-back's start
        (*key, 3, 40, 50, 90, 40, False, "snapshot"),     # ended inside the look-back
    ], cols)
    # the look-back starts at 70 for every queue; what it finds again
    new = spark.createDataFrame([
        (*key, 1, None, 70, 100, 30, False, "snapshot"),  # now closed at 100
        (*key, 2, None, 70, None, 20, True, "snapshot"),  # still open, last seen at 90
        (*key, 3, None, 70, 90, 20, False, "snapshot"),   # (a truncated copy of the old one)
    ], cols)
    track = spark.createDataFrame([(*key, q, 70) for q in range(4)],
                                  "cluster string, group string, topic string, broker string, "
                                  "queue_id int, capture_ts long")
    got = sorted(tuple(r) for r in B.merge_unowned(old, new, track).select(
        "queue_id", "since_ts", "start_ts", "end_ts", "duration_ms", "open").collect())
    assert got == [(0, None, 10, 20, 10, False), (1, 40, 50, 100, 50, False),
                   (2, 60, 70, None, 20, True), (3, 40, 50, 90, 40, False)]


def test_parts_written_side_by_side_keep_the_stage_and_raise_a_failure(spark, tmp_path,
                                                                       monkeypatch):
    """``bounded.write_parts``: every part is written (read back), each write's jobs carry the
    caller's job group (the stage timer and the event log name the stage), and a failed write
    is raised, not lost in its thread."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B

    state = str(tmp_path / "state")
    parts = [(name, spark.range(3 + i).select(F.col("id").alias("x"), F.lit(name).alias("n")))
             for i, name in enumerate(("series", "peaks", "s3", "s4"))]
    sc = spark.sparkContext
    tracker = sc.statusTracker()
    group = "mqctl-lag:test-write-parts"
    sc.setJobGroup(group, "write_parts")
    try:
        B.write_parts(spark, state, parts, 7, whole=True)
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    for i, (name, _) in enumerate(parts):
        back = spark.read.parquet(B.part_path(state, name)).filter("batch = 7")
        assert back.count() == 3 + i and {r.n for r in back.collect()} == {name}
    assert len(tracker.getJobIdsForGroup(group)) >= len(parts)

    def fail(spark_, state_, name, df, batch, whole=False):
        if name == "peaks":
            raise RuntimeError("disk full")

    monkeypatch.setattr(B, "write", fail)
    with pytest.raises(RuntimeError, match="disk full"):
        B.write_parts(spark, state, parts, 8)


def test_a_removed_derived_state_means_a_full_run(spark, tmp_path):
    import shutil

    root, inc = tmp_path / "in", tmp_path / "inc"
    for i in range(5):
        write_capture(root, i)
    run(spark, root, inc)
    shutil.rmtree(inc / "_state" / "derived" / "changes")
    write_capture(root, 5)
    said: list[str] = []
    ri = run(spark, root, inc, said)
    assert not any("bounded" in m for m in said), said
    assert (inc / "_state" / "derived" / "changes").is_dir()  # written again, whole
    rf = run(spark, root, tmp_path / "full", incremental=False)
    assert_same(spark, inc, tmp_path / "full", ri, rf)


def test_a_second_run_into_the_same_out_is_refused(spark, tmp_path):
    """A cron run that outlasts its interval: the next one is refused (exit 6), nothing of the
    running one's state or outputs is touched."""
    from mqctl.errors import RefusedError
    from mqctl.lagjob.guards import report_lock

    root, out = tmp_path / "in", tmp_path / "out"
    write_capture(root, 0)
    with report_lock(str(out)), pytest.raises(RefusedError, match="another mqctl lag report "
                                                                  "is still writing"):
        run(spark, root, out)
    assert not (out / "_state").exists() and not (out / "lag").exists()
    assert run(spark, root, out).counts["lag_rows"] == 36  # free again


def test_a_derived_state_without_times_means_one_full_run(spark, tmp_path):
    """The bound reads the earlier capture times from the derived state (part ``times``), not
    from the ingested table. A state written before that part existed has none: the re-run
    computes every capture (and writes every part whole), the next one is bounded again."""
    import shutil

    root, inc = tmp_path / "in", tmp_path / "inc"
    for i in range(5):
        write_capture(root, i)
    run(spark, root, inc)
    times = inc / "_state" / "derived" / "times"
    assert times.is_dir()
    shutil.rmtree(times)  # (as an earlier version left it)
    write_capture(root, 5)
    said: list[str] = []
    run(spark, root, inc, said)
    assert not bounded(said), said
    assert any("the derived state lacks times" in m for m in said), said
    assert times.is_dir()
    got = sorted(tuple(r) for r in spark.read.parquet(str(times)).select(
        "cluster", "observed_ts").distinct().collect())
    assert got == [("c1", T0 + i * STEP) for i in range(6)]
    write_capture(root, 6)
    said = []
    ri = run(spark, root, inc, said)
    assert bounded(said), said
    rf = run(spark, root, tmp_path / "full", incremental=False)
    assert_same(spark, inc, tmp_path / "full", ri, rf)


def test_a_bounded_rerun_does_not_read_the_earlier_dates_back(spark, tmp_path):
    """The latest rows (peaks, captures), the per-group rows and the counts of a bounded re-run
    come from the derived state and the manifest merged with the new captures, not from
    ``lag`` and ``group_status`` read back whole: with their first date's partitions gone
    from OUT, the re-run's summary, groups and counts are still a full run's."""
    root, inc = tmp_path / "in", tmp_path / "inc"
    for i in range(13):  # 8 captures on June 1, 5 on June 2
        write_capture(root, i)
    run(spark, root, inc)
    for name in ("lag", "group_status"):
        shutil.rmtree(inc / name / "date=2024-06-01")
    write_capture(root, 13)  # its look-back (captures 9-12) is on June 2
    said: list[str] = []
    ri = run(spark, root, inc, said)
    assert bounded(said), said
    rf = run(spark, root, tmp_path / "full", incremental=False)
    assert rf.counts["lag_rows"] == 14 * 36 + 3 * 6 - 6 * 1  # (G_LATE from 11, G_GAP's gap)
    assert ri.counts == rf.counts
    assert ri.summary == rf.summary and ri.groups == rf.groups
    assert {r["captures"] for r in rf.summary if r["group"] == "G_OK"} == {14}

    # a manifest of a version that kept no counts: the next re-run computes everything
    man_path = inc / "_state" / "manifest.json"
    man = json.loads(man_path.read_text())
    del man["counts"]
    man_path.write_text(json.dumps(man))
    write_capture(root, 14)
    said = []
    run(spark, root, inc, said)
    assert not bounded(said) and any("the derived state lacks counts" in m for m in said), said


def test_close_captures_stay_apart_in_bounded_reruns_and_equal_a_full_run(spark, tmp_path):
    """Snapshots of the same queues taken 7 s apart (within --align 10s) are captures of their
    own: a re-run that adds one is still a bounded one (the new capture joins none already
    reported), and its outputs, counts and warnings are a full run's. A file of other queues
    within --align of the last capture joins that capture: the re-run computes everything
    (and still equals a full run)."""
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"
    for i in range(4):
        write_capture(root, i)
    last = T0 + 3 * STEP

    def close(k: int) -> None:  # capture 3 taken again, k x 7 s later (offsets moved on)
        rows = [{**r, "capture_ts": last + k * 7000,
                 "consumer_offset": r["consumer_offset"] + k,
                 "broker_offset": r["broker_offset"] + 2 * k,
                 "lag": r["lag"] + k} for r in capture(3)]
        write_snapshot(root, "c1", last + k * 7000, rows)

    close(1)
    run(spark, root, inc)
    for k in (2, 3):
        close(k)
        said: list[str] = []
        ri = run(spark, root, inc, said)
        assert bounded(said), said
    shutil.rmtree(full, ignore_errors=True)
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, ri, rf)
    # (capture 3 lacks one queue of G_GAP: 35 rows, and so do its three close copies)
    assert rf.counts["duplicates"] == 0 and rf.counts["lag_rows"] == 3 * 36 + 4 * 35
    assert ri.warnings == rf.warnings and len(rf.warnings) == 1
    assert rf.warnings[0].startswith("3 capture(s) of cluster c1 came within --align 10s of "
                                     "the previous one (closest 7s apart)")
    assert json.loads((inc / "summary.json").read_text())["warnings"] == rf.warnings
    # another group's snapshot 4 s after the last capture: no queue of it is in that capture,
    # so it joins it; the re-run cannot append it as a capture of its own
    other = [snap_row(last + 3 * 7000 + 4000, "G_NEW", "TopicA", 0, 10, 5, owner="c1@1")]
    write_snapshot(root, "c1", last + 3 * 7000 + 4000, other)
    said = []
    ri = run(spark, root, inc, said)
    assert any("not a bounded re-run (a new record joins a capture already reported"
               in m for m in said), said
    shutil.rmtree(full)
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, ri, rf)
    lag = spark.read.parquet(str(full / "lag")).filter("`group` = 'G_NEW'").collect()
    assert [(r["capture_ts"], r["observed_ts"]) for r in lag] == [
        (last + 3 * 7000, last + 3 * 7000 + 4000)]


def test_a_record_joining_a_capture_of_the_day_before_rewrites_that_day(spark, tmp_path):
    """A capture dates its rows by its first time: a file of 00:00:03 that joins a capture of
    23:59:58 the day before puts its rows into that day, which the re-run must rewrite too
    (it rewrote only from the new file's date: its rows were lost)."""
    root, inc, full = tmp_path / "in", tmp_path / "inc", tmp_path / "full"
    night = T0 + 86_400_000 - 2000  # 2024-06-01T23:59:58Z
    for i, ts in enumerate((night - 2 * STEP, night - STEP, night)):
        write_snapshot(root, "c1", ts, [snap_row(ts, "G_A", "TopicA", 0, 100 + i, 90,
                                                 owner="c1@1")])
    run(spark, root, inc)
    write_snapshot(root, "c1", night + 5000, [snap_row(night + 5000, "G_B", "TopicA", 0, 103,
                                                       80, owner="c2@2")])
    ri = run(spark, root, inc)
    rf = run(spark, root, full, incremental=False)
    assert_same(spark, inc, full, ri, rf)
    b = spark.read.parquet(str(inc / "lag")).filter("`group` = 'G_B'").collect()
    assert [(r["capture_ts"], str(r["date"])) for r in b] == [(night, "2024-06-01")]
