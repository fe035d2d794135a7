"""The lag report's datasets written (:func:`write_datasets`, a bounded re-run's
:func:`append_new`), the run's counts (:func:`counts`, with a bounded re-run's earlier ones)
and the page's frames (:func:`page_frames`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.lagjob import writers as W
from mqctl.lagjob.result import GROUP_COLUMNS, KEPT_COUNTS, LAG_COLUMNS

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from mqctl.lagjob.context import RunContext
    from mqctl.lagjob.stages import Earlier, Lagged, Report


def append_new(run: RunContext, new: dict[str, DataFrame]) -> tuple[DataFrame, DataFrame]:
    """Bounded re-run: add the new captures' rows of ``lag`` and ``group_status`` to their
    date partitions; returns both datasets read back whole. Until the run completes, the
    earlier outputs are not trusted: the manifest's fingerprint is cleared first, so a run
    that dies in between (part of the rows added) makes the next one rewrite every date."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import ingest as I

    sp, man = run.spark, run.manifest
    man.fingerprint = ""
    I.save(sp, run.state or "", man)
    back = {}
    for name, df in new.items():
        path = W.join(run.out, name)
        run.say(f"lag report: adding the new captures to {name}")
        with run.stage("write " + name):
            B.append_partitions(sp, df, path, W.join(run.out, f"_new-{name}"))
        run.written[name] = path
        back[name] = (sp.read.parquet(path).withColumn("date", F.col("date").cast("string"))
                      .select(*(LAG_COLUMNS if name == "lag" else GROUP_COLUMNS)))
    return back["lag"], back["group_status"]


def write_datasets(run: RunContext, datasets: dict[str, DataFrame], ds_dates: dict[str, list[str]],
                   run_dates: list[str], *, bounded: bool,
                   rows: dict[str, int] | None = None) -> None:
    """Write every dataset's date partitions (a bounded re-run appended lag and
    group_status already). An incremental run rewrites the big per-capture datasets only
    from the first date whose observations changed: a row depends on its capture and
    earlier ones only (status window, time-lag brackets, previous owner), so earlier dates
    are unchanged (but a capture that began up to --align before the first changed
    date)."""
    from pyspark.sql import functions as F


    written = run.written  # what a failed write reports as done
    write_from: str | None = None
    if not run.write_all:
        changed = sorted(set(run.manifest.pending) | (run.touched or set()))
        # (a record of the first changed date can belong to a capture that began up to
        # --align before it, on the date before: its rows are dated by the capture)
        write_from = (W.utc_day(W.day_start_ms(changed[0]) - run.o.align_ms) if changed
                      else "9999-12-31")
    for name, df in datasets.items():
        path = W.join(run.out, name)
        per_capture = name in ("lag", "group_status")
        if bounded and per_capture:
            continue  # (appended: _append_new)
        dates, all_dates = ds_dates[name], run_dates
        if write_from is not None and per_capture:
            dates = [d for d in dates if d >= write_from]
            all_dates = [d for d in run_dates if d >= write_from]
            df = df.filter(F.col("date") >= write_from)
            if not all_dates:
                run.say(f"lag report: {name} unchanged")
                written[name] = path
                continue
        run.say(f"lag report: writing {name} ({len(dates)} date partition(s))")
        with run.stage("write " + name):
            W.write_partitioned(run.spark, df, path, all_dates, dates,
                                one_file_per_date=not per_capture,
                                rows=(rows or {}).get(name))
        written[name] = path


def page_frames(run: RunContext, rep: Report, lag_new: DataFrame, gt_new: DataFrame
                 ) -> dict[str, DataFrame]:
    """The page's totals per group and capture and peak lag per queue
    (:func:`html.collect.group_series`, :func:`html.collect.queue_peaks`): of the
    datasets; bounded: the derived state's merged with the new captures' (``series_new``:
    what the run adds to the derived state's series)."""
    from mqctl.lagjob.html import collect as G

    if run.bound is None:
        series = G.group_series(rep.datasets["group_status"])
        return {"series": series, "series_new": series,
                "peaks": G.queue_peaks(rep.datasets["lag"])}
    from mqctl.lagjob import bounded as B

    sp, st, done = run.spark, run.state or "", run.manifest.derived
    new, new_peaks = G.group_series(gt_new), G.queue_peaks(lag_new)
    earlier = B.read(sp, st, "series", done, new.schema)
    peaks = B.read(sp, st, "peaks", done, new_peaks.schema)
    return {"series": earlier.unionByName(new), "series_new": new,
            "peaks": G.merge_queue_peaks(peaks, new_peaks)}


def with_earlier_counts(run: RunContext, stats: dict[str, dict[str | None, int]]
                         ) -> dict[str, dict[str | None, int]]:
    """``stats`` with a bounded re-run's earlier counts added (the manifest's ``counts``:
    rows per date of lag and group_status, and the counts read from lag) and the result
    kept for the manifest (``run.kept_counts``)."""
    out = dict(stats)
    if run.bound is not None:
        for name, per in run.manifest.counts.items():
            merged = {(str(d) if d is not None else None): n
                      for d, n in out.get(name, {}).items()}
            for d, n in per.items():
                k = d or None
                merged[k] = merged.get(k, 0) + n
            out[name] = merged
    run.kept_counts = {name: {("" if d is None else str(d)): n
                              for d, n in out.get(name, {}).items()}
                       for name in KEPT_COUNTS}
    return out


def extra_counts(run: RunContext, rep: Report, lag: DataFrame, obs: DataFrame, lagged: Lagged,
                 earlier: Earlier | None
                 ) -> dict[str, DataFrame]:
    """The frames counted next to the datasets (in the same job); ``lag``: the lag rows
    counted (bounded: the new ones)."""
    from pyspark.sql import functions as F

    events, locks = (rep.datasets[k] for k in ("rebalance/events", "rebalance/locks"))
    extra: dict[str, DataFrame] = {
        "observations": obs, "latest": rep.latest, "groups": rep.groups,
        "lock_takeovers": locks.filter(F.col("takeover")),
        "reset_events": events.filter(F.col("cause") == "reset"),
        "owner_unknown": lag.filter(F.coalesce(F.col("owner_unknown"), F.lit(False))),
        "never_committed": lag.filter(F.col("committed").eqNullSafe(F.lit(False)))}
    if earlier is not None:  # (only the look-back and the new captures were read)
        extra["obs_new"] = obs.filter(F.col("capture_ts") >= F.lit(earlier.new_ts))
        extra["lag_new"] = lagged.lag_new
    return extra


def counts(run: RunContext, stats: dict[str, dict[str | None, int]], bounded: bool
            ) -> dict[str, int]:
    """The run's counts (summary.json ``counts``); records the duplicates in the
    manifest (a bounded re-run adds the new captures' to the earlier ones)."""
    def total(name: str) -> int:
        return rows_counted(stats, name)

    n_obs, n_lag = total("observations"), total("lag")
    if bounded:  # the earlier duplicates (kept) and the new captures' ones
        n_obs = n_lag + run.manifest.duplicates + total("obs_new") - total("lag_new")
    run.manifest.duplicates = n_obs - n_lag
    return {
        "observations": n_obs, "lag_rows": n_lag, "duplicates": n_obs - n_lag,
        "group_topic_rows": total("group_status"), "rebalance_events":
            total("rebalance/events") - total("reset_events"),
        "reset_events": total("reset_events"), "queue_moves": total("rebalance/moves"),
        "unowned_intervals": total("rebalance/unowned"), "storms": total("rebalance/storms"),
        "lock_events": total("rebalance/locks"), "lock_takeovers": total("lock_takeovers"),
        "owner_unknown": total("owner_unknown"), "never_committed": total("never_committed"),
    }


def rows_counted(stats: dict[str, dict[str | None, int]], name: str) -> int:
    """Rows of one counted frame (:func:`stages.count`), over its dates."""
    return sum(stats.get(name, {}).values())
