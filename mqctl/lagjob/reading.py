"""The lag report's inputs read for a run: the state opened (:func:`open_state`), the snapshot
files parsed or ingested (:func:`ingest`, :func:`parse_snapshots`), a bounded re-run's
look-back and its checks (:func:`bounded_observations`, :func:`check_bound`) and the earlier
runs' derived state (:func:`earlier`, :func:`latest`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.lagjob import writers as W
from mqctl.lagjob.alignment import Close
from mqctl.lagjob.inputs import Kind, local_path
from mqctl.lagjob.sizing import bound_possible

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from mqctl.lagjob.context import RunContext
    from mqctl.lagjob.stages import Earlier, Latest


def snapshots(run: RunContext, files: list[Any], run_ms: int) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines with ``line``) of the snapshot files: through the ingested
    table when the run keeps state (:func:`ingest`), else parsed now."""
    if run.state is not None:
        return ingest(run, files, run_ms)
    return parse_snapshots(run, [f.path for f in files], run_ms)


def ingest(run: RunContext, files: list[Any], run_ms: int) -> tuple[DataFrame, DataFrame]:
    """Incremental read (:mod:`mqctl.lagjob.ingest`): drop the rows of changed and vanished
    files, parse the new and changed files (and the files with bad lines, never ingested),
    append their rows to the table as a new batch, commit the manifest. Sets
    ``run.touched``: the dates whose observations changed."""
    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import transforms as X

    sp, st, man = run.spark, run.state, run.manifest
    assert st is not None
    plan, changed, touched = _drop_stale(run, files)
    from_date = None
    if run.o.since_ms is not None:  # --since: a day of history before it is enough
        from_date = W.utc_day(run.o.since_ms - X.DAY_MS)
    bad = None
    extra: list[DataFrame] = []  # rows of files that are read every run, never ingested
    to_parse = plan.new + [p for p in plan.kept if man.files[p].get("bad")]
    if to_parse:
        extra, bad = _ingest_new(run, files, to_parse, run_ms, touched)
    if plan.stale or to_parse:
        man.pending = sorted(set(man.pending) | touched)
        if run.write_all:  # until this run completes, no earlier output is trusted
            man.fingerprint = ""
        with run.stage("ingest"):
            I.save(sp, st, man)
    base = I.table(sp, st, man, from_date)
    obs_frames = ([] if base is None else [base.select(*X.SNAPSHOT_OBS)]) + extra
    if not obs_frames:
        obs_frames.append(run.spark.createDataFrame([], X.SNAPSHOT_OBS_DDL))
    obs = obs_frames[0]
    for f in obs_frames[1:]:
        obs = obs.unionByName(f)
    if bad is None:
        from mqctl.lagjob import schemas

        bad = sp.createDataFrame([], schemas.BAD)
    run.touched = touched
    # a bounded re-run needs every earlier row as it was and only whole new files
    run.clean_ingest = (not changed and not extra
                        and not any(m.get("bad") for m in man.files.values()))
    return obs, bad


def _drop_stale(run: RunContext, files: list[Any]) -> tuple[Any, list[str], set[str]]:
    """The ingest plan (:func:`ingest.plan`) with the rows of changed and vanished files
    dropped from the table (aged-out ones kept, marked, when the run may be bounded): the
    plan, the changed files, and the dates whose observations changed so far."""
    from mqctl.lagjob import ingest as I

    sp, st, man = run.spark, run.state or "", run.manifest
    plan = I.plan(man, files)
    # an ingested file that cannot be read now changed (its rows go, as a full run has
    # none of it), it did not age out
    current = {f.path for f in files} | {f.path for f in run.listing.unreadable()}
    changed = [p for p in plan.stale if p in current]
    # files that aged out (`snapshot --keep`) while nothing else changed: when the run can
    # be a bounded one, their rows stay in the table (marked) until their whole date is
    # gone, then that partition goes at once; rewriting the date for every deleted file
    # costs about 5 s per 1M rows of it (docs/lag-performance.md)
    run.aged_out = set(plan.stale_dates) if plan.stale and not changed else set()
    run.deferred = bool(run.aged_out) and run.try_bound
    if run.deferred:
        with run.stage("ingest"):
            I.age_out(sp, st, man, plan.stale)
        plan = I.plan(man, files, keep_aged=True)
    for p in plan.kept:  # (an aged-out file given again: its rows are still there)
        man.files[p].pop("aged", None)
    touched = set(plan.stale_dates)
    with run.stage("ingest"):
        gone = [man.files[p]["source"] for p in plan.stale
                if man.files[p].get("source") and not man.files[p].get("bad")]
        if gone:
            I.drop_rows(sp, st, man, gone, plan.stale_dates)
        for p in plan.stale:
            del man.files[p]
    return plan, changed, touched


def _ingest_new(run: RunContext, files: list[Any], to_parse: list[str], run_ms: int,
                touched: set[str]) -> tuple[list[DataFrame], DataFrame | None]:
    """Parse ``to_parse`` into a new batch of the table (adopted whole when no file has a bad
    line), record each file in the manifest and add its dates to ``touched``; returns the
    rows read every run instead (files with bad lines, read again as text, and files the
    listing does not map) and the bad lines (None without any)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import transforms as X

    sp, st, man = run.spark, run.state or "", run.manifest
    extra: list[DataFrame] = []
    bad = None
    batch = man.next_batch()
    staged_dir, staged = stage_snapshots(run, to_parse, run_ms, batch)
    by_path = {f.path: f for f in files}

    def path_of(source: str) -> str:
        return local_path(source) if W.is_local(source) else source

    with run.stage("ingest"):
        per = {r["source"]: (sorted(d for d in r["dates"] if d), int(r["bad"]))
               for r in staged.groupBy("source").agg(
                   F.collect_set(X.date_of(F.col("observed_ts"))).alias("dates"),
                   F.count("reason").alias("bad")).collect()}
        bad_files = sorted(s for s, (_d, n) in per.items() if n)
        unmapped = [s for s in per if path_of(s) not in by_path]
        skip = set(bad_files) | set(unmapped)  # re-read every run, never ingested
        if per and not skip:  # the common case: the staged files become the batch
            I.adopt(sp, staged_dir, W.join(st, I.TABLE))
            run.new_batch = batch
        elif any(s not in skip for s in per):
            (staged.filter(~F.col("source").isin(sorted(skip)))
             .write.mode("append").partitionBy("date").parquet(W.join(st, I.TABLE)))
        known = {path_of(s): s for s in per}
        for p in to_parse:
            f = by_path[p]
            src = known.get(p)
            dates = per[src][0] if src else []
            if not (p in man.files and man.files[p].get("bad")):
                touched.update(dates)  # (an unchanged bad file changes nothing)
            man.files[p] = {"size": f.size, "mtime_ms": f.mtime_ms, "source": src,
                            "dates": dates, "bad": src in skip if src else False}
        man.batches.append(batch)
    if unmapped:
        extra.append(staged.filter(F.col("source").isin(sorted(unmapped))
                                   & F.col("reason").isNull()).select(*X.SNAPSHOT_OBS))
    if bad_files:
        obs_b, bad = reparse_bad_files(run, bad_files, run_ms)
        extra.append(obs_b)
    return extra, bad


def parse_snapshots(run: RunContext, snap_paths: list[str], run_ms: int
                     ) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines with ``line``) of the snapshot files (a run without state),
    each JSON record parsed once: Spark's JSON reader with the schema for every file; a
    file with any bad record is read again as text (:func:`reparse_bad_files`). Both paths
    find the same bad records (:func:`transforms.check_snapshot_records`); the first only
    asks which files have one (``reasons=False``), the text pass names each reason."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import readers
    from mqctl.lagjob import transforms as X

    sp = run.spark
    fast = run.cut(X.check_snapshot_records(readers.read_snapshot_json(sp, snap_paths),
                                            run_ms, reasons=False), "parse snapshots")
    with run.stage("parse snapshots"):
        bad_files = sorted(r["source"] for r in fast.filter(F.col("reason").isNotNull())
                           .select("source").distinct().collect())
    obs, bad = X.split_snapshot_records(fast)
    if not bad_files:
        return obs, bad.withColumn("line", F.lit(None).cast("long"))
    obs_b, bad_b = reparse_bad_files(run, bad_files, run_ms)
    return obs.filter(~F.col("source").isin(bad_files)).unionByName(obs_b), bad_b


def reparse_bad_files(run: RunContext, bad_files: list[str], run_ms: int
                       ) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines with ``line``) of the files with bad lines, read as text
    (:func:`readers.read_snapshots`): each bad line keeps its number and content."""
    from mqctl.lagjob import readers
    from mqctl.lagjob import transforms as X

    records, lines = readers.read_snapshots(run.spark, bad_files, run_ms)
    records = run.cut(records, "parse snapshots (files with bad lines)")
    obs_b, bad_b = X.split_snapshot_records(records)
    return obs_b, X.line_numbers(bad_b, lines)


def bounded_observations(run: RunContext) -> tuple[DataFrame, DataFrame]:
    """(the look-back's and the new captures' observations, every ingested observation)
    of a bounded re-run; sets ``run.bound`` (:func:`bounded.plan`, which raises
    :class:`bounded.NotBounded` when the new captures do not all follow the earlier
    ones)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import transforms as X
    from mqctl.timeparse import format_ms

    sp, st, man = run.spark, run.state, run.manifest
    assert st is not None
    with run.stage("bound"):
        run.bound = b = B.plan(B.table_times(sp, st, man, run.new_batch,
                                             sorted(run.touched or ())),
                               run.o.window)
    from_date = W.utc_day(b.from_ts)
    if run.aged_out and max(run.aged_out) >= from_date:
        raise B.NotBounded("an input file of the look-back's dates is gone")
    recent, everything = I.table(sp, st, man, from_date), I.table(sp, st, man)
    assert recent is not None and everything is not None  # (this run ingested a batch)
    run.say("lag report: a bounded re-run: the captures from "
            f"{format_ms(b.new_ts)}, with the earlier ones from {format_ms(b.from_ts)}")
    return (recent.select(*X.SNAPSHOT_OBS).filter(F.col("observed_ts") >= F.lit(b.from_ts)),
            everything.select(*X.SNAPSHOT_OBS))


def check_bound(run: RunContext, dedup: DataFrame, table_all: DataFrame | None, cuts: DataFrame
                 ) -> None:
    """Raise :class:`bounded.NotBounded` when a queue of the new captures lacks look-back
    (:func:`bounded.check_frame`) and has observations before it (in ``table_all``, every
    ingested observation), or when an observation's time lag may need a point of the
    broker history the derived state no longer keeps (:func:`bounded.history_misses`)."""
    assert table_all is not None
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob.transforms import GQUEUE

    b = run.bound
    with run.stage("bound"):
        # (one job: the short queues, and one observation the kept history may miss)
        miss = B.history_misses(dedup, cuts).select(*GQUEUE, F.lit(True).alias("_miss"))
        rows = B.check_frame(dedup, b.new_ts, run.o.window).withColumn(
            "_miss", F.lit(False)).limit(B.MAX_SHORT_KEYS + 1).unionByName(
            miss.limit(1)).collect()
        if any(r["_miss"] for r in rows):
            raise B.NotBounded("an offset is below the broker history the derived state "
                               "keeps (rewound, or a group that starts far behind)")
        short = [r[:len(GQUEUE)] for r in rows if not r["_miss"]]
        if len(short) > B.MAX_SHORT_KEYS:
            raise B.NotBounded(f"more than {B.MAX_SHORT_KEYS} queues have a short look-back")
        if short:
            keys = run.spark.createDataFrame(short, dedup.select(*GQUEUE).schema)
            if B.earlier_rows(table_all, keys, b.from_ts):
                raise B.NotBounded("a queue was not seen in the last "
                                   f"{run.o.window + 1} captures")


def stage_snapshots(run: RunContext, paths: list[str], run_ms: int, batch: int
                     ) -> tuple[str, DataFrame]:
    """Parse and check the snapshot files in one pass, written as Parquet to a staging
    directory of the state in the ingested table's layout (``date=`` partitions,
    ``batch``); returns the directory and its rows read back. No checkpoint of the parsed
    rows: the write is the only pass over the JSON, and a batch without bad lines becomes
    part of the table by moving its files (:func:`ingest.adopt`)."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import ingest as I
    from mqctl.lagjob import readers
    from mqctl.lagjob import transforms as X
    sp, st = run.spark, run.state
    assert st is not None
    staging = W.join(st, f"{I.STAGING}-{batch}")
    with run.stage("parse snapshots"):
        I.clear_staging(sp, st)
        # (which lines are bad is all the staged rows keep: a file with a bad line is read
        # again as text, which names the reasons)
        checked = X.check_snapshot_records(readers.read_snapshot_json(sp, paths), run_ms,
                                           reasons=False)
        (X.with_date(checked, "observed_ts").select(*X.SNAPSHOT_OBS, "reason", "date")
         .withColumn("batch", F.lit(batch))
         .write.partitionBy("date").parquet(staging))
    # (the schema given: a write of files without rows leaves no file to infer it from)
    return staging, sp.read.schema(
        f"{X.SNAPSHOT_OBS_DDL}, reason string, batch int, date date").parquet(staging)


def count_inputs(run: RunContext, by_kind: dict[Kind, list[Any]]) -> dict[str, int]:
    """Input files per kind (and unrecognised, ignored, unreadable ones), said on stderr;
    notes for the unreadable files and the inputs that matched nothing."""
    inputs = {k.value: len(v) for k, v in sorted(by_kind.items())}
    if run.listing.unknown():
        inputs["unrecognised"] = len(run.listing.unknown())
    if run.listing.ignored():
        inputs["ignored"] = len(run.listing.ignored())
    unreadable = run.listing.unreadable()
    if unreadable:
        inputs["unreadable"] = len(unreadable)
        shown = "; ".join(f"{f.path}: {f.unreadable}" for f in unreadable[:5])
        more = f"; and {len(unreadable) - 5} more" if len(unreadable) > 5 else ""
        run.notes.append(f"{len(unreadable)} input file(s) could not be read and were "
                         f"quarantined whole (OUT/quarantine, reason 'unreadable file'): "
                         f"{shown}{more}")
    for u in run.listing.unmatched:
        run.notes.append(f"input matched no file: {u}")
    run.say("lag report: reading " + ", ".join(f"{n} {k}" for k, n in inputs.items())
            + " file(s)")
    return inputs


def open_state(run: RunContext, by_kind: dict[Kind, list[Any]], fp: str) -> bool:
    """Load the manifest (a new one without state, with --full or an unreadable one) and
    decide what the run may keep: ``write_all`` (rewrite every date) and ``try_bound``
    (a bounded re-run may be possible). Returns whether the run keeps the derived state
    (runs over snapshots only and the whole history)."""
    sp, o = run.spark, run.o
    only_snapshots = set(by_kind) <= {Kind.SNAPSHOT} and not run.listing.unknown()
    whole_history = o.since_ms is None and o.until_ms is None
    if run.state is None:
        run.write_all, run.try_bound = True, False
        return False
    from mqctl.lagjob import ingest as I

    man = None if run.full else I.load(sp, run.state)
    if man is None:  # none yet, unreadable, or --full: start over
        I.delete(sp, W.join(run.state, I.TABLE))
        man = I.Manifest()
    run.manifest = man
    run.write_all, bound = bound_possible(
        man, fp, run.out, full=run.full, only_snapshots=only_snapshots,
        whole_history=whole_history, lag_written=I.exists(sp, W.join(run.out, "lag")))
    run.try_bound = run.may_bound and bound
    if run.try_bound:
        from mqctl.lagjob import bounded as B

        missing = B.missing(sp, run.state) + ([] if man.counts else ["counts"])
        if missing:  # (removed, or a state of a version without that part)
            run.say(f"lag report: the derived state lacks {', '.join(missing)} (removed, "
                    "or written by an earlier version): computing every capture")
        run.try_bound = not missing
    return only_snapshots and whole_history


def read_snapshots(run: RunContext, by_kind: dict[Kind, list[Any]]
                    ) -> tuple[tuple[DataFrame, DataFrame] | None, DataFrame | None]:
    """(the snapshots' observations and bad lines, or None without snapshot files;
    bounded: every ingested observation, for the look-back check). A bounded re-run reads
    only the look-back's and the new captures' observations (sets ``run.bound``)."""
    from mqctl.timeparse import now_ms

    if not by_kind.get(Kind.SNAPSHOT):
        return None, None
    table_all = None
    obs_s, bad_s = snapshots(run, by_kind[Kind.SNAPSHOT], now_ms())
    if run.try_bound and run.clean_ingest and run.new_batch is not None:
        obs_s, table_all = bounded_observations(run)
    elif run.deferred:  # (any other run reads the table without their rows)
        from mqctl.lagjob.bounded import NotBounded

        raise NotBounded("capture files aged out, and no new capture")
    return (obs_s, bad_s), table_all


def earlier(run: RunContext) -> Earlier | None:
    """A bounded re-run's :class:`stages.Earlier`: the derived state the previous runs
    left (lazy reads), before the look-back; None for any other run."""
    if run.bound is None:
        return None
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob.stages import Earlier

    sp, st, done, b = run.spark, run.state or "", run.manifest.derived, run.bound
    return Earlier(history=B.read(sp, st, "history", done).filter(
                       F.col("t") < F.lit(b.from_ts)),
                   cuts=B.read(sp, st, "cuts", done),
                   changes=B.read(sp, st, "changes", done),
                   resets=B.read(sp, st, "resets", done),
                   unowned=B.read(sp, st, "unowned", done), from_ts=b.from_ts,
                   new_ts=b.new_ts)


def latest(run: RunContext, gt_new: DataFrame) -> Latest | None:
    """A bounded re-run's earlier latest rows (the derived state's ``latest`` and
    ``groups``, in the shape the new captures' give them) and the new group-topic rows;
    None for any other run."""
    if run.bound is None:
        return None
    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import transforms as X
    from mqctl.lagjob.stages import Latest

    sp, st, done = run.spark, run.state or "", run.manifest.derived
    return Latest(
        latest=B.read(sp, st, "latest", done, X.latest_status_rows(gt_new).schema),
        groups=B.read(sp, st, "groups", done, X.latest_groups_rows(gt_new).schema),
        gt_new=gt_new)


def close_captures(run: RunContext, found: dict[str, Close]) -> None:
    """The captures opened within --align of the previous one (:mod:`alignment`): what
    this run found, plus a bounded re-run's earlier ones (the manifest's; this run counted
    only the new captures), as a full run over the same inputs counts them."""
    close = {c: Close.from_json(v) for c, v in run.manifest.close.items()} \
        if run.bound is not None else {}
    for cluster, c in found.items():
        close.setdefault(cluster, Close()).add(c)
    run.close = close
