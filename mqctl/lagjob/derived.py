"""What a lag report run keeps for the next one, written last: the derived state
(:mod:`mqctl.lagjob.bounded`) and the manifest, with the options' fingerprint
(:func:`commit_state`): the state then matches the outputs."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

    from mqctl.lagjob.context import RunContext
    from mqctl.lagjob.stages import Lagged, Rebalance, Report


def save_derived(run: RunContext, history: DataFrame, changes: DataFrame, resets: DataFrame,
                 unowned: DataFrame, times: DataFrame, rep: Report, obs: DataFrame
                 ) -> None:
    """Write the derived state (:mod:`mqctl.lagjob.bounded`) as a new batch: a bounded
    run adds its new rows (the whole of each part once there are ``COMPACT_AFTER``
    batches), any other run the whole of each; the parts of ``bounded.WHOLE`` are always
    whole, the broker history cut to what later time lags need (``obs``: the run's
    observations, :func:`bounded.history_frame`). Committed by the manifest the caller
    saves next."""
    from pyspark.sql import functions as F

    from mqctl.lagjob import bounded as B

    sp, st, man, bound = run.spark, run.state or "", run.manifest, run.bound
    gen = max([0, *man.batches, *man.derived]) + 1  # (ids of their own; never reused)
    whole = bound is None or len(man.derived) >= B.COMPACT_AFTER
    # a bounded run over a long history cuts it once after a full run, then as it compacts
    cut = (bound is not None and bound.captures > B.CUT_AFTER * (run.o.window + 1)
           and (whole or not man.history_cut)
           and B.part_bytes(sp, st, "history") > B.CUT_BYTES)
    cuts: list[tuple[str, DataFrame]] = []
    if cut:  # (rewritten whole: the points dropped go; read by two parts)
        whole = True
        framed = run.cut(B.history_frame(history, obs, run.o.window), "keep history")
        history, cuts = B.kept_history(framed), [("cuts", B.history_cuts(framed))]
    elif whole and bound is not None and man.history_cut:  # (dropped earlier: still)
        cuts = [("cuts", B.read(sp, st, "cuts", man.derived))]
    man.history_cut = cut or (bound is not None and man.history_cut)
    with run.stage("derived state"):
        if not whole:
            new = F.lit(bound.new_ts)
            history, changes = history.filter(F.col("t") >= new), changes.filter(
                F.col("ts") >= new)
            resets = resets.filter(F.col("ts") >= new)
        series = run.page["series_new" if not whole else "series"]
        if bound is not None:  # (a bounded run read only the look-back's and the new)
            times = times.filter(F.col("observed_ts") >= F.lit(bound.new_ts))
            if whole:
                times = B.read(sp, st, "times", man.derived).unionByName(times)
        B.write_parts(sp, st, [("history", history), ("changes", changes),
                               *cuts, ("resets", resets), ("unowned", unowned),
                               ("times", times.distinct()), ("latest", rep.latest_base),
                               ("groups", rep.groups_base), ("series", series),
                               ("peaks", run.page["peaks"]),
                               ("brokers", run.page["brokers"])], gen, whole=whole)
    man.derived = [gen] if whole else [*man.derived, gen]


def commit_state(run: RunContext, keep_derived: bool, lagged: Lagged, reb: Rebalance, rep: Report,
                 fp: str) -> None:
    """The derived state (runs that keep it) and the manifest, with this run's options'
    fingerprint: the state now matches the outputs."""
    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import ingest as I

    sp, st = run.spark, run.state or ""
    if keep_derived:  # (without resets the changes are the captured ones, cut)
        assert run.obs_times is not None
        save_derived(run, lagged.history, reb.captured if not reb.no_resets
                     else reb.changes, reb.resets, reb.unowned_track,
                     run.obs_times, rep, lagged.dedup)
        run.manifest.counts = run.kept_counts
    else:
        run.manifest.derived, run.manifest.counts = [], {}
    run.manifest.close = {c: v.to_json() for c, v in sorted(run.close.items())}
    run.manifest.pending, run.manifest.fingerprint = [], fp
    run.manifest.out = run.out
    I.save(sp, st, run.manifest)
    I.clear_staging(sp, st)
    if keep_derived:
        B.prune(sp, st, run.manifest.derived)
    else:
        B.drop(sp, st)
