"""What a vectorised per-queue pass (``mapInArrow`` over Arrow batches instead
of Spark windows) could save, measured against the report's own window pass on one input.

The lag report's heaviest step is the status window (:func:`mqctl.lagjob.transforms.queue_status`)
with the time-lag brackets, inside the one partitioning by topic. Such windows could be
replaced with a vectorised pass over each partition. Before rewriting the transforms, this
measures the floor of that route on the same rows, partitioning and session:

* ``shuffle``: read the observations and partition them by topic (what every variant does
  first; the reference);
* ``spark-window``: :func:`queue_status` over ``--window`` captures, as every report runs it
  (the baseline of the ratios);
* ``arrow-identity``: the partitioned rows through ``mapInArrow`` unchanged: the cost of the
  round trip to Python workers and back, below which no vectorised pass can go;
* ``arrow-window``: ``mapInArrow`` with the status window's aggregates in NumPy (each queue's
  rows sorted, then per row over its last ``--window`` samples: count, minimum and maximum
  consumer offset, minimum broker offset, whether any sample was caught up, the first lag,
  whether the lag fell, and the rates): the window part of :func:`queue_status` without its
  rules and the rewind's list, so a lower bound of a complete vectorised pass.

Every variant ends in Spark's ``noop`` sink (all rows computed, nothing written). Warm: one
session, ``--rounds`` rounds in turn, medians. ``--cold``: each variant once in a fresh process
(a fresh JVM: what a cron run pays, HotSpot compiling Spark's code as it goes).

    python bench/lag_vector_floor.py [--rows 1000000] [--queues 8000] [--window 10]
                                     [--rounds 3] [--cold]

Needs pyarrow, pandas and NumPy, which mqctl does not install (PySpark's optional Arrow
support): ``pip install pyarrow pandas`` in the environment that runs it, or
``pip install --target DIR pyarrow pandas`` and ``PYTHONPATH=DIR`` (Spark's Python workers inherit
it). Exit 2 with that hint when they are missing.

Synthetic observations in the shape of the 1m bench input (``bench/lag_scale.py``): 100 groups,
10 topics, 2 brokers x 4 queues, one capture a minute; 30 columns (the status window's inputs
and 16 others, as wide as the rows the report carries through the step).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

VARIANTS = ("shuffle", "spark-window", "arrow-identity", "arrow-window")
QUEUES = 100 * 10 * 8  # groups x topics x queues of the 1m input


def _need_arrow() -> None:
    try:
        import numpy  # noqa: F401
        import pandas  # noqa: F401  (PySpark's mapInArrow checks for it)
        import pyarrow  # noqa: F401
    except ImportError as e:
        print(f"lag_vector_floor: {e.name} is not installed (mqctl does not need it).\n"
              "hint: pip install pyarrow pandas   (or pip install --target DIR pyarrow pandas "
              "and run with PYTHONPATH=DIR)", file=sys.stderr)
        raise SystemExit(2) from None


def _session() -> Any:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master("local[*]").appName("lag-vector-floor")
             .config("spark.driver.memory", "6g").config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.shuffle.partitions", "8").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def make_input(spark: Any, path: str, rows: int, n_queues: int = QUEUES) -> None:
    """``rows`` observations (rounded to whole captures of every queue) as Parquet."""
    from pyspark.sql import functions as F

    captures = max(1, rows // n_queues)
    qid = F.col("id")
    queues = spark.range(n_queues).select(
        F.lit("c1").alias("cluster"), (qid % 100).cast("string").alias("_g"),
        ((qid / 100).cast("int") % 10).cast("string").alias("_t"),
        ((qid / 1000).cast("int") % 2).cast("string").alias("broker"),
        (qid / 2000).cast("int").alias("queue_id"))
    k = F.col("k")
    t0 = F.lit(1717200000000)
    df = queues.crossJoin(spark.range(captures).select(qid.alias("k"))).select(
        "cluster", F.concat(F.lit("G_"), "_g").alias("group"),
        F.concat(F.lit("T_"), "_t").alias("topic"), "broker", "queue_id",
        (t0 + k * 60000).alias("capture_ts"), (t0 + k * 60000 + 17).alias("observed_ts"),
        # a consumer that keeps up for a while, then falls behind (some windows judge it)
        (k * 100 + F.abs(F.hash("_g", "_t", "queue_id")) % 50).cast("long")
        .alias("consumer_offset"),
        (k * 103 + 60).cast("long").alias("broker_offset"),
        F.lit(True).alias("online"), F.lit(None).cast("boolean").alias("consume_enable"),
        *[F.concat(F.lit(f"filler{i}-"), k.cast("string")).alias(f"s{i}") for i in range(8)],
        *[(k * i).alias(f"l{i}") for i in range(8)])
    lag = F.greatest(F.col("broker_offset") - F.col("consumer_offset"), F.lit(0))
    (df.withColumn("lag", lag).withColumn("lag_seconds", lag / 10.0)
     .withColumn("lower_bound", F.lit(False)).repartition(8).write.parquet(path))


def _window_batches(window: int, allowed_lag: int) -> Any:
    """The ``mapInArrow`` function of ``arrow-window`` (module scope: Spark pickles it)."""

    def run(batches: Any) -> Any:
        import warnings

        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        parts = list(batches)
        if not parts:
            return
        t = pa.Table.from_batches(parts).sort_by([(c, "ascending") for c in (
            "cluster", "group", "topic", "broker", "queue_id", "capture_ts")])
        n = t.num_rows
        key = pc.binary_join_element_wise(
            t["cluster"], t["group"], t["topic"], t["broker"],
            pc.cast(t["queue_id"], pa.string()), "\x01").to_numpy(zero_copy_only=False)
        first = np.ones(n, bool)
        first[1:] = key[1:] != key[:-1]
        idx = np.arange(n)
        start = np.maximum.accumulate(np.where(first, idx, 0))  # each row's queue start
        pos = idx - start  # 0-based position in its queue

        def col(name: str) -> Any:
            return t[name].to_numpy(zero_copy_only=False).astype(float)

        def rolling(v: Any, w: int, fn: Any) -> Any:
            pad = np.concatenate([np.full(w - 1, np.nan), v])
            win = np.lib.stride_tricks.sliding_window_view(pad, w)
            keep = np.arange(w)[None, :] >= (w - 1 - np.minimum(pos, w - 1))[:, None]
            return fn(np.where(keep, win, np.nan), axis=1)

        def prev(v: Any) -> Any:
            p = np.concatenate([[np.nan], v[:-1]])
            p[first] = np.nan
            return p

        warnings.simplefilter("ignore", RuntimeWarning)  # (a window of NaNs only: NaN)
        c, b, lag, ts = col("consumer_offset"), col("broker_offset"), col("lag"), col(
            "observed_ts")
        ok = (lag <= allowed_lag).astype(float)
        n_win = np.minimum(pos + 1, window)
        first_lag = lag[idx - (n_win - 1)]
        fell = (lag < prev(lag)).astype(float)
        fell[first] = np.nan
        dt = (ts - prev(ts)) / 1000.0
        with np.errstate(invalid="ignore", divide="ignore"):
            out = {"_n": n_win.astype("int32"),
                   "_min_c": rolling(c, window, np.nanmin),
                   "_max_c": rolling(c, window, np.nanmax),
                   "_min_b": rolling(b, window, np.nanmin),
                   "_any_ok": rolling(ok, window, np.nanmax),
                   "_first_lag": first_lag,
                   "_lag_fell": (rolling(fell, window - 1, np.nanmax) if window >= 2
                                 else np.full(n, np.nan)),
                   "consume_rate": np.where(dt > 0, np.maximum(c - prev(c), 0) / dt, np.nan),
                   "produce_rate": np.where(dt > 0, np.maximum(b - prev(b), 0) / dt, np.nan)}
        for name, v in out.items():
            t = t.append_column(name, pa.array(v, from_pandas=True))
        yield from t.to_batches()

    return run


def frame(spark: Any, src: Any, variant: str, window: int) -> Any:
    from pyspark.sql.types import DoubleType, IntegerType, StructField, StructType

    from mqctl.lagjob import transforms as X

    part = X.by_topic(src)
    if variant == "shuffle":
        return part
    if variant == "spark-window":
        return X.queue_status(part, window)
    if variant == "arrow-identity":
        def same(batches: Any) -> Any:
            yield from batches
        return part.mapInArrow(same, part.schema)
    extra = [StructField("_n", IntegerType())] + [
        StructField(c, DoubleType()) for c in ("_min_c", "_max_c", "_min_b", "_any_ok",
                                               "_first_lag", "_lag_fell", "consume_rate",
                                               "produce_rate")]
    return part.mapInArrow(_window_batches(window, 0),
                           StructType(list(part.schema.fields) + extra))


def run_variants(spark: Any, data: str, variants: list[str], rounds: int, window: int
                 ) -> dict[str, list[float]]:
    src = spark.read.parquet(data)
    times: dict[str, list[float]] = {v: [] for v in variants}
    for _ in range(rounds):
        for v in variants:
            df = frame(spark, src, v, window)
            t = time.perf_counter()
            df.write.format("noop").mode("overwrite").save()
            times[v].append(time.perf_counter() - t)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--queues", type=int, default=QUEUES,
                    help="queues (a test-sized report: --rows 210 --queues 42)")
    ap.add_argument("--window", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cold", action="store_true",
                    help="each variant once in a fresh process instead")
    ap.add_argument("--data", help=argparse.SUPPRESS)  # (the child of --cold)
    ap.add_argument("--variant", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    _need_arrow()
    if a.variant:  # one variant, one round, in this fresh process: print its seconds
        print(run_variants(_session(), a.data, [a.variant], 1, a.window)[a.variant][0])
        return 0
    tmp = tempfile.mkdtemp(prefix="lag-vector-floor-")
    try:
        data = os.path.join(tmp, "obs.parquet")
        spark = _session()
        make_input(spark, data, a.rows, a.queues)
        n = spark.read.parquet(data).count()
        print(f"{n:,} observations of {a.queues:,} queues, window {a.window}, "
              f"{'cold: a fresh process per variant' if a.cold else f'{a.rounds} rounds warm'}",
              flush=True)
        if a.cold:
            spark.stop()
            times: dict[str, list[float]] = {v: [] for v in VARIANTS}
            for _ in range(a.rounds if a.rounds > 1 else 1):
                for v in VARIANTS:
                    out = subprocess.run([sys.executable, __file__, "--data", data, "--variant",
                                          v, "--window", str(a.window)], capture_output=True,
                                         text=True, check=True).stdout.split()
                    times[v].append(float(out[-1]))
        else:
            times = run_variants(spark, data, list(VARIANTS), a.rounds, a.window)
        base = statistics.median(times["spark-window"])
        for v in VARIANTS:
            med = statistics.median(times[v])
            print(f"  {v:15s} " + " ".join(f"{x:6.2f}" for x in times[v])
                  + f"   median {med:6.2f} s   / spark-window x{med / base:.2f}")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
