"""Reading the canonical snapshot: its JSON records parsed and checked in Spark (no text
pass), and the bad records' line numbers."""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F

SNAPSHOT_OBS = ["observed_ts", "cluster", "group", "topic", "broker", "queue_id",
                "broker_offset", "min_offset", "consumer_offset", "pull_offset",
                "last_timestamp", "delay_ms", "owner", "owners", "members", "online", "orderly",
                "source_kind", "source", "committed", "owner_unknown", "members_unanswered",
                "consume_type", "message_model"]
# their types (an empty frame of observations)
SNAPSHOT_OBS_DDL = ("observed_ts long, cluster string, group string, topic string, "
                    "broker string, queue_id int, broker_offset long, min_offset long, "
                    "consumer_offset long, pull_offset long, last_timestamp long, "
                    "delay_ms long, owner string, owners array<string>, members int, "
                    "online boolean, orderly boolean, source_kind string, source string, "
                    "committed boolean, owner_unknown boolean, "
                    "members_unanswered array<string>, consume_type string, "
                    "message_model string")
SNAPSHOT_BAD = ["source", "source_kind", "block", "rid", "reason", "detail", "content",
                "observed_ts"]

# after a field's quoted name: the colon and its value's JSON token (a string with its quotes
# and escapes, a number, a literal, or the first character of an array or object)
_TOKEN = (r'\s*:\s*("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*|true|false|null|\[|\{'
          r'|[^\s,}\]]+)')
# the tokens each kind of field takes
_RIGHT_TOKEN = {"number": r"^-?\d+$", "boolean": r"^(true|false)$", "array": r"^\[$"}
_EXPECTED = {"number": "a whole number", "boolean": "true or false", "array": "a list"}
_SHOWN_MAX = 60


def _shown(tok: Column) -> Column:
    """A JSON token as the detail shows it (at most 60 characters; an array or object as
    ``[...]`` / ``{...}``)."""
    return (F.when(tok == "[", F.lit("[...]")).when(tok == "{", F.lit("{...}"))
            .when(F.length(tok) > _SHOWN_MAX,
                  F.concat(F.substring(tok, 1, _SHOWN_MAX), F.lit("...")))
            .otherwise(tok))


def _shown_text(c: Column) -> Column:
    """A text value as a JSON string (quoted, a newline as ``\\n``), at most 60 characters."""
    quoted = F.regexp_extract(F.to_json(F.struct(c.alias("v"))), r'^\{"v":(.*)\}$', 1)
    return _shown(quoted)


def parse_snapshot_records(lines: DataFrame, schema: object,
                           run_ms: int | None = None) -> DataFrame:
    """JSON Lines (``source, block, rid, mtime_ms, value``) -> one row per non-blank line with
    the observation columns (``SNAPSHOT_OBS``) and, for a bad line, ``reason``, ``detail``,
    ``content`` and its position (``block``, ``rid``). Parse once, split with
    :func:`split_snapshot_records`.

    A line is bad when it is not a JSON object, a field has the wrong type (``wrong type``,
    the field and its value named: ``broker_offset: "abc" (expected a whole number)``), the
    ``schema`` is not ``mqctl.snapshot/1``, a required field is missing or empty (``cluster``
    included: an empty one would be a series of its own), a name (cluster, group, topic,
    broker) holds whitespace or a control character (``bad name``; RocketMQ allows neither,
    TopicValidator), or a value is outside the plausible range of :mod:`mqctl.lagjob.parsers`
    (``value out of range``: a capture time before 2010 or more than a day after ``run_ms``, a
    number beyond 2^63-1, a queue id above 65535; ``negative value``: a negative queue id,
    offset or store time). The detail names the field and its value. Blank lines are skipped
    (not errors). Every row that passes keeps the transforms' arithmetic within a long (see
    :func:`with_lag`, :func:`estimate_time_lag`).
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
    from mqctl.lagjob.parsers.common import (
        FUTURE_SLACK_MS,
        MIN_CAPTURE_MS,
        QUEUE_ID_MAX,
        SNAPSHOT_NON_NEGATIVE,
    )
    from mqctl.lagjob.schemas import (
        SNAPSHOT_NAMES,
        SNAPSHOT_NUMBERS,
        SNAPSHOT_REQUIRED,
        SNAPSHOT_TYPED,
    )

    j = F.col("j")
    corrupt = j.isNull() | j["_corrupt"].isNotNull()

    tokens: dict[str, Column] = {}

    def token(c: str) -> Column:
        """The field's value as written in the line (a JSON token; an array or object: its
        first character), "" when the line has no such field. Only read on corrupt lines.
        (One expression per field, however many checks name it.)"""
        if c not in tokens:
            tokens[c] = F.regexp_extract(F.col("value"), '"' + c + '"' + _TOKEN, 1)
        return tokens[c]

    def first(checks: list[tuple[Column, Column]]) -> Column:
        out = F.lit(None).cast("string")
        for cond, text in reversed(checks):
            out = F.when(cond, text).otherwise(out)
        return out

    # a number that did not fit its type (a long beyond 2^63-1, an int queue id) makes the
    # whole line unparsable; name it instead of a generic "wrong type"
    too_big = first([(corrupt & token(c).rlike(r"^-?\d+$") & (j.isNull() | j[c].isNull()),
                      F.concat(F.lit(c + "="), token(c), F.lit(": beyond 2^63-1" if t == "long"
                                                              else ": not a queue id")))
                     for c, t in SNAPSHOT_NUMBERS])
    # a value of the wrong type (a string, a fraction or a boolean where a whole number goes,
    # ``"yes"`` for a boolean, a string for a list) makes the line corrupt too: named
    wrong_type = first([(corrupt & (token(c) != "") & (token(c) != "null")
                         & ~token(c).rlike(_RIGHT_TOKEN[kind]),
                         F.concat(F.lit(c + ": "), _shown(token(c)),
                                  F.lit(f" (expected {_EXPECTED[kind]})")))
                        for c, kind in SNAPSHOT_TYPED])
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
    # a queue the group never committed (``committed: false``) may have no consumer offset
    # (snapshot 1.1 writes null there: "none", not the broker's 0 placeholder)
    never = j["committed"].eqNullSafe(F.lit(False))
    # nor has a BROADCASTING group's (snapshot 1.2): its clients keep their offsets
    no_offset = never | j["message_model"].eqNullSafe(F.lit("BROADCASTING"))

    def absent(c: str) -> Column:
        blank = (F.trim(j[c]) == "") if c in SNAPSHOT_NAMES else F.lit(False)
        return j[c].isNull() | blank

    missing = F.concat_ws(", ", *[F.when(absent(c) & (~no_offset if c == "consumer_offset"
                                                       else F.lit(True)), F.lit(c))
                                  for c in SNAPSHOT_REQUIRED])
    # whitespace or a control character (a newline splits a Prometheus line and a table row;
    # "G" and "G " would be two groups): never in a RocketMQ name (TopicValidator
    # .isTopicOrGroupIllegal allows ^[%|a-zA-Z0-9_-]+$ only)
    bad_name = first([(j[c].rlike(r"[\s\p{Cc}\p{Cf}\p{Z}]"),
                       F.concat(F.lit(c + ": "), _shown_text(j[c]),
                                F.lit(" (whitespace or a control character: never in a "
                                      "RocketMQ name)")))
                      for c in SNAPSHOT_NAMES])
    # each check once, as a column of its own: the reason and the detail read the columns
    # (the expressions written into both made a plan twice the size, analysed on every run)
    checked = parsed.withColumns({"_too_big": too_big, "_wrong_type": wrong_type,
                                  "_missing": missing, "_bad_name": bad_name,
                                  "_out_of_range": out_of_range, "_negative": negative,
                                  "_ts_bad": ts_bad})
    too_big, wrong_type, missing, bad_name, out_of_range, negative, ts_bad = (
        F.col(c) for c in ("_too_big", "_wrong_type", "_missing", "_bad_name",
                           "_out_of_range", "_negative", "_ts_bad"))
    reason = (F.when(too_big.isNotNull(), F.lit("value out of range"))
              .when(wrong_type.isNotNull(), F.lit("wrong type"))
              .when(corrupt, F.lit("malformed JSON"))
              .when(j["schema"].isNull() | ~j["schema"].rlike(r"^mqctl\.snapshot/1(\.\d+)?$"),
                    F.lit("unsupported schema"))
              .when(missing != "", F.lit("missing field"))
              .when(bad_name.isNotNull(), F.lit("bad name"))
              .when(out_of_range.isNotNull(), F.lit("value out of range"))
              .when(negative.isNotNull(), F.lit("negative value")))
    tagged = checked.withColumn("reason", reason)
    why = F.col("reason")
    detail = (F.when(too_big.isNotNull(), too_big)
              .when(why == "wrong type", wrong_type)
              .when(why == "bad name", bad_name)
              .when(why == "malformed JSON",
                    F.lit("not a JSON object, or a field has the wrong type"))
              .when(why == "unsupported schema",
                    F.concat(F.lit("schema="), F.coalesce(j["schema"], F.lit("(none)"))))
              .when(why == "missing field", missing)
              .when(why == "value out of range", out_of_range)
              .otherwise(negative))
    is_bad = why.isNotNull()
    return tagged.select(
        # an implausible time must not date the quarantine row (its file's capture does)
        F.when(ts_bad, F.lit(None)).otherwise(ts).alias("observed_ts"),
        F.coalesce(j["cluster"], F.lit("")).alias("cluster"),
        j["group"].alias("group"), j["topic"].alias("topic"), j["broker"].alias("broker"),
        j["queue_id"].alias("queue_id"), j["broker_offset"].alias("broker_offset"),
        j["min_offset"].alias("min_offset"),
        # never committed: no consumer offset ("none"; a 1.0 row carries the broker's 0)
        F.when(never, F.lit(None).cast("long")).otherwise(j["consumer_offset"])
        .alias("consumer_offset"),
        j["pull_offset"].alias("pull_offset"), j["last_timestamp"].alias("last_timestamp"),
        j["delay_ms"].alias("delay_ms"), j["owner"].alias("owner"), j["owners"].alias("owners"),
        F.when(F.size(j["members"]) >= 0, F.size(j["members"])).cast("int").alias("members"),
        j["online"].alias("online"), j["orderly"].alias("orderly"),
        F.lit("snapshot").alias("source_kind"), "source",
        j["committed"].alias("committed"),
        # a 1.0 row has no marker: the owner was read (false)
        F.coalesce(j["owner_unknown"], F.lit(False)).alias("owner_unknown"),
        j["members_unanswered"].alias("members_unanswered"),
        j["consume_type"].alias("consume_type"), j["message_model"].alias("message_model"),
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
