"""One run of the lag report: the order of its steps (:meth:`Run._run`) and the start-over
when Spark could not read a file; what the steps share is :class:`context.RunContext`. The
steps live by subject: the inputs and the state read
(:mod:`reading`), the datasets and counts (:mod:`outputs`), the summaries, Prometheus file
and page (:mod:`summaries`), and the state kept for the next run (:mod:`derived`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.errors import UsageError
from mqctl.lagjob import outputs as OU
from mqctl.lagjob import reading as RD
from mqctl.lagjob import summaries as SU
from mqctl.lagjob import writers as W
from mqctl.lagjob.context import RunContext
from mqctl.lagjob.guards import (
    MAX_FAILED_READS,
    UNREADABLE_HINT,
    failed_read,
    java_failure,
    spark_failure,
)
from mqctl.lagjob.inputs import local_path
from mqctl.lagjob.outputs import rows_counted
from mqctl.lagjob.result import GROUP_COLUMNS, LAG_COLUMNS, ReportResult

if TYPE_CHECKING:
    from pyspark.sql import SparkSession


def _persistent_rdd_ids(spark: SparkSession) -> set[int] | None:
    """Ids of the RDDs the session holds in storage now (None where the JVM is not reachable,
    e.g. Spark Connect)."""
    try:
        return {int(k) for k in spark.sparkContext._jsc.getPersistentRDDs()}
    except Exception:  # best effort; nothing to release then
        return None


def _release_checkpoints(spark: SparkSession, before: set[int] | None) -> None:
    """Free the blocks of this run's ``localCheckpoint`` cuts. ``unpersist`` does not reach them
    (the checkpointed RDD is not in the cache manager), and a long-lived session (tests, a
    notebook, repeated runs) would otherwise keep every run's cuts in storage memory until
    execution memory runs out ("Could not allocate memory to grow BytesToBytesMap")."""
    if before is None:
        return
    try:
        rdds = spark.sparkContext._jsc.getPersistentRDDs()
        for key in list(rdds.keys()):
            if int(key) not in before:
                rdds[key].unpersist(False)
    except Exception:  # freeing memory must never fail a finished run
        pass


class Run(RunContext):
    """One run: ``run()`` takes the steps in order (:meth:`_run`), and starts over without a
    file Spark could not read."""

    def run(self) -> ReportResult:
        import time

        self.started = time.perf_counter()  # (the report's run time, in its Prometheus file)
        before = _persistent_rdd_ids(self.spark)
        try:
            from mqctl.lagjob.bounded import NotBounded

            quarantined = 0
            while True:
                try:
                    return self._run()
                except NotBounded as why:  # (raised before anything is written)
                    self.say(f"lag report: not a bounded re-run ({why}): computing every "
                             "capture")
                    self.may_bound = False
                except Exception as exc:  # a file Spark could not read: quarantined, again
                    if not self._quarantine_failed_read(exc, quarantined):
                        raise
                    quarantined += 1
                self.forget()
        except Exception as exc:
            failed = spark_failure(exc, self.current, self.written)
            if failed is not None:
                raise failed from exc
            if not isinstance(exc, OSError):
                short = java_failure(exc, self.current)
                if short is not None:  # (the Java stack trace: --debug)
                    raise short from exc
                raise
            # e.g. the disk filled up during the run: name what failed
            from mqctl.fsutil import local_path_error

            err = local_path_error(exc, exc.filename or self.out, "report output")
            done = ", ".join(self.written) or "nothing"
            err.message = f"{err.message}; already written: {done} (the rest was not)"
            err.args = (err.message,)
            raise err from exc
        finally:
            self.unpersist()
            _release_checkpoints(self.spark, before)

    def _quarantine_failed_read(self, exc: Exception, done: int) -> bool:
        """Spark failed to read an input file the listing could not check (a remote file, a
        codec Python cannot check, a file changed or deleted after it was listed): mark it
        unreadable (quarantined, :func:`failed_read`) for the run to start over without it
        (the manifest is read again; nothing of this attempt is committed). False for any
        other failure. After :data:`MAX_FAILED_READS` files: the one-line error."""
        found = failed_read(exc)
        if found is None:
            return False
        uri, cause = found
        path = local_path(uri) if W.is_local(uri) else uri
        if done >= MAX_FAILED_READS:
            raise UsageError(f"Spark could not read input file {path}: {cause} (and "
                             f"{done} other file(s) of this run)",
                             hint=UNREADABLE_HINT) from exc
        if not self.listing.mark_unreadable(path, f"Spark could not read it: {cause}"):
            return False
        self.say(f"lag report: {path}: Spark could not read it ({cause}): quarantined; "
                 "computing again without it")
        return True

    def _run(self) -> ReportResult:
        """One attempt: the stages of :mod:`mqctl.lagjob.stages` in order, with the state's
        I/O between them (docs/architecture.md, "The lag report's stages")."""
        from mqctl.lagjob import stages as S
        from mqctl.timeparse import now_ms

        sp, o = self.spark, self.o
        by_kind = self.listing.by_kind()
        paths = {k: [f.path for f in v] for k, v in by_kind.items()}
        inputs = RD.count_inputs(self, by_kind)
        fp = o.fingerprint()
        keep_derived = RD.open_state(self, by_kind, fp)
        snapshots, table_all = RD.read_snapshots(self, by_kind)
        read = S.captures(self, o, S.read(self, sp, o, paths, self.listing, snapshots),
                          None if self.bound is None else int(self.bound.new_ts))
        RD.close_captures(self, read.close)
        # (derived state: times, each with its capture)
        self.obs_times = read.obs.select("cluster", "observed_ts", "capture_ts")
        earlier = RD.earlier(self)
        check = None if earlier is None else (
            lambda d: RD.check_bound(self, d, table_all, earlier.cuts))
        lagged = S.lag(self, o, read, [k for k, v in paths.items() if v], LAG_COLUMNS,
                       earlier, check)
        gt = gt_new = S.group_status(self, o, lagged, GROUP_COLUMNS,
                                     None if earlier is None else earlier.new_ts)
        lag_all = lagged.lag
        if earlier is not None:  # appended to the earlier dates, then read whole
            lag_all, gt = OU.append_new(self, {"lag": lagged.lag_new, "group_status": gt})
        has_logs = any(paths.get(k) for k in S.LOG_KINDS)
        reb = S.rebalance(self, o, lagged, read.logs, has_logs, earlier, keep_derived)
        run_ts = now_ms()
        quarantine = S.quarantine(self, sp, o, read.bad, self.listing.files, run_ts,
                                  read.log_bad)
        rep = S.report(self, o, lag_all, gt, reb, quarantine, RD.latest(self, gt_new))
        # bounded: lag and group_status are counted in the new rows, added to the earlier
        # counts (the manifest's): neither is read whole
        counted = rep.datasets if earlier is None else {
            **rep.datasets, "lag": lagged.lag_new, "group_status": gt_new}
        stats = OU.with_earlier_counts(self, S.count(
            self, counted, OU.extra_counts(self, rep, counted["lag"], read.obs, lagged, earlier)))
        self.page = OU.page_frames(self, rep, lagged.lag_new, gt_new)
        ds_dates = {name: sorted(d for d in stats.get(name, {}) if d) for name in rep.datasets}
        run_dates = sorted(set().union(*ds_dates.values()))
        counts = OU.counts(self, stats, earlier is not None)
        OU.write_datasets(self, rep.datasets, ds_dates, run_dates, bounded=earlier is not None,
                          rows={name: rows_counted(stats, name) for name in rep.datasets})
        return SU.write_summaries(self, rep, stats, counts, inputs, run_dates, run_ts, keep_derived,
                                  lagged, reb, fp)
