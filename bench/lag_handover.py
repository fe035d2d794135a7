"""The kernel's hand-over from the JVM to Python, with and without null lists.

Builds rows shaped like the kernel's input (keys, numbers, a few strings, ``owners`` with one
client, ``members_unanswered`` null on every row, as in a healthy cluster), then times in one
process, the variants alternating:

  * floor: the shuffle by topic and the cut, no Python;
  * lists as they are: the same with an identity ``mapInArrow`` (every column to Python and
    back);
  * lists flagged: the same, the list columns handed over without nulls
    (:func:`mqctl.lagjob.flow.flag_null_lists`, as :func:`~mqctl.lagjob.flow.kernel_rows` does)

and prints the medians and the ratios to the floor, and whether the flagged rows equal the
input.

    python bench/lag_handover.py [--rows 1000000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _identity(batches: Iterator[Any]) -> Iterator[Any]:
    import pyarrow as pa

    got = list(batches)
    if got:
        yield from pa.Table.from_batches(got).to_batches()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    from pyspark.sql import functions as F
    from spark_common import bench_session

    from mqctl.lagjob import flow

    spark = bench_session("mqctl-lag-handover", conf={"spark.sql.shuffle.partitions": "8"})
    q = F.col("id") % 8000
    src = spark.range(a.rows).select(
        F.lit("DefaultCluster").alias("cluster"), F.concat(F.lit("GID_"), q % 100).alias("group"),
        F.concat(F.lit("Topic"), (q / 100).cast("int") % 10).alias("topic"),
        F.lit("broker-a").alias("broker"), (q % 8).cast("int").alias("queue_id"),
        (F.col("id") * 60_000).alias("capture_ts"), (F.col("id") * 7).alias("broker_offset"),
        (F.col("id") * 5).alias("consumer_offset"), (F.col("id") % 97).cast("double").alias("rate"),
        F.lit("snapshot").alias("source_kind"),
        F.concat(F.lit("file:/data/snap/"), (F.col("id") / 8000).cast("long"), F.lit(".json"))
        .alias("source"),
        F.array(F.concat(F.lit("10.0.0."), q % 4, F.lit("@1001"))).alias("owners"),
        F.lit(None).cast("array<string>").alias("members_unanswered")).localCheckpoint()
    src.count()
    lists = flow.list_columns(src)

    def floor() -> None:
        src.repartition("cluster", "topic").localCheckpoint().count()

    def as_they_are() -> None:
        src.repartition("cluster", "topic").mapInArrow(_identity, src.schema) \
            .localCheckpoint().count()

    def flagged_rows() -> Any:
        f = flow.no_null_lists(flow.flag_null_lists(src, lists), lists)
        out = f.repartition("cluster", "topic").mapInArrow(_identity, f.schema)
        return flow.restore_null_lists(out, lists)

    def flagged() -> None:
        flagged_rows().localCheckpoint().count()

    runs: dict[str, list[float]] = {"floor": [], "lists as they are": [], "lists flagged": []}
    fns: dict[str, Callable[[], None]] = {"floor": floor, "lists as they are": as_they_are,
                                          "lists flagged": flagged}
    for r in range(a.rounds + 1):  # (the first round warms up: not counted)
        for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            t0 = time.perf_counter()
            fns[name]()
            if r:
                runs[name].append(time.perf_counter() - t0)
    f0 = statistics.median(runs["floor"])
    print(f"{a.rows:,} rows, {a.rounds} rounds, medians")
    for name, ts in runs.items():
        m = statistics.median(ts)
        print(f"  {name:20s} {m:6.2f} s   x{m / f0:.2f} of the floor")
    m1, m2 = (statistics.median(runs[k]) for k in ("lists as they are", "lists flagged"))
    print(f"  flagged / as they are: x{m2 / m1:.2f}")
    back = flagged_rows().select(*src.columns)
    diff = src.exceptAll(back).count() + back.exceptAll(src).count()
    print(f"  rows that differ after the flagged hand-over: {diff}")
    spark.stop()
    return 0 if diff == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
