"""What a bounded re-run's time lags cost over a long broker history, read whole against cut to
the points they need (``bounded.history_frame``), on one synthetic input.

A bounded re-run brackets each observation's offset in the queue's broker history (the max
offset of the queue at each capture, in the report's kernel: :mod:`mqctl.lagjob.kernel`). The
derived state used to keep every point since the first capture, so a cron re-run's time-lag
step sorted ``queues x captures`` points however few captures were new; it now keeps, per
queue, the points from the lowest offset of the last ``window + 1`` captures on. Both are
measured here the way a re-run reads them, from Parquet, in one session:

* ``whole``: the whole history (``--queues`` x ``--captures`` points) and the look-back's and
  new captures' observations through the kernel (the baseline of the ratios);
* ``cut``: the same with the history :func:`bounded.kept_history` keeps;
* ``cut-step``: what each run pays to cut it again (``history_frame`` over the kept points and
  the new ones: the steady state of a cron job).

Every variant ends in Spark's ``noop`` sink; ``--rounds`` rounds in turn, medians. The time lags
of ``whole`` and ``cut`` are compared row for row (``lag_seconds`` and its source): the
script says ``equal`` or exits 1.

    python bench/lag_history_cut.py [--queues 8000] [--captures 1000] [--groups 2]
                                    [--window 10] [--new 10] [--rounds 3]

Synthetic: one cluster, ``queues / 8`` topics of 8 queues, one capture a minute, each queue's
max offset growing by 50-250 a minute; group 0 caught up (time lag 0), the others 150 behind
(interpolated).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

T0 = 1_717_200_000_000
MINUTE = 60_000


def frames(spark: Any, queues: int, captures: int, groups: int, first_obs: int
           ) -> tuple[Any, Any]:
    """(history, observations): every capture's max offsets; the observations of captures
    ``first_obs`` on."""
    from pyspark.sql import functions as F

    q = F.col("id") % queues
    i = (F.col("id") / queues).cast("long")
    rate = F.lit(50) + (q % 5) * 50
    b = F.lit(1000) + rate * i
    h = spark.range(queues * captures).select(
        F.lit("c1").alias("cluster"), F.concat(F.lit("T"), (q / 8).cast("int")).alias("topic"),
        F.lit("broker-a").alias("broker"), (q % 8).cast("int").alias("queue_id"),
        (F.lit(T0) + i * MINUTE).alias("t"), b.alias("B"), F.lit(0).cast("long").alias(
            "min_offset"))
    n_obs = queues * (captures - first_obs)
    base = spark.range(n_obs * groups)
    g = (F.col("id") % groups).cast("int")
    k = (F.col("id") / groups).cast("long")
    qo = k % queues
    io = (k / queues).cast("long") + first_obs
    bo = F.lit(1000) + (F.lit(50) + (qo % 5) * 50) * io
    behind = F.when(g == 0, F.lit(0)).otherwise(F.lit(150))
    obs = base.select(
        F.lit("c1").alias("cluster"), F.concat(F.lit("G"), g).alias("group"),
        F.concat(F.lit("T"), (qo / 8).cast("int")).alias("topic"),
        F.lit("broker-a").alias("broker"), (qo % 8).cast("int").alias("queue_id"),
        (F.lit(T0) + io * MINUTE).alias("capture_ts"),
        (F.lit(T0) + io * MINUTE).alias("observed_ts"), bo.alias("broker_offset"),
        (bo - behind).alias("consumer_offset"), behind.cast("long").alias("lag"),
        F.when(g == 0, F.lit(0)).cast("long").alias("delay_ms"),
        (F.lit(T0) + io * MINUTE - 1000).alias("last_timestamp"),
        # (the rest of an observation the kernel reads: not known here)
        F.lit(None).cast("long").alias("min_offset"), (bo - behind).alias("pull_offset"),
        F.lit(None).cast("string").alias("owner"), F.lit(None).cast("boolean").alias("online"),
        F.lit(None).cast("boolean").alias("consume_enable"),
        F.lit(None).cast("boolean").alias("committed"),
        F.lit(None).cast("boolean").alias("owner_unknown"),
        F.lit("snapshot").alias("source_kind"), F.lit("s").alias("source"))
    return h, obs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--queues", type=int, default=8000)
    p.add_argument("--captures", type=int, default=1000)
    p.add_argument("--groups", type=int, default=2)
    p.add_argument("--window", type=int, default=10)
    p.add_argument("--new", type=int, default=10, help="new captures of the re-run")
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args(argv)
    if a.captures <= a.window + 1 + a.new or a.queues < 8:
        print("lag_history_cut: --captures must exceed --window + 1 + --new, and --queues "
              "be at least 8", file=sys.stderr)
        return 2
    from pyspark.sql import functions as F
    from spark_common import bench_session

    from mqctl.lagjob import bounded as B
    from mqctl.lagjob import flow
    from mqctl.lagjob import transforms as X

    spark = bench_session("mqctl-history-cut", "local[*]")
    opts = SimpleNamespace(window=a.window, allowed_lag=0, allowed_lag_seconds=0.0,
                           max_skew_ms=60_000)
    tmp = Path(tempfile.mkdtemp(prefix="mqctl-history-cut-"))
    try:
        new_from = a.captures - a.new
        look_from = new_from - (a.window + 1)
        history, obs = frames(spark, a.queues, a.captures, a.groups, look_from)
        old_hist = history.filter(F.col("t") < F.lit(T0 + new_from * MINUTE))
        old_obs = obs.filter(F.col("capture_ts") < F.lit(T0 + new_from * MINUTE))
        whole_path, cut_path, obs_path = (str(tmp / n) for n in ("whole", "cut", "obs"))
        # what the previous run left: every point before the new captures, or those it kept
        old_hist.write.parquet(whole_path)
        B.kept_history(B.history_frame(spark.read.parquet(whole_path), old_obs, a.window)
                       ).write.parquet(cut_path)
        obs.write.parquet(obs_path)
        new_points = history.filter(F.col("t") >= F.lit(T0 + new_from * MINUTE))
        rows = {n: spark.read.parquet(str(tmp / n)).count() for n in ("whole", "cut")}

        def lags(path: str) -> Any:  # (the report's kernel: the history as its points)
            pts = spark.read.parquet(path).unionByName(new_points).select(
                *X.QUEUE, F.col("t").alias("observed_ts"), F.col("B").alias("broker_offset"),
                "min_offset")
            return flow.lag_rows(spark.read.parquet(obs_path), pts, opts)

        def run(name: str) -> float:
            t0 = time.perf_counter()
            if name == "cut-step":
                df = B.kept_history(B.history_frame(
                    spark.read.parquet(cut_path).unionByName(new_points),
                    spark.read.parquet(obs_path), a.window))
            else:
                df = lags(whole_path if name == "whole" else cut_path)
            df.write.format("noop").mode("overwrite").save()
            return time.perf_counter() - t0

        cols = ["group", "topic", "queue_id", "observed_ts", "lag_seconds",
                "lag_seconds_source"]
        w_rows, c_rows = lags(whole_path).select(*cols), lags(cut_path).select(*cols)
        same = w_rows.exceptAll(c_rows).isEmpty() and c_rows.exceptAll(w_rows).isEmpty()
        times: dict[str, list[float]] = {n: [] for n in ("whole", "cut", "cut-step")}
        run("whole")  # (warm-up)
        for _ in range(a.rounds):
            for n in times:
                times[n].append(run(n))
        med = {n: statistics.median(v) for n, v in times.items()}
        print(f"history: {a.queues:,} queues x {a.captures:,} captures; the re-run: "
              f"{a.window + 1} look-back + {a.new} new captures x {a.groups} groups")
        print(f"  points read: whole {rows['whole']:,}, cut {rows['cut']:,} "
              f"(x{rows['cut'] / rows['whole']:.4f})")
        print(f"  {'variant':10s} {'median s':>9s} {'/ whole':>8s}   rounds")
        for n, v in med.items():
            print(f"  {n:10s} {v:9.2f} {'x' + format(v / med['whole'], '.2f'):>8s}   "
                  + ", ".join(f"{x:.2f}" for x in times[n]))
        print(f"  time lags of whole and cut: {'equal' if same else 'DIFFERENT'}")
        return 0 if same else 1
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
