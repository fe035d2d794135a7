"""The Spark plan around the kernel (:mod:`mqctl.lagjob.kernel`): the per-queue work of the lag
report as one shuffle and ``mapInArrow`` calls.

    enrich      members and configs joined in (small sides: broadcast)
    shuffle     observations and broker points, once, by topic (cluster, topic)
    kernel      one mapInArrow per partition: dedupe, max offsets, lag, time lag, status
    owners      mapInArrow over the lag rows (same partitions, no shuffle): the owner track's
                rows, owner changes, capture resets, unowned intervals

The aggregates after it (group status, latest rows, health, storms) are Spark aggregates
reading the kernel's rows. A partition holds whole topics (the repartition's key), which is
what the kernel asks of a batch: each call gets one partition's rows as one Arrow table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from mqctl.lagjob import kernel
from mqctl.lagjob import transforms as X
from mqctl.lagjob.bounded import CHANGES_DDL, RESETS_DDL, UNOWNED_DDL

# the kernel's columns added to an observation's, with their Spark types
LAG_ADDED = [("broker_offset_ts", "long"), ("lag", "long"), ("inflight", "long"),
             ("lag_seconds", "double"), ("lag_seconds_source", "string"),
             ("estimated", "boolean"), ("lower_bound", "boolean"),
             ("lag_seconds_upper", "double"), ("status", "string"), ("complete", "double"),
             ("window_samples", "int"), ("consume_rate", "double"), ("produce_rate", "double")]
# what the kernel reads of a broker point besides its queue
POINT_COLUMNS = ["observed_ts", "broker_offset", "min_offset"]




def _batches(fn: Callable[[Any], Any], names: list[str]
             ) -> Callable[[Iterator[Any]], Iterator[Any]]:
    """A mapInArrow function: the partition's batches as one table through ``fn``, its columns
    in ``names`` order."""

    def run(batches: Iterator[Any]) -> Iterator[Any]:
        got = list(batches)
        if not got:
            return
        out = fn(pa.Table.from_batches(got))
        yield from out.select(names).to_batches()

    return run


def _lag_fn(params: Any) -> Callable[[Any], Any]:
    def fn(table: Any) -> Any:
        return kernel.lag_rows(table, params)

    return fn


def lag_rows(obs: DataFrame, points: DataFrame, o: Any) -> DataFrame:
    """The lag dataset's rows before their date and display columns, from the enriched
    observations (with their captures: :func:`transforms.enrich`) and the broker's max-offset
    points: one shuffle by topic and one mapInArrow (:func:`kernel.lag_rows`). ``o``: the
    run's :class:`mqctl.lagoptions.Options`."""
    obs = obs.withColumn("_r", F.lit(1).cast("byte"))
    pts = points.select(*X.QUEUE, *POINT_COLUMNS).withColumn("_r", F.lit(0).cast("byte"))
    u = obs.unionByName(pts, allowMissingColumns=True)
    fields = [f for f in obs.schema.fields if f.name != "_r"]
    schema = T.StructType(fields + [T.StructField(n, T._parse_datatype_string(t), True)
                                    for n, t in LAG_ADDED])
    params = kernel.Params(window=o.window, allowed_lag=o.allowed_lag,
                           allowed_lag_seconds=o.allowed_lag_seconds,
                           max_skew_ms=o.max_skew_ms)
    return X.by_topic(u).mapInArrow(_batches(_lag_fn(params), schema.names), schema)


def own_history(lag_rows: DataFrame, points: DataFrame) -> DataFrame:
    """The broker history as today's engine keeps it in the derived state: the points and the
    observations' own max offsets (not the ones filled from the points)."""
    own = lag_rows.filter(F.col("broker_offset_ts") == F.col("observed_ts"))
    return X.broker_history(own, X.by_topic(points))


# the owner track's rows (:func:`kernel.tracked_rows`)
TRACK_DDL = ("cluster string, group string, topic string, broker string, queue_id int, "
             "capture_ts long, owner string")
OWNER_IN = ["cluster", "group", "topic", "broker", "queue_id", "capture_ts", "owner", "online",
            "owner_unknown", "consumer_offset", "source_kind", "source"]


def _owner_fn(name: str) -> Callable[[Any], Any]:
    def fn(table: Any) -> Any:
        return {"changes": kernel.owner_changes, "resets": kernel.capture_resets,
                "unowned": kernel.unowned_intervals, "track": kernel.tracked_rows}[name](table)

    return fn


def captured_changes(lag_rows: DataFrame) -> tuple[DataFrame, DataFrame, DataFrame, DataFrame]:
    """:func:`mqctl.lagjob.stages._captured_changes` by the kernel: owner changes, offset
    resets, unowned intervals and the owner track's rows (:data:`TRACK_DDL`) from the lag rows,
    whose partitions hold whole topics (the kernel's shuffle, kept by the lag cut)."""
    src = lag_rows.select(*OWNER_IN)
    out = []
    for name, ddl in (("changes", CHANGES_DDL), ("resets", RESETS_DDL),
                      ("unowned", UNOWNED_DDL), ("track", TRACK_DDL)):
        schema = T._parse_datatype_string(ddl)
        assert isinstance(schema, T.StructType)
        out.append(src.mapInArrow(_batches(_owner_fn(name), schema.names), schema))
    return out[0], out[1], out[2], out[3]
