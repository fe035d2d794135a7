"""What every parser shares: the record layouts (``*_FIELDS``, which ``schemas.py`` turns
into Spark types), the record tags, the plausible ranges and the bad record."""

from __future__ import annotations

import re
from typing import Any

# record layouts (name, spark type name); schemas.py turns these into StructTypes
OBS_FIELDS: list[tuple[str, str]] = [
    ("observed_ts", "long"), ("cluster", "string"), ("group", "string"), ("topic", "string"),
    ("broker", "string"), ("queue_id", "int"), ("broker_offset", "long"),
    ("min_offset", "long"), ("consumer_offset", "long"), ("pull_offset", "long"),
    ("last_timestamp", "long"), ("delay_ms", "long"), ("owner", "string"),
    ("owners", "array<string>"), ("members", "int"), ("online", "boolean"),
    ("orderly", "boolean"), ("source_kind", "string"), ("source", "string"),
    # only the canonical snapshot carries these (the other parsers yield SNAPSHOT_ONLY_NONE):
    # false: no committed offset (consumer_offset then null), the owner could not be read
    # (a member did not answer its running info), and those members
    ("committed", "boolean"), ("owner_unknown", "boolean"),
    ("members_unanswered", "array<string>"),
    # the group's consume type (CONSUME_POP: no queue owners) and message model (BROADCASTING:
    # the clients keep the offsets, so lag is unknown)
    ("consume_type", "string"), ("message_model", "string"),
]
# the values of the snapshot-only fields above in the observations of every other input kind
SNAPSHOT_ONLY_NONE: tuple[None, ...] = (None, None, None, None, None)
POINT_FIELDS: list[tuple[str, str]] = [
    ("observed_ts", "long"), ("cluster", "string"), ("topic", "string"), ("broker", "string"),
    ("queue_id", "int"), ("broker_offset", "long"), ("min_offset", "long"),
    ("source_kind", "string"), ("source", "string"),
]
MEMBER_FIELDS: list[tuple[str, str]] = [
    ("observed_ts", "long"), ("cluster", "string"), ("group", "string"), ("members", "int"),
    ("online", "boolean"), ("diff_total", "long"), ("source_kind", "string"),
    ("source", "string"),
]
TOPIC_CFG_FIELDS: list[tuple[str, str]] = [
    ("observed_ts", "long"), ("cluster", "string"), ("broker", "string"), ("topic", "string"),
    ("read_queue_nums", "int"), ("write_queue_nums", "int"), ("perm", "int"),
    ("orderly", "boolean"), ("source", "string"),
]
GROUP_CFG_FIELDS: list[tuple[str, str]] = [
    ("observed_ts", "long"), ("cluster", "string"), ("broker", "string"), ("group", "string"),
    ("consume_enable", "boolean"), ("orderly", "boolean"), ("broadcast_enable", "boolean"),
    ("source", "string"),
]
BAD_FIELDS: list[tuple[str, str]] = [
    ("source", "string"), ("source_kind", "string"), ("line", "long"), ("reason", "string"),
    ("detail", "string"), ("content", "string"), ("observed_ts", "long"),
]
LOG_FIELDS: list[tuple[str, str]] = [
    ("ts", "long"), ("event", "string"), ("group", "string"), ("topic", "string"),
    ("client", "string"), ("prev_client", "string"),
    ("mqs", "array<struct<topic:string,broker:string,queue_id:int>>"),
    ("strategy", "string"), ("mq_all", "int"), ("cid_all", "int"), ("detail", "string"),
]

# tags of the union records a whole-file parse yields
OBS, POINT, MEMBER, TOPIC_CFG, GROUP_CFG, BAD = ("obs", "point", "member", "topic_cfg",
                                                 "group_cfg", "bad")
TAGS = (OBS, POINT, MEMBER, TOPIC_CFG, GROUP_CFG, BAD)
CONTENT_MAX = 500

Rec = tuple[str, tuple[Any, ...]]

# plausible ranges (docs/exports.md section 9): a value outside is quarantined with its field
# named, so no row that passes can overflow the report's long arithmetic (Spark ANSI mode)
MIN_CAPTURE_MS = 1_262_304_000_000  # 2010-01-01T00:00:00Z: no capture of mqctl's era is older
FUTURE_SLACK_MS = 86_400_000  # a capture more than a day after the run is a wrong clock/value
# RocketMQ numbers queues 0..readQueueNums-1 per broker (TopicConfig); mqctl's plausibility
# bound, far above any real topic, not a RocketMQ limit
QUEUE_ID_MAX = 65_535
# snapshot fields that feed subtractions: a negative value is never real (offsets count from 0,
# store times are epoch ms)
SNAPSHOT_NON_NEGATIVE = ("queue_id", "broker_offset", "consumer_offset", "min_offset",
                         "pull_offset", "last_timestamp")

LONG_MAX = (1 << 63) - 1
INT_MAX = (1 << 31) - 1
INT_FIELDS = ("members", "mq_all", "cid_all")  # int columns (the rest are longs)
OUT_OF_RANGE = "value out of range"


# whitespace, a control or a format character (a newline, a bidi override): never in a
# RocketMQ group or topic name (TopicValidator.isTopicOrGroupIllegal allows ^[%|a-zA-Z0-9_-]+$);
# such a name would split a Prometheus line or a table row, or make "G " a group beside "G"
_BAD_NAME_CHARS = re.compile(r"[\s\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff]")


def name_problem(**names: str | None) -> str | None:
    """The first name (``group=``, ``topic=``, ...) that is empty or holds whitespace or a
    control character, as ``group: "G\\n" (why)``, or None."""
    import json

    for field, v in names.items():
        if v is None:
            continue
        shown = json.dumps(v, ensure_ascii=False)[:60]
        if not v.strip():
            return f"{field}: {shown} (empty)"
        if _BAD_NAME_CHARS.search(v):
            return (f"{field}: {shown} (whitespace or a control character: never in a "
                    "RocketMQ name)")
    return None


def range_problem(ts: int | None = None, queue_ids: tuple[int, ...] = (),
                  **counts: int | None) -> str | None:
    """The first value outside the plausible range, as ``field=value: why`` (the detail of an
    ``OUT_OF_RANGE`` record), or None: a capture time before 2010 (no upper bound here: the run's
    time is checked for snapshots, where the file says it), a queue id outside 0..65535, an
    offset or count outside 0..2^63-1. Keeps the Spark side's long/int arithmetic from
    overflowing on any record a parser yields."""
    if ts is not None and ts < MIN_CAPTURE_MS:
        return f"capture_ts={ts}: before 2010-01-01"
    for q in queue_ids:
        if q < 0 or q > QUEUE_ID_MAX:
            return f"queue_id={q}: " + ("must be >= 0" if q < 0 else f"above {QUEUE_ID_MAX}")
    for name, v in counts.items():
        if v is not None and name in INT_FIELDS and v > INT_MAX:
            return f"{name}={v}: beyond 2^31-1"
        if v is not None and v > LONG_MAX:
            return f"{name}={v}: beyond 2^63-1"
        if v is not None and v < 0:
            return f"{name}={v}: must be >= 0"
    return None


def bad(source: str, kind: str, line: int | None, reason: str, detail: str = "",
        content: str = "", observed_ts: int | None = None) -> Rec:
    return (BAD, (source, kind, line, reason, detail[:CONTENT_MAX], content[:CONTENT_MAX],
                  observed_ts))


def _line_of(text: str, pos: int | None) -> int | None:
    if pos is None:
        return None
    return text.count("\n", 0, max(0, min(pos, len(text)))) + 1


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, str) and re.fullmatch(r"-?[0-9]+", v.strip()):
        return int(v)
    return None


def _bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return None
