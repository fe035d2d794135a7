"""Observations, captures and lag: the times that may share a capture (the alignment rule
itself is :mod:`mqctl.lagjob.alignment`), one observation per queue and capture, the broker
history, broker offsets filled from it, the lag, and the members and configs joined in."""

from __future__ import annotations

from pyspark.sql import DataFrame, Window
from pyspark.sql import functions as F

from mqctl.lagjob.transforms.common import QUEUE


def capture_chains(times: DataFrame, align_ms: int) -> DataFrame:
    """Distinct ``(cluster, observed_ts)`` with ``chain`` (per cluster: consecutive times at
    most ``align_ms`` apart; a longer gap starts the next) and ``chain_times`` (how many
    times it has). Only the times of one chain can share a capture
    (:mod:`mqctl.lagjob.alignment`): a chain of one time is a capture named by it."""
    d = times.select("cluster", "observed_ts").distinct()
    w = Window.partitionBy("cluster").orderBy("observed_ts")
    gap = F.col("observed_ts") - F.lag("observed_ts").over(w)
    d = d.withColumn("_new", F.when(gap.isNull() | (gap > F.lit(align_ms)), 1).otherwise(0))
    d = d.withColumn("chain", F.sum("_new").over(w.rowsBetween(Window.unboundedPreceding, 0)))
    return d.select("cluster", "observed_ts", "chain", F.count(F.lit(1)).over(
        Window.partitionBy("cluster", "chain")).alias("chain_times"))


# what a record describes (alignment's rule 2b): (kind, then up to four names)
KEY_COLUMNS = ["_kind", "_k1", "_k2", "_k3", "_k4"]


def record_keys(obs: DataFrame, members: DataFrame, topic_cfg: DataFrame,
                group_cfg: DataFrame) -> DataFrame:
    """``(cluster, observed_ts, *KEY_COLUMNS)``: what each record that takes a capture
    describes: a group's queue (observations), a group (consumerProgress group lists), a
    broker's topic (topics.json), a broker's group (subscriptionGroup.json)."""
    none = F.lit(None).cast("string")

    def keyed(df: DataFrame, kind: str, *names: str) -> DataFrame:
        cols = [F.col(n).cast("string") for n in names] + [none] * (4 - len(names))
        return df.select("cluster", "observed_ts", F.lit(kind).alias("_kind"),
                         *[c.alias(k) for c, k in zip(cols, KEY_COLUMNS[1:], strict=True)])

    return (keyed(obs, "queue", "group", "topic", "broker", "queue_id")
            .unionByName(keyed(members, "members", "group"))
            .unionByName(keyed(topic_cfg, "topic", "broker", "topic"))
            .unionByName(keyed(group_cfg, "group", "broker", "group")))


def latest_shared(keys: DataFrame, chained: DataFrame) -> DataFrame:
    """Per time of ``chained`` (``cluster, observed_ts, chain``: the times of chains of more
    than one time), ``shared_ts``: the latest earlier time of its chain with a record of the
    same key as a record at this time (null: none); :func:`alignment.shared_times` is the
    reference. ``keys``: :func:`record_keys`."""
    k = (keys.join(F.broadcast(chained.select("cluster", "observed_ts", "chain")),
                   on=["cluster", "observed_ts"])
         .select("cluster", "chain", *KEY_COLUMNS, "observed_ts").distinct())
    w = Window.partitionBy("cluster", "chain", *KEY_COLUMNS).orderBy("observed_ts")
    m = (k.withColumn("_prev", F.lag("observed_ts").over(w))
         .groupBy("cluster", "observed_ts").agg(F.max("_prev").alias("shared_ts")))
    return chained.select("cluster", "observed_ts", "chain").join(
        m, on=["cluster", "observed_ts"], how="left")


def capture_index(chains: DataFrame, moved: DataFrame | None) -> DataFrame:
    """``(cluster, observed_ts, capture_ts)`` of every time of ``chains``
    (:func:`capture_chains`): a time of ``moved`` (``cluster, observed_ts, capture_ts``:
    :func:`alignment.align_chains` over :func:`latest_shared`) belongs to the capture named
    there, any other time is a capture named by itself."""
    index = chains.select("cluster", "observed_ts", F.col("observed_ts").alias("capture_ts"))
    if moved is None:
        return index
    m = moved.select("cluster", "observed_ts", F.col("capture_ts").alias("_c"))
    return (index.join(F.broadcast(m), on=["cluster", "observed_ts"], how="left")
            .select("cluster", "observed_ts",
                    F.coalesce(F.col("_c"), F.col("capture_ts")).alias("capture_ts")))


def with_capture(df: DataFrame, index: DataFrame) -> DataFrame:
    return df.join(F.broadcast(index), on=["cluster", "observed_ts"], how="left")


def broker_history(obs: DataFrame, points: DataFrame) -> DataFrame:
    """``(cluster, topic, broker, queue_id, t, B, min_offset)``: every captured max offset of a
    queue, once per time (many groups share a queue)."""
    a = obs.filter(F.col("broker_offset").isNotNull()).select(
        *QUEUE, F.col("observed_ts").alias("t"), F.col("broker_offset").alias("B"),
        "min_offset")
    b = points.select(*QUEUE, F.col("observed_ts").alias("t"), F.col("broker_offset").alias("B"),
                      "min_offset")
    return a.unionByName(b).groupBy(*QUEUE, "t").agg(F.max("B").alias("B"),
                                                      F.max("min_offset").alias("min_offset"))


def enrich(obs: DataFrame, members: DataFrame | None, topic_cfg: DataFrame | None,
           group_cfg: DataFrame | None) -> DataFrame:
    """Fill ``online``/``members`` from consumerProgress' group list of the same capture,
    ``orderly`` from subscriptionGroup.json (consumeMessageOrderly) or topics.json (FIFO), and
    add ``consume_enable`` (subscriptionGroup.json) for the same broker and capture. ``None``
    for an input kind that was not given skips its join."""
    out = obs.withColumn("consume_enable", F.lit(None).cast("boolean"))
    if members is not None:
        m = (members.groupBy("cluster", "group", "capture_ts")
             .agg(F.max("members").alias("_m_members"), F.max("online").alias("_m_online")))
        out = (out.join(m, on=["cluster", "group", "capture_ts"], how="left")
               .withColumns({"online": F.coalesce(F.col("online"), F.col("_m_online")),
                             "members": F.coalesce(F.col("members"), F.col("_m_members"))})
               .drop("_m_members", "_m_online"))
    if group_cfg is not None:
        g = (group_cfg.groupBy("cluster", "broker", "group", "capture_ts")
             .agg(F.min(F.col("consume_enable").cast("int")).alias("_g_enable"),
                  F.max(F.col("orderly").cast("int")).alias("_g_orderly")))
        out = (out.join(g, on=["cluster", "broker", "group", "capture_ts"], how="left")
               .withColumns({"orderly": F.coalesce(F.col("orderly"), F.col("_g_orderly") == 1),
                             "consume_enable": F.col("_g_enable") == 1})
               .drop("_g_enable", "_g_orderly"))
    if topic_cfg is not None:
        t = (topic_cfg.groupBy("cluster", "broker", "topic", "capture_ts")
             .agg(F.max(F.col("orderly").cast("int")).alias("_t_orderly")))
        out = (out.join(t, on=["cluster", "broker", "topic", "capture_ts"], how="left")
               .withColumn("orderly", F.coalesce(F.col("orderly"), F.col("_t_orderly") == 1))
               .drop("_t_orderly"))
    return out
