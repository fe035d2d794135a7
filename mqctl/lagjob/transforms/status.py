"""The status names and severities (the kernel judges each queue, :func:`mqctl.lagjob.kernel.
status`, Burrow's rules adapted to RocketMQ, and totals each group and topic,
:func:`mqctl.lagjob.group_topics.group_topic_rows`), and the latest rows per group and topic and per
group."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from mqctl.lagjob.transforms.rebalance import _not_reset

# Burrow's partition statuses, in mqctl's severity order (group status = the worst; thresholds
# compare these). Burrow ranks OK < WARN < STOP < STALL < REWIND and caps a group at ERR; mqctl
# ranks STOP worst (nobody is consuming: every message waits) and REWIND below STALL (the
# consumer is moving, re-reading messages) and keeps the queue status as the group's.
STATUSES = ("OK", "WARN", "REWIND", "STALL", "STOP")
SEVERITY = {s: i for i, s in enumerate(STATUSES)}


def severity(status: Column) -> Column:
    expr = F.lit(None).cast("int")
    for s, i in SEVERITY.items():
        expr = F.when(status == s, F.lit(i)).otherwise(expr)
    return expr


def status_name(code: Column) -> Column:
    expr = F.lit(None).cast("string")
    for s, i in SEVERITY.items():
        expr = F.when(code == i, F.lit(s)).otherwise(expr)
    return expr


def with_rebalances(out: DataFrame, rebalances: DataFrame | None) -> DataFrame:
    """Add each group's count of rebalance events (resets are not rebalances), 0 for none."""
    if rebalances is None:
        return out
    r = _not_reset(rebalances).groupBy("cluster", "group").agg(
        F.count(F.lit(1)).alias("rebalances"))
    return out.join(r, on=["cluster", "group"], how="left").withColumn(
        "rebalances", F.coalesce(F.col("rebalances"), F.lit(0)).cast("long"))


def latest_status(group_topic: DataFrame, rebalances: DataFrame | None = None) -> DataFrame:
    """The last capture of every group and topic, with the run's peaks (``peak_lag``,
    ``peak_lag_seconds``) and, when given, the group's rebalance event count."""
    return with_rebalances(latest_status_rows(group_topic), rebalances)


def latest_status_rows(group_topic: DataFrame) -> DataFrame:
    """:func:`latest_status` without the rebalance count: what a bounded re-run keeps
    (:func:`merge_latest_status`)."""
    w_all = Window.partitionBy("cluster", "group", "topic")
    w = w_all.orderBy(F.col("capture_ts").desc())
    return (group_topic.withColumns({"peak_lag": F.max("total_lag").over(w_all),
                                     "peak_lag_seconds": F.max("lag_seconds").over(w_all),
                                     "captures": F.count(F.lit(1)).over(w_all),
                                     "_rn": F.row_number().over(w)})
            .filter(F.col("_rn") == 1).drop("_rn"))


def merge_latest_status(earlier: DataFrame, group_topic: DataFrame) -> DataFrame:
    """:func:`latest_status_rows` of the earlier rows and ``group_topic`` (rows of later
    captures only) from ``earlier``, the earlier rows' :func:`latest_status_rows`: a group and
    topic of the new captures gets its newest row, the larger peaks, the captures added up;
    any other keeps its earlier row as it was. The same rows as over the whole history: the
    peaks are maxima and ``captures`` a count."""
    w_all = Window.partitionBy("cluster", "group", "topic")
    new = latest_status_rows(group_topic)
    return (earlier.select(*new.columns).unionByName(new)
            .withColumns({"peak_lag": F.max("peak_lag").over(w_all),
                          "peak_lag_seconds": F.max("peak_lag_seconds").over(w_all),
                          "captures": F.sum("captures").over(w_all),
                          "_rn": F.row_number().over(w_all.orderBy(F.col("capture_ts").desc()))})
            .filter(F.col("_rn") == 1).drop("_rn"))


# latest rows up to which :func:`latest_per_broker` picks their queues' rows by a literal set
LITERAL_KEYS = 200


def latest_per_broker(lag: DataFrame, latest: DataFrame,
                      latest_rows: list[dict[str, Any]] | None = None) -> DataFrame:
    """Per group, topic and broker at the group and topic's latest capture (``latest``:
    ``cluster, group, topic, capture_ts``): the lag, the time lag of the slowest queue,
    whether it is estimated, the rates and the queues (rocketmq-exporter's ``broker`` label).
    Only the captures of ``latest`` are read (a filter on the earliest of them first: Parquet
    row groups before it are skipped). ``latest_rows``: every row of ``latest``, already
    collected: the earliest is taken from them (no job), and up to :data:`LITERAL_KEYS` of
    them are picked by a literal set instead of a broadcast join (no job either)."""
    keys = ["cluster", "group", "topic", "capture_ts"]
    # (as the join's: a key with a null never matches)
    wanted: list[tuple[str, str, str, int]] | None = None
    if latest_rows is not None:
        wanted = sorted({(str(r["cluster"]), str(r["group"]), str(r["topic"]),
                          int(r["capture_ts"])) for r in latest_rows
                         if all(r.get(k) is not None for k in keys)})
    if wanted is not None and len(wanted) <= LITERAL_KEYS:
        # the keys as a literal set: no broadcast, whose relation is a job of its own
        from mqctl.lagjob.sqltext import ident, sql_text

        cols = ", ".join(ident(k) for k in keys)
        lits = ", ".join(f"({sql_text(c)}, {sql_text(g)}, {sql_text(t)}, CAST({int(ts)} AS "
                         "BIGINT))" for c, g, t, ts in wanted)
        j = (lag.filter(F.col("capture_ts") >= F.lit(min(w[3] for w in wanted)))
             .filter(F.expr(f"({cols}) IN ({lits})")) if wanted else lag.filter(F.lit(False)))
    else:
        last = latest.filter(F.col("topic").isNotNull()).select(*keys).distinct()
        first = (last.agg(F.min("capture_ts")).collect()[0][0] if wanted is None else
                 min((w[3] for w in wanted), default=None))
        rows = lag if first is None else lag.filter(F.col("capture_ts") >= F.lit(int(first)))
        j = rows.join(F.broadcast(last), on=keys, how="inner")
    return j.groupBy("cluster", "group", "topic", "broker").agg(
        F.try_sum("lag").alias("total_lag"), F.max("lag_seconds").alias("lag_seconds"),
        F.max(F.when(F.col("lag_seconds").isNotNull(), F.col("estimated").cast("int")))
        .alias("_est"),
        F.sum("consume_rate").alias("consume_rate"), F.sum("produce_rate").alias("produce_rate"),
        F.count(F.lit(1)).alias("queues"),
    ).withColumn("estimated", F.col("_est") == 1).drop("_est")


def latest_groups(group_topic: DataFrame, rebalances: DataFrame | None = None) -> DataFrame:
    """Per group: its latest capture's totals over topics (the lag and time lag of its own
    topics; ``retry_lag`` and ``dlq_lag`` of its %RETRY% and %DLQ% topics, null when it has
    none) and the group status."""
    return with_rebalances(latest_groups_rows(group_topic), rebalances)


def merge_latest_groups(earlier: DataFrame, group_topic: DataFrame) -> DataFrame:
    """:func:`latest_groups_rows` over the whole history from ``earlier`` (the earlier rows')
    and ``group_topic`` (rows of later captures only): a group of the new captures has its
    latest capture among them (its row is computed from them), any other keeps its row."""
    new = latest_groups_rows(group_topic)
    w = Window.partitionBy("cluster", "group").orderBy(F.col("capture_ts").desc())
    return (earlier.select(*new.columns).unionByName(new)
            .withColumn("_rn", F.row_number().over(w)).filter(F.col("_rn") == 1)
            .drop("_rn"))


def latest_groups_rows(group_topic: DataFrame) -> DataFrame:
    """:func:`latest_groups` without the rebalance count (what a bounded re-run keeps)."""
    w = Window.partitionBy("cluster", "group").orderBy(F.col("capture_ts").desc())
    last = (group_topic.withColumn("_last", F.first("capture_ts").over(w))
            .filter(F.col("capture_ts") == F.col("_last")))
    worst = F.col("status_code").eqNullSafe(F.col("group_status_code"))
    retry, dlq = F.col("topic").startswith("%RETRY%"), F.col("topic").startswith("%DLQ%")
    main = ~(retry | dlq)
    out = last.groupBy("cluster", "group", "capture_ts").agg(
        # the lag of the group's own topics: its %RETRY% and %DLQ% backlogs are apart (a retry
        # message waits its delay level by design: 10 s to 2 h, MessageStoreConfig
        # messageDelayLevel)
        F.count(F.lit(1)).alias("topics"), F.try_sum(F.when(main, F.col("total_lag")))
        .alias("total_lag"),
        F.max(F.when(main, F.col("lag_seconds"))).alias("lag_seconds"),
        F.try_sum(F.when(retry, F.col("total_lag"))).alias("retry_lag"),
        F.try_sum(F.when(dlq, F.col("total_lag"))).alias("dlq_lag"),
        F.max("group_status_code").alias("group_status_code"),
        F.sum("queues").alias("queues"),
        # the queues in the group's worst state, over the topics in it
        F.sum(F.when(worst, F.col("status_queues"))).alias("status_queues"),
        # ... of how many: the queues of those topics ("STALL, 3 of 8 queues" of TopicAudit,
        # not of its 10 with the %RETRY% topic's)
        F.sum(F.when(worst, F.col("queues"))).alias("status_queues_of"),
        F.min("window_samples").alias("window_samples"),
        F.max("consume_type").alias("consume_type"),
        F.max("message_model").alias("message_model"),
        F.sum("never_committed").alias("never_committed"),
        F.sum("owner_unknown").alias("owner_unknown"),
        # the fraction of the group's queues (over its topics) whose window is full
        (F.sum(F.col("complete") * F.col("queues_known"))
         / F.sum(F.when(F.col("complete").isNotNull(), F.col("queues_known")))).alias("complete"),
        F.max("members").alias("members"),
        F.max(F.col("online").cast("int")).alias("_online"))
    out = out.withColumns({
        "group_status": status_name(F.col("group_status_code")),
        "online": F.when(F.col("_online").isNull(), F.lit(None).cast("boolean"))
        .otherwise(F.col("_online") == 1)}).drop("_online")
    return out
