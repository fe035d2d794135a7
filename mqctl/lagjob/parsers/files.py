"""Whole files: one store file or mqadmin capture to its records (:func:`parse_file`)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import tzinfo

from mqctl.lagjob.inputs import Kind, PathMeta, mqadmin_command
from mqctl.lagjob.parsers.common import OUT_OF_RANGE, Rec, bad, range_problem
from mqctl.lagjob.parsers.mqadmin import (
    parse_broker_consume_stats,
    parse_consumer_progress,
    parse_topic_status,
)
from mqctl.lagjob.parsers.store import parse_consumer_offset, parse_subscription_group, parse_topics


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
