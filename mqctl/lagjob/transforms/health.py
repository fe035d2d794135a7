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
    queue = [*keys, "topic", "broker", "queue_id"]
    # one frame, one shuffle: the groups (_k 0), their storms (1) and their
    # unowned intervals (2) partitioned by group; every window below is keyed by a superset
    # of it (no other exchange, where two joins and three aggregates took about ten Spark jobs)
    g = groups.select(*keys, "capture_ts", "group_status_code", "queues", "online",
                      "message_model", *([F.col("reason").alias("_reason0")]
                                         if "reason" in groups.columns else []),
                      F.lit(0).alias("_k"))
    known = F.col("cluster").isNotNull() & F.col("group").isNotNull()  # (as the joins matched)
    s = storms.filter(known).select(
        *keys, F.col("start_ts").alias("_s"), F.col("end_ts").alias("_e"),
        F.col("rounds").alias("_r"), F.col("events").alias("_n"), F.col("rule").alias("_rule"),
        F.lit(1).alias("_k"))
    u = unowned.filter(known).select(*keys, "topic", "broker", "queue_id",
                                     F.col("start_ts").alias("_s"), F.col("end_ts").alias("_e"),
                                     F.lit(2).alias("_k"))
    every = g.unionByName(s, allowMissingColumns=True).unionByName(u, allowMissingColumns=True)
    w = Window.partitionBy(*keys)
    # consecutive columns that do not read each other are one projection (withColumns): a
    # chain of withColumn calls analyses a deeper plan at each step (docs/lag-performance.md,
    # "Fourteenth pass")
    every = every.withColumns({
        "_hi": F.max(F.when(F.col("_k") == 0, F.col("capture_ts"))).over(w),
        "_has_g": F.max((F.col("_k") == 0).cast("int")).over(w)})
    hi = F.col("_hi")  # the group's latest capture, on each of its rows
    lo = hi - F.lit(int(window_ms))
    rec = F.when(F.col("_k") == 1, F.col("_e") >= lo)  # a storm reaching into the window
    # each queue's unowned time in the window, its intervals clipped to it and overlapping ones
    # counted once (two sources can still see one period twice)
    is_u = (F.col("_k") == 2) & (F.col("_has_g") == 1)
    now = (F.col("_s") <= hi) & (F.col("_e").isNull() | (F.col("_e") > hi))
    c = every.withColumns({"_a": F.when(is_u, F.greatest(F.col("_s"), lo)),
                           "_b": F.when(is_u, F.least(F.coalesce(F.col("_e"), hi), hi)),
                           "_now": F.when(is_u, now.cast("int"))})
    wq = Window.partitionBy(*queue, "_k").orderBy("_a", "_b")
    reach = F.col("_reach")
    starts = is_u & (reach.isNull() | (F.col("_a") > reach))  # an island's first interval
    c = (c.withColumn("_reach", F.max("_b").over(wq.rowsBetween(Window.unboundedPreceding, -1)))
         .withColumn("_isl", F.sum(F.when(reach.isNull() | (F.col("_a") > reach), 1)
                                   .otherwise(0))
                     .over(wq.rowsBetween(Window.unboundedPreceding, 0))))
    wi = Window.partitionBy(*queue, "_k", "_isl")
    c = c.withColumns({
        "_len": F.when(starts, F.greatest(F.max("_b").over(wi) - F.min("_a").over(wi),
                                          F.lit(0))),
        "_qnow": F.when(starts & (F.max("_now").over(wi) == 1), F.concat_ws(
            ":", "topic", "broker", F.col("queue_id").cast("string")))})
    out = c.withColumns({
        "storms": F.count(F.when(F.col("_k") == 1, F.lit(1))).over(w),
        "_in": F.max(rec.cast("int")).over(w),
        "storm_start_ts": F.min(F.when(rec, F.col("_s"))).over(w),
        "storm_end_ts": F.max(F.when(rec, F.col("_e"))).over(w),
        "storm_rounds": F.sum(F.when(rec, F.col("_r"))).over(w),
        "storm_events": F.sum(F.when(rec, F.col("_n"))).over(w),
        "storm_rule": F.array_join(F.array_sort(F.array_distinct(F.flatten(
            F.collect_list(F.when(rec, F.split(F.col("_rule"), r"\+"))).over(w)))), "+"),
        "unowned_ms": F.sum("_len").over(w),
        "unowned_now": F.size(F.collect_set("_qnow").over(w))}).filter(F.col("_k") == 0)
    return _health_columns(out, window_ms, unowned_max, has_reason="reason" in groups.columns)


def _health_columns(out: DataFrame, window_ms: int, unowned_max: float, *,
                    has_reason: bool) -> DataFrame:
    """:func:`group_health`'s row of each group from its windows' results (``storms``,
    ``_in``, ``storm_*``, ``unowned_ms``, ``unowned_now``): ``HEALTH_COLUMNS``."""
    # the rest is one projection of the group's row: the names below are expressions over
    # the windows' results, each used where it is needed
    in_storm = F.coalesce(F.col("_in"), F.lit(0)) == 1
    unowned_ms = F.coalesce(F.col("unowned_ms"), F.lit(0)).cast("long")
    span = F.col("queues") * F.lit(float(max(1, window_ms)))
    unowned_share = F.when(F.col("queues") > 0, F.least(
        unowned_ms / span, F.lit(1.0))).cast("double")
    base = F.lit(None).cast("int")
    for sev, h in _STATUS_TO_HEALTH.items():
        base = F.when(F.col("group_status_code") == sev, F.lit(h)).otherwise(base)
    err = F.lit(HEALTH_CODE["ERR"])
    unowned_bad = (~F.col("online").eqNullSafe(F.lit(False))
                   & (F.coalesce(unowned_share, F.lit(0.0))
                      >= F.lit(float(unowned_max))) & (unowned_ms > 0))
    code = F.when(in_storm | unowned_bad, err).otherwise(base).cast("int")
    reason = F.when(F.col("group_status_code").isNull()
                    & F.col("message_model").eqNullSafe(F.lit("BROADCASTING")),
                    F.lit(BROADCAST_REASON))
    if has_reason:  # (the groups seen only in logs: :func:`unseen_groups`)
        reason = F.coalesce(F.col("_reason0"), reason)
    made = {"storms": F.col("storms").cast("long"), "in_storm": in_storm,
            "storm_rule": F.when(in_storm, F.col("storm_rule")), "unowned_ms": unowned_ms,
            "unowned_share": unowned_share, "unowned_now": F.col("unowned_now").cast("long"),
            "health_code": code, "health": health_name(code), "reason": reason}
    return out.select("cluster", "group", *(made[c].alias(c) if c in made else F.col(c)
                                            for c in HEALTH_COLUMNS))


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
