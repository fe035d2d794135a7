"""Group health: one verdict per group at its latest capture that also counts what the lag
status does not see (rebalance storms, queues nobody owns), and the groups the report can see
but not judge.

Burrow reports a group as OK, WARN or ERR (its worst partition, STOP, STALL and REWIND capped
at ERR: ``core/internal/evaluator/caching.go``, ``evaluateConsumerStatus``). mqctl keeps the
queue status as the group status (docs/exports.md section 4) and adds this group-level
``health`` in Burrow's three words:

* ``ERR``: the group status is REWIND, STALL or STOP; or the group is in a rebalance storm (a
  storm of ``rebalance/storms`` ends within the last ``window_ms`` before the group's latest
  capture, or later); or, while the group is not offline, its queues were unowned for at least
  ``unowned_max`` of the queue time in that window (``unowned_share``: the unowned intervals
  of ``rebalance/unowned`` clipped to the window, over queues x window);
* ``WARN``: the group status is WARN;
* ``OK``: the group status is OK and neither of the above;
* null (unknown, shown ``-``): no queue could be judged (a BROADCASTING group: its clients
  keep the offsets) and no storm or unowned time says otherwise.

Pure functions over DataFrames (no collect): the job joins the result to its latest rows.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

HEALTH = ("OK", "WARN", "ERR")
HEALTH_CODE = {h: i for i, h in enumerate(HEALTH)}
# mqctl's status severity (OK 0, WARN 1, REWIND 2, STALL 3, STOP 4) -> Burrow's group words
_STATUS_TO_HEALTH = {0: 0, 1: 1, 2: 2, 3: 2, 4: 2}
BROADCAST_REASON = "broadcast: offsets are kept by the clients"
LOGS_ONLY_REASON = "no offsets in the inputs: seen only in client or broker logs"

HEALTH_COLUMNS = ["storms", "in_storm", "storm_start_ts", "storm_end_ts", "storm_rounds",
                  "storm_events", "storm_rule", "unowned_ms", "unowned_share", "unowned_now",
                  "health_code", "health", "reason"]


def health_name(code: Column) -> Column:
    out = F.lit(None).cast("string")
    for name, i in HEALTH_CODE.items():
        out = F.when(code == i, F.lit(name)).otherwise(out)
    return out


def group_health(groups: DataFrame, storms: DataFrame, unowned: DataFrame, window_ms: int,
                 unowned_max: float) -> DataFrame:
    """Per group of ``groups`` (``cluster, group, capture_ts, group_status_code, queues,
    online, message_model``: one row per group, its latest capture): ``HEALTH_COLUMNS``.

    ``storms``: ``cluster, group, start_ts, end_ts, rounds, events, rule``;
    ``unowned``: ``cluster, group, topic, broker, queue_id, start_ts, end_ts`` (null: still
    unowned). ``storms`` counts the group's storms in the inputs; ``in_storm`` and the
    ``storm_*`` columns describe those reaching into the window; ``unowned_now`` counts the
    queues without an owner at the latest capture."""
    keys = ["cluster", "group"]
    g = groups.select(*keys, "capture_ts", "group_status_code", "queues", "online",
                      "message_model", *([F.col("reason").alias("_reason0")]
                                         if "reason" in groups.columns else []))
    lo = F.col("capture_ts") - F.lit(int(window_ms))
    s = (g.select(*keys, "capture_ts").join(storms.select(
        *keys, F.col("start_ts").alias("_s"), F.col("end_ts").alias("_e"),
        F.col("rounds").alias("_r"), F.col("events").alias("_n"), F.col("rule").alias("_rule")),
        on=keys, how="inner")
         .withColumn("_recent", F.col("_e") >= lo))
    rec = F.col("_recent")
    st = s.groupBy(*keys).agg(
        F.count(F.lit(1)).alias("storms"),
        F.max(rec.cast("int")).alias("_in"),
        F.min(F.when(rec, F.col("_s"))).alias("storm_start_ts"),
        F.max(F.when(rec, F.col("_e"))).alias("storm_end_ts"),
        F.sum(F.when(rec, F.col("_r"))).alias("storm_rounds"),
        F.sum(F.when(rec, F.col("_n"))).alias("storm_events"),
        F.array_join(F.array_sort(F.array_distinct(F.flatten(F.collect_list(
            F.when(rec, F.split(F.col("_rule"), r"\+")))))), "+").alias("storm_rule"))
    hi = F.col("capture_ts")
    u = (g.select(*keys, "capture_ts").join(unowned.select(
        *keys, "topic", "broker", "queue_id", F.col("start_ts").alias("_s"),
        F.col("end_ts").alias("_e")), on=keys, how="inner"))
    # each queue's unowned time in the window, its intervals clipped to it and overlapping ones
    # counted once (two sources can still see one period twice)
    queue = [*keys, "topic", "broker", "queue_id"]
    now = (F.col("_s") <= hi) & (F.col("_e").isNull() | (F.col("_e") > hi))
    c = (u.withColumn("_a", F.greatest(F.col("_s"), lo))
         .withColumn("_b", F.least(F.coalesce(F.col("_e"), hi), hi))
         .withColumn("_now", now.cast("int")))
    wq = Window.partitionBy(*queue).orderBy("_a", "_b")
    c = (c.withColumn("_reach", F.max("_b").over(wq.rowsBetween(Window.unboundedPreceding, -1)))
         .withColumn("_isl", F.sum(F.when(F.col("_reach").isNull()
                                          | (F.col("_a") > F.col("_reach")), 1).otherwise(0))
                     .over(wq.rowsBetween(Window.unboundedPreceding, 0))))
    isl = c.groupBy(*queue, "_isl").agg(F.min("_a").alias("_a"), F.max("_b").alias("_b"),
                                         F.max("_now").alias("_now"))
    un = isl.groupBy(*keys).agg(
        F.sum(F.greatest(F.col("_b") - F.col("_a"), F.lit(0))).alias("unowned_ms"),
        F.countDistinct(F.when(F.col("_now") == 1, F.concat_ws(
            ":", "topic", "broker", F.col("queue_id").cast("string")))).alias("unowned_now"))
    out = (g.join(st, on=keys, how="left").join(un, on=keys, how="left")
           .withColumn("storms", F.coalesce(F.col("storms"), F.lit(0)).cast("long"))
           .withColumn("in_storm", F.coalesce(F.col("_in"), F.lit(0)) == 1)
           .withColumn("storm_rule", F.when(F.col("in_storm"), F.col("storm_rule")))
           .withColumn("unowned_ms", F.coalesce(F.col("unowned_ms"), F.lit(0)).cast("long"))
           .withColumn("unowned_now", F.coalesce(F.col("unowned_now"), F.lit(0)).cast("long")))
    span = F.col("queues") * F.lit(float(max(1, window_ms)))
    out = out.withColumn("unowned_share", F.when(F.col("queues") > 0, F.least(
        F.col("unowned_ms") / span, F.lit(1.0))).cast("double"))
    base = F.lit(None).cast("int")
    for sev, h in _STATUS_TO_HEALTH.items():
        base = F.when(F.col("group_status_code") == sev, F.lit(h)).otherwise(base)
    err = F.lit(HEALTH_CODE["ERR"])
    unowned_bad = (~F.col("online").eqNullSafe(F.lit(False))
                   & (F.coalesce(F.col("unowned_share"), F.lit(0.0))
                      >= F.lit(float(unowned_max))) & (F.col("unowned_ms") > 0))
    code = (F.when(F.col("in_storm") | unowned_bad, err).otherwise(base))
    reason = F.when(F.col("group_status_code").isNull()
                    & F.col("message_model").eqNullSafe(F.lit("BROADCASTING")),
                    F.lit(BROADCAST_REASON))
    if "reason" in groups.columns:  # (the groups seen only in logs: :func:`unseen_groups`)
        reason = F.coalesce(F.col("_reason0"), reason)
    return (out.withColumn("health_code", code.cast("int"))
            .withColumn("health", health_name(F.col("health_code")))
            .withColumn("reason", reason)
            .select(*keys, *HEALTH_COLUMNS))


def unseen_groups(groups: DataFrame, *others: tuple[DataFrame, str]) -> DataFrame:
    """``cluster, group, capture_ts, reason`` of the groups that the other frames (rebalance
    events, lock events: ``(frame, its time column)``) name but ``groups`` (the judged ones)
    does not, with the last time they were seen: the report lists them with
    :data:`LOGS_ONLY_REASON` instead of losing them."""
    keys = ["cluster", "group"]
    seen = None
    for df, ts in others:
        part = df.select(F.coalesce(F.col("cluster"), F.lit("")).alias("cluster"), "group",
                         F.col(ts).alias("capture_ts")).filter(F.col("group").isNotNull())
        seen = part if seen is None else seen.unionByName(part)
    if seen is None:
        return groups.select(*keys, "capture_ts").limit(0).withColumn(
            "reason", F.lit(None).cast("string"))
    known = groups.select(F.coalesce(F.col("cluster"), F.lit("")).alias("cluster"), "group")
    return (seen.groupBy(*keys).agg(F.max("capture_ts").alias("capture_ts"))
            .join(known, on=keys, how="left_anti")
            .withColumn("reason", F.lit(LOGS_ONLY_REASON)))
