"""Bounded re-runs of the lag report: compute only the new captures, with
just enough history before them, and keep the results equal to a full recompute.

Every row of ``lag`` and ``group_status`` depends on its own capture and earlier ones only:

* the status window and the rates read the queue's previous ``window`` samples with a known lag
  (:func:`kernel.status`);
* the time lag reads the queue's broker history up to the observation (the bracketing points,
  the segment, the first capture of the segment: :func:`kernel.time_lag`);
* the owner track reads the queue's previous capture with known ownership, and an offset reset
  the previous capture with an owner (:func:`kernel.owner_track`,
  :func:`kernel.capture_resets`).

So a run whose new captures all come after everything already ingested (none of them joining a
capture already reported: :mod:`mqctl.lagjob.alignment`) computes the rows from ``B`` on over the
observations from a look-back ``C`` (the last ``window + 1`` captures before ``B``), with the
broker history points the derived state keeps, and appends them to the date partitions of
``lag`` and ``group_status``. The rebalance datasets are small: they are recomputed whole from
the derived state's changes, resets and unowned intervals plus the new ones.

The derived state (``STATE/derived``), written by every run that keeps state over snapshots
only::

    history/batch=N/   the broker history (max offset per queue and time); cut to the points
                       later time lags need (:func:`history_frame`) by a bounded run over a
                       long history (:data:`CUT_AFTER`)
    cuts/batch=N/      where each queue's history was cut (:func:`history_misses`): written
                       by the run that cut it (and when the parts are compacted)
    changes/batch=N/   owner changes found between captures (before reset marking)
    resets/batch=N/    offset resets found in captures
    unowned/batch=N/   unowned intervals found in captures (before reset gaps); whole, per run
    times/batch=N/     the observations' distinct (cluster, observed_ts) with the capture of
                       each (before the dedupe): the bound's input (:func:`plan`), not a scan
                       of the table
    latest/batch=N/    the latest row per group and topic with its peaks and captures
                       (:func:`transforms.latest_status_rows`); whole, per run
    groups/batch=N/    the latest row per group (:func:`transforms.latest_groups_rows`);
                       whole, per run
    series/batch=N/    the page's totals per group and capture (:func:`html.collect.group_series`)
    peaks/batch=N/     the page's peak lag and last capture per queue
                       (:func:`html.collect.queue_peaks`); whole, per run
    brokers/batch=N/   the Prometheus file's rows per group, topic and broker at the group and
                       topic's latest capture (:func:`transforms.latest_per_broker`); whole,
                       per run

A full run writes one batch of each; a bounded run appends its new rows as a batch (and the
whole unowned intervals and latest rows); the manifest's ``derived`` lists the committed
batches. Rows of a batch that was never committed are ignored and removed later. The manifest
also keeps the rows per date of ``lag`` and ``group_status`` and the counts read from ``lag``
(``counts``).

What a bounded re-run reads of the past is in the shape it needs, so its cost follows the new
captures: the bound takes the earlier times from ``times``; the latest rows
merge the earlier ones with the new captures' (:func:`transforms.merge_latest_status`: a key
of the new captures gets its newest row, the larger peaks and the captures added up; any other
keeps its row); the counts add the new rows' to the manifest's; the page's series and queue
ranking come from ``series`` and ``peaks`` (:func:`html.collect.merge_queue_peaks`); the
Prometheus file's per-broker rows from ``brokers`` for the groups and topics without new
captures and from the new rows for the others; the time lags bracket from ``history``, which
keeps per queue the points from the last look-back's lowest offset on (not every capture
since the first). ``lag`` is read back only for the page's lines and owner lanes of the
charted queues. A state
without one of the parts or the counts (removed, or written by an earlier version) makes the
run a full one, which writes them.

The look-back is checked, not assumed: a queue of the new captures whose look-back lacks the
samples its window needs, an owned capture or a capture with known ownership, and that has
observations before ``C``, makes the run a full one (:func:`check_frame`), and so does an
observation whose time lag may need a history point that was cut (:func:`history_misses`: an
offset rewound below the cut, a group that starts far behind). So do a changed or
vanished input file, a file with bad lines, another input kind than snapshots, ``--since`` or
``--until``, a missing max offset, and a run that did not finish before.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

DERIVED = "derived"
HISTORY_DDL = ("cluster string, topic string, broker string, queue_id int, t long, B long, "
               "min_offset long")
CHANGES_DDL = ("ts long, window_start_ts long, cluster string, group string, topic string, "
               "broker string, queue_id int, client string, change string, source_kind string, "
               "source string, strategy string, cid_all int, mq_all int, cause string")
RESETS_DDL = ("ts long, window_start_ts long, cluster string, group string, topic string, "
              "client string, source_kind string, gained array<string>, lost array<string>, "
              "strategy string, cid_all int, mq_all int, source string, n_gained int, "
              "n_lost int, cause string, queues array<string>")
UNOWNED_DDL = ("cluster string, group string, topic string, broker string, queue_id int, "
               "since_ts long, start_ts long, end_ts long, duration_ms long, open boolean, "
               "source_kind string")
TIMES_DDL = "cluster string, observed_ts long, capture_ts long"
CUTS_DDL = ("cluster string, topic string, broker string, queue_id int, cut_t long, cut_b long, "
            "first_b long")
PARTS = {"history": HISTORY_DDL, "changes": CHANGES_DDL, "resets": RESETS_DDL,
         "unowned": UNOWNED_DDL, "times": TIMES_DDL, "cuts": CUTS_DDL}
# parts in the shape of a report frame (their schema is the run's: :func:`read`'s ``schema``):
# the latest rows per group and topic and per group (``stages.Report.latest_base``, ...),
# the page's totals per group and capture and peak lag per queue (``html.collect``) and the
# Prometheus file's per-broker rows (``summaries.per_broker``)
SHAPED = ("latest", "groups", "series", "peaks", "brokers")
# parts written whole by every run (only the last batch is read)
WHOLE = ("unowned", "latest", "groups", "peaks", "brokers")
# parts written only by some runs (``cuts``: by a run that cut the history, and carried over
# when the parts are compacted): not there, no rows
OPTIONAL = ("cuts",)
# a bounded run cuts the broker history (:func:`history_frame`) once after a run that computed
# everything and then when it compacts the parts, when the history spans more than
# ``CUT_AFTER`` times ``window + 1`` captures of a cluster and its part holds more than
# ``CUT_BYTES``: below that, or more often, the cut's windows and joins (1.3-2.5 s, bench/
# lag_history_cut.py) cost more than reading the points (the 1m bench's 10,800 points: 0.1 MB)
CUT_AFTER = 4
CUT_BYTES = 1 << 20
# a bounded run appends one batch per part; past this many the parts are rewritten as one
COMPACT_AFTER = 32
# queues whose look-back is short are checked for earlier rows; past this many: a full run
MAX_SHORT_KEYS = 10_000


class NotBounded(Exception):
    """The run cannot be a bounded one (the message says why): compute everything."""


@dataclass(frozen=True, slots=True)
class Bound:
    """``new_ts``: the first new observation (the rows from it on are computed and appended);
    ``from_ts``: the look-back's first capture (the rows from it on are read)."""

    new_ts: int
    from_ts: int
    captures: int = 0  # the most captures of one cluster before the new ones


def plan(times: list[tuple[str, int, int | None, bool]], window: int) -> Bound:
    """The bound from the distinct ``(cluster, observed_ts, capture_ts, new)`` of the
    ingested table (``new``: ingested by this run; ``capture_ts``: the capture of an earlier
    time, as the run that reported it found it, :mod:`mqctl.lagjob.alignment`). The
    look-back starts at the ``window + 1``-th capture before the new ones of every cluster
    with new captures (at its first time: the capture's name): the captures from a capture's
    first time on are the same whatever came before, so the look-back finds the full run's.
    Raises :class:`NotBounded` when there is nothing new, when a new time is not after every
    earlier one, or when an earlier time has no capture (a state of an earlier version).
    Whether a new time joins the last capture already reported (within ``--align`` of it,
    holding nothing it holds) only the captures can tell: :func:`stages.captures` raises
    then."""
    new_times = [int(t) for _c, t, _cap, n in times if n]
    if not new_times:
        raise NotBounded("no new capture")
    new_ts = min(new_times)
    if any(not n and int(t) >= new_ts for _c, t, _cap, n in times):
        raise NotBounded("a new capture is earlier than one already reported")
    if any(not n and cap is None for _c, _t, cap, n in times):
        raise NotBounded("the derived state has no capture of an earlier time")
    per: dict[str, tuple[set[int], bool]] = {}
    for cluster, _ts, cap, is_new in times:
        old, has_new = per.get(cluster, (set(), False))
        if not is_new:
            assert cap is not None
            old.add(int(cap))
        per[cluster] = (old, has_new or is_new)
    starts_before: list[int] = []
    most = 0
    for _cluster, (old, has_new) in sorted(per.items()):
        if not old or not has_new:
            continue  # a cluster without new captures, or only new ones: no look-back
        starts = sorted(old)
        starts_before.append(starts[max(0, len(starts) - (max(1, window) + 1))])
        most = max(most, len(starts))
    return Bound(new_ts=new_ts, from_ts=min(starts_before, default=new_ts), captures=most)


def table_times(spark: SparkSession, state: str, manifest: Any, batch: int | None,
                new_dates: list[str]) -> list[tuple[str, int, int | None, bool]]:
    """Distinct ``(cluster, observed_ts, capture_ts, new)`` of the ingested observations
    (``new``: of ``batch``, this run's, whose ``capture_ts`` is not known yet: None): the
    earlier ones from the derived state's ``times`` (kept per run with their captures, so
    the bound does not scan the ingested table: a re-run's cost follows the new data), the
    new ones from ``batch``'s rows in its dates (``new_dates``) only."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import writers as W

    old = read(spark, state, "times", manifest.derived).select(
        "cluster", "observed_ts", "capture_ts", F.lit(False).alias("new"))
    df = spark.read.parquet(W.join(state, I.TABLE)).filter(
        F.col("date").isin([F.to_date(F.lit(d)) for d in new_dates] or [F.lit(None)])
        & (F.col("batch") == F.lit(-1 if batch is None else int(batch))))
    new = df.select("cluster", "observed_ts", F.lit(None).cast("long").alias("capture_ts"),
                    F.lit(True).alias("new"))
    return [(r[0], int(r[1]), None if r[2] is None else int(r[2]), bool(r[3])) for r in
            old.unionByName(new).distinct().collect()]


def check_frame(obs: DataFrame, new_ts: int, window: int) -> DataFrame:
    """The queues (``GQUEUE``) of the new captures whose look-back may be short: fewer than
    ``window - 1`` (at least 1) earlier samples with a known lag (status window, rates), no
    earlier capture with known ownership (owned, or the group offline: the previous owner), or
    an owned new capture without an earlier owned one (reset detection). Such a queue is fine
    when it has no observation before the look-back (:func:`earlier_rows`).
    ``obs``: the look-back and new observations with ``capture_ts``, one per queue and
    capture."""
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import GQUEUE

    new = F.col("capture_ts") >= F.lit(int(new_ts))
    old = ~new
    known_lag = F.col("broker_offset").isNotNull() & F.col("consumer_offset").isNotNull()
    owned = F.col("owner").isNotNull() & F.col("consumer_offset").isNotNull()
    ownership = F.col("owner").isNotNull() | (F.col("online") == F.lit(False))

    def any_of(c: Any) -> Any:
        return F.max(c.cast("int"))

    agg = obs.groupBy(*GQUEUE).agg(
        any_of(new).alias("_new"),
        F.sum((old & known_lag).cast("int")).alias("_n"),
        any_of(old & ownership).alias("_known"),
        any_of(old & owned).alias("_owned"),
        any_of(new & owned).alias("_owned_new"))
    short = ((F.col("_n") < F.lit(max(1, int(window) - 1))) | (F.col("_known") == 0)
             | ((F.col("_owned_new") == 1) & (F.col("_owned") == 0)))
    return agg.filter((F.col("_new") == 1) & short).select(*GQUEUE)


def earlier_rows(table: DataFrame, keys: DataFrame, from_ts: int) -> bool:
    """Whether any of ``keys`` (``GQUEUE``) has an observation before ``from_ts``."""
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import GQUEUE

    before = table.filter(F.col("observed_ts") < F.lit(int(from_ts))).select(*GQUEUE)
    return not before.join(F.broadcast(keys), on=GQUEUE, how="left_semi").isEmpty()


def history_frame(history: DataFrame, obs: DataFrame, window: int) -> DataFrame:
    """The broker history with what :func:`kept_history` and :func:`history_cuts` select:
    per queue, only the bracket points a later run's time lags need, from the latest
    captures' offsets on (a re-run does not read the whole history back).

    :func:`kernel.time_lag` brackets offset ``C`` of an observation at ``T``
    with the last point of its segment with ``B <= C`` and the one after it, and a lower
    bound reads the segment's first point. Per queue, with ``m`` the lowest offset and ``T0``
    the first time of the observations of the cluster's last ``window + 1`` captures (what
    the next look-back starts with, :func:`plan`), the point ``p`` = the last one at or
    before ``T0`` with ``B <= m`` brackets every observation at or after ``T0`` with an
    offset of at least ``m`` (``B`` never decreases inside a segment, so no later one needs
    an earlier point), and later segments are kept whole: the points before ``p`` are
    dropped, but the first one of ``p``'s segment. The cuts (``cut_t`` = ``p``'s time,
    ``cut_b`` its max offset, ``first_b`` the first point's) are written for the queues that
    lost points; :func:`history_misses` checks every later run against them (an offset
    rewound into the dropped range, an observation before ``p``: a full run)."""
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import QUEUE

    caps = obs.select("cluster", "capture_ts").distinct()
    recent = caps.withColumn("_r", F.row_number().over(
        Window.partitionBy("cluster").orderBy(F.col("capture_ts").desc())))
    lb = recent.filter(F.col("_r") <= int(window) + 1).groupBy("cluster").agg(
        F.min("capture_ts").alias("_lb"))
    # (a cluster the join does not match, e.g. null, keeps its queues' history whole)
    need = (obs.filter(F.col("consumer_offset").isNotNull()).join(F.broadcast(lb), "cluster")
            .filter(F.col("capture_ts") >= F.col("_lb"))
            .groupBy(*QUEUE).agg(F.min("consumer_offset").alias("_m"),
                                 F.min("observed_ts").alias("_T0")))
    w = Window.partitionBy(*QUEUE).orderBy("t")
    whole = Window.partitionBy(*QUEUE)
    h = history.withColumn("_dec", F.when(F.col("B") < F.lag("B").over(w), 1).otherwise(0))
    h = h.withColumn("_seg", F.sum("_dec").over(
        w.rowsBetween(Window.unboundedPreceding, 0))).join(need, on=QUEUE, how="left")
    at_p = (F.col("t") <= F.col("_T0")) & (F.col("B") <= F.col("_m"))
    h = h.withColumn("_p", F.max(F.when(at_p, F.struct(F.col("t").alias("t"),
                                                       F.col("B").alias("B"),
                                                       F.col("_seg").alias("seg"))))
                     .over(whole))
    first = F.min(F.when(F.col("_seg") == F.col("_p")["seg"], F.struct("t", "B"))).over(whole)
    h = h.withColumn("_f", first)
    keep = (F.col("_p").isNull() | (F.col("t") >= F.col("_p")["t"])
            | (F.col("t") == F.col("_f")["t"]))
    return h.withColumn("_keep", keep).withColumn(
        "_dropped", F.max((~F.col("_keep")).cast("int")).over(whole))


def kept_history(framed: DataFrame) -> DataFrame:
    """The points of :func:`history_frame` a later run needs (the ``history`` part)."""
    from pyspark.sql import functions as F

    return framed.filter(F.col("_keep")).select(*columns("history"))


def history_cuts(framed: DataFrame) -> DataFrame:
    """The ``cuts`` part: per queue that lost points in :func:`history_frame`, the cut."""
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import QUEUE

    return framed.filter((F.col("_dropped") == 1) & (F.col("t") == F.col("_p")["t"])).select(
        *QUEUE, F.col("t").alias("cut_t"), F.col("B").alias("cut_b"),
        F.col("_f")["B"].alias("first_b"))


def history_misses(obs: DataFrame, cuts: DataFrame) -> DataFrame:
    """The observations (look-back and new) whose time lag may need a point
    :func:`history_frame` dropped: of a queue with a cut, with a lag to bracket (an offset below
    the max offset), and before the cut, or with an offset from the segment's first point up
    to below the cut's (rewound there: a reset, a group that starts from an old offset)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import GQUEUE, QUEUE

    ck = F.coalesce(F.col("cluster"), F.lit("")).alias("_ck")  # (a null cluster matches too)
    c = cuts.select(ck, *QUEUE[1:], "cut_t", "cut_b", "first_b")
    o = obs.filter(F.col("consumer_offset").isNotNull()
                   & (F.col("broker_offset").isNull()
                      | (F.col("broker_offset") > F.col("consumer_offset")))).select(
        ck, *GQUEUE, "observed_ts", "consumer_offset")
    j = o.join(F.broadcast(c), on=["_ck", *QUEUE[1:]])
    return j.filter((F.col("observed_ts") < F.col("cut_t"))
                    | ((F.col("consumer_offset") >= F.col("first_b"))
                       & (F.col("consumer_offset") < F.col("cut_b"))))


def merge_unowned(old: DataFrame, new: DataFrame, track: DataFrame) -> DataFrame:
    """The unowned intervals of the whole history from the previous run's (``old``) and the
    look-back's (``new``, :func:`kernel.unowned_intervals` over the look-back and the new
    captures' ``track``). Per queue, the look-back recomputes every interval that reaches its
    first capture with known ownership (``first``) or starts after it; one that reaches
    ``first`` started there or earlier, so the recomputed one gets the earlier start and the
    capture that still had an owner before it (``since_ts``), which the look-back does not
    see. Older intervals are kept as they were."""
    from pyspark.sql import functions as F

    from mqctl.lagjob.transforms import GQUEUE

    first = track.groupBy(*GQUEUE).agg(F.min("capture_ts").alias("_first"))
    o = old.join(F.broadcast(first), on=GQUEUE, how="left")
    before = F.col("_first").isNull() | (F.col("end_ts").isNotNull()
                                         & (F.col("end_ts") <= F.col("_first")))
    kept = o.filter(before).drop("_first")
    reach = (o.filter(~before & (F.col("start_ts") <= F.col("_first")))
             .select(*GQUEUE, F.col("_first").alias("start_ts"),
                     F.col("start_ts").alias("_start0"), F.col("since_ts").alias("_since0")))
    n = new.join(reach, on=[*GQUEUE, "start_ts"], how="left")
    last = F.when(F.col("end_ts").isNotNull(), F.col("end_ts")).otherwise(
        F.col("start_ts") + F.col("duration_ms"))
    # (one projection: each column reads the row as it was joined)
    n = (n.withColumns({
        "duration_ms": F.when(F.col("_start0").isNotNull(), last - F.col("_start0"))
        .otherwise(F.col("duration_ms")),
        "since_ts": F.when(F.col("_start0").isNotNull(), F.col("_since0"))
        .otherwise(F.col("since_ts")),
        "start_ts": F.coalesce(F.col("_start0"), F.col("start_ts"))})
         .drop("_start0", "_since0"))
    return kept.unionByName(n.select(*kept.columns))


# --------------------------------------------------------------------------------------------
# the derived state

def columns(name: str) -> list[str]:
    """The columns of one part, in order."""
    return [c.split(" ")[0] for c in PARTS[name].split(", ")]


def part_path(state: str, name: str) -> str:
    from mqctl.lagjob import writers as W

    return W.join(state, DERIVED, name)


def part_bytes(spark: SparkSession, state: str, name: str) -> int:
    """The bytes of one part's files on disk (every batch; 0 when it is not there)."""
    from mqctl.lagjob import writers as W

    fs, hp = W._hadoop_fs(spark, part_path(state, name))
    return int(fs.getContentSummary(hp).getLength()) if fs.exists(hp) else 0


def missing(spark: SparkSession, state: str) -> list[str]:
    """The parts of the derived state that are not there: removed, or not written by the
    version that wrote the state (``times`` and ``brokers`` are newer than the others). Any:
    compute everything, which writes every part whole."""
    from mqctl.lagjob import ingest as I

    return [name for name in (*PARTS, *SHAPED)
            if name not in OPTIONAL and not I.exists(spark, part_path(state, name))]


def read(spark: SparkSession, state: str, name: str, batches: list[int],
         schema: Any = None) -> DataFrame:
    """The committed rows of one part (those of :data:`WHOLE`: of the last batch only); every
    part is there (:func:`missing`). ``schema``: of a :data:`SHAPED` part (a ``StructType``)."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import IntegerType, StructField, StructType

    ddl = (StructType([*schema.fields, StructField("batch", IntegerType())]) if name in SHAPED
           else f"{PARTS[name]}, batch int")
    if name in OPTIONAL:
        from mqctl.lagjob import ingest as I

        if not I.exists(spark, part_path(state, name)):
            return spark.createDataFrame([], PARTS[name])
    df = spark.read.schema(ddl).parquet(part_path(state, name))
    keep = [max(batches)] if name in WHOLE else list(batches)
    return df.filter(F.col("batch").isin(keep)).drop("batch")


def write(spark: SparkSession, state: str, name: str, df: DataFrame, batch: int, *,
          whole: bool = False) -> None:
    """Add ``df`` to one part as ``batch`` (committed by the manifest, not here): one file,
    except a whole broker history (queues x captures rows), written by every task."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import writers as W

    path = part_path(state, name)
    I.delete(spark, W.join(path, f"batch={batch}"))  # (a dead run's batch of the same id)
    if name in PARTS:
        df = df.select(*columns(name))
    df = df.withColumn("batch", F.lit(int(batch)))
    if not (whole and name == "history"):
        df = df.coalesce(1)
    df.write.mode("append").partitionBy("batch").parquet(path)


# the parts written at once (:func:`write_parts`): each write of a small part is mostly the
# driver's planning, its commit and the file system's calls, which overlap
PARALLEL_WRITES = 3


def write_parts(spark: SparkSession, state: str, parts: list[tuple[str, DataFrame]],
                batch: int, *, whole: bool = False) -> None:
    """:func:`write` every part of ``parts`` as ``batch``, ``PARALLEL_WRITES`` at a time (Spark
    runs the jobs of several threads side by side; the threads keep the caller's job group).
    Nothing is committed here (the manifest does it): when one write fails (or the run is
    interrupted), the writes under way finish, those not started are dropped, and the error
    is raised."""
    from concurrent.futures import ThreadPoolExecutor

    from pyspark import inheritable_thread_target

    def one(name: str, df: DataFrame) -> None:
        write(spark, state, name, df, batch, whole=whole)

    # each write gets a copy of this thread's local properties (the stage's job group) of its
    # own: a copy shared by threads would share the SQL execution id Spark sets in it
    pool = ThreadPoolExecutor(max_workers=PARALLEL_WRITES, thread_name_prefix="mqctl-derived")
    try:
        done = [pool.submit(inheritable_thread_target(spark)(one), name, df)
                for name, df in parts]
        for f in done:
            f.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def prune(spark: SparkSession, state: str, batches: list[int]) -> None:
    """Remove the batches of every part that the manifest does not list (dead runs, parts
    rewritten whole), after the manifest was saved."""
    from mqctl.lagjob import writers as W

    keep = set(batches)
    last = max(batches) if batches else None
    for name in (*PARTS, *SHAPED):
        fs, hp = W._hadoop_fs(spark, part_path(state, name))
        if not fs.exists(hp):
            continue
        for st in fs.listStatus(hp):
            n = st.getPath().getName()
            if not n.startswith("batch="):
                continue
            from mqctl.timeparse import is_digits

            b = int(n.split("=", 1)[1]) if is_digits(n.split("=", 1)[1]) else -1
            if b not in keep or (name in WHOLE and b != last):
                fs.delete(st.getPath(), True)


def drop(spark: SparkSession, state: str) -> None:
    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import writers as W

    I.delete(spark, W.join(state, DERIVED))


def append_partitions(spark: SparkSession, df: DataFrame, path: str, staging: str) -> None:
    """Add ``df``'s rows to the ``date=`` partitions of the dataset at ``path``: written to
    ``staging`` first, then its files moved in (:func:`ingest.adopt`; file names are unique per
    write). A run that dies between the moves leaves the dataset with part of the rows: the
    manifest's fingerprint is cleared before (:func:`outputs.append_new`), so the next run
    rewrites every date."""
    from mqctl.lagjob import ingest as I

    I.delete(spark, staging)
    df.write.partitionBy("date").parquet(staging)
    I.adopt(spark, staging, path)
    I.delete(spark, staging)
