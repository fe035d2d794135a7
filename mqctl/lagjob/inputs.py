"""Input kinds, their detection, and what a file's path says about it (pure Python, no Spark).

The lag job reads any mix of inputs (``docs/exports.md`` section 2). Each input argument is a
path, a glob, a directory (read recursively) or any Spark-readable URI, optionally prefixed with
an explicit kind: ``consumer-progress=/exports/cp.txt``. Without a prefix the kind is found from
the file name, then from the first bytes of the file.

Path metadata (:func:`path_meta`) fills in what a capture does not carry itself: the capture
time (a timestamp in the file name or a directory, else the file's modification time), the
broker of store files, the topic of ``topicStatus`` captures, the group of ``consumerProgress -g``
captures, the cluster and the client of a client log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from enum import StrEnum
from itertools import pairwise
from urllib.parse import unquote

from mqctl.errors import UsageError
from mqctl.lagoptions import GMT8 as GMT8  # (re-exported: the pinned zone of broker logs)
from mqctl.lagoptions import parse_tz as parse_tz

# what a local input's ``file:`` URI loses in the outputs (a local path; as Spark's
# regexp_replace and Arrow's replace_substring_regex read it: the same pattern in both)
DISPLAY_SOURCE = r"^file:(//)?"


class Kind(StrEnum):
    SNAPSHOT = "snapshot"
    CONSUMER_OFFSET = "consumer-offset"
    TOPICS = "topics"
    SUBSCRIPTION_GROUP = "subscription-group"
    CONSUMER_PROGRESS = "consumer-progress"
    BROKER_CONSUME_STATS = "broker-consume-stats"
    TOPIC_STATUS = "topic-status"
    CLIENT_LOG = "client-log"
    LOCK_LOG = "lock-log"


# families read the same way by Spark
WHOLE_FILE_KINDS = (Kind.CONSUMER_OFFSET, Kind.TOPICS, Kind.SUBSCRIPTION_GROUP,
                    Kind.CONSUMER_PROGRESS, Kind.BROKER_CONSUME_STATS, Kind.TOPIC_STATUS)
STORE_KINDS = (Kind.CONSUMER_OFFSET, Kind.TOPICS, Kind.SUBSCRIPTION_GROUP)

# what a user may write before '=' (mqadmin's command names are accepted as aliases)
KIND_ALIASES: dict[str, Kind] = {k.value: k for k in Kind}
KIND_ALIASES.update({
    "snapshots": Kind.SNAPSHOT, "consumerOffset": Kind.CONSUMER_OFFSET,
    "lmqConsumerOffset": Kind.CONSUMER_OFFSET, "subscriptionGroup": Kind.SUBSCRIPTION_GROUP,
    "consumerProgress": Kind.CONSUMER_PROGRESS, "brokerConsumeStats": Kind.BROKER_CONSUME_STATS,
    "topicStatus": Kind.TOPIC_STATUS, "rocketmq_client": Kind.CLIENT_LOG, "lock": Kind.LOCK_LOG,
})

# store files that sit next to the ones we read and carry nothing for lag: reported, not read
IGNORED_STORE_NAMES = ("delayOffset.json", "consumerFilter.json", "consumerOrderInfo.json",
                       "topicQueueMapping.json", "messageRequestMode.json", "timercheck",
                       "timermetrics", "brokerConfig", "broker.conf")
# the stems of every store file name above and of the ones we read
_STORE_STEMS = frozenset({"consumerOffset", "lmqConsumerOffset", "topics", "subscriptionGroup",
                          "delayOffset", "consumerFilter", "consumerOrderInfo",
                          "topicQueueMapping", "messageRequestMode"})


@dataclass(frozen=True, slots=True)
class InputSpec:
    """One input argument: ``PATH`` or ``KIND=PATH``."""

    path: str
    kind: Kind | None = None


def parse_input_spec(text: str) -> InputSpec:
    """``snapshot=/data/*.jsonl`` -> explicit kind; anything else is a path.

    Only a known kind name before the first ``=`` counts, so Hive-style paths
    (``/exports/broker=broker-a/...``) stay paths.
    """
    s = text.strip()
    if not s:
        raise UsageError("empty input path", hint="pass a file, directory, glob or KIND=PATH")
    head, sep, rest = s.partition("=")
    if sep and "/" not in head and ":" not in head:
        kind = KIND_ALIASES.get(head)
        if kind is not None:
            if not rest.strip():
                raise UsageError(f"no path after {head}=", hint="write KIND=PATH")
            return InputSpec(rest.strip(), kind)
        if re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", head) and not _looks_like_hive(s):
            raise UsageError(f"unknown input kind {head!r} in {text!r}",
                             hint="kinds: " + ", ".join(k.value for k in Kind))
    return InputSpec(s)


def _looks_like_hive(s: str) -> bool:
    # "date=2024-06-01/..." is a relative Hive-style path; "name=/abs/path" or "name=s3a://..."
    # is a kind prefix (then an unknown one)
    rest = s.partition("=")[2]
    return "/" in rest and not rest.startswith(("/", "~", ".")) and "://" not in rest


def basename(path: str) -> str:
    p = path.rstrip("/")
    return p.rsplit("/", 1)[-1]


def _strip_compression(name: str) -> str:
    for ext in (".gz", ".bz2", ".deflate", ".zst", ".lz4", ".snappy"):
        if name.endswith(ext):
            return name[: -len(ext)]
    return name


def is_hidden(name: str) -> bool:
    """Hidden, temporary and Spark/Hadoop side files are never inputs."""
    return (name.startswith((".", "_")) or name.endswith((".crc", ".tmp", ".swp"))
            or name == "_SUCCESS")


_BROKER_PREFIX = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*?)_(?=[a-z][A-Za-z]*\.json)")


def _store_name(name: str) -> str:
    """``broker-a_consumerOffset.json`` (a store file copied out with its broker as a prefix, as
    the reference corpus does) -> ``consumerOffset.json``; other names unchanged."""
    m = _BROKER_PREFIX.match(name)
    if m and name[m.end():].split(".", 1)[0] in _STORE_STEMS:
        return name[m.end():]
    return name


def ignored_reason(name: str) -> str | None:
    """Files that are known and deliberately not read (counted in the summary)."""
    n = _store_name(_strip_compression(name))
    if n.endswith(".bak"):
        return "store backup (.bak)"
    for known in IGNORED_STORE_NAMES:
        if n == known or n.startswith(known + "."):
            return f"store file without lag data ({known})"
    return None


def kind_from_name(name: str) -> Kind | None:
    """The kind a file name alone decides, or ``None`` (then the content is sniffed)."""
    n = _store_name(_strip_compression(name))
    if n.endswith((".jsonl", ".ndjson")) or n.startswith("mqctl-snapshot-"):
        return Kind.SNAPSHOT
    if n.startswith(("consumerOffset.json", "lmqConsumerOffset.json")):
        return Kind.CONSUMER_OFFSET
    if n.startswith("topics.json"):
        return Kind.TOPICS
    if n.startswith("subscriptionGroup.json"):
        return Kind.SUBSCRIPTION_GROUP
    if n.startswith("consumerProgress"):
        return Kind.CONSUMER_PROGRESS
    if n.startswith("brokerConsumeStats"):
        return Kind.BROKER_CONSUME_STATS
    if n.startswith("topicStatus"):
        return Kind.TOPIC_STATUS
    if n.startswith("rocketmq_client") and (".log" in n or n.endswith("log")):
        return Kind.CLIENT_LOG
    if n.startswith("lock") and ".log" in n:
        return Kind.LOCK_LOG
    return None


_CO_TABLE = re.compile(r'"offsetTable"\s*:\s*\{\s*"[^"]*@')
_LOCK_HINTS = ("RebalanceLockManager#", "tryLockBatch", "tryLock,", "unlockBatch")
_CLIENT_HINTS = ("doRebalance, ", "rebalanced result changed", "the message queue locked",
                 "message queue lock ", "RebalanceService", "updateConsumeOffsetToBroker")


def kind_from_content(head: str) -> Kind | None:
    """Sniff the first bytes (decoded, at most ~64 KiB) of a file."""
    text = head.lstrip("\ufeff")
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    cmd = mqadmin_command(first)
    if cmd is not None:  # a recorded mqadmin command: its name decides (None: not read)
        return COMMAND_KINDS.get(cmd.command)
    if first.startswith("#Consumer Properties#"):
        # a ConsumerRunningInfo dump (consumerStatus): its "#Consumer Offset#" table has no
        # broker offsets, so it would pass for a consumerProgress table
        return None
    if first.startswith("{") and '"schema"' in first and "mqctl.snapshot/" in first:
        return Kind.SNAPSHOT
    if first.startswith("{"):  # store files are JSON objects (not a text that quotes them)
        if '"topicConfigTable"' in text:
            return Kind.TOPICS
        if '"subscriptionGroupTable"' in text:
            return Kind.SUBSCRIPTION_GROUP
        if _CO_TABLE.search(text) or ('"offsetTable"' in text and '"groupTopicMap"' in text):
            return Kind.CONSUMER_OFFSET
    for ln in text.splitlines():
        s = ln.strip()
        if not s.startswith("#"):
            continue
        names = header_names(s)
        if "Group" in names and "Broker Name" in names and "QID" in names:
            return Kind.BROKER_CONSUME_STATS
        if "Topic" in names and "QID" in names and "Consumer Offset" in names:
            return Kind.CONSUMER_PROGRESS
        if "Group" in names and "Count" in names and "Diff Total" in names:
            return Kind.CONSUMER_PROGRESS
        if "Broker Name" in names and "Min Offset" in names and "Max Offset" in names:
            return Kind.TOPIC_STATUS
    if any(h in text for h in _LOCK_HINTS):
        return Kind.LOCK_LOG
    if any(h in text for h in _CLIENT_HINTS):
        return Kind.CLIENT_LOG
    return None


# mqadmin sub-commands whose output the report reads
COMMAND_KINDS: dict[str, Kind] = {"consumerProgress": Kind.CONSUMER_PROGRESS,
                                  "brokerConsumeStats": Kind.BROKER_CONSUME_STATS,
                                  "topicStatus": Kind.TOPIC_STATUS}


@dataclass(frozen=True, slots=True)
class MqadminCommand:
    """A capture's first line ``$ mqadmin <command> <args>   # <UTC time>``: the command line an
    operator (or a capture script) recorded above mqadmin's output."""

    command: str
    group: str | None = None
    topic: str | None = None
    ts: int | None = None


_CMD_LINE = re.compile(r"^\$\s*(?:\S*/)?mqadmin(?:\.sh|\.cmd)?\s+(\S+)(.*?)(?:#\s*(\S+)\s*)?$")


def mqadmin_command(line: str) -> MqadminCommand | None:
    """``$ mqadmin consumerProgress -g G -s true   # 2026-11-23T20:56:25.643Z`` -> the command,
    its ``-g``/``-t`` values and the time after ``#`` (zone-less times are UTC)."""
    m = _CMD_LINE.match(line.strip())
    if not m:
        return None
    args = m.group(2).split()
    opts: dict[str, str] = {}
    for flag, value in pairwise(args):
        if flag.startswith("-") and not value.startswith("-"):
            opts.setdefault(flag, value)
    ts = timestamp_in(m.group(3), UTC) if m.group(3) else None
    return MqadminCommand(m.group(1), opts.get("-g") or opts.get("--consumerGroup"),
                          opts.get("-t") or opts.get("--topic"), ts)


def header_names(line: str) -> list[str]:
    """mqadmin header names: split on ``#`` (names contain spaces, e.g. ``#Broker Name``)."""
    return [p.strip() for p in line.strip().split("#")[1:] if p.strip()]


# --------------------------------------------------------------------------------------------
# time zones and path metadata

# parse_tz and GMT8 live with the options that read zones (mqctl/lagoptions.py)


def local_ms(y: int, mo: int, d: int, h: int, mi: int, s: int, ms: int,
             tz: tzinfo | None) -> int:
    """Epoch ms of a wall-clock time in ``tz`` (``None`` = this machine's zone)."""
    dt = datetime(y, mo, d, h, mi, s, ms * 1000)
    if tz is not None:
        dt = dt.replace(tzinfo=tz)
    return int(dt.timestamp() * 1000)


def _zone_of(text: str | None) -> tzinfo | None:
    if not text:
        return None
    if text in ("Z", "z"):
        return UTC
    sign = -1 if text[0] == "-" else 1
    digits = text[1:].replace(":", "")
    return timezone(sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:4] or 0)))


_TS_DASHED = re.compile(
    r"(?<![0-9])([0-9]{4})-([0-9]{2})-([0-9]{2})[T_ -]([0-9]{2})[-:]([0-9]{2})[-:]([0-9]{2})"
    r"(?:[.,]([0-9]{1,3}))?(Z|[+-][0-9]{2}:?[0-9]{2})?(?![0-9])")
_TS_COMPACT = re.compile(
    r"(?<![0-9])([0-9]{4})([0-9]{2})([0-9]{2})[T_-]([0-9]{2})([0-9]{2})([0-9]{2})"
    r"(?:[.,]([0-9]{1,3}))?(Z|[+-][0-9]{2}:?[0-9]{2})?(?![0-9])")
_TS_EPOCH = re.compile(r"(?<![0-9])(1[0-9]{12})(?![0-9])")


def timestamp_in(segment: str, tz: tzinfo | None) -> int | None:
    """A capture time written in one path segment (file or directory name), in epoch ms.

    Accepted: ``2024-06-01T10-00-00``, ``2024-06-01T10:00:00.123Z``, ``2024-06-01_10-00-00``,
    ``20240601T100000.123Z`` (mqctl snapshot names), ``20240601-100000``, epoch ms
    (``1717200000000``), and Hive ``ts=<any of those>``. Without a zone, ``tz`` applies.
    """
    for rx in (_TS_DASHED, _TS_COMPACT):
        m = rx.search(segment)
        if m:
            y, mo, d, h, mi, s = (int(m.group(i)) for i in range(1, 7))
            frac = m.group(7)
            ms = int(frac.ljust(3, "0")) if frac else 0
            zone = _zone_of(m.group(8))
            try:
                return local_ms(y, mo, d, h, mi, s, ms, zone if zone is not None else tz)
            except ValueError:
                continue
    m = _TS_EPOCH.search(segment)
    if m:
        return int(m.group(1))
    return None


_DATE_ONLY = re.compile(r"^[0-9]{4}-?[0-9]{2}-?[0-9]{2}$")
_NAME_RX = r"[%|A-Za-z0-9_-]+"  # TopicValidator / group names: no dots


@dataclass(frozen=True, slots=True)
class PathMeta:
    capture_ts: int | None = None
    broker: str | None = None
    topic: str | None = None
    group: str | None = None
    cluster: str | None = None
    client: str | None = None


def local_path(uri: str) -> str:
    """``file:/x`` / ``file:///x`` -> ``/x`` (URL-decoded); other URIs unchanged."""
    if uri.startswith("file://"):
        return unquote(uri[len("file://"):])
    if uri.startswith("file:"):
        return unquote(uri[len("file:"):])
    return uri


def _segments(path: str) -> list[str]:
    p = local_path(path)
    if "://" in p:
        p = p.split("://", 1)[1]
        p = p.split("/", 1)[1] if "/" in p else ""
    return [s for s in p.split("/") if s]


def path_meta(path: str, tz: tzinfo | None = None, kind: Kind | None = None) -> PathMeta:
    """What a path says about its file (see ``docs/exports.md`` section 2.2).

    * ``key=value`` directory segments (Hive style) win: ``broker=``, ``topic=``, ``group=``,
      ``cluster=``, ``client=``, ``ts=``;
    * capture time: the nearest timestamp, looking at the file name first and then each
      directory upwards (:func:`timestamp_in`);
    * topic (topicStatus) / group (consumerProgress -g): the file name
      ``topicStatus.<TOPIC>[.anything]`` / ``consumerProgress.<GROUP>[.anything]``;
    * broker (store files): the nearest directory above the file that is not ``config``,
      ``store``, a date, a timestamp or a ``key=value`` segment (``.../broker-a/2024-06-01T10-00-00
      /consumerOffset.json`` and ``.../2024-06-01T10-00-00/broker-a/consumerOffset.json`` both
      give ``broker-a``);
    * client (client logs): the nearest such directory too (``.../10.0.0.5/rocketmq_client.log``).
    """
    segs = _segments(path)
    if not segs:
        return PathMeta()
    name, dirs = segs[-1], segs[:-1]
    hive: dict[str, str] = {}
    for s in dirs:
        k, sep, v = s.partition("=")
        if sep and k and v:
            hive.setdefault(k.lower(), v)
    ts: int | None = None
    if "ts" in hive:
        ts = timestamp_in(hive["ts"], tz)
    if ts is None:
        for s in [name, *reversed(dirs)]:
            ts = timestamp_in(s, tz)
            if ts is not None:
                break
    topic = hive.get("topic")
    group = hive.get("group")
    stem = re.sub(r"[.](txt|out|log|text)$", "", _strip_compression(name))
    m = re.match(r"^(topicStatus|consumerProgress)[.](" + _NAME_RX + r")(?:[.].*)?$", stem)
    if m:
        if m.group(1) == "topicStatus" and topic is None:
            topic = m.group(2)
        elif m.group(1) == "consumerProgress" and group is None:
            group = m.group(2)
    nearest = _nearest_plain_dir(dirs)
    broker = hive.get("broker")
    client = hive.get("client")
    if broker is None and kind in STORE_KINDS:
        plain = _strip_compression(name)
        stored = _store_name(plain)
        broker = plain[: -len(stored) - 1] if stored != plain else nearest
    if client is None and kind == Kind.CLIENT_LOG:
        client = nearest
    return PathMeta(capture_ts=ts, broker=broker, topic=topic, group=group,
                    cluster=hive.get("cluster"), client=client)


def _nearest_plain_dir(dirs: list[str]) -> str | None:
    for s in reversed(dirs):
        if s in ("config", "store", "rocketmqlogs", "logs") or "=" in s:
            continue
        if _DATE_ONLY.match(s) or timestamp_in(s, UTC) is not None:
            continue
        return s
    return None
