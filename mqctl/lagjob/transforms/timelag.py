"""Time lag: exact when the capture carries it (snapshot ``delay_ms`` from
QUERY_CONSUME_TIME_SPAN) and 0 when caught up; otherwise interpolated like kafka-lag-exporter
(``LookupTable.scala``) but anchored on captured points: the expected store time of the first
unconsumed message, between the two captures whose max offsets bracket it
(:func:`estimate_time_lag`); a lower bound when it predates the first capture."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from mqctl.lagjob.transforms.common import DAY_MS, OBS_KEY, QUEUE

# longer than any message is kept (the broker deletes commit log files after fileReservedTime,
# 72 h by default): "now - 0" is about 56 years
MAX_REAL_DELAY_MS = 10 * 365 * DAY_MS


def not_a_delay() -> Column:
    """A ``delay_ms`` that is not a time lag: for a queue the group never committed,
    QUERY_CONSUME_TIME_SPAN answers ``delayTime = now - 0`` (4.9.3 and 5.3.3 alike: the
    consume time of offset -1 is 0; AdminBrokerProcessor#queryConsumeTimeSpan; corpus
    ``*/never-committed/303_*.json``, where mqadmin shows N/A). No real time lag exceeds the
    retention, so a delay of more than 10 years is treated as unknown."""
    return F.col("delay_ms").isNotNull() & (F.col("delay_ms") > F.lit(MAX_REAL_DELAY_MS))


def estimate_time_lag(obs: DataFrame, history: DataFrame) -> DataFrame:
    """Add ``lag_seconds``, ``lag_seconds_source`` (exact | interpolated | lower_bound |
    unknown), ``estimated``, ``lower_bound`` and ``lag_seconds_upper``.

    * lag 0 -> 0 (exact); snapshot ``delay_ms`` -> exact, unless it is the broker's
      ``now - 0`` for a never-committed queue (:func:`not_a_delay`: then ``delay_ms`` becomes
      null and the time lag is estimated as below, or unknown);
    * otherwise, in the queue's history (split where the max offset went backwards: a new
      segment after a broker was replaced or its store wiped), estimate when the first
      unconsumed message (offset ``C``) was stored. The max offset ``B`` counts the messages
      stored, so message ``C`` exists once ``B > C``: between the last point with ``B0 <= C``
      (at ``t0``) and the first with ``B1 > C`` (at ``t1``) it is the ``(C - B0 + 1)``-th of
      the ``B1 - B0`` messages stored, expected (uniform arrivals) at
      ``t0 + (C - B0 + 1) / (B1 - B0 + 1) * (t1 - t0)`` (``interpolated``); lag seconds =
      observed time - that moment. For a busy queue that is the linear interpolation of
      kafka-lag-exporter; for a queue with a message every few minutes it is not off by a
      whole idle period;
    * when no captured point has ``B <= C`` the message predates the first capture of the
      segment: lag seconds >= observed time - first capture (``lower_bound``); ``unknown`` when
      that is 0 or there is no history;
    * ``lag_seconds_upper`` = observed time - ``last_timestamp`` (store time of the last
      consumed message, from ConsumeStats / mqadmin LastTime) when lag > 0: an upper bound.
    """
    obs = obs.withColumn("delay_ms", F.when(not_a_delay(), F.lit(None).cast("long"))
                         .otherwise(F.col("delay_ms")))
    need = obs.filter((F.col("lag") > 0) & F.col("delay_ms").isNull()
                      & F.col("consumer_offset").isNotNull())
    ev = need.select(*OBS_KEY, F.col("observed_ts").alias("t"),
                     F.col("consumer_offset").alias("C"))
    # 1. segments of the history: a new one whenever the max offset decreased
    wq = Window.partitionBy(*QUEUE).orderBy("t")
    hist = history.select(*QUEUE, "t", "B").withColumn(
        "_dec", F.when(F.col("B") < F.lag("B").over(wq), 1).otherwise(0))
    hist = hist.withColumn("seg", F.sum("_dec").over(
        wq.rowsBetween(Window.unboundedPreceding, 0))).drop("_dec")
    # 2. each observation belongs to the segment of the last point at or before it
    u = (hist.select(*QUEUE, "t", "seg", F.lit(0).alias("_r"),
                     *[F.lit(None).cast(dt).alias(c) for c, dt in
                       (("group", "string"), ("capture_ts", "long"), ("C", "long"))])
         .unionByName(ev.select(*QUEUE, "t", F.lit(None).cast("long").alias("seg"),
                                F.lit(1).alias("_r"), "group", "capture_ts", "C")))
    # (frames are running ones only: Spark evaluates "current .. unbounded following" frames
    # in O(n^2) per partition; observations before the first point belong to segment 0)
    wt = Window.partitionBy(*QUEUE).orderBy("t", "_r")
    u = u.withColumn("_segb", F.last("seg", ignorenulls=True).over(
        wt.rowsBetween(Window.unboundedPreceding, 0)))
    ev_seg = u.filter(F.col("_r") == 1).select(
        *QUEUE, "group", "capture_ts", "t", "C",
        F.coalesce(F.col("_segb"), F.lit(0)).alias("seg"))
    # 3. inside a segment, order by offset (B never decreases in a segment, so that is time
    #    order too): the bracketing points are the nearest history rows before (B <= C: the
    #    observation sorts after history rows of the same offset) and after (B > C)
    v = (hist.select(*QUEUE, "seg", F.col("B").alias("k"), F.lit(1).alias("_r"), "t",
                     F.struct(F.col("B").alias("B"), F.col("t").alias("t")).alias("pt"),
                     *[F.lit(None).cast(dt).alias(c) for c, dt in
                       (("group", "string"), ("capture_ts", "long"))])
         .unionByName(ev_seg.select(*QUEUE, "seg", F.col("C").alias("k"), F.lit(2).alias("_r"),
                                    "t", F.lit(None).cast("struct<B:long,t:long>").alias("pt"),
                                    "group", "capture_ts")))
    wk = Window.partitionBy(*QUEUE, "seg").orderBy("k", "_r", "t")
    # the nearest history row after = the nearest before in the reversed order
    wk_rev = Window.partitionBy(*QUEUE, "seg").orderBy(
        F.col("k").desc(), F.col("_r").desc(), F.col("t").desc())
    v = (v.withColumn("prev", F.last("pt", ignorenulls=True).over(
            wk.rowsBetween(Window.unboundedPreceding, -1)))
         .withColumn("next", F.last("pt", ignorenulls=True).over(
             wk_rev.rowsBetween(Window.unboundedPreceding, -1)))
         .withColumn("first_t", F.min(F.when(F.col("_r") == 1, F.col("t"))).over(
             Window.partitionBy(*QUEUE, "seg"))))
    est = v.filter(F.col("_r") == 2)
    pa, pb = F.col("prev"), F.col("next")
    # in double: offsets up to 2^63-1 times a time span overflow a long (ANSI mode raises)
    t_star = pa["t"] + ((F.col("k") - pa["B"]).cast("double") + 1.0) * (pb["t"] - pa["t"]) \
        / ((pb["B"] - pa["B"]).cast("double") + 1.0)
    interp = pa.isNotNull() & pb.isNotNull() & (pb["B"] > pa["B"])
    lower = F.col("t") - F.col("first_t")
    est = est.select(
        *QUEUE, "group", "capture_ts",
        F.when(interp, F.greatest(F.col("t") - t_star, F.lit(0)) / 1000.0)
         .when(pa.isNull() & (lower > 0), lower / 1000.0).alias("_est_s"),
        F.when(interp, F.lit("interpolated"))
         .when(pa.isNull() & (lower > 0), F.lit("lower_bound"))
         .otherwise(F.lit("unknown")).alias("_est_src"))
    out = obs.join(est, on=OBS_KEY, how="left")
    lag = F.col("lag")
    src = (F.when(lag.isNull(), F.lit("unknown"))
           .when(lag == 0, F.lit("exact"))
           .when(F.col("delay_ms").isNotNull(), F.lit("exact"))
           .otherwise(F.coalesce(F.col("_est_src"), F.lit("unknown"))))
    secs = (F.when(lag.isNull(), F.lit(None).cast("double"))
            .when(lag == 0, F.lit(0.0))
            .when(F.col("delay_ms").isNotNull(),
                  F.greatest(F.col("delay_ms"), F.lit(0)) / 1000.0)
            .otherwise(F.col("_est_s")))
    upper = F.when((lag > 0) & F.col("last_timestamp").isNotNull()
                   & (F.col("last_timestamp") > 0),
                   F.greatest(F.col("observed_ts") - F.col("last_timestamp"), F.lit(0)) / 1000.0)
    return (out.withColumn("lag_seconds", secs.cast("double"))
            .withColumn("lag_seconds_source", src)
            .withColumn("estimated", F.col("lag_seconds_source").isin("interpolated",
                                                                      "lower_bound"))
            .withColumn("lower_bound", F.col("lag_seconds_source") == "lower_bound")
            .withColumn("lag_seconds_upper", upper.cast("double"))
            .drop("_est_s", "_est_src"))
