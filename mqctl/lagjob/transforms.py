"""The lag job's transforms: pure ``DataFrame -> DataFrame`` functions (built-in Spark functions
only, no Python UDFs), each testable with small inline data.

Vocabulary:

* an **observation** is one queue of one group at one capture (``OBS_FIELDS`` plus
  ``capture_ts``); ``observed_ts`` is when that source captured it, ``capture_ts`` the aligned
  capture it belongs to (:func:`capture_index`);
* the **broker history** of a queue is its (time, max offset) points from every source;
* a **change** is one queue gained or lost by one client; an **event** groups the changes of a
  client (and topic) at one moment; a **round** groups a group's events that follow each other
  closely; a **storm** is many rounds in a short window.

Method notes (``docs/exports.md`` sections 3-5 have the full rules):

* time lag, exact when the capture carries it (snapshot ``delay_ms`` from
  QUERY_CONSUME_TIME_SPAN) and 0 when caught up; otherwise interpolated like
  kafka-lag-exporter (``LookupTable.scala``) but anchored on captured points: the expected
  store time of the first unconsumed message, between the two captures whose max offsets
  bracket it (:func:`estimate_time_lag`); a lower bound when it predates the first capture;
* status per queue over the last ``window`` captures follows Burrow
  (``core/internal/evaluator/caching.go``), adapted to RocketMQ, which has no commit
  timestamps (:func:`queue_status`).
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

# Burrow's partition statuses, in mqctl's severity order (group status = the worst; thresholds
# compare these). Burrow ranks OK < WARN < STOP < STALL < REWIND and caps a group at ERR; mqctl
# ranks STOP worst (nobody is consuming: every message waits) and REWIND below STALL (the
# consumer is moving, re-reading messages) and keeps the queue status as the group's.
STATUSES = ("OK", "WARN", "REWIND", "STALL", "STOP")
SEVERITY = {s: i for i, s in enumerate(STATUSES)}

# which source wins when two describe the same queue at the same capture
SOURCE_PRIORITY = {"snapshot": 0, "consumer-progress": 1, "broker-consume-stats": 2,
                   "consumer-offset": 3}

QUEUE = ["cluster", "topic", "broker", "queue_id"]
GQUEUE = ["cluster", "group", "topic", "broker", "queue_id"]
OBS_KEY = [*GQUEUE, "capture_ts"]
DAY_MS = 86_400_000


# --------------------------------------------------------------------------------------------
# small helpers

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


# --------------------------------------------------------------------------------------------
# reading the canonical snapshot

SNAPSHOT_OBS = ["observed_ts", "cluster", "group", "topic", "broker", "queue_id",
                "broker_offset", "min_offset", "consumer_offset", "pull_offset",
                "last_timestamp", "delay_ms", "owner", "owners", "members", "online", "orderly",
                "source_kind", "source"]
# their types (an empty frame of observations)
SNAPSHOT_OBS_DDL = ("observed_ts long, cluster string, group string, topic string, "
                    "broker string, queue_id int, broker_offset long, min_offset long, "
                    "consumer_offset long, pull_offset long, last_timestamp long, "
                    "delay_ms long, owner string, owners array<string>, members int, "
                    "online boolean, orderly boolean, source_kind string, source string")
SNAPSHOT_BAD = ["source", "source_kind", "block", "rid", "reason", "detail", "content",
                "observed_ts"]


def parse_snapshot_records(lines: DataFrame, schema: object,
                           run_ms: int | None = None) -> DataFrame:
    """JSON Lines (``source, block, rid, mtime_ms, value``) -> one row per non-blank line with
    the observation columns (``SNAPSHOT_OBS``) and, for a bad line, ``reason``, ``detail``,
    ``content`` and its position (``block``, ``rid``). Parse once, split with
    :func:`split_snapshot_records`.

    A line is bad when it is not a JSON object, a field has the wrong type, the ``schema`` is
    not ``mqctl.snapshot/1``, a required field is missing, or a value is outside the plausible
    range of :mod:`mqctl.lagjob.parsers` (``value out of range``: a capture time before 2010
    or more than a day after ``run_ms``, a number beyond 2^63-1, a queue id above 65535;
    ``negative value``: a negative queue id, offset or store time). The detail names the field
    and its value. Blank lines are skipped (not errors). Every row that passes keeps the
    transforms' arithmetic within a long (see :func:`with_lag`, :func:`estimate_time_lag`).
    """
    parsed = (lines.filter(F.trim(F.col("value")) != "")
              .withColumn("j", F.from_json(F.col("value"), schema,  # type: ignore[arg-type]
                                           {"mode": "PERMISSIVE",
                                            "columnNameOfCorruptRecord": "_corrupt"})))
    return check_snapshot_records(parsed, run_ms)


def check_snapshot_records(parsed: DataFrame, run_ms: int | None = None) -> DataFrame:
    """The checks and columns of :func:`parse_snapshot_records` over rows already parsed into
    the struct ``j`` (``schemas.SNAPSHOT_JSON``), with ``value`` (the line, or at least the
    corrupt record text when ``j._corrupt`` is set), ``source``, ``block`` and ``rid``.
    :func:`mqctl.lagjob.readers.read_snapshot_json` gives such rows straight from Spark's
    JSON reader (no text pass, no ``from_json``)."""
    from mqctl.lagjob.parsers import (
        FUTURE_SLACK_MS,
        MIN_CAPTURE_MS,
        QUEUE_ID_MAX,
        SNAPSHOT_NON_NEGATIVE,
    )
    from mqctl.lagjob.schemas import SNAPSHOT_NUMBERS, SNAPSHOT_REQUIRED

    j = F.col("j")

    def raw(c: str) -> Column:
        return F.get_json_object(F.col("value"), "$." + c)

    def first(checks: list[tuple[Column, Column]]) -> Column:
        out = F.lit(None).cast("string")
        for cond, text in reversed(checks):
            out = F.when(cond, text).otherwise(out)
        return out

    # a number that did not fit its type (a long beyond 2^63-1, an int queue id) makes the
    # whole line unparsable; name it instead of a generic "wrong type"
    too_big = first([((j.isNull() | j["_corrupt"].isNotNull()) & raw(c).rlike(r"^-?\d+$")
                      & (j.isNull() | j[c].isNull()),
                      F.concat(F.lit(c + "="), raw(c), F.lit(": beyond 2^63-1" if t == "long"
                                                            else ": not a queue id")))
                     for c, t in SNAPSHOT_NUMBERS])
    hi = (run_ms if run_ms is not None else 0) + FUTURE_SLACK_MS
    ts = j["capture_ts"]
    ts_bad = (ts < MIN_CAPTURE_MS) | (F.lit(run_ms is not None) & (ts > F.lit(hi)))
    out_of_range = first([
        (ts_bad,
         F.concat(F.lit("capture_ts="), ts.cast("string"),
                  F.lit(": before 2010-01-01 or more than a day after the run"))),
        (j["queue_id"] > QUEUE_ID_MAX,
         F.concat(F.lit("queue_id="), j["queue_id"].cast("string"),
                  F.lit(f": above {QUEUE_ID_MAX}")))])
    negative = first([(j[c] < 0, F.concat(F.lit(c + "="), j[c].cast("string"),
                                          F.lit(": must be >= 0")))
                      for c in SNAPSHOT_NON_NEGATIVE])
    missing = F.concat_ws(", ", *[F.when(j[c].isNull(), F.lit(c)) for c in SNAPSHOT_REQUIRED])
    reason = (F.when(too_big.isNotNull(), F.lit("value out of range"))
              .when(j.isNull() | j["_corrupt"].isNotNull(), F.lit("malformed JSON"))
              .when(j["schema"].isNull() | ~j["schema"].rlike(r"^mqctl\.snapshot/1(\.\d+)?$"),
                    F.lit("unsupported schema"))
              .when(missing != "", F.lit("missing field"))
              .when(out_of_range.isNotNull(), F.lit("value out of range"))
              .when(negative.isNotNull(), F.lit("negative value")))
    detail = (F.when(too_big.isNotNull(), too_big)
              .when(reason == "malformed JSON",
                    F.lit("not a JSON object, or a field has the wrong type"))
              .when(reason == "unsupported schema",
                    F.concat(F.lit("schema="), F.coalesce(j["schema"], F.lit("(none)"))))
              .when(reason == "missing field", missing)
              .when(reason == "value out of range", out_of_range)
              .otherwise(negative))
    tagged = parsed.withColumn("reason", reason)
    is_bad = F.col("reason").isNotNull()
    return tagged.select(
        # an implausible time must not date the quarantine row (its file's capture does)
        F.when(ts_bad, F.lit(None)).otherwise(ts).alias("observed_ts"),
        F.coalesce(j["cluster"], F.lit("")).alias("cluster"),
        j["group"].alias("group"), j["topic"].alias("topic"), j["broker"].alias("broker"),
        j["queue_id"].alias("queue_id"), j["broker_offset"].alias("broker_offset"),
        j["min_offset"].alias("min_offset"), j["consumer_offset"].alias("consumer_offset"),
        j["pull_offset"].alias("pull_offset"), j["last_timestamp"].alias("last_timestamp"),
        j["delay_ms"].alias("delay_ms"), j["owner"].alias("owner"), j["owners"].alias("owners"),
        F.when(F.size(j["members"]) >= 0, F.size(j["members"])).cast("int").alias("members"),
        j["online"].alias("online"), j["orderly"].alias("orderly"),
        F.lit("snapshot").alias("source_kind"), "source",
        F.when(is_bad, F.col("block")).alias("block"), F.when(is_bad, F.col("rid")).alias("rid"),
        "reason", F.when(is_bad, detail).alias("detail"),
        F.when(is_bad, F.substring("value", 1, 500)).alias("content"))


def split_snapshot_records(records: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines) of :func:`parse_snapshot_records`."""
    obs = records.filter(F.col("reason").isNull()).select(*SNAPSHOT_OBS)
    bad = records.filter(F.col("reason").isNotNull()).select(*SNAPSHOT_BAD)
    return obs, bad


def parse_snapshot_lines(lines: DataFrame, schema: object) -> tuple[DataFrame, DataFrame]:
    """(observations, bad lines) of snapshot JSON Lines (see :func:`parse_snapshot_records`)."""
    return split_snapshot_records(parse_snapshot_records(lines, schema))


def line_numbers(bad: DataFrame, lines: DataFrame) -> DataFrame:
    """Replace ``block, rid`` of bad lines by their 1-based line number in the file.

    ``lines`` is the full read (``source, block, rid``) with ``rid`` from
    ``monotonically_increasing_id()`` taken right after the scan: rows of one file split
    (``_metadata.file_block_start``) are consecutive ids, so line = lines in earlier splits of
    the file + position inside the split. Only per-split counts are aggregated.
    """
    stats = lines.groupBy("source", "block").agg(F.count(F.lit(1)).alias("n"),
                                                   F.min("rid").alias("rid0"))
    w = Window.partitionBy("source").orderBy("block").rowsBetween(Window.unboundedPreceding, -1)
    stats = stats.withColumn("base", F.coalesce(F.sum("n").over(w), F.lit(0)))
    out = (bad.join(stats, on=["source", "block"], how="left")
           .withColumn("line", (F.col("base") + F.col("rid") - F.col("rid0") + 1).cast("long")))
    return out.drop("block", "rid", "n", "rid0", "base")


# --------------------------------------------------------------------------------------------
# captures

def capture_index(times: DataFrame, align_ms: int) -> DataFrame:
    """Distinct ``(cluster, observed_ts)`` -> ``capture_ts``: consecutive observation times of
    a cluster closer than ``align_ms`` form one capture (per-broker exports taken by the same
    cron run a few seconds apart), named by its first time. ``align_ms=0``: exact times."""
    d = times.select("cluster", "observed_ts").distinct()
    w = Window.partitionBy("cluster").orderBy("observed_ts")
    gap = F.col("observed_ts") - F.lag("observed_ts").over(w)
    d = d.withColumn("new", F.when(gap.isNull() | (gap > F.lit(align_ms)), 1).otherwise(0))
    d = d.withColumn("session", F.sum("new").over(w.rowsBetween(Window.unboundedPreceding, 0)))
    ws = Window.partitionBy("cluster", "session")
    return d.select("cluster", "observed_ts", F.min("observed_ts").over(ws).alias("capture_ts"))


def with_capture(df: DataFrame, index: DataFrame) -> DataFrame:
    return df.join(F.broadcast(index), on=["cluster", "observed_ts"], how="left")


def dedupe_observations(obs: DataFrame) -> DataFrame:
    """One row per queue, group and capture: snapshot > consumerProgress > brokerConsumeStats
    > consumerOffset.json, then the latest observation, then the larger broker offset."""
    w = Window.partitionBy(*OBS_KEY).orderBy(
        _priority(F.col("source_kind")), F.col("observed_ts").desc(),
        F.col("broker_offset").desc_nulls_last(), F.col("source"))
    return (obs.withColumn("_rn", F.row_number().over(w)).filter(F.col("_rn") == 1)
            .drop("_rn"))


# --------------------------------------------------------------------------------------------
# broker offsets and lag

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


def fill_broker_offsets(obs: DataFrame, history: DataFrame, max_skew_ms: int) -> DataFrame:
    """Give observations without a max offset (consumerOffset.json) the nearest captured max
    offset of the same queue within ``max_skew_ms`` (topicStatus, or another source).

    Adds ``broker_offset_ts`` (when that max offset was captured; the observation's own time
    when it carried one). The time match is a bucketed equi-join (buckets of ``max_skew_ms``),
    so its cost does not grow with the number of captures per queue.
    """
    has = obs.filter(F.col("broker_offset").isNotNull()).withColumn(
        "broker_offset_ts", F.col("observed_ts"))
    need = obs.filter(F.col("broker_offset").isNull()).drop("broker_offset")
    bucket = max(1, int(max_skew_ms))
    h = (history.withColumn("_b0", F.floor(F.col("t") / bucket))
         .withColumn("_b", F.explode(F.array(F.col("_b0") - 1, F.col("_b0"), F.col("_b0") + 1)))
         .select(*[F.col(c).alias("h_" + c) for c in QUEUE], "_b", F.col("t").alias("h_t"),
                 F.col("B").alias("h_B"), F.col("min_offset").alias("h_min")))
    n = need.withColumn("_b", F.floor(F.col("observed_ts") / bucket))
    cond = [n[c] == h["h_" + c] for c in QUEUE] + [
        n["_b"] == h["_b"], F.abs(h["h_t"] - n["observed_ts"]) <= F.lit(max_skew_ms)]
    j = n.join(h, on=cond, how="left")
    w = Window.partitionBy(*OBS_KEY).orderBy(
        F.abs(F.col("h_t") - F.col("observed_ts")).asc_nulls_last(), F.col("h_t").desc())
    j = j.withColumn("_rn", F.row_number().over(w)).filter(F.col("_rn") == 1)
    filled = (j.withColumn("broker_offset", F.col("h_B"))
              .withColumn("min_offset", F.coalesce(F.col("min_offset"), F.col("h_min")))
              .withColumn("broker_offset_ts", F.col("h_t"))
              .select(*has.columns))
    return has.unionByName(filled)


def with_lag(obs: DataFrame) -> DataFrame:
    """``lag`` = max offset - consumer offset, clamped at 0 (a consumer offset read after the
    max offset can be ahead; Burrow #271 clamps too); ``inflight`` = pull - consumer."""
    raw = F.col("broker_offset") - F.col("consumer_offset")
    return (obs.withColumn("lag", F.when(raw.isNull(), F.lit(None).cast("long"))
                           .otherwise(F.greatest(raw, F.lit(0)).cast("long")))
            .withColumn("inflight", (F.col("pull_offset") - F.col("consumer_offset"))
                        .cast("long")))


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
               .withColumn("online", F.coalesce(F.col("online"), F.col("_m_online")))
               .withColumn("members", F.coalesce(F.col("members"), F.col("_m_members")))
               .drop("_m_members", "_m_online"))
    if group_cfg is not None:
        g = (group_cfg.groupBy("cluster", "broker", "group", "capture_ts")
             .agg(F.min(F.col("consume_enable").cast("int")).alias("_g_enable"),
                  F.max(F.col("orderly").cast("int")).alias("_g_orderly")))
        out = (out.join(g, on=["cluster", "broker", "group", "capture_ts"], how="left")
               .withColumn("orderly", F.coalesce(F.col("orderly"), F.col("_g_orderly") == 1))
               .withColumn("consume_enable", F.col("_g_enable") == 1)
               .drop("_g_enable", "_g_orderly"))
    if topic_cfg is not None:
        t = (topic_cfg.groupBy("cluster", "broker", "topic", "capture_ts")
             .agg(F.max(F.col("orderly").cast("int")).alias("_t_orderly")))
        out = (out.join(t, on=["cluster", "broker", "topic", "capture_ts"], how="left")
               .withColumn("orderly", F.coalesce(F.col("orderly"), F.col("_t_orderly") == 1))
               .drop("_t_orderly"))
    return out


# --------------------------------------------------------------------------------------------
# status (Burrow) and rates

def queue_status(lag: DataFrame, window: int, allowed_lag: int = 0,
                 allowed_lag_seconds: float = 0.0) -> DataFrame:
    """Per queue and capture: ``status`` over the last ``window`` captures with a known lag,
    ``complete`` (= samples / window), and ``consume_rate`` / ``produce_rate`` (messages/s
    since the previous capture; negative moves count as 0).

    Burrow's ``calculatePartitionStatus`` (linkedin/Burrow ``core/internal/evaluator/
    caching.go``, 1.9), in its order, only while the current sample is not caught up:

    1. STOP. Burrow's test ("no commit for longer than the window spans", unless a broker
       offset of the window is <= the current consumer offset: ``checkIfRecentLagZero``) needs
       commit timestamps, which RocketMQ does not keep (clients commit every 5 s whether or not
       they moved). Adapted: the group is offline at this capture (no members in the snapshot
       or in consumerProgress' group list, or ``consumeEnable=false`` in
       subscriptionGroup.json): membership is known, so Burrow's grace does not apply; or, when
       membership is unknown (store files, mqadmin captures), the offset did not move over a
       full window while the lag grew, with Burrow's grace;
    2. REWIND: the offset decreased between two samples of the window and never got back to
       where it was before the (first) decrease (``checkIfOffsetsRewind`` and
       ``checkIfRewindRecovered``); checked before rule 3, as in Burrow, so a rewind to
       earliest after a caught-up sample is not hidden by it;
    3. OK if the sample was caught up at any point of the window;
    4. STALL: the offset never moved in the window;
    5. WARN: the lag never decreased between consecutive samples;
    6. else OK.

    "Caught up" (Burrow's lag <= ``allowed-lag``) also counts a sample whose time lag is at
    most ``allowed_lag_seconds``: RocketMQ consumers commit every 5 s (and with each pull), so
    a healthy group's committed offset always trails the head by a few seconds of messages;
    with Burrow's literal rule such a group would be WARN forever.

    Rules 2, 4 and 5 need two samples: a single capture can only be OK or STOP.
    """
    n_win = max(1, int(window))
    key = GQUEUE
    known = lag.filter(F.col("lag").isNotNull())
    unknown = lag.filter(F.col("lag").isNull())
    w = Window.partitionBy(*key).orderBy("capture_ts")
    frame = w.rowsBetween(-(n_win - 1), 0)
    online_eff = F.when(F.col("consume_enable") == F.lit(False), F.lit(False)).otherwise(
        F.col("online"))
    caught_up = F.col("lag") <= F.lit(int(allowed_lag))
    if allowed_lag_seconds > 0:
        # a lower bound of the time lag proves nothing about being caught up
        caught_up = caught_up | (F.col("lag_seconds").isNotNull()
                                 & ~F.coalesce(F.col("lower_bound"), F.lit(False))
                                 & (F.col("lag_seconds") <= F.lit(float(allowed_lag_seconds))))
    s = (known.withColumn("_ok", caught_up)
         .withColumn("_offs", F.collect_list("consumer_offset").over(frame))
         .withColumn("_lags", F.collect_list("lag").over(frame))
         .withColumn("_oks", F.collect_list("_ok").over(frame))
         .withColumn("_bros", F.collect_list("broker_offset").over(frame))
         .withColumn("_prev_c", F.lag("consumer_offset").over(w))
         .withColumn("_prev_b", F.lag("broker_offset").over(w))
         .withColumn("_prev_t", F.lag("observed_ts").over(w))
         .withColumn("_online", online_eff))
    n = F.size("_offs")
    cur = F.element_at("_lags", -1)
    first_lag = F.element_at("_lags", 1)
    all_same = F.array_min("_offs") == F.array_max("_offs")
    two = F.expr("sequence(2, greatest(size(_offs), 2))")
    # the first decrease (index i, 1-based), and whether a later sample got back to offs[i-1]
    first_dec = F.when(n >= 2, F.array_min(F.filter(two, lambda i: F.element_at("_offs", i)
                                                    < F.element_at("_offs", i - 1))))
    s = s.withColumn("_dec", first_dec)
    rewind = (n >= 2) & F.col("_dec").isNotNull() & ~F.exists(
        F.slice("_offs", F.col("_dec"), n),
        lambda o: o >= F.element_at("_offs", F.col("_dec") - 1))
    any_ok = F.exists("_oks", lambda x: x)
    never_dec = (n >= 2) & F.forall(two, lambda i: F.element_at("_lags", i)
                                    >= F.element_at("_lags", i - 1))
    # Burrow's checkIfRecentLagZero: a max offset of the window at or below the current offset
    recent_zero = F.exists("_bros", lambda b: b <= F.col("consumer_offset"))
    stopped = ((F.col("_online") == F.lit(False))
               | (F.col("_online").isNull() & (n == n_win) & (n >= 2) & all_same
                  & (cur > first_lag) & ~recent_zero))
    status = (F.when(F.col("_ok"), "OK").when(stopped, "STOP").when(rewind, "REWIND")
              .when(any_ok, "OK").when((n >= 2) & all_same, "STALL")
              .when(never_dec, "WARN").otherwise("OK"))
    dt = (F.col("observed_ts") - F.col("_prev_t")) / 1000.0
    s = (s.withColumn("status", status)
         .withColumn("complete", (n / F.lit(float(n_win))).cast("double"))
         .withColumn("window_samples", n.cast("int"))
         .withColumn("consume_rate", F.when(dt > 0, F.greatest(
             F.col("consumer_offset") - F.col("_prev_c"), F.lit(0)) / dt))
         .withColumn("produce_rate", F.when(dt > 0, F.greatest(
             F.col("broker_offset") - F.col("_prev_b"), F.lit(0)) / dt))
         .drop("_ok", "_oks", "_offs", "_lags", "_bros", "_dec", "_prev_c", "_prev_b",
               "_prev_t", "_online"))
    u = (unknown.withColumn("status", F.lit(None).cast("string"))
         .withColumn("complete", F.lit(None).cast("double"))
         .withColumn("window_samples", F.lit(None).cast("int"))
         .withColumn("consume_rate", F.lit(None).cast("double"))
         .withColumn("produce_rate", F.lit(None).cast("double")))
    return s.unionByName(u)


def group_topic_status(queues: DataFrame) -> DataFrame:
    """Per capture, group and topic: totals, maxima, rates, the worst queue status, and the
    group's status (worst over its topics at that capture)."""
    q = queues.withColumn("_sev", severity(F.col("status")))
    agg = q.groupBy("cluster", "group", "topic", "capture_ts").agg(
        F.count(F.lit(1)).alias("queues"),
        F.count("lag").alias("queues_known"),
        F.try_sum("lag").alias("total_lag"),
        F.max("lag").alias("max_lag"),
        F.max("lag_seconds").alias("lag_seconds"),
        F.max_by("lag_seconds_source", F.coalesce(F.col("lag_seconds"), F.lit(-1.0)))
         .alias("lag_seconds_source"),
        F.max(F.col("estimated").cast("int")).alias("_est"),
        F.sum("consume_rate").alias("consume_rate"),
        F.sum("produce_rate").alias("produce_rate"),
        F.max("_sev").alias("status_code"),
        # Burrow's group complete: the fraction of queues whose window is full
        F.avg((F.col("complete") >= F.lit(1.0)).cast("double")).alias("complete"),
        F.max(F.col("online").cast("int")).alias("_online"),
        F.max("members").alias("members"),
        F.sum(F.when(F.col("owner").isNull() & F.col("lag").isNotNull(), 1).otherwise(0))
         .alias("_no_owner"),
        F.max("observed_ts").alias("observed_ts"),
    )
    wg = Window.partitionBy("cluster", "group", "capture_ts")
    return (agg.withColumn("status", status_name(F.col("status_code")))
            .withColumn("group_status_code", F.max("status_code").over(wg))
            .withColumn("group_status", status_name(F.col("group_status_code")))
            .withColumn("estimated", F.col("_est") == 1)
            .withColumn("online", F.when(F.col("_online").isNull(), F.lit(None).cast("boolean"))
                        .otherwise(F.col("_online") == 1))
            .drop("_est", "_online", "_no_owner"))


def latest_status(group_topic: DataFrame, rebalances: DataFrame | None = None) -> DataFrame:
    """The last capture of every group and topic, with the run's peaks (``peak_lag``,
    ``peak_lag_seconds``) and, when given, the group's rebalance event count."""
    w_all = Window.partitionBy("cluster", "group", "topic")
    w = w_all.orderBy(F.col("capture_ts").desc())
    out = (group_topic.withColumn("peak_lag", F.max("total_lag").over(w_all))
           .withColumn("peak_lag_seconds", F.max("lag_seconds").over(w_all))
           .withColumn("captures", F.count(F.lit(1)).over(w_all))
           .withColumn("_rn", F.row_number().over(w)).filter(F.col("_rn") == 1).drop("_rn"))
    if rebalances is not None:
        r = _not_reset(rebalances).groupBy("cluster", "group").agg(
            F.count(F.lit(1)).alias("rebalances"))
        out = out.join(r, on=["cluster", "group"], how="left").withColumn(
            "rebalances", F.coalesce(F.col("rebalances"), F.lit(0)).cast("long"))
    return out


def latest_groups(group_topic: DataFrame, rebalances: DataFrame | None = None) -> DataFrame:
    """Per group: its latest capture's totals over topics and the group status."""
    w = Window.partitionBy("cluster", "group").orderBy(F.col("capture_ts").desc())
    last = (group_topic.withColumn("_last", F.first("capture_ts").over(w))
            .filter(F.col("capture_ts") == F.col("_last")))
    out = last.groupBy("cluster", "group", "capture_ts").agg(
        F.count(F.lit(1)).alias("topics"), F.try_sum("total_lag").alias("total_lag"),
        F.max("lag_seconds").alias("lag_seconds"),
        F.max("group_status_code").alias("group_status_code"),
        # the fraction of the group's queues (over its topics) whose window is full
        (F.sum(F.col("complete") * F.col("queues_known"))
         / F.sum(F.when(F.col("complete").isNotNull(), F.col("queues_known")))).alias("complete"),
        F.max("members").alias("members"),
        F.max(F.col("online").cast("int")).alias("_online"))
    out = (out.withColumn("group_status", status_name(F.col("group_status_code")))
           .withColumn("online", F.when(F.col("_online").isNull(),
                                        F.lit(None).cast("boolean"))
                       .otherwise(F.col("_online") == 1)).drop("_online"))
    if rebalances is not None:
        r = _not_reset(rebalances).groupBy("cluster", "group").agg(
            F.count(F.lit(1)).alias("rebalances"))
        out = out.join(r, on=["cluster", "group"], how="left").withColumn(
            "rebalances", F.coalesce(F.col("rebalances"), F.lit(0)).cast("long"))
    return out


# --------------------------------------------------------------------------------------------
# rebalance history

CHANGE_COLS = ["ts", "window_start_ts", "cluster", "group", "topic", "broker", "queue_id",
               "client", "change", "source_kind", "source", "strategy", "cid_all", "mq_all",
               "cause"]


def owner_track(obs: DataFrame) -> DataFrame:
    """Each queue's owner across the captures where ownership is known (snapshots;
    consumerProgress ``-s true``): a group-topic capture counts only when some queue has an
    owner, or the group is offline (then every queue is truly unowned). One pass over the data
    shared by :func:`changes_from_track` and :func:`unowned_from_track`."""
    cols = [*GQUEUE, "capture_ts", "owner", "online", "source_kind", "source"]
    known = Window.partitionBy("cluster", "group", "topic", "capture_ts")
    o = (obs.select(*cols)
         .withColumn("_known", (F.max(F.col("owner").isNotNull().cast("int")).over(known) == 1)
                     | (F.col("online") == F.lit(False)))
         .filter(F.col("_known")).drop("_known"))
    w = Window.partitionBy(*GQUEUE).orderBy("capture_ts")
    none = F.col("owner").isNull().cast("int")
    return (o.withColumn("_prev_owner", F.lag("owner").over(w))
            .withColumn("_prev_ts", F.lag("capture_ts").over(w))
            .withColumn("_next_ts", F.lead("capture_ts").over(w))
            .withColumn("_none", none)
            .withColumn("_island", F.sum(F.when(none != F.lag(none).over(w), 1).otherwise(0))
                        .over(w.rowsBetween(Window.unboundedPreceding, 0))))


def changes_from_track(track: DataFrame) -> DataFrame:
    """Owner changes between consecutive captures: the new owner gained the queue, the
    previous one lost it (``window_start_ts`` = the previous capture: it happened in between).
    """
    o = track.filter(F.col("_prev_ts").isNotNull()
                     & ~F.col("owner").eqNullSafe(F.col("_prev_owner")))
    base: list[Any] = [F.col("capture_ts").alias("ts"), F.col("_prev_ts").alias("window_start_ts"),
                       "cluster", "group", "topic", "broker", "queue_id"]
    tail: list[Any] = [F.lit(None).cast("string").alias("strategy"),
                       F.lit(None).cast("int").alias("cid_all"),
                       F.lit(None).cast("int").alias("mq_all"),
                       F.lit("rebalance").alias("cause")]
    gained = o.filter(F.col("owner").isNotNull()).select(
        *base, F.col("owner").alias("client"), F.lit("gained").alias("change"),
        F.col("source_kind"), F.col("source"), *tail)
    lost = o.filter(F.col("_prev_owner").isNotNull()).select(
        *base, F.col("_prev_owner").alias("client"), F.lit("lost").alias("change"),
        F.col("source_kind"), F.col("source"), *tail)
    return gained.unionByName(lost)


def unowned_from_track(track: DataFrame) -> DataFrame:
    """Intervals in which a queue had no owner in consecutive captures.

    ``start_ts`` = first capture without an owner, ``since_ts`` = the last capture that still
    had one (the queue lost its owner in between), ``end_ts`` = the capture where an owner
    appeared again (null while still unowned: ``open``)."""
    isl = track.groupBy(*GQUEUE, "_island").agg(
        F.max("_none").alias("_none"), F.min("capture_ts").alias("start_ts"),
        F.max("capture_ts").alias("last_ts"),
        F.min_by("_prev_ts", F.col("capture_ts")).alias("since_ts"),
        F.max_by("_next_ts", F.col("capture_ts")).alias("end_ts"),
        F.first("source_kind").alias("source_kind"))
    isl = isl.filter(F.col("_none") == 1)
    return isl.select(
        *GQUEUE, "since_ts", "start_ts", "end_ts",
        F.when(F.col("end_ts").isNotNull(), F.col("end_ts") - F.col("start_ts"))
         .otherwise(F.col("last_ts") - F.col("start_ts")).alias("duration_ms"),
        F.col("end_ts").isNull().alias("open"), "source_kind")


def capture_changes(obs: DataFrame) -> DataFrame:
    """Owner changes between consecutive captures (see :func:`owner_track`)."""
    return changes_from_track(owner_track(obs))


def unowned_from_captures(obs: DataFrame) -> DataFrame:
    """Unowned intervals from captures (see :func:`unowned_from_track`)."""
    return unowned_from_track(owner_track(obs))


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
    life = (life.withColumn("_run", F.sum(new_run.cast("int")).over(upto))
            .withColumn("_reset_ts", F.last(F.when(F.col("event") == "reset", F.col("ts")),
                                            ignorenulls=True).over(upto)))
    after_reset = (F.col("_reset_ts").isNotNull()
                   & (F.col("ts") - F.col("_reset_ts") <= F.lit(int(reset_window_ms))))
    cause = F.when(after_reset, F.lit("reset")).otherwise(F.lit("rebalance"))
    res = life.filter(F.col("event") == "result").withColumn("_set", _qset("mqs"))
    w = Window.partitionBy("cluster", "client", "group", "topic", "_run").orderBy("ts", "seq")
    empty = F.array().cast("array<string>")
    res = (res.withColumn("_prev", F.lag("_set").over(w))
           .withColumn("_gained", F.array_except("_set", F.coalesce(F.col("_prev"), empty)))
           .withColumn("_lost", F.array_except(F.coalesce(F.col("_prev"), empty), "_set"))
           .withColumn("cause", cause))
    base: list[Any] = [F.col("ts"), F.col("window_start_ts"), "cluster", "group", "topic"]
    tail: list[Any] = ["client", "source_kind", "source", "strategy", "cid_all", "mq_all",
                       "cause"]

    def explode(df: DataFrame, col: str, change: str) -> DataFrame:
        return (df.select(*base, F.explode(col).alias("_q"), *tail)
                .withColumn("broker", F.regexp_extract("_q", r"^(.*):(\d+)$", 1))
                .withColumn("queue_id", F.regexp_extract("_q", r"^(.*):(\d+)$", 2).cast("int"))
                .withColumn("change", F.lit(change)).drop("_q"))

    res = res.withColumn("window_start_ts", F.col("ts"))
    from_results = explode(res, "_gained", "gained").unionByName(explode(res, "_lost", "lost"))
    # the end of each run: its last set is lost at the stop line, or at the last line (crash)
    wl = Window.partitionBy("cluster", "client", "group", "topic", "_run").orderBy(
        F.col("ts").desc(), F.col("seq").desc())
    last = (res.withColumn("_rn", F.row_number().over(wl)).filter(F.col("_rn") == 1)
            .select("cluster", "client", "group", "topic", "_run", "_set",
                    F.col("ts").alias("_last_ts"), "source_kind", "source", "strategy",
                    "cid_all", "mq_all"))
    runs = life.groupBy("cluster", "client", "group", "_run").agg(
        F.min(F.when(F.col("event") == "stop", F.col("ts"))).alias("_stop_ts"),
        F.max(F.when(F.col("event") != "stop", F.col("ts"))).alias("_alive_ts"))
    runs = runs.withColumn("_next", F.lead("_run").over(
        Window.partitionBy("cluster", "client", "group").orderBy("_run")))
    ends = last.join(runs, on=["cluster", "client", "group", "_run"], how="inner")
    stopped = F.col("_stop_ts").isNotNull() & (F.col("_stop_ts") >= F.col("_last_ts"))
    ends = (ends.filter(stopped | F.col("_next").isNotNull())
            .withColumn("ts", F.when(stopped, F.col("_stop_ts")).otherwise(F.col("_alive_ts")))
            .withColumn("window_start_ts", F.col("ts"))
            .withColumn("cause", F.when(stopped, F.lit("stop")).otherwise(F.lit("crash"))))
    from_ends = explode(ends, "_set", "lost")
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
          .withColumn("broker", F.col("_m")["broker"])
          .withColumn("queue_id", F.col("_m")["queue_id"]).drop("_m"))
    return (from_results.select(*CHANGE_COLS).unionByName(from_ends.select(*CHANGE_COLS))
            .unionByName(fb.select(*CHANGE_COLS)))


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
            .withColumn("n_gained", F.size("gained"))
            .withColumn("n_lost", F.size("lost"))
            .withColumn("queues", F.array_sort(F.array_union("gained", "lost"))))


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


def merge_changes(captured: DataFrame, logged: DataFrame, tol_ms: int) -> DataFrame:
    """Captured and logged changes together, one row per real change: a capture change (the
    owner differed between two captures) that a log change of the same queue, client and
    direction explains (logged inside the capture interval, ``window_start_ts .. ts``, give or
    take ``tol_ms`` of clock skew) is dropped, and the log change, which has the exact time,
    keeps both sources (``source_kind`` ``client-log+snapshot``)."""
    keys = [*GQUEUE, "client", "change"]
    c = captured.select(*keys, "ts", "window_start_ts", "source_kind").alias("c")
    lg = logged.select(*keys, "ts", "source").alias("l")
    cond = [F.col("c." + k).eqNullSafe(F.col("l." + k)) for k in keys] + [
        F.col("l.ts") >= F.col("c.window_start_ts") - F.lit(int(tol_ms)),
        F.col("l.ts") <= F.col("c.ts") + F.lit(int(tol_ms))]
    hits = c.join(lg, on=cond, how="inner").select(
        *[F.col("c." + k).alias(k) for k in keys], F.col("c.ts").alias("_cts"),
        F.col("l.ts").alias("_lts"), F.col("l.source").alias("_lsrc"),
        F.col("c.source_kind").alias("_ck"))
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


def capture_resets(obs: DataFrame) -> DataFrame:
    """Reset events seen in captures: a queue's committed offset went back between two
    captures with the same owner (captures without owner in between do not count: an offset
    reset; a rebalance changes the owner).
    One event per capture, group, topic and owner; same columns as :func:`reset_events`."""
    w = Window.partitionBy(*GQUEUE).orderBy("capture_ts")
    # compared with the previous capture that had an owner: the 4.x push reset drops the
    # process queues for 10 s, so a capture in between shows the queue without owner
    o = (obs.filter(F.col("owner").isNotNull() & F.col("consumer_offset").isNotNull())
         .withColumn("_prev_c", F.lag("consumer_offset").over(w))
         .withColumn("_prev_owner", F.lag("owner").over(w))
         .withColumn("_prev_ts", F.lag("capture_ts").over(w)))
    back = o.filter((F.col("consumer_offset") < F.col("_prev_c"))
                    & F.col("owner").isNotNull() & (F.col("owner") == F.col("_prev_owner")))
    q = F.concat_ws(":", F.col("broker"), F.col("queue_id").cast("string"))
    return (back.groupBy("capture_ts", "cluster", "group", "topic", "owner", "source_kind")
            .agg(F.min("_prev_ts").alias("window_start_ts"),
                 F.array_sort(F.collect_set(q)).alias("queues"),
                 F.first("source").alias("source"))
            .withColumnRenamed("capture_ts", "ts").withColumnRenamed("owner", "client")
            .select(*_reset_event_cols()))


def mark_resets(changes: DataFrame, resets: DataFrame,
                window_ms: int = RESET_WINDOW_MS) -> DataFrame:
    """Give cause ``reset`` to a queue's loss and re-gain by the same client (nothing else
    happened to the queue in between) when that client logged or showed a reset of the group
    from ``window_ms`` before the loss's window to ``window_ms`` after the gain: the 4.x push
    reset drops the process queues and re-adds them 10 s later without any rebalance, which
    captures (running info) and add/remove lines see as a loss and a gain."""
    w = Window.partitionBy(*GQUEUE).orderBy("ts", F.col("change").desc())
    c = (changes.withColumn("_next_change", F.lead("change").over(w))
         .withColumn("_next_client", F.lead("client").over(w))
         .withColumn("_next_ts", F.lead("ts").over(w)))
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
    """From log changes: a loss followed (on that queue, in time order) by a gain = the queue
    had no owner in between; a loss that nothing follows is ``open`` (the logs end, or the new
    owner's log was not given). A loss right after another client's gain is a handover with
    overlap, not an unowned interval."""
    # client last: two clients losing the queue at one moment are ordered the same way on
    # every run, whatever the partitioning (a local and a cluster run must agree)
    w = Window.partitionBy(*GQUEUE).orderBy("ts", F.col("change").desc(), "client")
    c = (_not_reset(changes).withColumn("_next_change", F.lead("change").over(w))
         .withColumn("_next_ts", F.lead("ts").over(w))
         .withColumn("_prev_change", F.lag("change").over(w))
         .withColumn("_prev_client", F.lag("client").over(w)))
    overlap = (F.col("_prev_change") == "gained") & (F.col("_prev_client") != F.col("client"))
    lost = c.filter((F.col("change") == "lost") & ~F.coalesce(overlap, F.lit(False))
                    & (F.col("_next_change").isNull() | (F.col("_next_change") == "gained")))
    return lost.select(
        *GQUEUE, F.col("ts").alias("since_ts"), F.col("ts").alias("start_ts"),
        F.col("_next_ts").alias("end_ts"), (F.col("_next_ts") - F.col("ts")).alias("duration_ms"),
        F.col("_next_ts").isNull().alias("open"), "source_kind")


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


def rebalance_storms(rounds: DataFrame, min_rounds: int, window_ms: int) -> DataFrame:
    """Storms: at least ``min_rounds`` rebalance rounds of a group within ``window_ms``;
    overlapping windows merge into one storm (start, end, rounds, events, clients)."""
    w = Window.partitionBy("cluster", "group").orderBy("start_ts").rangeBetween(-window_ms, 0)
    r = (rounds.withColumn("_cnt", F.count(F.lit(1)).over(w))
         .withColumn("_from", F.min("start_ts").over(w)))
    trig = r.filter(F.col("_cnt") >= F.lit(min_rounds)).select(
        "cluster", "group", F.col("_from").alias("s"), F.col("end_ts").alias("e"))
    wo = Window.partitionBy("cluster", "group").orderBy("s", "e")
    trig = (trig.withColumn("_maxe", F.max("e").over(wo.rowsBetween(Window.unboundedPreceding,
                                                                      -1)))
            .withColumn("_new", F.when(F.col("_maxe").isNull() | (F.col("s") > F.col("_maxe")),
                                       1).otherwise(0))
            .withColumn("_storm", F.sum("_new").over(wo.rowsBetween(Window.unboundedPreceding,
                                                                     0))))
    spans = trig.groupBy("cluster", "group", "_storm").agg(F.min("s").alias("s_start"),
                                                           F.max("e").alias("s_end"))
    j = spans.join(rounds, on=["cluster", "group"], how="inner").filter(
        (F.col("s_start") <= F.col("start_ts")) & (F.col("start_ts") <= F.col("s_end")))
    return j.groupBy("cluster", "group", "s_start", "s_end").agg(
        F.count(F.lit(1)).alias("rounds"), F.sum("events").alias("events"),
        F.array_sort(F.array_distinct(F.flatten(F.collect_list("clients")))).alias("clients"),
    ).select("cluster", "group", F.col("s_start").alias("start_ts"),
             F.col("s_end").alias("end_ts"),
             (F.col("s_end") - F.col("s_start")).alias("duration_ms"), "rounds", "events",
             "clients")


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
