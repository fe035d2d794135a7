"""Rebalance history: the queue owners' changes from captures and from client logs, offset
resets, queue moves, unowned intervals, rounds, storms and broker lock events.

A **change** is one queue gained or lost by one client; an **event** groups the changes of a
client (and topic) at one moment; a **round** groups a group's events that follow each other
closely; a **storm** is many rounds in a short window."""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

from mqctl.lagjob.transforms.common import GQUEUE

CHANGE_COLS = ["ts", "window_start_ts", "cluster", "group", "topic", "broker", "queue_id",
               "client", "change", "source_kind", "source", "strategy", "cid_all", "mq_all",
               "cause"]


RESTART_GAP_MS = 30_000
RESET_WINDOW_MS = 30_000
LIFE_EVENTS = ("result", "start", "stop", "persist", "reset")


def _attributed(rows: DataFrame, logs: DataFrame) -> DataFrame:
    """Life-cycle lines with a client: lines that do not name it (start, stop, add/remove) get
    the client that the same file's result or offset-commit lines of the group name, else the
    file's client key (its directory)."""
    named = (logs.filter(F.col("event").isin("result", "persist") & F.col("client").isNotNull())
             .groupBy("source", "group").agg(F.min("client").alias("_fc")))
    return (rows.join(named, on=["source", "group"], how="left")
            .withColumn("client", F.coalesce(F.col("client"), F.col("_fc"), F.col("client_key")))
            .drop("_fc"))


def _qset(mqs: str) -> Column:
    return F.array_sort(F.transform(mqs, lambda m: F.concat_ws(
        ":", m["broker"], m["queue_id"].cast("string"))))


def log_changes(logs: DataFrame, restart_gap_ms: int = RESTART_GAP_MS,
                reset_window_ms: int = RESET_WINDOW_MS) -> DataFrame:
    """Per-queue gains and losses from client logs, with their ``cause``.

    ``result`` lines ("[client ]rebalanced result changed", RebalanceImpl) carry a client's whole
    result set: a change is the difference to that client's previous set for the group and
    topic **in the same run** of the client; identical consecutive sets produce nothing.

    A run starts at the client's start line (DefaultMQPushConsumerImpl#start "the consumer [G]
    start beginning") or at a result line more than ``restart_gap_ms`` after the client's
    previous line when the logs hold its offset commits (a client holding queues commits their
    offsets every 5 s, so such a gap is a restart whose start line is not in the given logs).
    A new run starts from an empty set, so a client restarted with the same id (real RocketMQ:
    kill -9, then start again) gains its queues again. The end of a run loses the run's last
    set: at the stop line (MQClientInstance#unregisterClient, cause ``stop``), or, when the run
    simply ends and the client starts again (killed: it logs nothing), at its last line (its
    last 5-s offset commit, cause ``crash``: it died within about 5 s after that).

    Changes within ``reset_window_ms`` after the client logged an offset reset (4.x
    "invoke reset offset operation from broker": the process queues are dropped and re-added
    10 s later; 5.x "Fix Offset, G, remove unnecessary mq") have cause ``reset``: the allocation
    did not change. Everything else is ``rebalance``.

    For a log file, group and topic without any result line, the ``add a new mq`` / ``remove
    unnecessary mq`` lines are used instead, attributed to the file's client and grouped per
    second (one rebalance logs its adds and removes within milliseconds).
    ``logs``: ``ts, seq, source, client_key, cluster, event, group, topic, client, mqs, ...``.
    """
    return (_changes_from_results(logs, restart_gap_ms, reset_window_ms).select(*CHANGE_COLS)
            .unionByName(_changes_from_add_remove(logs, reset_window_ms).select(*CHANGE_COLS)))


def _changes_from_results(logs: DataFrame, restart_gap_ms: int, reset_window_ms: int
                          ) -> DataFrame:
    """:func:`log_changes` of the ``result`` lines: each run's gains and losses against its
    previous set, and its end's losses (``stop`` or ``crash``)."""
    life = _attributed(logs.filter(F.col("event").isin(*LIFE_EVENTS)), logs)
    wc = Window.partitionBy("cluster", "client", "group").orderBy("ts", "seq")
    gap = F.col("ts") - F.lag("ts").over(wc)
    # the gap rule needs the offset-commit lines: without them (a grep of the rebalance lines)
    # a quiet period says nothing
    commits = F.max((F.col("event") == "persist").cast("int")).over(
        Window.partitionBy("cluster", "client", "group")) == 1
    new_run = ((F.col("event") == "start")
               | ((F.col("event") == "result") & commits & (gap > F.lit(int(restart_gap_ms)))))
    upto = wc.rowsBetween(Window.unboundedPreceding, 0)
    life = life.withColumns({
        "_run": F.sum(new_run.cast("int")).over(upto),
        "_reset_ts": F.last(F.when(F.col("event") == "reset", F.col("ts")),
                            ignorenulls=True).over(upto)})
    # each run's end, as windows inside the same partitioning (no aggregate joined back: the
    # windows above are computed once): its first stop line, its last line of any other kind,
    # and whether the client has a later run. (A window keyed by ``_run`` needs ``_run``
    # computed by an earlier projection.)
    wrun = Window.partitionBy("cluster", "client", "group", "_run")
    life = life.withColumns({
        "_stop_ts": F.min(F.when(F.col("event") == "stop", F.col("ts"))).over(wrun),
        "_alive_ts": F.max(F.when(F.col("event") != "stop", F.col("ts"))).over(wrun),
        "_more": F.col("_run") < F.max("_run").over(
            Window.partitionBy("cluster", "client", "group"))})
    after_reset = (F.col("_reset_ts").isNotNull()
                   & (F.col("ts") - F.col("_reset_ts") <= F.lit(int(reset_window_ms))))
    cause = F.when(after_reset, F.lit("reset")).otherwise(F.lit("rebalance"))
    res = life.filter(F.col("event") == "result").withColumn("_set", _qset("mqs"))
    w = Window.partitionBy("cluster", "client", "group", "topic", "_run").orderBy("ts", "seq")
    empty = F.array().cast("array<string>")
    res = res.withColumns({"_prev": F.lag("_set").over(w),
                           # the run's last result line (same window: one sort)
                           "_last": F.lead(F.lit(True)).over(w).isNull()})
    prev = F.coalesce(F.col("_prev"), empty)
    # the end of each run: its last set is lost at the stop line, or at the last line (crash)
    stopped = F.col("_stop_ts").isNotNull() & (F.col("_stop_ts") >= F.col("ts"))
    end_ts = F.when(stopped, F.col("_stop_ts")).otherwise(F.col("_alive_ts"))
    ends = F.col("_last") & (stopped | F.col("_more"))

    def each(queues: Column, change: str, ts: Column, why: Column) -> Column:
        return F.transform(F.coalesce(queues, empty), lambda q: F.struct(
            q.alias("q"), F.lit(change).alias("change"), ts.alias("ts"), why.alias("cause")))

    # a result line's gains and losses against the run's previous set, and at the run's
    # last result line the end's losses: one array per line, exploded once
    items = F.concat(
        each(F.array_except("_set", prev), "gained", F.col("ts"), cause),
        each(F.array_except(prev, "_set"), "lost", F.col("ts"), cause),
        each(F.when(ends, F.col("_set")).otherwise(empty), "lost", end_ts,
             F.when(stopped, F.lit("stop")).otherwise(F.lit("crash"))))
    tail: list[Any] = ["client", "source_kind", "source", "strategy", "cid_all", "mq_all"]
    from_results = (res.select("cluster", "group", "topic", *tail, F.explode(items).alias("_i"))
                    .withColumns({
                        "ts": F.col("_i.ts"), "window_start_ts": F.col("_i.ts"),
                        "broker": F.regexp_extract("_i.q", r"^(.*):([0-9]+)$", 1),
                        "queue_id": F.regexp_extract("_i.q", r"^(.*):([0-9]+)$", 2).cast("int"),
                        "change": F.col("_i.change"), "cause": F.col("_i.cause")}))
    return from_results


def _changes_from_add_remove(logs: DataFrame, reset_window_ms: int) -> DataFrame:
    """:func:`log_changes` of the ``add``/``remove`` lines of the (file, group, topic) keys
    without any result line, grouped per second."""
    # fallback: add/remove lines of (file, group, topic) keys without any result line
    addrm = _attributed(logs.filter(F.col("event").isin("add", "remove", "reset")), logs)
    resets = (addrm.filter(F.col("event") == "reset")
              .select("cluster", "client", "group", F.col("ts").alias("_r_ts")))
    keys_with_results = logs.filter(F.col("event") == "result").select(
        "source", "group", "topic").distinct()
    fb = (addrm.filter(F.col("event") != "reset")
          .join(keys_with_results, on=["source", "group", "topic"], how="left_anti"))
    fb = (fb.join(resets, on=["cluster", "client", "group"], how="left")
          .withColumn("_hit", (F.col("ts") >= F.col("_r_ts"))
                      & (F.col("ts") - F.col("_r_ts") <= F.lit(int(reset_window_ms))))
          .groupBy(*[c for c in fb.columns])
          .agg(F.max(F.col("_hit").cast("int")).alias("_hit")))
    fb = (fb.withColumn("ts", (F.floor(F.col("ts") / 1000) * 1000).cast("long"))
          .select(F.col("ts"), F.col("ts").alias("window_start_ts"), "cluster", "group", "topic",
                  F.explode("mqs").alias("_m"), "client",
                  F.when(F.col("event") == "add", "gained").otherwise("lost").alias("change"),
                  "source_kind", "source", "strategy", "cid_all", "mq_all",
                  F.when(F.col("_hit") == 1, F.lit("reset")).otherwise(F.lit("rebalance"))
                  .alias("cause"))
          .withColumns({"broker": F.col("_m")["broker"],
                        "queue_id": F.col("_m")["queue_id"]}).drop("_m"))
    return fb


def _reset_event_cols() -> list[Any]:
    """The columns of :func:`rebalance_events` for a reset event (``ts, window_start_ts,
    cluster, group, topic, client, source_kind, source, queues`` given)."""
    empty = F.array().cast("array<string>")
    return ["ts", "window_start_ts", "cluster", "group", "topic", "client", "source_kind",
            empty.alias("gained"), empty.alias("lost"),
            F.lit(None).cast("string").alias("strategy"), F.lit(None).cast("int").alias("cid_all"),
            F.lit(None).cast("int").alias("mq_all"), "source", F.lit(0).alias("n_gained"),
            F.lit(0).alias("n_lost"), F.lit("reset").alias("cause"), "queues"]


def reset_events(logs: DataFrame, window_ms: int = RESET_WINDOW_MS) -> DataFrame:
    """One ``reset`` event per client, group and burst of reset lines (4.x "invoke reset offset
    operation from broker", one per broker; 5.x "Fix Offset ... remove unnecessary mq", one per
    queue), with the queues named when the lines name them. Same columns as
    :func:`rebalance_events`; ``gained``/``lost`` are empty (the allocation did not change)."""
    r = _attributed(logs.filter(F.col("event") == "reset"), logs)
    w = Window.partitionBy("cluster", "client", "group").orderBy("ts", "seq")
    gap = F.col("ts") - F.lag("ts").over(w)
    r = (r.withColumn("_new", F.when(gap.isNull() | (gap > F.lit(int(window_ms))), 1)
                      .otherwise(0))
         .withColumn("_burst", F.sum("_new").over(w.rowsBetween(Window.unboundedPreceding, 0))))
    topic = F.coalesce(F.col("topic"), F.element_at("mqs", 1)["topic"])
    return (r.withColumn("_topic", topic)
            .groupBy("cluster", "group", "client", "source_kind", "_burst")
            .agg(F.min("ts").alias("ts"), F.first("_topic", ignorenulls=True).alias("topic"),
                 F.array_sort(F.array_distinct(F.flatten(F.collect_list(_qset("mqs")))))
                 .alias("queues"),
                 F.first("source").alias("source"),
                 F.first("detail", ignorenulls=True).alias("detail"))
            .withColumn("window_start_ts", F.col("ts")).select(*_reset_event_cols()))


def rebalance_events(changes: DataFrame) -> DataFrame:
    """One row per client, group, topic, moment and cause: the queues it gained and lost
    (``broker:queueId``, sorted). ``cause``: ``rebalance``, ``stop``, ``crash`` or ``reset``
    (see :func:`log_changes`; captures give ``rebalance``)."""
    q = F.concat_ws(":", F.col("broker"), F.col("queue_id").cast("string"))
    return (changes.groupBy("ts", "cluster", "group", "topic", "client", "source_kind",
                            "cause")
            .agg(F.min("window_start_ts").alias("window_start_ts"),
                 F.array_sort(F.collect_set(F.when(F.col("change") == "gained", q)))
                  .alias("gained"),
                 F.array_sort(F.collect_set(F.when(F.col("change") == "lost", q))).alias("lost"),
                 F.first("strategy", ignorenulls=True).alias("strategy"),
                 F.max("cid_all").alias("cid_all"), F.max("mq_all").alias("mq_all"),
                 F.first("source").alias("source"))
            .withColumns({"n_gained": F.size("gained"), "n_lost": F.size("lost"),
                          "queues": F.array_sort(F.array_union("gained", "lost"))}))


def infer_log_cluster(logs: DataFrame, obs: DataFrame) -> DataFrame:
    """Log lines carry no cluster: without ``--cluster`` (or a ``cluster=`` path segment) they
    take the cluster of their group's observations when the group is in exactly one cluster,
    so the log and snapshot halves of one group's history meet. A group seen in several
    clusters (or only in logs) keeps ``""``."""
    g = (obs.filter(F.col("cluster").isNotNull() & (F.col("cluster") != ""))
         .groupBy("group").agg(F.min("cluster").alias("_c"),
                               F.countDistinct("cluster").alias("_n"))
         .filter(F.col("_n") == 1).select("group", "_c"))
    blank = F.col("cluster").isNull() | (F.col("cluster") == "")
    return (logs.join(F.broadcast(g), on="group", how="left")
            .withColumn("cluster", F.when(blank, F.coalesce(F.col("_c"), F.lit("")))
                        .otherwise(F.col("cluster")))
            .drop("_c"))


# a capture change and a log change explain each other when these match (and the time fits)
_MATCH_KEYS = [*GQUEUE, "client", "change"]


def change_hits(captured: DataFrame, logged: DataFrame, tol_ms: int) -> DataFrame:
    """The pairs :func:`merge_changes` joins: a capture change and a log change of the same
    queue, client and direction, logged inside the capture interval (``window_start_ts ..
    ts``) give or take ``tol_ms`` of clock skew. One row per pair: the keys, the capture's
    ``_cts`` and ``source_kind`` (``_ck``), the log line's ``_lts`` and ``source``
    (``_lsrc``). Read twice by the merge (the captures it explains, the log changes it
    explains): a caller that materialises it computes the join once."""
    keys = _MATCH_KEYS
    c = captured.select(*keys, "ts", "window_start_ts", "source_kind").alias("c")
    lg = logged.select(*keys, "ts", "source").alias("l")
    cond = [F.col("c." + k).eqNullSafe(F.col("l." + k)) for k in keys] + [
        F.col("l.ts") >= F.col("c.window_start_ts") - F.lit(int(tol_ms)),
        F.col("l.ts") <= F.col("c.ts") + F.lit(int(tol_ms))]
    return c.join(lg, on=cond, how="inner").select(
        *[F.col("c." + k).alias(k) for k in keys], F.col("c.ts").alias("_cts"),
        F.col("l.ts").alias("_lts"), F.col("l.source").alias("_lsrc"),
        F.col("c.source_kind").alias("_ck"))


def merge_changes(captured: DataFrame, logged: DataFrame, tol_ms: int,
                  hits: DataFrame | None = None) -> DataFrame:
    """Captured and logged changes together, one row per real change: a capture change (the
    owner differed between two captures) that a log change of the same queue, client and
    direction explains (logged inside the capture interval, ``window_start_ts .. ts``, give or
    take ``tol_ms`` of clock skew) is dropped, and the log change, which has the exact time,
    keeps both sources (``source_kind`` ``client-log+snapshot``). ``hits``: the
    :func:`change_hits` of the same frames, when the caller has it materialised."""
    keys = _MATCH_KEYS
    if hits is None:
        hits = change_hits(captured, logged, tol_ms)
    matched_c = hits.select(*keys, F.col("_cts").alias("ts")).distinct()
    rest = captured.join(matched_c, on=[*keys, "ts"], how="left_anti")
    lk = hits.groupBy(*keys, F.col("_lts").alias("ts"), F.col("_lsrc").alias("source")).agg(
        F.array_sort(F.collect_set("_ck")).alias("_cks"))
    out = (logged.join(lk, on=[*[logged[k].eqNullSafe(lk[k]) for k in keys],
                               logged["ts"] == lk["ts"], logged["source"] == lk["source"]],
                       how="left")
           .select(*[logged[c] for c in logged.columns], lk["_cks"]))
    both = F.concat_ws("+", F.col("source_kind"), F.array_join("_cks", "+"))
    out = out.withColumn("source_kind", F.when(F.col("_cks").isNotNull(), both)
                         .otherwise(F.col("source_kind"))).drop("_cks")
    return rest.select(*CHANGE_COLS).unionByName(out.select(*CHANGE_COLS))


def mark_resets(changes: DataFrame, resets: DataFrame,
                window_ms: int = RESET_WINDOW_MS) -> DataFrame:
    """Give cause ``reset`` to a queue's loss and re-gain by the same client (nothing else
    happened to the queue in between) when that client logged or showed a reset of the group
    from ``window_ms`` before the loss's window to ``window_ms`` after the gain: the 4.x push
    reset drops the process queues and re-adds them 10 s later without any rebalance, which
    captures (running info) and add/remove lines see as a loss and a gain."""
    w = Window.partitionBy(*GQUEUE).orderBy("ts", F.col("change").desc())
    c = changes.withColumns({"_next_change": F.lead("change").over(w),
                             "_next_client": F.lead("client").over(w),
                             "_next_ts": F.lead("ts").over(w)})
    pairs = c.filter((F.col("change") == "lost") & (F.col("_next_change") == "gained")
                     & (F.col("_next_client") == F.col("client"))).select(
        *GQUEUE, "client", F.col("ts").alias("_lost_ts"),
        F.col("window_start_ts").alias("_lost_ws"), F.col("_next_ts").alias("_gained_ts"))
    r = resets.select("cluster", "group", "client", F.col("ts").alias("_r_ts"))
    hit = (pairs.join(r, on=["cluster", "group", "client"], how="inner")
           .filter((F.col("_r_ts") >= F.col("_lost_ws") - F.lit(int(window_ms)))
                   & (F.col("_r_ts") <= F.col("_gained_ts") + F.lit(int(window_ms))))
           .select(*GQUEUE, "client", "_lost_ts", "_gained_ts").distinct())
    marks = (hit.select(*GQUEUE, "client", F.col("_lost_ts").alias("ts"),
                        F.lit("lost").alias("change"))
             .unionByName(hit.select(*GQUEUE, "client", F.col("_gained_ts").alias("ts"),
                                     F.lit("gained").alias("change")))
             .distinct().withColumn("_m", F.lit(True)))
    return (changes.join(marks, on=[*GQUEUE, "client", "ts", "change"], how="left")
            .withColumn("cause", F.when(F.col("_m"), F.lit("reset"))
                        .otherwise(F.col("cause")))
            .select(*CHANGE_COLS))


def drop_reset_gaps(unowned: DataFrame, changes: DataFrame) -> DataFrame:
    """Unowned intervals from captures that are a reset's drop-and-re-add
    (:func:`mark_resets`): the interval starts at the reset loss of the queue."""
    gaps = (changes.filter((F.col("cause") == "reset") & (F.col("change") == "lost"))
            .select(*GQUEUE, F.col("ts").alias("start_ts")).distinct())
    return unowned.join(gaps, on=[*GQUEUE, "start_ts"], how="left_anti")


def _not_reset(df: DataFrame) -> DataFrame:
    """Changes or events that are not offset resets: a reset drops and re-adds a client's
    queues without changing the allocation, so it is no move, no unowned interval, no round."""
    if "cause" not in df.columns:
        return df
    return df.filter(~F.col("cause").eqNullSafe(F.lit("reset")))


def queue_moves(changes: DataFrame, window_ms: int) -> DataFrame:
    """A queue lost by one client and gained by another within ``window_ms``.

    ``gap_ms`` = gain time - loss time: positive = the queue had no owner for that long;
    negative = both clients held it (a duplicate-consumption window); 0 for moves seen between
    two captures (then ``window_start_ts`` bounds when it happened)."""
    changes = _not_reset(changes)
    g = changes.filter(F.col("change") == "gained").alias("g")
    lo = changes.filter(F.col("change") == "lost").alias("l")
    cond = [F.col("g." + c).eqNullSafe(F.col("l." + c)) for c in GQUEUE] + [
        F.col("g.client") != F.col("l.client"),
        F.abs(F.col("g.ts") - F.col("l.ts")) <= F.lit(window_ms)]
    j = g.join(lo, on=cond, how="inner")
    w = Window.partitionBy(*[F.col("g." + c) for c in GQUEUE], F.col("g.ts"), F.col("g.client")
                           ).orderBy(F.abs(F.col("g.ts") - F.col("l.ts")), F.col("l.ts").desc(),
                                     F.col("l.client"))  # ties: the same pick on every run
    j = j.withColumn("_rn", F.row_number().over(w)).filter(F.col("_rn") == 1)
    return j.select(
        F.col("g.ts").alias("ts"),
        F.least(F.col("g.window_start_ts"), F.col("l.ts")).alias("window_start_ts"),
        *[F.col("g." + c).alias(c) for c in GQUEUE],
        F.col("l.client").alias("from_client"), F.col("g.client").alias("to_client"),
        F.col("l.ts").alias("lost_ts"), (F.col("g.ts") - F.col("l.ts")).alias("gap_ms"),
        F.col("g.source_kind").alias("source_kind"))


def unowned_from_logs(changes: DataFrame) -> DataFrame:
    """From log changes: the periods in which no client held the queue. Ownership overlaps
    during a rebalance (RocketMQ's clients re-balance independently, so the new owner often
    gains a queue before the old one drops it), so a queue is unowned only from the loss that
    leaves it without any holder to the next gain; a loss that nothing follows is ``open``
    (the logs end, or the new owner's log was not given).

    The holders are counted per queue in time order (gains before losses at the same
    moment: a handover at one instant leaves no gap): a gain adds its client unless it
    already held the queue, a loss removes it; a client whose first change in the logs is a
    loss held the queue from before the logs began."""
    # client last: two clients changing the queue at one moment are ordered the same way on
    # every run, whatever the partitioning (a local and a cluster run must agree)
    order = [F.col("ts"), F.col("change"), F.col("client")]  # "gained" < "lost"
    w = Window.partitionBy(*GQUEUE).orderBy(*order)
    # (the next gain through the reversed order: running frames only)
    w_rev = Window.partitionBy(*GQUEUE).orderBy(*[c.desc() for c in order])
    gained, lost, prev = (F.col("change") == "gained", F.col("change") == "lost",
                          F.col("_prev"))
    delta = (F.when(gained & (prev.isNull() | (prev == "lost")), 1)
             .when(lost & (prev.isNull() | (prev == "gained")), -1).otherwise(0))
    c = (_not_reset(changes)
         .withColumn("_prev", F.lag("change").over(
             Window.partitionBy(*GQUEUE, "client").orderBy(*order)))
         .withColumns({"_d": delta,
                       "_held0": F.sum(F.when(lost & prev.isNull(), 1).otherwise(0))
                       .over(Window.partitionBy(*GQUEUE))})
         .withColumns({
             "_held": F.col("_held0") + F.sum("_d").over(
                 w.rowsBetween(Window.unboundedPreceding, 0)),
             "_next_ts": F.min(F.when(F.col("_d") == 1, F.col("ts"))).over(
                 w_rev.rowsBetween(Window.unboundedPreceding, -1))}))
    gap = c.filter((F.col("_d") == -1) & (F.col("_held") <= 0))
    return gap.select(
        *GQUEUE, F.col("ts").alias("since_ts"), F.col("ts").alias("start_ts"),
        F.col("_next_ts").alias("end_ts"), (F.col("_next_ts") - F.col("ts")).alias("duration_ms"),
        F.col("_next_ts").isNull().alias("open"), "source_kind")


def merge_unowned_sources(captured: DataFrame, logged: DataFrame, tol_ms: int,
                          owned: DataFrame | None = None) -> DataFrame:
    """Unowned intervals from captures and from logs together, one per queue and period: a
    capture interval (the queue had no owner in consecutive captures, so it lost its owner
    after ``since_ts`` and had one again by ``end_ts``) that a log interval of the same queue
    overlaps (give or take ``tol_ms``) is the same period; the log interval, which has the
    exact times, stays with both sources (``source_kind`` ``client-log+snapshot``), and when
    the logs never saw it end (the new owner's log was not given) it ends where the captures
    saw an owner again.

    ``owned`` (``GQUEUE, capture_ts`` of the captures that showed the queue with an owner):
    a log interval still open in the logs ends at the first such capture more than ``tol_ms``
    after it began, also when no capture interval matches it. The logs see only the clients
    whose logs were given, and two clients with one client id (two containers with the same
    ``IP@pid``: the demo's GID_DUP) are one holder to them: the loss of one looks like the
    queue's, while every capture shows the other holding it."""
    keys = GQUEUE
    cap = captured.select(*keys, F.col("since_ts").alias("_cs"), F.col("end_ts").alias("_ce"),
                          F.col("start_ts").alias("_cstart")).alias("c")
    lg = logged.alias("l")
    far = F.lit(1 << 62)
    cond = [F.col("c." + k).eqNullSafe(F.col("l." + k)) for k in keys] + [
        F.col("l.start_ts") <= F.coalesce(F.col("c._ce"), far) + F.lit(int(tol_ms)),
        F.coalesce(F.col("l.end_ts"), far) >= F.col("c._cs") - F.lit(int(tol_ms))]
    hits = cap.join(lg, on=cond, how="inner").select(
        *[F.col("l." + k).alias(k) for k in keys], F.col("l.start_ts").alias("start_ts"),
        "c._cstart", "c._ce")
    # the capture end of an open log interval: the first owned capture after the log's loss
    ends = (hits.filter(F.col("_ce").isNotNull() & (F.col("_ce") >= F.col("start_ts")))
            .groupBy(*keys, "start_ts").agg(F.min("_ce").alias("_cap_end")))
    matched_log = hits.select(*keys, "start_ts").distinct().withColumn("_both", F.lit(True))
    matched_cap = hits.select(*keys, F.col("_cstart").alias("start_ts")).distinct()
    rest = captured.join(matched_cap, on=[*keys, "start_ts"], how="left_anti")
    end = F.coalesce(F.col("end_ts"), F.col("_cap_end"))
    out = (logged.join(matched_log, on=[*keys, "start_ts"], how="left")
           .join(ends, on=[*keys, "start_ts"], how="left")
           .withColumns({
               "source_kind": F.when(F.col("_both") & ~F.col("source_kind").contains(
                   "snapshot"), F.concat(F.col("source_kind"), F.lit("+snapshot")))
               .otherwise(F.col("source_kind")),
               **_closed_by(end)})
           .drop("_both", "_cap_end"))
    out = out.select(*rest.columns)
    if owned is not None:
        o = owned.select(*keys, F.col("capture_ts").alias("_own_ts"))
        first = (out.filter(F.col("end_ts").isNull()).select(*keys, "start_ts")
                 .join(o, on=keys, how="inner")
                 .filter(F.col("_own_ts") > F.col("start_ts") + F.lit(int(tol_ms)))
                 .groupBy(*keys, "start_ts").agg(F.min("_own_ts").alias("_seen")))
        out = (out.join(first, on=[*keys, "start_ts"], how="left")
               .withColumns(_closed_by(F.coalesce(F.col("end_ts"), F.col("_seen"))))
               .select(*rest.columns))
    return rest.unionByName(out)


def _closed_by(end: Column) -> dict[str, Column]:
    """An unowned interval's ``end_ts``, ``duration_ms`` and ``open`` once ``end`` (over its
    row before) ends it: the columns of one projection."""
    return {"end_ts": end,
            "duration_ms": F.when(end.isNotNull(), end - F.col("start_ts"))
            .otherwise(F.col("duration_ms")),
            "open": end.isNull()}


def rebalance_rounds(events: DataFrame, gap_ms: int) -> DataFrame:
    """Group a group's events into rounds: events closer than ``gap_ms`` to the previous one
    (every member re-balances within one RebalanceService interval, 20 s, of a change)."""
    w = Window.partitionBy("cluster", "group").orderBy("ts")
    gap = F.col("ts") - F.lag("ts").over(w)
    e = (_not_reset(events)
         .withColumn("_new", F.when(gap.isNull() | (gap > F.lit(gap_ms)), 1).otherwise(0))
         .withColumn("_round", F.sum("_new").over(w.rowsBetween(Window.unboundedPreceding, 0))))
    return e.groupBy("cluster", "group", "_round").agg(
        F.min("ts").alias("start_ts"), F.max("ts").alias("end_ts"),
        F.count(F.lit(1)).alias("events"),
        F.array_sort(F.collect_set("client")).alias("clients"),
        F.sum("n_gained").alias("queues_gained"), F.sum("n_lost").alias("queues_lost"),
    ).drop("_round")


def rebalance_storms(rounds: DataFrame, min_rounds: int, window_ms: int,
                     round_max_ms: int = 0) -> DataFrame:
    """Storms of a group, by either of two rules, whichever fires first:

    * ``rounds``: at least ``min_rounds`` rebalance rounds start within ``window_ms``
      (separate changes in quick succession: a rolling restart, a flapping member);
    * ``long-round``: one round lasts longer than ``round_max_ms`` (0: off). A round is the
      events of a group each closer than one RebalanceService interval (20 s) to the previous
      one, and one membership change settles within about one interval (every member re-runs
      its allocation on the broker's notification or its next 20-s tick:
      ``RebalanceService``, ``rocketmq.client.rebalance.waitInterval``); a round that goes on
      for several intervals is continuous churn (members whose views or strategies disagree
      take queues from each other on every tick), which the first rule never sees: it is one
      endless round.

    Overlapping periods merge into one storm (start, end, rounds, events, clients, ``rule``:
    the rules that fired, ``rounds``, ``long-round`` or ``long-round+rounds``)."""
    keys = ["cluster", "group"]
    w = Window.partitionBy(*keys).orderBy("start_ts").rangeBetween(-window_ms, 0)
    r = rounds.withColumns({"_cnt": F.count(F.lit(1)).over(w),
                            "_from": F.min("start_ts").over(w)})
    trig = r.filter(F.col("_cnt") >= F.lit(min_rounds)).select(
        *keys, F.col("_from").alias("s"), F.col("end_ts").alias("e"),
        F.lit("rounds").alias("_rule"))
    if round_max_ms > 0:
        trig = trig.unionByName(rounds.filter(
            F.col("end_ts") - F.col("start_ts") > F.lit(int(round_max_ms))).select(
            *keys, F.col("start_ts").alias("s"), F.col("end_ts").alias("e"),
            F.lit("long-round").alias("_rule")))
    wo = Window.partitionBy(*keys).orderBy("s", "e", "_rule")
    trig = (trig.withColumn("_maxe", F.max("e").over(wo.rowsBetween(Window.unboundedPreceding,
                                                                      -1)))
            .withColumn("_new", F.when(F.col("_maxe").isNull() | (F.col("s") > F.col("_maxe")),
                                       1).otherwise(0))
            .withColumn("_storm", F.sum("_new").over(wo.rowsBetween(Window.unboundedPreceding,
                                                                     0))))
    spans = trig.groupBy(*keys, "_storm").agg(
        F.min("s").alias("s_start"), F.max("e").alias("s_end"),
        F.array_join(F.array_sort(F.collect_set("_rule")), "+").alias("rule"))
    j = spans.join(rounds, on=keys, how="inner").filter(
        (F.col("s_start") <= F.col("start_ts")) & (F.col("start_ts") <= F.col("s_end")))
    return j.groupBy(*keys, "s_start", "s_end", "rule").agg(
        F.count(F.lit(1)).alias("rounds"), F.sum("events").alias("events"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("clients")))).alias("clients"),
    ).select(*keys, F.col("s_start").alias("start_ts"),
             F.col("s_end").alias("end_ts"),
             (F.col("s_end") - F.col("s_start")).alias("duration_ms"), "rounds", "events",
             "clients", "rule")


LOCK_EVENTS = ("acquire", "takeover", "conflict", "unlock", "unlock_conflict",
               "unlock_not_locked", "unlock_no_group", "client_lock_ok", "client_lock_failed",
               "client_unlock", "add_lock_failed")


def lock_events(logs: DataFrame) -> DataFrame:
    """Lock history, one row per queue: broker lock.log acquisitions, takeovers of expired
    locks (``prev_client`` = the old holder), refusals and releases, plus the clients' own
    lock results. ``takeover`` marks "expired ... new client id" / 4.x "lock expired, I got
    it"."""
    e = logs.filter(F.col("event").isin(*LOCK_EVENTS))
    e = e.select("ts", "cluster", "group", "event", "client", "prev_client", "source_kind",
                 "source", "client_key",
                 F.explode_outer("mqs").alias("_m"))
    return e.select(
        "ts", "cluster", "group", F.col("_m")["topic"].alias("topic"),
        F.col("_m")["broker"].alias("broker"), F.col("_m")["queue_id"].alias("queue_id"),
        "event", F.coalesce(F.col("client"), F.when(
            F.col("source_kind") == "client-log", F.col("client_key"))).alias("client"),
        "prev_client", (F.col("event") == "takeover").alias("takeover"), "source_kind",
        "source")
