"""Spark schemas of the lag job's inputs and intermediate tables (imports pyspark)."""

from __future__ import annotations

from pyspark.sql import types as T

from mqctl.lagjob import parsers as P


def struct(fields: list[tuple[str, str]]) -> T.StructType:
    """A StructType from ``(name, type)`` pairs written in Spark's DDL type syntax."""
    out = []
    for name, typ in fields:
        dt = T._parse_datatype_string(typ) if "<" in typ else _SIMPLE[typ]
        out.append(T.StructField(name, dt, True))
    return T.StructType(out)


_SIMPLE: dict[str, T.DataType] = {
    "long": T.LongType(), "int": T.IntegerType(), "string": T.StringType(),
    "boolean": T.BooleanType(), "double": T.DoubleType(),
}

OBS = struct(P.OBS_FIELDS)
POINT = struct(P.POINT_FIELDS)
MEMBER = struct(P.MEMBER_FIELDS)
TOPIC_CFG = struct(P.TOPIC_CFG_FIELDS)
GROUP_CFG = struct(P.GROUP_CFG_FIELDS)
BAD = struct(P.BAD_FIELDS)
LOG = struct(P.LOG_FIELDS)

# one union row per parsed record of a whole file: exactly one struct is set
FILE_RECORDS = T.StructType([
    T.StructField("tag", T.StringType(), False),
    T.StructField(P.OBS, OBS, True),
    T.StructField(P.POINT, POINT, True),
    T.StructField(P.MEMBER, MEMBER, True),
    T.StructField(P.TOPIC_CFG, TOPIC_CFG, True),
    T.StructField(P.GROUP_CFG, GROUP_CFG, True),
    T.StructField(P.BAD, BAD, True),
])

# parsed log lines: the event (or the reason it was quarantined) plus where it came from
LOG_RECORDS = T.StructType([
    T.StructField("source", T.StringType(), True),
    T.StructField("source_kind", T.StringType(), True),
    T.StructField("block", T.LongType(), True),
    T.StructField("rid", T.LongType(), True),
    T.StructField("ts", T.LongType(), True),  # the line's time (null when unreadable)
    T.StructField("client_key", T.StringType(), True),
    T.StructField("cluster", T.StringType(), True),
    T.StructField("log", LOG, True),
    T.StructField("bad_reason", T.StringType(), True),
    T.StructField("bad_detail", T.StringType(), True),
    T.StructField("content", T.StringType(), True),
])

# the canonical snapshot row (docs/exports.md section 1) as read from JSON Lines
SNAPSHOT_JSON = T.StructType([
    T.StructField("schema", T.StringType()),
    T.StructField("capture_ts", T.LongType()),
    T.StructField("capture_time", T.StringType()),
    T.StructField("cluster", T.StringType()),
    T.StructField("namesrv", T.StringType()),
    T.StructField("group", T.StringType()),
    T.StructField("topic", T.StringType()),
    T.StructField("broker", T.StringType()),
    T.StructField("queue_id", T.IntegerType()),
    T.StructField("broker_offset", T.LongType()),
    T.StructField("min_offset", T.LongType()),
    T.StructField("consumer_offset", T.LongType()),
    T.StructField("pull_offset", T.LongType()),
    T.StructField("lag", T.LongType()),
    T.StructField("inflight", T.LongType()),
    T.StructField("last_timestamp", T.LongType()),
    T.StructField("max_timestamp", T.LongType()),
    T.StructField("delay_ms", T.LongType()),
    T.StructField("owner", T.StringType()),
    T.StructField("owners", T.ArrayType(T.StringType())),
    T.StructField("locked", T.BooleanType()),
    T.StructField("last_lock_ts", T.LongType()),
    T.StructField("members", T.ArrayType(T.StringType())),
    T.StructField("online", T.BooleanType()),
    T.StructField("consume_type", T.StringType()),
    T.StructField("message_model", T.StringType()),
    T.StructField("orderly", T.BooleanType()),
    T.StructField("committed", T.BooleanType()),
    T.StructField("owner_unknown", T.BooleanType()),  # since 1.1
    T.StructField("members_unanswered", T.ArrayType(T.StringType())),  # since 1.1
    T.StructField("_corrupt", T.StringType()),
])
# (consumer_offset may be null on a row with ``committed: false``; an empty or blank text
# counts as missing: ``cluster: ""`` would be a series of its own)
SNAPSHOT_REQUIRED = ("capture_ts", "cluster", "group", "topic", "broker", "queue_id",
                     "broker_offset", "consumer_offset")
# the names that key a series: no whitespace or control character (below)
SNAPSHOT_NAMES = ("cluster", "group", "topic", "broker")
# the numeric fields of a snapshot row and their type (a value that does not fit is named)
SNAPSHOT_NUMBERS = tuple((f.name, "int" if isinstance(f.dataType, T.IntegerType) else "long")
                         for f in SNAPSHOT_JSON.fields
                         if isinstance(f.dataType, (T.LongType, T.IntegerType)))


def _json_kind(dt: T.DataType) -> str:
    if isinstance(dt, (T.LongType, T.IntegerType)):
        return "number"
    if isinstance(dt, T.BooleanType):
        return "boolean"
    if isinstance(dt, T.ArrayType):
        return "array"
    return "text"


# every field whose JSON value can have the wrong type, with the kind of value it takes (text
# fields take any value: Spark's JSON reader keeps a number or object there as its text)
SNAPSHOT_TYPED = tuple((f.name, _json_kind(f.dataType)) for f in SNAPSHOT_JSON.fields
                       if f.name != "_corrupt" and _json_kind(f.dataType) != "text")
