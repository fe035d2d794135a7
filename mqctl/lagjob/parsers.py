"""Parsers for every input kind except the canonical snapshot (pure Python, no Spark).

Spark runs these inside ``mapPartitions`` (whole files for store and mqadmin captures, single
lines for logs), so they are plain functions over strings that return plain tuples in the field
order of the ``*_FIELDS`` lists below (``schemas.py`` builds the Spark types from the same
lists). Nothing here raises on bad input: every problem becomes a :data:`BAD_FIELDS` record
with the source, the line number and a short, categorical reason.

Formats (apache/rocketmq @8fc57f1; see ``docs/exports.md`` section 2 and the protocol notes):

* ``consumerOffset.json`` (ConsumerOffsetManager, pretty fastjson with bare int keys),
  ``topics.json`` (TopicConfigManager), ``subscriptionGroup.json`` (SubscriptionGroupManager);
* mqadmin ``consumerProgress`` (ConsumerProgressSubCommand, every layout 4.x..5.3),
  ``brokerConsumeStats`` (BrokerConsumeStatsSubCommad), ``topicStatus`` (TopicStatusSubCommand);
* client ``rocketmq_client.log`` (RebalanceImpl, RebalanceLockManager's client side) and broker
  ``lock.log`` (broker RebalanceLockManager, 4.x and 5.x templates).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace
from datetime import tzinfo
from typing import Any

from mqctl.errors import BodyError
from mqctl.lagjob.inputs import (
    GMT8,
    Kind,
    PathMeta,
    header_names,
    local_ms,
    mqadmin_command,
)
from mqctl.models import parse_offset_table_key
from mqctl.remoting import fastjson

# --------------------------------------------------------------------------------------------
# record layouts (name, spark type name); schemas.py turns these into StructTypes

OBS_FIELDS: list[tuple[str, str]] = [
    ("observed_ts", "long"), ("cluster", "string"), ("group", "string"), ("topic", "string"),
    ("broker", "string"), ("queue_id", "int"), ("broker_offset", "long"),
    ("min_offset", "long"), ("consumer_offset", "long"), ("pull_offset", "long"),
    ("last_timestamp", "long"), ("delay_ms", "long"), ("owner", "string"),
    ("owners", "array<string>"), ("members", "int"), ("online", "boolean"),
    ("orderly", "boolean"), ("source_kind", "string"), ("source", "string"),
]
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
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v.strip()):
        return int(v)
    return None


def _bool(v: Any) -> bool | None:
    if isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lower() in ("true", "false"):
        return v.lower() == "true"
    return None


# --------------------------------------------------------------------------------------------
# whole files

def parse_file(kind: str, source: str, text: str, meta: PathMeta, mtime_ms: int | None,
               tz: tzinfo | None, default_cluster: str = "") -> Iterator[Rec]:
    """All records of one store file or mqadmin capture.

    An mqadmin capture that starts with its command line (``$ mqadmin consumerProgress -g G
    # <time>``, as the reference corpus records them) gets its group, topic and capture time
    from it when the path does not give them (they win over the file's modification time)."""
    first = next((ln for ln in text.splitlines() if ln.strip()), "")
    cmd = mqadmin_command(first)
    if cmd is not None:
        meta = replace(meta, group=meta.group or cmd.group, topic=meta.topic or cmd.topic,
                       capture_ts=meta.capture_ts if meta.capture_ts is not None else cmd.ts)
    ts = meta.capture_ts if meta.capture_ts is not None else mtime_ms
    cluster = meta.cluster or default_cluster
    if ts is None:
        yield bad(source, kind, None, "no capture time",
                  "neither the path nor the file's modification time gives one", "", None)
        return
    why = range_problem(ts)
    if why is not None:
        yield bad(source, kind, None, OUT_OF_RANGE, why, "", None)
        return
    if kind == Kind.CONSUMER_OFFSET:
        yield from parse_consumer_offset(source, text, meta, ts, cluster)
    elif kind == Kind.TOPICS:
        yield from parse_topics(source, text, meta, ts, cluster)
    elif kind == Kind.SUBSCRIPTION_GROUP:
        yield from parse_subscription_group(source, text, meta, ts, cluster)
    elif kind == Kind.CONSUMER_PROGRESS:
        yield from parse_consumer_progress(source, text, meta, ts, cluster, tz)
    elif kind == Kind.BROKER_CONSUME_STATS:
        yield from parse_broker_consume_stats(source, text, ts, cluster, tz)
    elif kind == Kind.TOPIC_STATUS:
        yield from parse_topic_status(source, text, meta, ts, cluster)
    else:
        yield bad(source, kind, None, "not a whole-file kind", kind, "", ts)


def _load_store(source: str, kind: str, text: str, ts: int) -> tuple[Any, Rec | None]:
    if not text.strip():
        return None, bad(source, kind, None, "empty file", "", "", ts)
    try:
        return fastjson.loads(text), None
    except BodyError as exc:
        line = _line_of(text, exc.pos)
        snippet = ""
        if line is not None:
            lines = text.splitlines()
            snippet = lines[line - 1] if 0 < line <= len(lines) else ""
        return None, bad(source, kind, line, "malformed store JSON", exc.message, snippet, ts)


def _key_line(text: str, key: str) -> int | None:
    pos = text.find(f'"{key}"')
    return _line_of(text, pos) if pos >= 0 else None


def parse_consumer_offset(source: str, text: str, meta: PathMeta, ts: int,
                          cluster: str) -> Iterator[Rec]:
    """``offsetTable {"topic@group[@broadcast]": {qid: offset}}`` and LMQ's
    ``lmqOffsetTable {"topic@group": offset}`` (queue 0). ``@broadcast`` entries keep their
    suffix in the group name (``G@broadcast``) so they never mix with the clustering offsets."""
    kind = Kind.CONSUMER_OFFSET.value
    doc, err = _load_store(source, kind, text, ts)
    if err is not None:
        yield err
        return
    if not isinstance(doc, dict) or not isinstance(doc.get("offsetTable", {}), dict):
        yield bad(source, kind, 1, "not a consumerOffset.json",
                  "expected an object with offsetTable", text[:200], ts)
        return
    if meta.broker is None:
        yield bad(source, kind, None, "broker unknown",
                  "put the file under <broker>/ or broker=<name>/", "", ts)
        return
    broker = meta.broker
    tables: list[tuple[str, Any, bool]] = [(k, v, False) for k, v in
                                           (doc.get("offsetTable") or {}).items()]
    lmq = doc.get("lmqOffsetTable")
    if isinstance(lmq, dict):
        tables += [(k, v, True) for k, v in lmq.items()]
    for key, value, is_lmq in tables:
        parsed = parse_offset_table_key(key) if isinstance(key, str) else None
        if parsed is None:
            yield bad(source, kind, _key_line(text, str(key)), "bad offsetTable key",
                      "expected topic@group", str(key), ts)
            continue
        topic, group, broadcast = parsed
        if broadcast:
            group = f"{group}@broadcast"
        entries: list[tuple[Any, Any]]
        if is_lmq:
            entries = [(0, value)]
        elif isinstance(value, dict):
            entries = list(value.items())
        else:
            yield bad(source, kind, _key_line(text, key), "bad offsetTable value",
                      "expected {queueId: offset}", repr(value)[:200], ts)
            continue
        for qid, off in entries:
            q, o = _int(qid), _int(off)
            if q is None or o is None or q < 0:
                yield bad(source, kind, _key_line(text, key), "bad offset entry",
                          f"queue {qid!r} offset {off!r}", f"{key}: {qid}: {off}", ts)
                continue
            why = range_problem(queue_ids=(q,), consumer_offset=o)
            if why is not None:
                yield bad(source, kind, _key_line(text, key), OUT_OF_RANGE, why,
                          f"{key}: {qid}: {off}", ts)
                continue
            yield (OBS, (ts, cluster, group, topic, broker, q, None, None, o, None, None, None,
                         None, None, None, None, None, kind, source))


def parse_topics(source: str, text: str, meta: PathMeta, ts: int,
                 cluster: str) -> Iterator[Rec]:
    kind = Kind.TOPICS.value
    doc, err = _load_store(source, kind, text, ts)
    if err is not None:
        yield err
        return
    table = doc.get("topicConfigTable") if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        yield bad(source, kind, 1, "not a topics.json", "expected topicConfigTable",
                  text[:200], ts)
        return
    if meta.broker is None:
        yield bad(source, kind, None, "broker unknown",
                  "put the file under <broker>/ or broker=<name>/", "", ts)
        return
    for name, cfg in table.items():
        if not isinstance(cfg, dict) or not isinstance(name, str):
            yield bad(source, kind, _key_line(text, str(name)), "bad topic config", "",
                      repr(cfg)[:200], ts)
            continue
        raw_attrs = cfg.get("attributes")
        attrs: dict[str, Any] = raw_attrs if isinstance(raw_attrs, dict) else {}
        mtype = str(attrs.get("message.type") or attrs.get("+message.type") or "")
        orderly = bool(cfg.get("order")) or mtype.upper() == "FIFO"
        yield (TOPIC_CFG, (ts, cluster, meta.broker, name, _int(cfg.get("readQueueNums")),
                           _int(cfg.get("writeQueueNums")), _int(cfg.get("perm")), orderly,
                           source))


def parse_subscription_group(source: str, text: str, meta: PathMeta, ts: int,
                             cluster: str) -> Iterator[Rec]:
    kind = Kind.SUBSCRIPTION_GROUP.value
    doc, err = _load_store(source, kind, text, ts)
    if err is not None:
        yield err
        return
    table = doc.get("subscriptionGroupTable") if isinstance(doc, dict) else None
    if not isinstance(table, dict):
        yield bad(source, kind, 1, "not a subscriptionGroup.json",
                  "expected subscriptionGroupTable", text[:200], ts)
        return
    if meta.broker is None:
        yield bad(source, kind, None, "broker unknown",
                  "put the file under <broker>/ or broker=<name>/", "", ts)
        return
    for name, cfg in table.items():
        if not isinstance(cfg, dict) or not isinstance(name, str):
            yield bad(source, kind, _key_line(text, str(name)), "bad group config", "",
                      repr(cfg)[:200], ts)
            continue
        yield (GROUP_CFG, (ts, cluster, meta.broker, name, _bool(cfg.get("consumeEnable")),
                           _bool(cfg.get("consumeMessageOrderly")),
                           _bool(cfg.get("consumeBroadcastEnable")), source))


# ---- mqadmin text ---------------------------------------------------------------------------

_PREAMBLE = ("RocketMQLog:", "log4j:", "$ ")
_DATE_TIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,3}))?$")


def parse_local_time(text: str, tz: tzinfo | None) -> int | None:
    """mqadmin's ``yyyy-MM-dd HH:mm:ss[,SSS]`` in the capturing machine's zone; None for N/A."""
    s = text.strip()
    if not s or s.upper() == "N/A":
        return None
    m = _DATE_TIME.match(s)
    if not m:
        raise ValueError(f"not a date: {s!r}")
    y, mo, d, h, mi, sec = (int(m.group(i)) for i in range(1, 7))
    ms = int((m.group(7) or "0").ljust(3, "0"))
    return local_ms(y, mo, d, h, mi, sec, ms, tz)


def _is_footer(s: str) -> bool:
    return s.startswith(("Consume TPS:", "Diff Total:", "Consume Diff Total:",
                         "Consume Inflight Total:", "Topic Put TPS:"))


def _table_lines(text: str) -> tuple[list[str] | None, int, list[tuple[int, str]]]:
    """(header names, header line no, [(line no, data line)]) of an mqadmin table."""
    header: list[str] | None = None
    hline = 0
    rows: list[tuple[int, str]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if not s or s.startswith(_PREAMBLE):
            continue
        if header is None:
            if s.startswith("#"):
                header, hline = header_names(s), i
            continue
        if _is_footer(s):
            continue
        rows.append((i, s))
    return header, hline, rows


def _no_table(source: str, kind: str, text: str, ts: int) -> Rec:
    first = next((ln.strip() for ln in text.splitlines()
                  if ln.strip() and not ln.strip().startswith(_PREAMBLE)), "")
    return bad(source, kind, None, "no table header", "the capture has no mqadmin table "
               "(an error message instead?)", first, ts)


def parse_consumer_progress(source: str, text: str, meta: PathMeta, ts: int, cluster: str,
                            tz: tzinfo | None) -> Iterator[Rec]:
    """``mqadmin consumerProgress`` with ``-g`` (every layout from 4.x to 5.3: optional
    ``#Client IP`` and ``#Inflight``) and without ``-g`` (one line per group)."""
    kind = Kind.CONSUMER_PROGRESS.value
    header, _, rows = _table_lines(text)
    if header is None:
        yield _no_table(source, kind, text, ts)
        return
    if "Group" in header and "Count" in header:
        yield from _consumer_progress_groups(source, rows, ts, cluster)
        return
    need = ("Topic", "Broker Name", "QID", "Broker Offset", "Consumer Offset")
    missing = [n for n in need if n not in header]
    if missing:
        yield bad(source, kind, None, "unknown table layout", "missing " + ", ".join(missing),
                  " ".join("#" + h for h in header), ts)
        return
    if meta.group is None:
        yield bad(source, kind, None, "group unknown",
                  "name the file consumerProgress.<GROUP>[.anything] or put it under "
                  "group=<GROUP>/", "", ts)
        return
    ncols = len(header)
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < ncols:
            yield bad(source, kind, lineno, "malformed row", f"expected {ncols} columns", s, ts)
            continue
        vals = dict(zip(header[:-1], toks[: ncols - 1], strict=False))
        vals[header[-1]] = " ".join(toks[ncols - 1:])
        try:
            qid = int(vals["QID"])
            bo = int(vals["Broker Offset"])
            co = int(vals["Consumer Offset"])
            inflight = int(vals["Inflight"]) if "Inflight" in vals else None
            last = parse_local_time(vals.get("LastTime", ""), tz) if "LastTime" in vals else None
        except ValueError as exc:
            yield bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(queue_ids=(qid,), broker_offset=bo, consumer_offset=co,
                            inflight=inflight,
                            pull_offset=co + inflight if inflight is not None else None)
        if why is not None:
            yield bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        ip = vals.get("Client IP")
        owner = ip if ip and ip.upper() != "N/A" else None
        yield (OBS, (ts, cluster, meta.group, vals["Topic"], vals["Broker Name"], qid, bo, None,
                     co, co + inflight if inflight is not None else None, last, None, owner,
                     [owner] if owner else None, None, None, None, kind, source))


def _consumer_progress_groups(source: str, rows: list[tuple[int, str]], ts: int,
                              cluster: str) -> Iterator[Rec]:
    # "%-64s  %-6d  %-24s %-5s  %-14s  %-7d  %d": Type/Model are empty when offline or pull
    kind = Kind.CONSUMER_PROGRESS.value
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < 5:
            yield bad(source, kind, lineno, "malformed row", "expected at least 5 columns", s,
                      ts)
            continue
        try:
            count, diff = int(toks[1]), int(toks[-1])
            int(toks[-2])
        except ValueError as exc:
            yield bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(members=count, diff_total=diff)
        if why is not None:
            yield bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        yield (MEMBER, (ts, cluster, toks[0], count, count > 0, diff, kind, source))


def parse_broker_consume_stats(source: str, text: str, ts: int, cluster: str,
                               tz: tzinfo | None) -> Iterator[Rec]:
    """``mqadmin brokerConsumeStats``: rows only for queues with lastTimestamp > 0 and
    diff >= diffLevel (never-consumed queues are absent; nothing is invented for them)."""
    kind = Kind.BROKER_CONSUME_STATS.value
    header, _, rows = _table_lines(text)
    if header is None:
        yield _no_table(source, kind, text, ts)
        return
    need = ("Topic", "Group", "Broker Name", "QID", "Broker Offset", "Consumer Offset")
    missing = [n for n in need if n not in header]
    if missing:
        yield bad(source, kind, None, "unknown table layout", "missing " + ", ".join(missing),
                  " ".join("#" + h for h in header), ts)
        return
    ncols = len(header)
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < ncols:
            yield bad(source, kind, lineno, "malformed row", f"expected {ncols} columns", s, ts)
            continue
        vals = dict(zip(header[:-1], toks[: ncols - 1], strict=False))
        vals[header[-1]] = " ".join(toks[ncols - 1:])
        try:
            qid = int(vals["QID"])
            bo = int(vals["Broker Offset"])
            co = int(vals["Consumer Offset"])
            last = parse_local_time(vals.get("LastTime", ""), tz) if "LastTime" in vals else None
        except ValueError as exc:
            yield bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(queue_ids=(qid,), broker_offset=bo, consumer_offset=co)
        if why is not None:
            yield bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        yield (OBS, (ts, cluster, vals["Group"], vals["Topic"], vals["Broker Name"], qid, bo,
                     None, co, None, last, None, None, None, None, None, None, kind, source))


def parse_topic_status(source: str, text: str, meta: PathMeta, ts: int,
                       cluster: str) -> Iterator[Rec]:
    """``mqadmin topicStatus -t T``: max offsets per queue (joined with store-file offsets)."""
    kind = Kind.TOPIC_STATUS.value
    header, _, rows = _table_lines(text)
    if header is None:
        yield _no_table(source, kind, text, ts)
        return
    need = ("Broker Name", "QID", "Min Offset", "Max Offset")
    missing = [n for n in need if n not in header]
    if missing:
        yield bad(source, kind, None, "unknown table layout", "missing " + ", ".join(missing),
                  " ".join("#" + h for h in header), ts)
        return
    if meta.topic is None:
        yield bad(source, kind, None, "topic unknown",
                  "name the file topicStatus.<TOPIC>[.anything] or put it under topic=<TOPIC>/",
                  "", ts)
        return
    idx = {n: i for i, n in enumerate(header)}
    for lineno, s in rows:
        toks = s.split()
        if len(toks) < 4:
            yield bad(source, kind, lineno, "malformed row", "expected at least 4 columns", s,
                      ts)
            continue
        try:
            qid = int(toks[idx["QID"]])
            mn = int(toks[idx["Min Offset"]])
            mx = int(toks[idx["Max Offset"]])
        except (ValueError, IndexError) as exc:
            yield bad(source, kind, lineno, "malformed row", str(exc), s, ts)
            continue
        why = range_problem(queue_ids=(qid,), broker_offset=mx, min_offset=mn)
        if why is not None:
            yield bad(source, kind, lineno, OUT_OF_RANGE, why, s, ts)
            continue
        yield (POINT, (ts, cluster, meta.topic, toks[idx["Broker Name"]], qid, mx, mn, kind,
                       source))


# --------------------------------------------------------------------------------------------
# log lines

# 5.x client (rmq.client.logback.xml): "yyyy-MM-dd HH:mm:ss.SSS" pinned to GMT+8;
# 4.x client (ClientLogger): "yyyy-MM-dd HH:mm:ss,SSS" in the host's zone;
# broker lock.log (rmq.broker.logback.xml): "yyyy-MM-dd HH:mm:ss" pinned to GMT+8.
_LOG_TS = re.compile(
    r"^\W{0,3}(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})(?:([.,])(\d{1,3}))?"
    r"(Z|[+-]\d{2}:?\d{2})?")
_MQ = r"MessageQueue \[topic=([^,\]]+), brokerName=([^,\]]+), queueId=(\d+)\]"
_MQ_RX = re.compile(_MQ)

_RESULT = re.compile(
    r"(?:client |broker )?rebalanced result changed\. allocateMessageQueueStrategyName=(.*?), "
    r"group=([^,]+), topic=([^,]+), clientId=([^,]+), (.*)$")
_RESULT_SET = re.compile(r"mqAllSize=(\d+), cidAllSize=(\d+), rebalanceResultSize=(\d+), "
                         r"rebalanceResultSet=(\[.*\])\s*$")
_ASSIGNMENT_SET = re.compile(r"assignmentSet=(\[.*\])\s*$")
_ADD = re.compile(r"doRebalance, ([^,]+), add a new (?:pop )?mq, (" + _MQ + r")")
_REMOVE = re.compile(r"doRebalance, ([^,]+), (?:try )?(?:truncateMessageQueueNotMyTopic )?"
                     r"remove unnecessary (?:pop )?mq, (" + _MQ + r")")
_ADD_LOCK_FAILED = re.compile(r"doRebalance, ([^,]+), add a new mq failed, (" + _MQ +
                              r"), because lock failed")
_CLIENT_LOCK = re.compile(r"the message queue locked (OK|Failed), Group: (\S+) (" + _MQ + r")")
_CLIENT_LOCK2 = re.compile(r"message queue lock (OK|Failed), (\S+?),? (" + _MQ + r")")
_CLIENT_UNLOCK = re.compile(r"the message queue unlock OK, Group: (\S+) (" + _MQ + r")")
_CLIENT_UNLOCK2 = re.compile(r"unlock messageQueue\. group:([^,]+), clientId:([^,]+), mq:(" +
                             _MQ + r")")
_NOTIFY = re.compile(r"receive broker's notification\[([^\]]*)\], the consumer group: (\S+) "
                     r"changed, rebalance immediately")
# a consumer's life and offset resets (both versions write the same text):
# DefaultMQPushConsumerImpl#start "the consumer [G] start beginning. messageModel=...";
# MQClientInstance#unregisterClient "unregister client[Producer: P Consumer: G] from broker[...]"
# and DefaultMQPushConsumerImpl#shutdown "the consumer [G] shutdown OK" on a graceful stop;
# RemoteBrokerOffsetStore#persistAll/persist "[persistAll] Group: G ClientId: C
# updateConsumeOffsetToBroker MessageQueue [...] OFFSET" every 5 s for every queue it holds
# (persistConsumerOffsetInterval), so the last one bounds when a killed client died;
# ClientRemotingProcessor#resetOffset "invoke reset offset operation from broker. brokerAddr=A,
# topic=T, group=G, timestamp=TS" (4.x push reset: the client drops its process queues and
# re-adds them ~10 s later); RebalanceImpl#removeProcessQueue "Fix Offset, G, remove
# unnecessary mq, MQ Droped: B" (5.x server-side reset: the pull answers OFFSET_ILLEGAL, the
# queue is dropped and re-added by the next rebalance).
_START = re.compile(r"the consumer \[([^\]]+)\] start beginning\.")
_STOP = re.compile(r"unregister client\[Producer: [^\]]*? Consumer: ([^\]\s]+)\] from broker"
                   r"|the consumer \[([^\]]+)\] shutdown OK")
_PERSIST = re.compile(r"\[persist(?:All)?\] Group: (\S+) ClientId: (\S+) "
                      r"updateConsumeOffsetToBroker (" + _MQ + r") (-?\d+)")
_RESET4 = re.compile(r"invoke reset offset operation from broker[.,] brokerAddr=([^,]*), "
                     r"topic=([^,]+), group=([^,]+), timestamp=(\d+)")
_RESET5 = re.compile(r"Fix Offset, ([^,]+), remove unnecessary mq, (" + _MQ + r")")
CLIENT_KEYWORDS = ("rebalanced result changed", "doRebalance, ", "message queue lock",
                   "message queue unlock", "unlock messageQueue", "receive broker's notification",
                   "] start beginning", "unregister client[", "] shutdown OK",
                   "updateConsumeOffsetToBroker", "invoke reset offset", "Fix Offset, ")

# broker lock.log, 5.x (RebalanceLockManager#...)
_L5_ACQ = re.compile(r"RebalanceLockManager#tryLock(?:Batch)?: lock a message (?:queue )?which "
                     r"has not been locked yet, group=([^,]+), clientId=([^,]+), mq=(" + _MQ +
                     r")")
_L5_TAKE = re.compile(r"RebalanceLockManager#tryLock(?:Batch)?: try to lock a expired message "
                      r"queue, group=([^,]+), mq=(" + _MQ + r"), old client id=([^,]+), "
                      r"new client id=(\S+)")
_L5_CONFLICT = re.compile(r"RebalanceLockManager#tryLock(?:Batch)?: message queue has been "
                          r"locked by other client, group=([^,]+), mq=(" + _MQ + r"), locked "
                          r"client id=([^,]+), current client id=(\S+)")
_L5_UNLOCK = re.compile(r"RebalanceLockManager#unlockBatch: unlock mq, group=([^,]+), "
                        r"clientId=([^,]+), mqs=(.*)$")
_L5_UNLOCK_OTHER = re.compile(r"RebalanceLockManager#unlockBatch: mq locked by other client, "
                              r"group=([^,]+), locked clientId=([^,]+), current clientId=([^,]+)"
                              r", mqs=(.*)$")
_L5_UNLOCK_NONE = re.compile(r"RebalanceLockManager#unlockBatch: mq not locked, group=([^,]+), "
                             r"clientId=([^,]+), mq=(" + _MQ + r")")
_L5_NO_GROUP = re.compile(r"RebalanceLockManager#unlockBatch: group not exist, group=([^,]+), "
                          r"clientId=([^,]+)")
# broker lock.log, 4.x (same file and pattern, other wording)
_L4_ACQ = re.compile(r"tryLock(?:Batch)?, message queue not locked, I got it\. Group: (\S+) "
                     r"NewClientId: (\S+) (" + _MQ + r")")
_L4_TAKE = re.compile(r"tryLock(?:Batch)?, message queue lock expired, I got it\. Group: (\S+) "
                      r"OldClientId: (\S+) NewClientId: (\S+) (" + _MQ + r")")
_L4_CONFLICT = re.compile(r"tryLock(?:Batch)?, message queue locked by other client\. Group: "
                          r"(\S+) OtherClientId: (\S+) NewClientId: (\S+) (" + _MQ + r")")
_L4_UNLOCK_OTHER = re.compile(r"unlockBatch, but mq locked by other client: (\S+), Group: (\S+) "
                              r"(" + _MQ + r") (\S+)")
_L4_UNLOCK_NONE = re.compile(r"unlockBatch, but mq not locked, Group: (\S+) (" + _MQ +
                             r") (\S+)")
_L4_NO_GROUP = re.compile(r"unlockBatch, group not exist, Group: (\S+) (\S+)")
_L4_UNLOCK = re.compile(r"unlockBatch, Group: (\S+) (" + _MQ + r") (\S+)")
LOCK_KEYWORDS = ("RebalanceLockManager#", "tryLock", "unlockBatch")


def line_time(line: str, log_tz: tzinfo | None, pinned_tz: tzinfo) -> int | None:
    """Epoch ms of a log line's leading timestamp.

    An explicit zone wins; ``HH:mm:ss,SSS`` (4.x client) is in ``log_tz`` (host-local by
    default); ``HH:mm:ss.SSS`` (5.x client) and second-resolution broker lines are in
    ``pinned_tz`` (GMT+8 by their logback pattern)."""
    m = _LOG_TS.match(line)
    if not m:
        return None
    y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
    ms = int((m.group(8) or "0").ljust(3, "0"))
    zone_text = m.group(9)
    if zone_text:
        from mqctl.lagjob.inputs import _zone_of

        tz = _zone_of(zone_text)
    elif m.group(7) == ",":
        tz = log_tz
    else:
        tz = pinned_tz
    try:
        return local_ms(y, mo, d, h, mi, s, ms, tz)
    except ValueError:
        return None


def _mqs(text: str) -> list[tuple[str, str, int]]:
    return [(t, b, int(q)) for t, b, q in _MQ_RX.findall(text)]


def _mq1(m: re.Match[str], first: int) -> list[tuple[str, str, int]]:
    return [(m.group(first), m.group(first + 1), int(m.group(first + 2)))]


LogResult = tuple[str, tuple[Any, ...]] | None


def _ev(ts: int, event: str, group: str | None, topic: str | None, client: str | None,
        prev: str | None, mqs: list[tuple[str, str, int]], strategy: str | None = None,
        mq_all: int | None = None, cid_all: int | None = None, detail: str | None = None
        ) -> tuple[str, tuple[Any, ...]]:
    why = range_problem(queue_ids=tuple(q for _, _, q in mqs), mq_all=mq_all, cid_all=cid_all)
    if why is not None:
        return _bad_line(OUT_OF_RANGE, why, ts)
    if topic is None and mqs:
        topic = mqs[0][0]
    return ("log", (ts, event, group, topic, client, prev, mqs, strategy, mq_all, cid_all,
                    detail))


def _bad_line(reason: str, detail: str = "", ts: int | None = None
              ) -> tuple[str, tuple[Any, ...]]:
    """("bad", (reason, detail, ts)): ``ts`` when the line's own time could be read."""
    return ("bad", (reason, detail, ts))


def parse_client_log_line(line: str, log_tz: tzinfo | None,
                          pinned_tz: tzinfo = GMT8) -> LogResult:
    """One ``rocketmq_client.log`` line -> ("log", LOG_FIELDS) | ("bad", (reason, detail, ts)) |
    None for lines that carry nothing for the rebalance history."""
    if not any(k in line for k in CLIENT_KEYWORDS):
        return None
    line = line.rstrip("\r\n")
    ts = line_time(line, log_tz, pinned_tz)
    if "rebalanced result changed" in line:
        m = _RESULT.search(line)
        if not m:
            return _bad_line("unparsed rebalance line", "template did not match", ts)
        strategy, group, topic, client, rest = m.groups()
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        ms = _RESULT_SET.search(rest)
        if ms:
            mq_all, cid_all, size = int(ms.group(1)), int(ms.group(2)), int(ms.group(3))
            mqs = _mqs(ms.group(4))
            if len(mqs) != size:
                return _bad_line("truncated result set",
                                 f"rebalanceResultSize={size} but {len(mqs)} queue(s) listed",
                                 ts)
            return _ev(ts, "result", group, topic, client, None, mqs, strategy, mq_all, cid_all)
        ma = _ASSIGNMENT_SET.search(rest)
        if ma:  # 5.x broker-side (POP) rebalance
            return _ev(ts, "result", group, topic, client, None, _mqs(ma.group(1)), strategy,
                       None, None, "broker-side assignment")
        return _bad_line("unparsed rebalance line", "no result set", ts)
    for rx, event in ((_ADD_LOCK_FAILED, "add_lock_failed"), (_ADD, "add"),
                      (_REMOVE, "remove")):
        m = rx.search(line)
        if m:
            if ts is None:
                return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
            return _ev(ts, event, m.group(1), None, None, None, _mq1(m, 3))
    m = _CLIENT_LOCK.search(line) or _CLIENT_LOCK2.search(line)
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        ev = "client_lock_ok" if m.group(1) == "OK" else "client_lock_failed"
        return _ev(ts, ev, m.group(2), None, None, None, _mq1(m, 4))
    m = _CLIENT_UNLOCK2.search(line)
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return _ev(ts, "client_unlock", m.group(1), None, m.group(2), None, _mq1(m, 4))
    m = _CLIENT_UNLOCK.search(line)
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return _ev(ts, "client_unlock", m.group(1), None, None, None, _mq1(m, 3))
    m = _NOTIFY.search(line)
    if m:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return _ev(ts, "notify", m.group(2), None, None, None, [], detail=m.group(1))
    return _life_line(line, ts)


def _life_line(line: str, ts: int | None) -> LogResult:
    """start / stop / persist / reset lines (see ``_START`` and the others above)."""
    found: LogResult = None
    m = _PERSIST.search(line)
    if m:
        found = _ev(ts or 0, "persist", m.group(1), None, m.group(2), None, _mq1(m, 4),
                    detail=m.group(7))
    elif m := _START.search(line):
        found = _ev(ts or 0, "start", m.group(1), None, None, None, [])
    elif m := _STOP.search(line):
        if m.group(1) != "null":
            found = _ev(ts or 0, "stop", m.group(1) or m.group(2), None, None, None, [])
    elif m := _RESET4.search(line):
        found = _ev(ts or 0, "reset", m.group(3), m.group(2), None, None, [],
                    detail=f"broker {m.group(1)} pushed a reset to {m.group(4)}")
    elif m := _RESET5.search(line):
        found = _ev(ts or 0, "reset", m.group(1), None, None, None, _mq1(m, 3),
                    detail="offset illegal: queue dropped to re-read from the reset offset")
    if found is not None and ts is None:
        return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
    return found  # other lines that merely mention a keyword (e.g. "mq already exists")


def parse_lock_log_line(line: str, pinned_tz: tzinfo = GMT8,
                        log_tz: tzinfo | None = None) -> LogResult:
    """One broker ``lock.log`` line (4.x or 5.x wording) -> like :func:`parse_client_log_line`.

    Events: ``acquire``, ``takeover`` (an expired lock taken by a new client; ``prev_client``
    is the old holder), ``conflict`` (refused: held by ``prev_client``), ``unlock``,
    ``unlock_conflict``, ``unlock_not_locked``, ``unlock_no_group``."""
    if not any(k in line for k in LOCK_KEYWORDS):
        return None
    line = line.rstrip("\r\n")
    ts = line_time(line, log_tz, pinned_tz)

    def need_ts() -> LogResult | None:
        if ts is None:
            return _bad_line("no timestamp", "line does not start with yyyy-MM-dd HH:mm:ss")
        return None

    m = _L5_ACQ.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "acquire", m.group(1), None, m.group(2), None,
                                _mq1(m, 4))
    m = _L5_TAKE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "takeover", m.group(1), None, m.group(7), m.group(6),
                                _mq1(m, 3))
    m = _L5_CONFLICT.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "conflict", m.group(1), None, m.group(7), m.group(6),
                                _mq1(m, 3))
    m = _L5_UNLOCK_OTHER.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_conflict", m.group(1), None, m.group(3),
                                m.group(2), _mqs(m.group(4)))
    m = _L5_UNLOCK.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock", m.group(1), None, m.group(2), None,
                                _mqs(m.group(3)))
    m = _L5_UNLOCK_NONE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_not_locked", m.group(1), None, m.group(2),
                                None, _mq1(m, 4))
    m = _L5_NO_GROUP.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_no_group", m.group(1), None, m.group(2), None,
                                [])
    m = _L4_TAKE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "takeover", m.group(1), None, m.group(3), m.group(2),
                                _mq1(m, 5))
    m = _L4_CONFLICT.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "conflict", m.group(1), None, m.group(3), m.group(2),
                                _mq1(m, 5))
    m = _L4_ACQ.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "acquire", m.group(1), None, m.group(2), None,
                                _mq1(m, 4))
    m = _L4_UNLOCK_OTHER.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_conflict", m.group(2), None, m.group(7),
                                m.group(1), _mq1(m, 4))
    m = _L4_UNLOCK_NONE.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_not_locked", m.group(1), None, m.group(6),
                                None, _mq1(m, 3))
    m = _L4_NO_GROUP.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock_no_group", m.group(1), None, m.group(2), None,
                                [])
    m = _L4_UNLOCK.search(line)
    if m:
        return need_ts() or _ev(ts or 0, "unlock", m.group(1), None, m.group(6), None,
                                _mq1(m, 3))
    if "RebalanceLockManager#" in line or ", I got it" in line:
        return _bad_line("unparsed lock line", "template did not match", ts)
    return None
