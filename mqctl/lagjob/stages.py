"""The lag report's stages, in the order a run takes them (docs/architecture.md, "The lag
report's stages"). Each stage is a function from DataFrames to DataFrames: what it takes is in
its parameters, what it gives is a small frozen dataclass of named frames. The run
(:class:`mqctl.lagjob.run.Run`) calls them in order and does the I/O between them (the state,
the writes); the computation is in the pure transforms (:mod:`mqctl.lagjob.transforms`), which
stay testable without any of this.

    read        the inputs' records               -> Read
    captures    align them into captures          -> Captures
    lag         dedupe, broker history, lag,      -> Lagged
                time lag, queue status
    group_status  per group and topic             -> DataFrame
    rebalance   owner track, changes, resets,     -> Rebalance
                events, moves, unowned, storms, locks
    quarantine  every bad record, dated           -> DataFrame
    report      --since, latest rows, health      -> Report

A stage gets a :class:`Runner`: how the run materialises (``cut``), caches (``keep_read``),
times (``stage``) and reports progress (``say``); a bounded re-run (mqctl/lagjob/bounded.py)
passes :class:`Earlier`, what earlier runs found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mqctl.lagjob.inputs import DISPLAY_SOURCE, Kind

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

    from mqctl.lagoptions import Options

BAD_COLUMNS = ["source", "source_kind", "line", "reason", "detail", "content", "observed_ts"]
# the kinds read as whole files (one record set per file)
WHOLE_FILE_KINDS = (Kind.CONSUMER_OFFSET, Kind.TOPICS, Kind.SUBSCRIPTION_GROUP,
                    Kind.CONSUMER_PROGRESS, Kind.BROKER_CONSUME_STATS, Kind.TOPIC_STATUS)
LOG_KINDS = (Kind.CLIENT_LOG, Kind.LOCK_LOG)
# input files up to which the quarantine dates a bad line by its file's capture from a
# literal map (beyond: a broadcast join)
LITERAL_FILES = 2_000


class Runner(Protocol):
    """What a stage asks of the run."""

    say: Callable[[str], None]

    def cut(self, df: DataFrame, name: str, *, keep_partitioning: bool = False
            ) -> DataFrame:
        """Materialise ``df`` and cut its lineage (timed as stage ``name``); with
        ``keep_partitioning`` the rows read back keep ``df``'s partitioning and order, so the
        steps after it, inside the same partitioning, shuffle nothing."""
        ...

    def cut_counting(self, df: DataFrame, name: str, where: Column, *,
                     keep_partitioning: bool = False) -> tuple[DataFrame, int]:
        """``cut``, and how many of the rows match ``where`` (counted in the same job)."""
        ...

    def keep_read(self, df: DataFrame, paths: dict[Kind, list[str]]) -> DataFrame:
        """Cache a frame read from ``paths`` (an empty relation when there is none)."""
        ...

    def stage(self, name: str) -> AbstractContextManager[None]:
        """Time what runs inside as stage ``name``."""
        ...


@dataclass(frozen=True, slots=True)
class Earlier:
    """A bounded re-run: what the earlier runs found (the derived state), and the bound: the
    look-back starts at ``from_ts``, the new captures at ``new_ts``."""

    history: DataFrame  # the broker history before the look-back (the points kept)
    cuts: DataFrame  # where it was cut (:func:`bounded.history_frame`)
    changes: DataFrame  # owner changes found in captures
    resets: DataFrame  # offset resets found in captures
    unowned: DataFrame  # unowned intervals (the open ones still open)
    from_ts: int
    new_ts: int


def display_source() -> Column:
    """A row's ``source`` as the outputs show it (a local path without ``file:``)."""
    from pyspark.sql import functions as F

    return F.regexp_replace(F.col("source"), DISPLAY_SOURCE, "")


# ---- read ----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Read:
    """Every input's records, by what they are (before captures are aligned)."""

    obs: DataFrame  # queue observations of every kind (schemas.P.OBS_FIELDS)
    bad: DataFrame  # bad records of every kind (BAD_COLUMNS)
    points: DataFrame  # max-offset points of the broker history (topicStatus, ...)
    members: DataFrame  # consumerProgress members
    topic_cfg: DataFrame  # topics.json
    group_cfg: DataFrame  # subscriptionGroup.json
    logs: DataFrame  # client and lock log records
    # the logs' bad lines and every line read (to number the bad ones: a scan of every log
    # line, made only when there is a bad one, by :func:`quarantine`); None without logs
    log_bad: tuple[DataFrame, DataFrame] | None = None
    # after :func:`captures`: the captures of each cluster opened within --align of the
    # previous one (:class:`alignment.Close`, by cluster)
    close: dict[str, Any] = field(default_factory=dict)


def read(run: Runner, spark: SparkSession, o: Options, paths: dict[Kind, list[str]],
         listing: Any, snapshots: tuple[DataFrame, DataFrame] | None) -> Read:
    """The records of every input: ``snapshots`` (observations, bad lines: read by the run,
    through its state), whole files (store files, mqadmin captures) and logs, plus a bad
    record for each unrecognised or unreadable file of ``listing``."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import readers, schemas

    obs_frames: list[DataFrame] = []
    bad_frames: list[DataFrame] = []
    if snapshots is not None:
        obs_frames.append(snapshots[0])
        bad_frames.append(snapshots[1].select(*BAD_COLUMNS))
    whole = {k: v for k, v in paths.items() if k in WHOLE_FILE_KINDS}
    recs = run.keep_read(readers.read_whole_files(spark, whole, o.tz_info, o.cluster), whole)

    def part(tag: str) -> DataFrame:
        return recs.filter(F.col("tag") == tag).select(f"{tag}.*")

    obs_frames.append(part("obs"))
    bad_frames.append(part("bad").select(*BAD_COLUMNS))
    log_paths = {k: v for k, v in paths.items() if k in LOG_KINDS}
    logs_raw, log_lines = readers.read_logs(spark, log_paths, o.log_tz_info,
                                            o.broker_log_tz_info, o.cluster)
    logs_raw = run.keep_read(logs_raw, log_paths)
    logs = logs_raw.filter(F.col("log").isNotNull()).select(
        "source", "source_kind", "client_key", "cluster", F.struct("block", "rid").alias("seq"),
        *[F.col("log")[n].alias(n) for n, _ in schemas.P.LOG_FIELDS])
    log_bad = logs_raw.filter(F.col("bad_reason").isNotNull()).select(
        "source", "source_kind", "block", "rid", F.col("bad_reason").alias("reason"),
        F.col("bad_detail").alias("detail"), "content", F.col("ts").alias("observed_ts"))
    unknown = [(f.path, None, None, "unrecognised input",
                "neither the name nor the content matches an input kind; pass KIND=PATH",
                "", None) for f in listing.unknown()]
    unknown += [(f.path, f.kind.value if f.kind else None, None, "unreadable file",
                 f.unreadable, "", None) for f in listing.unreadable()]
    if unknown:
        bad_frames.append(spark.createDataFrame(unknown, schemas.BAD))
    obs_cols = [n for n, _ in schemas.P.OBS_FIELDS]
    return Read(obs=_union([f.select(*obs_cols) for f in obs_frames]), bad=_union(bad_frames),
                points=part("point"), members=part("member"), topic_cfg=part("topic_cfg"),
                group_cfg=part("group_cfg"), logs=logs,
                log_bad=(log_bad, log_lines) if any(log_paths.values()) else None)


def _union(frames: list[DataFrame]) -> DataFrame:
    out = frames[0]
    for f in frames[1:]:
        out = out.unionByName(f)
    return out


# ---- captures ------------------------------------------------------------------------------

def captures(run: Runner, o: Options, r: Read, bound_ts: int | None = None) -> Read:
    """The records within ``--since`` (less a day: windows and brackets look back) and
    ``--until``, each with its capture (``capture_ts``, :mod:`mqctl.lagjob.alignment`: the
    records of a cluster within ``--align`` of a capture's first time that hold nothing it
    already holds). Bad records as read; ``close``: the captures of each cluster opened
    within ``--align`` of the previous one (bounded: those from ``bound_ts`` on, the new
    ones). Bounded (``bound_ts``): :class:`bounded.NotBounded` when a new record joins a
    capture that starts before ``bound_ts`` (one already reported)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import alignment
    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import transforms as X

    obs, points, logs = r.obs, r.points, r.logs
    if o.until_ms is not None:  # --until: what was captured after it is not read
        until = F.lit(int(o.until_ms))
        obs = obs.filter(F.col("observed_ts") <= until)
        points = points.filter(F.col("observed_ts") <= until)
        logs = logs.filter(F.col("ts") <= until)
    if o.since_ms is not None:  # --since: one day before it feeds windows and brackets
        start = F.lit(int(o.since_ms) - X.DAY_MS)
        obs = obs.filter(F.col("observed_ts") >= start)
        points = points.filter(F.col("observed_ts") >= start)
        logs = logs.filter(F.col("ts") >= start)
    # (topicStatus points take no capture: the broker history is by time)
    times = obs.select("cluster", "observed_ts")
    for f in (r.members, r.topic_cfg, r.group_cfg):
        times = times.unionByName(f.select("cluster", "observed_ts"))
    chains, n_chained = run.cut_counting(X.capture_chains(times, o.align_ms), "capture index",
                                         F.col("chain_times") > 1)
    moved_df: DataFrame | None = None
    close: dict[str, alignment.Close] = {}
    if n_chained:  # times at most --align apart: the walk decides (on the driver: few)
        keys = X.record_keys(obs, r.members, r.topic_cfg, r.group_cfg)
        with run.stage("capture index"):
            rows = X.latest_shared(keys, chains.filter(F.col("chain_times") > 1)).collect()
        moved, close = alignment.align_chains(
            ((x["cluster"], x["chain"], x["observed_ts"], x["shared_ts"]) for x in rows),
            o.align_ms, bound_ts)
        if bound_ts is not None and any(t >= bound_ts > c for _k, t, c in moved):
            raise B.NotBounded("a new record joins a capture already reported (within "
                               "--align of it, observing other queues)")
        if moved:
            moved_df = obs.sparkSession.createDataFrame(
                moved, "cluster string, observed_ts long, capture_ts long")
    index = X.capture_index(chains, moved_df)
    if moved_df is not None:
        index = run.cut(index, "capture index")
    return Read(obs=X.with_capture(obs, index), bad=r.bad, points=points,
                members=X.with_capture(r.members, index),
                topic_cfg=X.with_capture(r.topic_cfg, index),
                group_cfg=X.with_capture(r.group_cfg, index), logs=logs, log_bad=r.log_bad,
                close=close)


# ---- lag -----------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Lagged:
    dedup: DataFrame  # one observation per queue and capture
    history: DataFrame  # the broker's max offset of every queue at every capture
    lag: DataFrame  # the lag dataset's rows (LAG_COLUMNS); bounded: with the look-back
    lag_new: DataFrame  # the rows this run adds (bounded: the new captures'; else ``lag``)
    owners: DataFrame  # the kernel's owner outputs (:func:`flow.side_frame` reads them)


def lag(run: Runner, o: Options, c: Read, kinds: Iterable[Kind], columns: list[str],
        earlier: Earlier | None = None,
        check_bound: Callable[[DataFrame], None] | None = None) -> Lagged:
    """The lag rows by the kernel (:mod:`mqctl.lagjob.flow`, :mod:`mqctl.lagjob.kernel`): the
    members and configs joined in first (their keys are the observation's), then one shuffle
    by topic and one mapInArrow computing the dedupe, each observation's max offset (its own,
    else the nearest captured one within ``--max-skew``), lag, time lag and the queue status
    over ``--window`` captures; the deduplicated observations are the lag rows. Bounded
    (``earlier``): the look-back's and the new captures' observations, with the earlier broker
    history as points, so each new row is computed from what a full run would see; the lag rows
    hold the look-back too, ``check_bound`` vets them, and :class:`bounded.NotBounded` when an
    observation has no max offset of its own."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import flow
    from mqctl.lagjob import transforms as X

    run.say("lag report: computing lag, time lag and status")
    points = c.points.select(*X.QUEUE, *flow.POINT_COLUMNS)
    if earlier is not None:
        points = points.unionByName(earlier.history.select(
            *X.QUEUE, F.col("t").alias("observed_ts"), F.col("B").alias("broker_offset"),
            "min_offset"))
    read = set(kinds)
    # (the owner track's rows: read by the merge with the logs and by a bounded re-run)
    track = earlier is not None or any(k in read for k in LOG_KINDS)
    rows = flow.kernel_rows(_enrich(c.obs, c, read), points, o, track)
    kept = run.cut(X.with_date(rows).withColumns({
        "capture_time": X.iso_of(F.col("capture_ts")), "source": display_source()})
        .select(*columns, *flow.SIDE_COLUMNS), "lag", keep_partitioning=True)
    lag_df = flow.lag_part(kept)
    if check_bound is not None:
        check_bound(lag_df)
    history = flow.own_history(lag_df, c.points)
    if earlier is not None:
        with run.stage("bound"):  # (the fill may take a later capture's max offset)
            own = F.col("broker_offset_ts") == F.col("observed_ts")
            if not lag_df.filter(~F.coalesce(own, F.lit(False))).isEmpty():
                raise B.NotBounded("an observation has no max offset")
        history = X.by_topic(earlier.history.unionByName(history))
    lag_new = lag_df if earlier is None else lag_df.filter(F.col("capture_ts")
                                                           >= F.lit(earlier.new_ts))
    return Lagged(dedup=lag_df, history=history, lag=lag_df, lag_new=lag_new, owners=kept)


def _enrich(obs: DataFrame, c: Read, kinds: set[Kind]) -> DataFrame:
    from mqctl.lagjob import transforms as X

    return X.enrich(obs, c.members if Kind.CONSUMER_PROGRESS in kinds else None,
                    c.topic_cfg if Kind.TOPICS in kinds else None,
                    c.group_cfg if Kind.SUBSCRIPTION_GROUP in kinds else None)


def group_status(run: Runner, o: Options, lagged: Lagged, columns: list[str],
                 new_ts: int | None = None) -> DataFrame:
    """The group_status dataset's rows (``columns``): per capture, group and topic, from the
    kernel's per group and topic rows (:func:`flow.group_topic_status`); bounded
    (``new_ts``): the new captures'."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import flow
    from mqctl.lagjob import transforms as X

    run.say(f"lag report: evaluating status over a window of {o.window} capture(s)")
    gt = flow.group_topic_status(lagged.owners)
    if new_ts is not None:
        gt = gt.filter(F.col("capture_ts") >= F.lit(new_ts))
    return run.cut(X.with_date(gt).withColumn(
        "capture_time", X.iso_of(F.col("capture_ts"))).select(*columns), "group status")


# ---- rebalance history ---------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Rebalance:
    track: DataFrame  # each queue's owner at each capture
    captured: DataFrame  # owner changes found in captures (with earlier's)
    resets: DataFrame  # offset resets (captured and logged)
    no_resets: bool  # (then ``captured`` are the changes)
    unowned_track: DataFrame  # unowned intervals found in captures (with earlier's)
    changes: DataFrame  # every owner change (captured and logged, merged; resets marked)
    events: DataFrame  # rebalance/events
    moves: DataFrame  # rebalance/moves
    unowned: DataFrame  # rebalance/unowned
    storms: DataFrame  # rebalance/storms
    locks: DataFrame  # rebalance/locks


def rebalance(run: Runner, o: Options, lagged: Lagged, logs: DataFrame, has_logs: bool,
              earlier: Earlier | None = None, keep_derived: bool = False) -> Rebalance:
    """The rebalance history: owner changes from the captures' owner track and from the logs
    (one event when both saw it), offset resets as events of their own, queue moves, unowned
    intervals, storms (``--storm-rounds`` within ``--storm-window``, or a round longer than
    ``--storm-round-max``) and lock events. ``keep_derived``: the unowned intervals are cut
    (the run writes them to the derived state)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import transforms as X

    run.say("lag report: rebalance history")
    # logs carry no cluster: take the one of their group's snapshots/exports
    logs = X.infer_log_cluster(logs, lagged.dedup) if not o.cluster and has_logs else logs
    if has_logs:  # read by a dozen joins and windows below: parse and resolve them once
        logs = run.cut(logs, "logs")
    captured, resets, unowned_track, track = _captured_changes(run, lagged.owners, earlier)
    if keep_derived:  # (read below and written to the derived state)
        unowned_track = run.cut(unowned_track, "unowned")
    if has_logs:
        resets = X.reset_events(logs).unionByName(resets)
    resets, n_resets = run.cut_counting(resets, "resets", F.lit(True))
    if has_logs:  # a logged change and the capture change it explains are one event
        logged_changes = run.cut(X.log_changes(logs), "log changes")
        # the merge reads the capture changes (two windows over the owner track) three
        # times and its join of both sources twice: each cut once (the demo's changes stage
        # 0.70 s with both cuts against 1.23 s, docs/lag-performance.md "Seventeenth pass")
        captured = run.cut(captured, "captured changes")
        hits = run.cut(X.change_hits(captured, logged_changes, o.align_ms), "change hits")
        merged = X.merge_changes(captured, logged_changes, o.align_ms, hits)
    else:  # (without logs both steps below change nothing: skip their joins)
        merged = captured.select(*X.CHANGE_COLS)
    no_resets = n_resets == 0
    changes = run.cut(merged if no_resets else X.mark_resets(merged, resets), "changes")
    disp = display_source()
    events = run.cut(X.with_date(X.rebalance_events(changes).unionByName(resets), "ts")
                     .withColumn("source", disp), "events")
    moves = run.cut(X.with_date(X.queue_moves(changes, o.move_window_ms), "ts"), "moves")
    unowned_df = unowned_track
    if not no_resets:
        unowned_df = X.drop_reset_gaps(unowned_df, changes)
    if has_logs:  # one interval per queue and period, from either source or both
        logged = changes.filter(F.col("source_kind").startswith("client-log"))
        owned = track.filter(F.col("owner").isNotNull()).select(*X.GQUEUE, "capture_ts")
        # the merge reads each source five or six times (its matches, the unmatched, the
        # ends): computed once each, not their windows and aggregates at every read (the
        # demo's plan had 22 windows and 25 exchanges for 4 windows and 2 exchanges of work)
        from_logs = run.cut(X.unowned_from_logs(logged), "unowned from logs")
        if not (keep_derived and no_resets):  # (else already the cut above)
            unowned_df = run.cut(unowned_df, "unowned from captures")
        unowned_df = X.merge_unowned_sources(unowned_df, from_logs, o.align_ms, owned)
    unowned = run.cut(X.with_date(unowned_df, "start_ts"), "unowned")
    # (read three times by the storms: both rules and the storms' totals)
    rounds = run.cut(X.rebalance_rounds(events, o.round_gap_ms), "rounds")
    storms = run.cut(X.with_date(X.rebalance_storms(
        rounds, o.storm_rounds, o.storm_window_ms, o.storm_round_max_ms), "start_ts"),
        "storms")
    locks = X.with_date(X.lock_events(logs), "ts").withColumn("source", disp)
    if has_logs:
        locks = run.cut(locks, "locks")
    return Rebalance(track=track, captured=captured, resets=resets, no_resets=no_resets,
                     unowned_track=unowned_track, changes=changes, events=events, moves=moves,
                     unowned=unowned, storms=storms, locks=locks)


def _captured_changes(run: Runner, owners: DataFrame, earlier: Earlier | None
                      ) -> tuple[DataFrame, DataFrame, DataFrame, DataFrame]:
    """(owner changes, offset resets, unowned intervals, owner track) found in the captures;
    bounded: the new ones added to ``earlier``'s."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import flow
    from mqctl.lagjob import transforms as X

    # (computed by the kernel, from the same batches as the lag rows: :func:`lag`)
    captured, resets, unowned_track, track = flow.captured_changes(owners)
    if earlier is not None:  # the new ones and the earlier ones, as the previous run found
        new_ts = F.lit(earlier.new_ts)
        captured = earlier.changes.unionByName(
            captured.filter(F.col("ts") >= new_ts).select(*X.CHANGE_COLS))
        resets = earlier.resets.unionByName(
            resets.filter(F.col("ts") >= new_ts).select(*B.columns("resets")))
        unowned_track = B.merge_unowned(earlier.unowned, unowned_track, track)
    return captured, resets, unowned_track, track


# ---- quarantine ----------------------------------------------------------------------------

def quarantine(run: Runner, spark: SparkSession, o: Options, bad: DataFrame, files: list[Any],
               run_ts: int, log_bad: tuple[DataFrame, DataFrame] | None = None) -> DataFrame:
    """The quarantine dataset's rows: every bad record, dated by its own time, else its file's
    capture (path timestamp, else modification time), else the run's time ``run_ts``.
    ``log_bad``: the logs' bad lines and every log line read (:attr:`Read.log_bad`), the bad
    ones numbered by their line in the file."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import transforms as X
    from mqctl.lagjob.inputs import path_meta

    if log_bad is not None:
        # numbering a bad line counts the lines of every split of its file: a scan of every
        # log line, made only when a log line is bad (the demo's logs have none: 3 jobs and
        # 0.4 s of its report, docs/lag-performance.md "Seventeenth pass")
        with run.stage("quarantine"):
            some = not log_bad[0].isEmpty()
        if some:
            bad = bad.unionByName(X.line_numbers(*log_bad).select(*BAD_COLUMNS))
    # a bad line without its own capture time belongs to its file's capture (path
    # timestamp, else modification time), so a re-run replaces the same date partition
    file_ts = [(f.path, path_meta(f.path, o.tz_info, f.kind).capture_ts or f.mtime_ms)
               for f in files]
    bad = bad.withColumn("source", display_source())
    if len(file_ts) <= LITERAL_FILES:
        # a literal map (SQL text, one expression): no join, and no job to broadcast a frame
        # made from Python rows (a Python worker's, about 60 ms of a test-sized report)
        from mqctl.lagjob.sqltext import sql_text

        pairs = {p: ts for p, ts in file_ts if ts is not None}
        known = (F.expr("map(" + ", ".join(f"{sql_text(p)}, CAST({int(ts)} AS BIGINT)"
                                            for p, ts in sorted(pairs.items())) + ")[source]")
                 if pairs else F.lit(None).cast("long"))
        dated = bad.withColumn("observed_ts", F.coalesce(F.col("observed_ts"), known,
                                                         F.lit(run_ts)))
    else:
        fts = spark.createDataFrame(file_ts, "source string, file_ts long")
        dated = (bad.join(F.broadcast(fts), on="source", how="left")
                 .withColumn("observed_ts", F.coalesce(F.col("observed_ts"), F.col("file_ts"),
                                                       F.lit(run_ts))).drop("file_ts"))
    return run.cut(X.with_date(dated, "observed_ts"), "quarantine")


# ---- the report ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Report:
    """What the run writes: the datasets by name (``--since``: from its date on), and the
    latest rows per group and topic and per group, each with its group's health."""

    datasets: dict[str, DataFrame]
    latest: DataFrame
    groups: DataFrame
    # the latest rows per group and topic and per group before the rebalance counts and the
    # health (:func:`transforms.latest_status_rows`, :func:`transforms.latest_groups_rows`):
    # what a bounded re-run keeps of them (the derived state's ``latest`` and ``groups``)
    latest_base: DataFrame
    groups_base: DataFrame


@dataclass(frozen=True, slots=True)
class Latest:
    """A bounded re-run's latest rows: the earlier runs' (``latest``, ``groups``: a report's
    ``latest_base`` and ``groups_base``) and the new captures' group-topic rows (``gt_new``);
    merged instead of reading ``group_status`` whole."""

    latest: DataFrame
    groups: DataFrame
    gt_new: DataFrame


def report(run: Runner, o: Options, lag_rows: DataFrame, gt: DataFrame, reb: Rebalance,
           quarantined: DataFrame, earlier: Latest | None = None) -> Report:
    """The datasets (``--since``: the report covers captures and events from it on; the
    datasets hold whole days, a partition is replaced whole, so they start at its date) and
    the latest rows (:func:`latest`; bounded: ``earlier``'s merged with the new captures',
    :func:`transforms.merge_latest_status`, ``group_status`` is not read)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import transforms as X

    datasets = {"lag": lag_rows, "group_status": gt, "rebalance/events": reb.events,
                "rebalance/moves": reb.moves, "rebalance/storms": reb.storms,
                "rebalance/unowned": reb.unowned, "rebalance/locks": reb.locks,
                "quarantine": quarantined}
    gt_r, ev_r = gt, reb.events
    if o.since_ms is not None:
        since, day = F.lit(int(o.since_ms)), X.date_of(F.lit(int(o.since_ms)))
        datasets = {k: df.filter(F.col("date") >= day) for k, df in datasets.items()}
        gt_r = datasets["group_status"].filter(F.col("capture_ts") >= since)
        ev_r = datasets["rebalance/events"].filter(F.col("ts") >= since)
    if earlier is None:
        base, g_base = X.latest_status_rows(gt_r), X.latest_groups_rows(gt_r)
    else:
        base = X.merge_latest_status(earlier.latest, earlier.gt_new)
        g_base = X.merge_latest_groups(earlier.groups, earlier.gt_new)
    base, g_base = run.cut(base, "latest"), run.cut(g_base, "groups")
    latest_rows, groups = latest(run, o, X.with_rebalances(base, ev_r),
                                 X.with_rebalances(g_base, ev_r), datasets["rebalance/storms"],
                                 datasets["rebalance/unowned"], ev_r,
                                 datasets["rebalance/locks"])
    return Report(datasets=datasets, latest=latest_rows, groups=groups, latest_base=base,
                  groups_base=g_base)


def latest(run: Runner, o: Options, latest_rows: DataFrame, groups: DataFrame,
           storms: DataFrame, unowned: DataFrame, events: DataFrame, locks: DataFrame
           ) -> tuple[DataFrame, DataFrame]:
    """The latest rows per group and topic and per group, each with its group's health
    (:func:`transforms.group_health`: status, storms and unowned queues together), plus a
    row for every group seen only in logs (:func:`transforms.unseen_groups`): every group
    of the inputs is accounted for."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import transforms as X

    keys = ["cluster", "group"]
    groups = run.cut(groups, "groups")
    unseen = X.unseen_groups(groups, (events, "ts"), (locks, "ts"))
    every = groups.unionByName(unseen, allowMissingColumns=True)
    health = run.cut(X.group_health(every, storms, unowned, o.storm_window_ms,
                                    o.unowned_max), "health")
    unseen_rows = X.with_rebalances(unseen.drop("reason"), events)
    latest_rows = (latest_rows.unionByName(unseen_rows, allowMissingColumns=True)
                   .join(health, on=keys, how="left"))
    groups = (groups.unionByName(unseen_rows, allowMissingColumns=True)
              .join(health, on=keys, how="left"))
    with_time = X.iso_of(F.col("capture_ts"))
    return (run.cut(latest_rows.withColumn("capture_time", F.coalesce(
                F.col("capture_time"), with_time)), "latest"),
            run.cut(groups, "groups"))


def count(run: Runner, datasets: dict[str, DataFrame], extra: dict[str, DataFrame]
          ) -> dict[str, dict[str | None, int]]:
    """Rows per dataset and date (``datasets``) and per frame (``extra``), in one job."""
    from pyspark.sql import functions as F

    stats_df = None
    for name, df in {**datasets, **extra}.items():
        part_df = df.select(F.lit(name).alias("ds"), (F.col("date") if name in datasets
                                                      else F.lit(None).cast("string"))
                            .alias("date"))
        stats_df = part_df if stats_df is None else stats_df.unionByName(part_df)
    assert stats_df is not None
    stats: dict[str, dict[str | None, int]] = {}
    # one task per core, not one per partition of every frame (47 tasks for the demo's
    # 13 frames, each reading the union's whole plan: 0.50 s against 0.78 s)
    stats_df = stats_df.coalesce(max(1, stats_df.sparkSession.sparkContext.defaultParallelism))
    with run.stage("counts"):
        for r in stats_df.groupBy("ds", "date").count().collect():
            stats.setdefault(r["ds"], {})[r["date"]] = int(r["count"])
    return stats
