"""Shared pieces of the lag job's transforms: the queue keys, the source priority and the
date helpers."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

# which source wins when two describe the same queue at the same capture
SOURCE_PRIORITY = {"snapshot": 0, "consumer-progress": 1, "broker-consume-stats": 2,
                   "consumer-offset": 3}

QUEUE = ["cluster", "topic", "broker", "queue_id"]
GQUEUE = ["cluster", "group", "topic", "broker", "queue_id"]
OBS_KEY = [*GQUEUE, "capture_ts"]
DAY_MS = 86_400_000
# the one partitioning of the per-queue steps: every window and aggregate of the
# lag and the owner track is keyed by a superset of it (a queue, a group's queue, a group and
# topic at a capture), so, once the observations are partitioned by it, none shuffles them
BY_TOPIC = ["cluster", "topic"]


def by_topic(df: DataFrame) -> DataFrame:
    """``df`` partitioned by :data:`BY_TOPIC` (one shuffle)."""
    return df.repartition(*BY_TOPIC)


def date_of(ts: Column) -> Column:
    """UTC calendar date (``yyyy-MM-dd``) of an epoch-ms column, independent of the session's
    time zone."""
    days = F.floor(ts / F.lit(DAY_MS)).cast("int")
    return F.date_format(F.date_add(F.lit("1970-01-01").cast("date"), days), "yyyy-MM-dd")


def iso_of(ts: Column) -> Column:
    """ISO-8601 UTC with milliseconds (``2024-06-01T10:00:00.000Z``); the session time zone
    must be UTC (the job runs inside :func:`mqctl.lagjob.session.utc_session`)."""
    return F.date_format(F.timestamp_millis(ts), "yyyy-MM-dd'T'HH:mm:ss.SSS'Z'")


def with_date(df: DataFrame, ts_col: str = "capture_ts") -> DataFrame:
    return df.withColumn("date", date_of(F.col(ts_col)))


def _priority(kind: Column) -> Column:
    expr = F.lit(9)
    for k, p in sorted(SOURCE_PRIORITY.items(), key=lambda kv: -kv[1]):
        expr = F.when(kind == k, F.lit(p)).otherwise(expr)
    return expr
