"""Time lag: exact when the capture carries it (snapshot ``delay_ms`` from
QUERY_CONSUME_TIME_SPAN) and 0 when caught up; otherwise interpolated like kafka-lag-exporter
(``LookupTable.scala``) but anchored on captured points: the expected store time of the first
unconsumed message, between the two captures whose max offsets bracket it
(:func:`estimate_time_lag`); a lower bound when it predates the first capture."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from mqctl.lagjob.transforms.common import DAY_MS, QUEUE

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
    need = ((F.col("lag") > 0) & F.col("delay_ms").isNull()
            & F.col("consumer_offset").isNotNull())
    # One frame per queue: the history points (``_r`` 0) and the observations (``_r`` 1), two
    # running-window passes over it and no join back (the windows share the run's
    # one partitioning by topic, so neither pass shuffles). Running frames only: Spark
    # evaluates "current .. unbounded following" frames in O(n^2) per partition.
    pt_type = "struct<B:long,t:long>"
    h = history.select(*QUEUE, F.col("t").alias("_t"), F.col("B").alias("_B"),
                       F.lit(0).alias("_r"))
    # (columns that do not read each other: one projection each, docs/lag-performance.md,
    # "Fourteenth pass")
    u = obs.withColumns({"_t": F.col("observed_ts"), "_B": F.lit(None).cast("long"),
                         "_r": F.lit(1), "_C": F.when(need, F.col("consumer_offset"))})
    u = u.unionByName(h, allowMissingColumns=True)
    hist = F.col("_r") == 0
    # 1. in time order: segments of the history (a new one whenever the max offset decreased;
    #    an observation belongs to the segment of the last point at or before it, segment 0
    #    before the first point) and each point's predecessor in its segment
    wt = Window.partitionBy(*QUEUE).orderBy("_t", "_r")
    upto = wt.rowsBetween(Window.unboundedPreceding, 0)
    prev_b = F.last(F.when(hist, F.col("_B")), ignorenulls=True).over(
        wt.rowsBetween(Window.unboundedPreceding, -1))
    pt = F.struct(F.col("_B").alias("B"), F.col("_t").alias("t"))
    u = u.withColumns({"_dec": F.when(hist & (F.col("_B") < prev_b), 1).otherwise(0),
                       "_pt": F.when(hist, pt).otherwise(F.lit(None).cast(pt_type))})
    u = u.withColumns({
        "_seg": F.sum("_dec").over(upto),
        "_pred": F.when(hist & (F.col("_dec") == 0), F.last("_pt", ignorenulls=True)
                        .over(wt.rowsBetween(Window.unboundedPreceding, -1)))})
    # 2. inside a segment (B never decreases in one, so (B, t) order is time order): the
    #    bracketing points of offset C are the last point with B <= C (``prev``) and the first
    #    with B > C (``next``). A point sorts by its predecessor's B: the last point whose
    #    predecessor has B <= C is ``next`` (its predecessor is ``prev``), or, when its own
    #    B <= C, the segment's last point (``prev``; no ``next``)
    u = u.withColumns({"_k": F.when(hist, F.col("_pred")["B"]).otherwise(F.col("_C")),
                       "_nil": hist & F.col("_pred").isNull()})
    ws = Window.partitionBy(*QUEUE, "_seg").orderBy(F.col("_nil").desc(), "_k", "_r", "_t")
    hit = F.last(F.when(hist, F.struct(F.col("_pred").alias("p"), F.col("_pt").alias("n"))),
                 ignorenulls=True).over(ws.rowsBetween(Window.unboundedPreceding, 0))
    u = u.withColumns({"_hit": hit, "_first_t": F.min(F.when(hist, F.col("_t"))).over(
        Window.partitionBy(*QUEUE, "_seg"))})
    est = u.filter(F.col("_r") == 1)
    over = F.col("_hit")["n"]["B"] > F.col("_C")
    pa = F.when(over, F.col("_hit")["p"]).otherwise(F.col("_hit")["n"])
    pb = F.when(over, F.col("_hit")["n"])
    # in double: offsets up to 2^63-1 times a time span overflow a long (ANSI mode raises)
    t_star = pa["t"] + ((F.col("_C") - pa["B"]).cast("double") + 1.0) * (pb["t"] - pa["t"]) \
        / ((pb["B"] - pa["B"]).cast("double") + 1.0)
    interp = pa.isNotNull() & pb.isNotNull() & (pb["B"] > pa["B"])
    lower = F.col("_t") - F.col("_first_t")
    estimated = F.col("_C").isNotNull()
    out = est.select(
        *obs.columns,
        F.when(estimated & interp, F.greatest(F.col("_t") - t_star, F.lit(0)) / 1000.0)
        .when(estimated & pa.isNull() & (lower > 0), lower / 1000.0).alias("_est_s"),
        F.when(~estimated, F.lit(None).cast("string"))
        .when(interp, F.lit("interpolated"))
        .when(pa.isNull() & (lower > 0), F.lit("lower_bound"))
        .otherwise(F.lit("unknown")).alias("_est_src"))
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
    return (out.withColumns({"lag_seconds": secs.cast("double"), "lag_seconds_source": src,
                             "estimated": src.isin("interpolated", "lower_bound"),
                             "lower_bound": src == "lower_bound",
                             "lag_seconds_upper": upper.cast("double")})
            .drop("_est_s", "_est_src"))
