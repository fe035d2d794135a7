"""The per-queue rules as the report runs them, over the small DataFrames the lag tests build:
the kernel's Spark plan (mqctl/lagjob/flow.py: one shuffle by topic, mapInArrow through
mqctl/lagjob/kernel.py), not a copy of it."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from mqctl.lagjob import flow
from mqctl.lagjob import transforms as X

POINTS_DDL = ("cluster string, topic string, broker string, queue_id int, observed_ts long, "
              "broker_offset long, min_offset long")


def lag_frame(obs: DataFrame, points: DataFrame | None = None, *, window: int = 10,
              allowed_lag: int = 0, allowed_lag_seconds: float = 0.0,
              max_skew_ms: int = 60_000) -> DataFrame:
    """The lag rows of ``obs`` (dedupe, filled max offsets, lag, time lag, status window).
    ``points``: max offsets beside the observations' own, as points (``observed_ts``,
    ``broker_offset``) or as a broker history (``t``, ``B``)."""
    spark = obs.sparkSession
    if points is None:
        points = spark.createDataFrame([], POINTS_DDL)
    elif "t" in points.columns:
        points = points.select(*X.QUEUE, F.col("t").alias("observed_ts"),
                               F.col("B").alias("broker_offset"), "min_offset")
    o = SimpleNamespace(window=window, allowed_lag=allowed_lag,
                        allowed_lag_seconds=allowed_lag_seconds, max_skew_ms=max_skew_ms)
    return flow.lag_rows(obs, points, o)


def owner_frames(obs: DataFrame) -> dict[str, Any]:
    """The captured owner history of ``obs`` (lag rows or observations with their owners):
    ``changes``, ``resets``, ``unowned`` and the owner ``track``'s rows."""
    changes, resets, unowned, track = flow.captured_changes(flow.owner_rows(X.by_topic(obs)))
    return {"changes": changes, "resets": resets, "unowned": unowned, "track": track}


def group_topic_frame(lag_rows: DataFrame) -> DataFrame:
    """Per capture, group and topic of ``lag_rows`` (any partitioning: shuffled by topic), as
    the report computes them (:func:`mqctl.lagjob.group_topics.group_topic_rows` through
    :func:`mqctl.lagjob.flow.group_topic_status`)."""
    return flow.group_topic_status(flow.owner_rows(X.by_topic(lag_rows), group_topic=True))
