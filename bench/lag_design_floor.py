"""The least the lag report's design does, step by step, against Spark's floor.

In one process, the steps alternating (the order reversed every other round, the first round
a warm-up), over the bench's snapshot files (bench/gen_exports.py, seed 7, as lag_scale.py):

  * floor: Spark's schema'd read of the files and one aggregate written as Parquet (the
    reference of bench/lag_scale.py);
  * read: the same read, every column, nothing written (Spark's ``noop`` sink);
  * read and check: the report's read and its checks of every value, nothing written;
  * parse: the report's parse, the read and the checks written as the ingested table's
    Parquet (date partitions, as ``reading.stage_snapshots`` writes them);
  * kernel: the ingested rows read back, the one shuffle and the kernel
    (``flow.kernel_rows``: lag rows and owner outputs in one ``mapInArrow``), the lag rows
    written as Parquet (date partitions). Each capture's time is its capture (the bench's
    files hold one time each), so the captures stage is left out;

and prints the medians, each as a ratio to the floor, and parse + kernel: what the report's
design costs before any step after the kernel (counts, latest rows, health, the summaries,
the page, the derived state).

    python bench/lag_design_floor.py [--data /tmp/mqctl-bench-lag] [--size 1m] [--rounds 2]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="/tmp/mqctl-bench-lag")
    ap.add_argument("--size", default="1m")
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    from lag_scale import dataset, spark_reference
    from spark_common import bench_session

    src, rows = dataset(Path(a.data), a.size, 0)
    spark = bench_session("mqctl-lag-design-floor")
    from pyspark.sql import functions as F

    from mqctl.lagjob import flow, readers, schemas
    from mqctl.lagjob import transforms as X
    from mqctl.lagoptions import Options
    from mqctl.timeparse import now_ms

    paths = sorted(str(p) for p in src.rglob("*.jsonl"))
    tmp = Path(tempfile.mkdtemp(prefix="mqctl-design-floor-"))
    ingested = tmp / "ingested"
    opts = Options.from_values({"tz": "UTC"})
    run_ms = now_ms()  # (a record from after it is bad)

    def checked() -> Any:
        return X.check_snapshot_records(readers.read_snapshot_json(spark, paths),
                                        run_ms, reasons=False)

    def floor() -> None:
        spark_reference(spark, src, tmp / "floor")

    def read() -> None:
        spark.read.schema(schemas.SNAPSHOT_JSON).json(paths).write.format("noop") \
            .mode("overwrite").save()

    def read_check() -> None:
        checked().write.format("noop").mode("overwrite").save()

    def parse() -> None:
        (X.with_date(checked(), "observed_ts").select(*X.SNAPSHOT_OBS, "reason", "date")
         .write.mode("overwrite").partitionBy("date").parquet(str(ingested)))

    def kernel() -> None:
        obs = (spark.read.schema(f"{X.SNAPSHOT_OBS_DDL}, reason string, date date")
               .parquet(str(ingested)).filter(F.col("reason").isNull())
               .select(*X.SNAPSHOT_OBS).withColumn("capture_ts", F.col("observed_ts")))
        points = spark.createDataFrame([], "cluster string, topic string, broker string, "
                                       "queue_id int, observed_ts long, broker_offset long, "
                                       "min_offset long")
        lag = flow.lag_part(flow.kernel_rows(X.enrich(obs, None, None, None), points, opts))
        X.with_date(lag).write.mode("overwrite").partitionBy("date").parquet(str(tmp / "lag"))

    steps: dict[str, Callable[[], None]] = {"floor": floor, "read": read,
                                            "read and check": read_check, "parse": parse,
                                            "kernel": kernel}
    parse()  # (the kernel's input, before the first round)
    runs: dict[str, list[float]] = {k: [] for k in steps}
    try:
        for r in range(a.rounds + 1):
            order = list(steps) if r % 2 == 0 else list(steps)[::-1]
            if order[0] == "kernel":  # (it reads what parse wrote: parse stays before it)
                order.remove("parse")
                order.insert(0, "parse")
            for name in order:
                t0 = time.perf_counter()
                steps[name]()
                if r:
                    runs[name].append(time.perf_counter() - t0)
        lag_rows = spark.read.parquet(str(tmp / "lag")).count()
    finally:
        spark.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in runs.items()}
    f0 = med["floor"]
    print(f"{a.size}: {rows:,} rows in {len(paths)} files, {a.rounds} round(s), medians")
    for name, m in med.items():
        print(f"  {name:16s} {m:6.2f} s   x{m / f0:.2f} of the floor")
    both = med["parse"] + med["kernel"]
    print(f"  {'parse + kernel':16s} {both:6.2f} s   x{both / f0:.2f} of the floor")
    print(f"  lag rows written: {lag_rows:,} of {rows:,} observations")
    return 0 if lag_rows == rows else 1


if __name__ == "__main__":
    sys.exit(main())
