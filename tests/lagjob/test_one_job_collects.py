"""The report's closing collects in one job. Each shortcut is judged against
the path it replaces, on the same frames: the summary rows collected with the quarantine's
reasons and the page's first collect, the page's first collect made before the groups are
ranked, the per-broker rows picked by a literal set of keys, and a cut that counts rows in
its own job."""

from __future__ import annotations

import dataclasses
import random
from contextlib import nullcontext
from datetime import UTC
from types import SimpleNamespace

import pytest

from .test_html_report import (
    EV_SCHEMA,
    GT_SCHEMA,
    LAG_SCHEMA,
    LK_SCHEMA,
    MIN,
    ST_SCHEMA,
    T0,
    UN_SCHEMA,
)

pytestmark = pytest.mark.spark

# names a literal in SQL text must carry as they are (quotes, backslashes, the page's key
# separator, a control character, non-ASCII)
NAMES = ["G_A", "o'brien", "back\\slash", "sep\u0001x", "tab\tG", "日本"]


def _frames(spark, groups: list[tuple[str | None, str]], captures: int, queues: int = 3):
    from mqctl.lagjob.html import collect as G

    rng = random.Random(7)
    lag, gt = [], []
    for c in range(captures):
        ts = T0 + c * MIN
        for cl, g in groups:
            for q in range(queues):
                lag.append((cl, g, "T", "bk", q, ts, rng.randrange(0, 500), rng.random(),
                            f"c{q % 2}@1"))
            gt.append((cl, g, "T", ts, rng.randrange(0, 900), rng.random(), rng.randrange(5)))
    df = spark.createDataFrame
    frames = G.ReportFrames(gt=df(gt, GT_SCHEMA).repartition(3), lag=df(lag, LAG_SCHEMA),
                            events=df([], EV_SCHEMA), storms=df([], ST_SCHEMA),
                            unowned=df([], UN_SCHEMA), locks=df([], LK_SCHEMA))
    return frames, G.group_series(frames.gt), G.queue_peaks(frames.lag)


def _order(s: dict) -> tuple:
    return s["_gi"], s["ts"]


def _page(data) -> str:
    from mqctl.lagjob import html as H

    return H.render_html(series=data.series, events=data.events, storms=data.storms,
                         status_rows=[], meta={"first_ts": data.first_ts,
                                               "last_ts": data.last_ts}, groups=data.groups)


@pytest.mark.parametrize("case", ["every group", "limit reached", "bucketed", "one charted"])
def test_the_pages_first_collect_made_early_draws_the_same_page(spark, case):
    from mqctl.lagjob import html as H
    from mqctl.lagjob.html import collect as G

    groups = [("c1", n) for n in NAMES] + [(None, "G_nocluster"), ("", "G_empty")]
    # a group the page does not chart at all: rows in the series, none in group_rows (as
    # --since leaves a group whose captures all precede it)
    frames, series, peaks = _frames(spark, [*groups, ("c1", "G_before_since")], captures=5)
    rows = [{"cluster": c, "group": g, "group_status": "OK"} for c, g in groups]
    lim = H.HtmlLimits(groups=len(rows) if case != "one charted" else 1,
                       points=2 if case == "bucketed" else 50)
    limit = (len(rows) + 1) * lim.points + 1 if case != "limit reached" else 7
    first = [r for r in G.first_collect(series, peaks, limit).collect()]
    early = G.collect_frames(dataclasses.replace(frames, series=series, peaks=peaks), rows, lim,
                             first=(first, limit))
    usual = G.collect_frames(dataclasses.replace(frames, series=series, peaks=peaks), rows, lim)
    # (the overview's series is in the order its rows were collected; the page sorts it)
    assert dataclasses.replace(early, series=None) == dataclasses.replace(usual, series=None)
    assert sorted(early.series, key=_order) == sorted(usual.series, key=_order)
    assert _page(early) == _page(usual)
    assert len(usual.groups) == len(rows) if case != "one charted" else len(usual.groups) == 1
    assert sum(len(g["totals"]) for g in usual.groups) > 0
    taken = G._Collector(frames, rows, lim).keyed_totals_and_peaks(first, limit)
    assert (taken is not None) == (case == "every group")
    if taken is not None:  # the rows of the uncharted group are left out, as the pick does
        assert len(taken[0]) == len(rows) * 5 and {r["_gi"] for r in taken[0]} == set(
            range(len(rows)))


def _marked_frames(spark, groups, captures: int, *, ties: bool = False, queues: int = 4):
    """Frames with every kind of mark for each group, owners that change (one unknown), a
    queue whose peak is unknown, and (``ties``) queues of equal peaks ranked by their names."""
    from mqctl.lagjob.html import collect as G

    rng = random.Random(11)
    lag, gt, events, storms, unowned, locks = [], [], [], [], [], []
    for c in range(captures):
        ts = T0 + c * MIN
        for cl, g in groups:
            for q in range(queues):
                topic, broker = ("T'b" if q % 2 else "Ta"), ("bk\\2" if q > 1 else "bk1")
                lag.append((cl, g, topic, broker, q, ts,
                            None if q == queues - 1 else 7 if ties else rng.randrange(0, 500),
                            rng.choice([None, rng.random()]),
                            rng.choice([None, f"c{(c // 2 + q) % 3}@1"])))
            gt.append((cl, g, "Ta", ts, rng.randrange(0, 900), rng.random(), rng.randrange(5)))
            events.append((ts + 5, cl, g, "Ta", f"e{c}@1", 1, 0, "rebalance", "snapshot"))
            events.append((ts + 5, cl, g, "T'b", f"f{c}@1", 0, 1, "reset", "client-log:x"))
            locks.append((ts + 7, cl, g, "Ta", "bk1", 0, f"c{c % 3}@1", "c9@1", c % 2 == 0))
            unowned.append((cl, g, "Ta", "bk1", c % queues, ts - MIN, ts, ts + MIN, "snapshot"))
        storms.append(("c1", groups[c % len(groups)][1], ts, ts + 2 * MIN, 3, 5, ["a@1", "b@2"]))
    # the last group has a capture before every other's: the range of every group's captures
    # (the span) is not the charted groups'
    gt.append((*groups[-1], "Ta", T0 - 10 * MIN, 1, 1.0, 0))
    df = spark.createDataFrame
    frames = G.ReportFrames(gt=df(gt, GT_SCHEMA).repartition(3),
                            lag=df(lag, LAG_SCHEMA).repartition(4),
                            events=df(events, EV_SCHEMA).repartition(2),
                            storms=df(storms, ST_SCHEMA), unowned=df(unowned, UN_SCHEMA),
                            locks=df(locks, LK_SCHEMA))
    return dataclasses.replace(frames, series=G.group_series(frames.gt),
                               peaks=G.queue_peaks(frames.lag))


@pytest.mark.parametrize("case", ["every group", "ties", "no queues", "bucketed lines",
                                  "one charted"])
def test_the_pages_second_collect_made_early_draws_the_same_page(spark, case):
    """with every group charted the page's second collect (lines, owner
    changes, marks, overview) is made with the summary rows, before the groups are ranked:
    each group's rows keyed by it, its queues ranked in Spark. Taken only when it is what
    the second collect would collect (else made again); the page is the same either way."""
    from mqctl.lagjob import html as H
    from mqctl.lagjob.html import collect as G

    groups = [("c1", n) for n in NAMES] + [(None, "G_nocluster"), ("", "G_empty")]
    frames = _marked_frames(spark, [*groups, ("c1", "G_before_since")], captures=6,
                            ties=case == "ties")
    if case == "no queues":
        frames = dataclasses.replace(frames, lag=frames.lag.limit(0),
                                     peaks=frames.peaks.limit(0))
    rows = [{"cluster": c, "group": g, "group_status": "OK"} for c, g in groups]
    lim = H.HtmlLimits(groups=len(rows) if case != "one charted" else 1, lines=2, lanes=3,
                       marks=2 if case == "every group" else 200,
                       runs=3 if case == "every group" else 400, timeline_events=4,
                       storms=3, svg_points=4 if case == "bucketed lines" else 300)
    limit = len(rows) * lim.points + 1
    marked = {"has_events": True, "has_storms": True}
    first = G.first_collect(frames.series, frames.peaks, limit).collect()
    second = G.second_collect(frames, lim, len(rows), **marked).collect()
    early = G.collect_frames(frames, rows, lim, first=(first, limit), second=second,
                             **marked)
    usual = G.collect_frames(frames, rows, lim, **marked)
    assert dataclasses.replace(early, series=None) == dataclasses.replace(usual, series=None)
    assert _page(early) == _page(usual)
    c = G._Collector(frames, rows, lim)
    got = c.keyed_totals_and_peaks(first, limit)
    ranked, stamps = ({}, []) if got is None else (G._rank_queues(got[1], lim)[0],
                                                    sorted({r["ts"] for r in got[0]}))
    taken = got is not None and c.keyed_second(second, ranked, stamps) is not None
    assert taken == (case in ("every group", "ties", "no queues", "bucketed lines"))
    if case == "bucketed lines":  # the lines were collected alone, each bucket's maximum
        assert early.svg_bucket_ms == usual.svg_bucket_ms == (5 * MIN) // 4 + 1
        assert not any(r["kind"] == "line" for r in c.keyed_second(second, ranked, stamps))
    if case == "every group":  # not taken: what collect 2 would not collect
        # a rank Spark gave that the driver's ranking does not
        at = next(i for i, r in enumerate(second) if r["kind"] == "qrank" and r["rank"] == 1)
        other = [*second[:at], type(first[0])(**(second[at].asDict() | {"rank": 2})),
                 *second[at + 1:]]
        assert c.keyed_second(other, ranked, stamps) is None
        assert any(r["kind"] == "line" for r in c.keyed_second(second, ranked, stamps))
    marks = [m for g in usual.groups for k in ("events", "storms", "unowned", "takeovers")
             for m in g[k]]
    if case == "no queues":  # (no ranked queue: the second collect reads no marks)
        assert not marks and not any(g["lanes"] for g in usual.groups) and usual.events
        return
    assert len(usual.groups) == (len(rows) if case != "one charted" else 1)
    assert usual.first_ts == (T0 - 10 * MIN if case == "one charted" else T0)
    assert {len(g["queues"]) for g in usual.groups} == {2} and marks
    runs = [r for g in usual.groups for ln in g["lanes"] for r in ln["runs"]]
    assert runs and all(r[2] for r in runs)
    if case == "ties":  # equal peaks: by topic, broker, queue id; the unknown peak last
        assert [(q["topic"], q["broker"], q["queue_id"]) for q in usual.groups[0]["queues"]
                ] == [("T'b", "bk1", 1), ("Ta", "bk1", 0)]
        assert all(ln["queue_id"] != 3 or ln["rank"] == 3 for g in usual.groups
                   for ln in g["lanes"])
    if case == "every group":  # (the marks and runs bounded per group)
        assert {g["totals_by_kind"]["event"] for g in usual.groups} == {12}
        assert {len(g["events"]) for g in usual.groups} == {2}
        assert any(ln.get("cut") for g in usual.groups for ln in g["lanes"])


def test_latest_per_broker_by_literal_keys_equals_the_broadcast_join(spark):
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import status

    rng = random.Random(3)
    lag = []
    for c in range(4):
        for cl in ("c1", None):
            for g in NAMES:
                for b in ("bk'1", "bk2"):
                    for q in range(2):
                        lag.append((cl, g, "T\\1", b, q, T0 + c * MIN, rng.randrange(9),
                                    rng.choice([None, 1.5]), rng.choice([True, False]), 1.0,
                                    2.0))
    lag_df = spark.createDataFrame(lag, "cluster string, `group` string, topic string, "
                                   "broker string, queue_id int, capture_ts long, lag long, "
                                   "lag_seconds double, estimated boolean, "
                                   "consume_rate double, produce_rate double")
    latest = (lag_df.groupBy("cluster", "group", "topic")
              .agg(F.max("capture_ts").alias("capture_ts"))
              .filter(F.col("group") != "G_A")  # one group has no latest row
              .unionByName(spark.createDataFrame([("c1", "G_log_only", None, None)],
                                                 "cluster string, `group` string, "
                                                 "topic string, capture_ts long")))
    rows = [r.asDict() for r in latest.collect()]
    joined = sorted(status.latest_per_broker(lag_df, latest).collect())
    assert joined  # (and no row of a null cluster: an equi-join never matches a null)
    assert all(r["cluster"] == "c1" for r in joined)
    assert sorted(status.latest_per_broker(lag_df, latest, rows).collect()) == joined
    many = status.LITERAL_KEYS
    try:  # past the bound: the broadcast join again, its first capture from the rows
        status.LITERAL_KEYS = 0
        assert sorted(status.latest_per_broker(lag_df, latest, rows).collect()) == joined
    finally:
        status.LITERAL_KEYS = many


def test_the_summary_rows_of_one_collect_keep_each_frames_order(spark):
    from pyspark.sql import functions as F

    from mqctl.lagjob import summaries as SU

    rng = random.Random(5)

    def code():
        return rng.choice([None, 0, 1, 2, 3])

    def secs():
        return rng.choice([None, 0.0, 1.5, 3.0, float("nan")])

    latest = spark.createDataFrame(
        [(rng.choice(["c1", None, "é"]), f"g{i // 3}", f"t{i % 3}", code(), code(), secs(),
          rng.choice([None, 5, 50])) for i in range(300)],
        "cluster string, `group` string, topic string, health_code int, status_code int, "
        "lag_seconds double, total_lag long").dropDuplicates(["cluster", "group", "topic"]
                                                             ).repartition(4)
    groups = spark.createDataFrame(
        [(rng.choice(["c1", None]), f"g{i}", code(), code(), secs(), [f"r{i}"])
         for i in range(120)],
        "cluster string, `group` string, health_code int, group_status_code int, "
        "lag_seconds double, reasons array<string>").dropDuplicates(["cluster", "group"]
                                                                    ).repartition(3)
    quarantine = spark.createDataFrame([("bad json",), ("bad json",), ("too big",)],
                                       "reason string")
    rep = SimpleNamespace(latest=latest, groups=groups)
    more = {"q": quarantine.groupBy("reason").agg(F.count(F.lit(1)).alias("n"))}
    summary, group_rows, got = SU.summary_rows(rep, more, 40, lambda r: r)

    def nan_free(rows):  # (NaN is not equal to itself; Spark sorts it above every number)
        return [{k: "NaN" if v != v else v for k, v in r.items()} for r in rows]

    assert nan_free(summary) == nan_free(
        r.asDict() for r in latest.orderBy(*SU._latest_order()).limit(40).collect())
    assert nan_free(group_rows) == nan_free(
        r.asDict() for r in groups.orderBy(*SU._groups_order()).limit(40).collect())
    assert any(r["lag_seconds"] != r["lag_seconds"] for r in summary)
    assert len(summary) == len(group_rows) == 40
    assert sorted((r["reason"], r["n"]) for r in got["q"]) == [("bad json", 2), ("too big", 1)]


def test_a_cut_counts_its_rows_in_its_own_job_and_keeps_its_partitioning(spark):
    from pyspark.sql import functions as F

    from mqctl.lagjob.run import Run

    rows = [(f"t{i % 5}", i, None if i % 7 == 0 else i) for i in range(500)]
    df = (spark.createDataFrame(rows, "topic string, ts long, b long").repartition(4, "topic")
          .sortWithinPartitions("topic", "ts"))
    run = SimpleNamespace(spark=spark, stage=lambda name: nullcontext())
    run.cut = lambda d, name, keep_partitioning=False: Run.cut(
        run, d, name, keep_partitioning=keep_partitioning)
    cut, n = Run.cut_counting(run, df, "t", F.col("b").isNull(), keep_partitioning=True)
    assert n == sum(1 for r in rows if r[2] is None) == 72
    assert sorted(cut.collect()) == sorted(df.collect())
    assert cut.rdd.getNumPartitions() == 4
    empty, none = Run.cut_counting(run, df.filter(F.lit(False)), "e", F.lit(True))
    assert none == 0 and empty.count() == 0


def test_the_quarantine_dates_lines_by_their_files_the_same_without_a_join(spark):
    """A bad line without its own time takes its file's capture (path timestamp, else
    modification time), else the run's: from a literal map up to ``LITERAL_FILES`` files,
    from a broadcast join past them; the same rows either way."""
    from mqctl.lagjob import stages

    files = [SimpleNamespace(path=p, kind=None, mtime_ms=m) for p, m in (
        ("/d/2024-06-01T10-00-00/snap.jsonl", 5), ("/d/o'brien\\x/no-time.jsonl", 1717200000123),
        ("/d/none.jsonl", None), ("/d/\u65e5\u672c.jsonl", 42))]
    bad = spark.createDataFrame(
        [(f"file:{f.path}" if i % 2 else f.path, "snapshot", i, "bad json", None, "{", ts)
         for i, f in enumerate(files) for ts in (None, 99)]
        + [("/d/unlisted.jsonl", "snapshot", 9, "bad json", None, "{", None),
           (None, None, None, "unreadable file", None, "", None)],
        "source string, source_kind string, line long, reason string, detail string, "
        "content string, observed_ts long")
    run = SimpleNamespace(cut=lambda df, name, **k: df, stage=lambda name: nullcontext())
    o = SimpleNamespace(tz_info=UTC)  # (the path's time read as UTC)
    literal = stages.quarantine(run, spark, o, bad, files, run_ts=7)
    bound = stages.LITERAL_FILES
    try:
        stages.LITERAL_FILES = 0
        joined = stages.quarantine(run, spark, o, bad, files, run_ts=7)
    finally:
        stages.LITERAL_FILES = bound
    assert literal.columns == joined.columns
    got = sorted(literal.collect(), key=str)
    assert got == sorted(joined.collect(), key=str)
    by = {(r["source"], r["line"]): r["observed_ts"] for r in got if r["observed_ts"] != 99}
    assert by[("/d/2024-06-01T10-00-00/snap.jsonl", 0)] == 1717236000000
    assert by[("/d/o'brien\\x/no-time.jsonl", 1)] == 1717200000123
    assert by[("/d/none.jsonl", 2)] == 7 and by[("/d/unlisted.jsonl", 9)] == 7
    assert by[("/d/\u65e5\u672c.jsonl", 3)] == 42 and by[(None, None)] == 7
