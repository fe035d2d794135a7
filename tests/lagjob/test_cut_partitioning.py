"""`Run.cut(keep_partitioning=True)`: a checkpoint read back with its partitioning, so the
per-queue steps after it shuffle nothing (docs/architecture.md, "One partitioning")."""

from __future__ import annotations

from contextlib import nullcontext
from types import SimpleNamespace

import pytest

pytestmark = pytest.mark.spark


def _exchanges(df) -> int:
    return df._jdf.queryExecution().executedPlan().toString().count("Exchange")


@pytest.mark.parametrize("aqe", ["true", "false"])
def test_a_cut_that_keeps_the_partitioning_needs_no_new_shuffle(spark, aqe):
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from mqctl.lagjob.run import Run

    key = "spark.sql.adaptive.enabled"
    before = spark.conf.get(key)
    spark.conf.set(key, aqe)
    try:
        rows = [(f"c{i % 2}", f"t{i % 5}", i % 3, i) for i in range(200)]

        def frame():  # (a new Dataset each time: its physical plan is planned once, lazily)
            return (spark.createDataFrame(rows, "cluster string, topic string, queue_id int, "
                                          "ts long").repartition(4, "cluster", "topic")
                    .sortWithinPartitions("cluster", "topic", "ts"))

        df = frame()
        run = SimpleNamespace(spark=spark, stage=lambda name: nullcontext())
        kept = Run.cut(run, frame(), "kept", keep_partitioning=True)
        plain = Run.cut(run, frame(), "plain")
        assert spark.conf.get(key) == aqe  # (restored after the cut's job)
        w = Window.partitionBy("cluster", "topic", "queue_id").orderBy("ts")

        def windowed(d):
            return d.withColumn("prev", F.lag("ts").over(w))

        assert _exchanges(windowed(kept)) == 0
        assert sorted(windowed(kept).collect()) == sorted(windowed(df).collect())
        if aqe == "true":  # (the plain cut under adaptive execution: read back unknown)
            assert _exchanges(windowed(plain)) >= 1
    finally:
        spark.conf.set(key, before)
