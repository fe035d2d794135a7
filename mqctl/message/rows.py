"""The rows and notes of ``message find``, ``message track`` and ``group dlq`` (pure).

Cluster text (keys, tags, unique keys, topics, bodies) is escaped before it reaches a
terminal: bodies with ``message show``'s rule (:func:`mqctl.views.message.body_head`:
bounded, ``\\xNN`` for other bytes), the rest by the renderer (:func:`mqctl.render.printable`);
JSON, YAML and CSV keep the raw values.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.message.find import DEFAULT_QUERY_MAX_NUM, MAX_MSGS_NUM_BATCH
from mqctl.message.track import STATES
from mqctl.remoting.message import to_record
from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_duration, format_local, format_ms
from mqctl.views.message import body_head

if TYPE_CHECKING:
    from mqctl.message.dlq import GroupDlq
    from mqctl.message.find import FindResult, Found
    from mqctl.message.track_capture import TrackResult

PREVIEW_BYTES = 48


def found_record(f: Found, body_bytes: int) -> dict[str, Any]:
    """JSON of one message found: ``message show``'s record, where it was read, and for a
    retry or dead-letter copy the original topic and id."""
    m = f.message
    return {"brokerName": f.broker, **to_record(m), **body_head(m, body_bytes),
            "originalTopic": m.properties.get("RETRY_TOPIC"),
            "originalMsgId": m.properties.get("ORIGIN_MESSAGE_ID")}


def _found_row(f: Found, body_bytes: int) -> dict[str, Any]:
    m = f.message
    head = body_head(m, body_bytes)
    preview = head["bodyHead"] if head["bodyHead"] is not None else head["bodyNote"]
    if head["bodyTruncated"]:
        preview = f"{preview}…"
    return {"storeTime": format_ms(m.store_timestamp) or None, "tags": m.tags,
            "broker": f.broker, "queue": m.queue_id, "offset": m.queue_offset,
            "stored": format_local(m.store_timestamp), "born_host": m.born_host,
            "keys_text": " ".join(m.keys), "unique_key": m.properties.get("UNIQ_KEY"),
            "reconsume": m.reconsume_times, "body_size": len(m.body), "preview": preview,
            "original_topic": m.properties.get("RETRY_TOPIC"),
            "original_id": m.properties.get("ORIGIN_MESSAGE_ID")}


FIND_COLUMNS = [
    Column("broker", "BROKER"), Column("queue", "QUEUE", "right"),
    Column("offset", "OFFSET", "right"), Column("stored", "STORED", raw="storeTime"),
    Column("born_host", "BORN HOST", drop=3), Column("keys_text", "KEYS", drop=2),
    Column("tags", "TAGS"), Column("unique_key", "UNIQUE KEY", drop=4),
    Column("reconsume", "RECONSUME", "right", drop=5),
    Column("body_size", "BODY", "right", drop=6), Column("preview", "PREVIEW", drop=1),
]


def find_notes(res: FindResult) -> list[str]:
    notes = []
    shown, total = len(res.messages), res.total
    if res.how in ("key", "unique-key"):
        window = "any store time" if res.begin_ms is None and res.end_ms is None else (
            f"stored {format_ms(res.begin_ms) or 'any'} .. {format_ms(res.end_ms) or 'any'}")
        cap = DEFAULT_QUERY_MAX_NUM if res.how == "unique-key" else MAX_MSGS_NUM_BATCH
        notes.append(f"QUERY_MESSAGE on {len(res.answers)} broker(s) of {res.topic}, {window}; "
                     f"each broker's index returns at most {cap} record(s) per key, newest "
                     "first" + (" (defaultQueryMaxNum, whatever maxNum says)"
                                if res.how == "unique-key" else " (maxMsgsNumBatch)"))
        if res.capped_by:
            notes.append(f"{', '.join(res.capped_by)} returned as many as it may: there may "
                         "be more; narrow the window with --time FROM..TO")
        for u, n in sorted(res.duplicates.items()):
            notes.append(f"unique key {u} is stored {n} times (a producer that sent again "
                         "keeps its unique key: MessageClientIDSetter)")
    elif res.how == "time" and res.queue is not None:
        why = {"end": "the end of the range", "queue-end": "the end of the queue",
               "limit": f"--limit {res.limit}"}.get(res.stopped_by or "", "-")
        notes.append(f"read {res.queue.broker_name}/{res.queue.queue_id} from the offset "
                     "SEARCH_OFFSET_BY_TIMESTAMP gave, with pulls that commit nothing (group "
                     f"TOOLS_CONSUMER); stopped at {why}")
    if res.stopped and res.how != "time":
        notes.append(f"stopped at {shown} of {total}{'+' if res.capped_by else ''} "
                     f"(--limit {res.limit}): the newest shown")
    for f in res.failures:
        notes.append(f"{f.broker}: not read: {f.message}")
    return notes


def find_result(res: FindResult, body_bytes: int = PREVIEW_BYTES, *,
                body_file: str | None = None, body_written: int | None = None) -> Result:
    rows = [_found_row(f, body_bytes) for f in res.messages]
    notes = find_notes(res)
    if body_file is not None and body_written is not None and res.messages:
        notes.append(f"the body of {res.messages[0].message.msg_id} ({body_written} bytes) "
                     f"written to {body_file}")
    data = {"how": res.how, "topic": res.topic, "value": res.value, "limit": res.limit,
            "found": res.total, "shown": len(rows), "stopped": res.stopped,
            "stoppedBy": res.stopped_by, "cappedBy": res.capped_by,
            "beginTimestamp": res.begin_ms, "endTimestamp": res.end_ms,
            "brokers": [{"broker": a.broker, "returned": a.returned, "matched": a.matched,
                         "cap": a.cap, "indexLastUpdateTimestamp": a.index_last_update_ts}
                        for a in res.answers],
            "messages": [found_record(f, body_bytes) for f in res.messages],
            "failures": [f.to_dict() for f in res.failures],
            "bodyFile": body_file, "bodyBytesWritten": body_written}
    title = f"messages of {res.topic or '-'} by {res.how} {res.value}"
    return Result([Table(FIND_COLUMNS, rows, title=title, name="messages")], data=data,
                  notes=notes)


TRACK_COLUMNS = [
    Column("group", "GROUP"), Column("state", "STATE"), Column("owner", "OWNER"),
    Column("wait", "WAIT", "right", raw="waitSeconds"), Column("evidence", "EVIDENCE"),
]


def track_result(res: TrackResult) -> Result:
    m = res.found.message
    rows = []
    for r in res.rows:
        d = r.to_dict()
        d["wait"] = format_duration(r.wait_ms) if r.wait_ms is not None else None
        d["waitSeconds"] = r.wait_ms / 1000 if r.wait_ms is not None else None
        rows.append(d)
    notes = [f"message {m.msg_id} of {m.topic} {res.found.broker}/{m.queue_id} offset "
             f"{m.queue_offset}, stored {format_local(m.store_timestamp)}, tag "
             f"{m.tags or '-'}, unique key {m.properties.get('UNIQ_KEY') or '-'}"]
    if res.others:
        notes.append(f"{res.others} more message(s) matched: the newest is tracked (give "
                     "--msg-id to pick one)")
    if not rows:
        notes.append(f"no group consumes {m.topic} (QUERY_TOPIC_CONSUME_BY_WHO)")
    if res.scanned:
        notes.append(f"the brokers list online groups by their committed offsets only (5.3.3, "
                     f"apache/rocketmq#9352): {res.scanned} subscription group(s) asked for "
                     "their connection list")
    notes += [f"{g}: kept, though whether it is a group is unknown: {why}"
              for g, why in sorted(res.unverified.items())]
    notes += [f"{f.broker}: its groups not read: {f.message}" for f in res.failures]
    counts = {s: sum(1 for r in res.rows if r.state == s) for s in STATES}
    data = {"message": {"brokerName": res.found.broker, **to_record(m)},
            "groups": rows, "states": {k: v for k, v in counts.items() if v},
            "failures": [f.to_dict() for f in res.failures]}
    return Result([Table(TRACK_COLUMNS, rows, title=f"message {m.msg_id} by group",
                         name="groups")], data=data, notes=notes)


DLQ_COLUMNS = [
    Column("broker", "BROKER"), Column("queue", "QUEUE", "right"),
    Column("offset", "OFFSET", "right"), Column("stored", "STORED", raw="storeTime"),
    Column("original_topic", "ORIGINAL TOPIC"), Column("unique_key", "UNIQUE KEY"),
    Column("reconsume", "RECONSUME", "right"), Column("original_id", "ORIGINAL ID", drop=1),
]
BY_TOPIC_COLUMNS = [
    Column("topic", "ORIGINAL TOPIC", unknown="-"), Column("count", "OF LAST", "right"),
    Column("reconsume", "RECONSUME TIMES"), Column("keys", "UNIQUE KEYS"),
]


def dlq_result(d: GroupDlq) -> Result:
    rows = []
    for x in d.last:
        m = x.message
        rows.append({"broker": x.broker, "queue": m.queue_id, "offset": m.queue_offset,
                     "stored": format_local(m.store_timestamp),
                     "storeTime": format_ms(m.store_timestamp) or None,
                     "original_topic": x.original_topic, "original_id": x.original_id,
                     "unique_key": m.properties.get("UNIQ_KEY"), "reconsume": m.reconsume_times,
                     "tags": m.tags, "keys": m.keys})
    by_topic = [{"topic": t.topic, "count": t.count,
                 "reconsume": f"{t.reconsume_times[0]}..{t.reconsume_times[1]}"
                 if t.reconsume_times[0] != t.reconsume_times[1] else str(t.reconsume_times[0]),
                 "keys": ", ".join(t.unique_keys[:5]) + (" …" if len(t.unique_keys) > 5 else ""),
                 "uniqueKeys": t.unique_keys} for t in d.by_topic]
    notes = [_dlq_summary(d)]
    notes += [f"{f.broker}: not read: {f.message}" for f in d.failures]
    if d.count:
        notes.append(f"resend or inspect one: mqctl message show -t {d.topic} -b BROKER -q 0 "
                     "--offset N; track the original: mqctl message track --msg-id ORIGINAL_ID")
    data = {"group": d.group, "topic": d.topic, "count": d.count,
            "oldestStoreTimestamp": d.oldest_ts, "newestStoreTimestamp": d.newest_ts,
            "oldestStoreTime": format_ms(d.oldest_ts) or None if d.oldest_ts else None,
            "newestStoreTime": format_ms(d.newest_ts) or None if d.newest_ts else None,
            "queues": None if d.queues is None else [
                {"brokerName": q.mq.broker_name, "queueId": q.mq.queue_id,
                 "minOffset": q.min_offset, "maxOffset": q.max_offset, "messages": q.messages}
                for q in d.queues],
            "last": rows, "lastAsked": d.last_asked, "byOriginalTopic": by_topic,
            "failures": [f.to_dict() for f in d.failures]}
    return Result([Table(DLQ_COLUMNS, rows, title=f"last {len(rows)} dead letters of {d.group}",
                         name="last"),
                   Table(BY_TOPIC_COLUMNS, by_topic, title="by original topic",
                         name="byOriginalTopic")], data=data, notes=notes, main="last")


def _dlq_summary(d: GroupDlq) -> str:
    if d.count is None:
        return f"{d.topic}: count unknown (a broker or the name server did not answer)"
    if d.count == 0:
        return f"{d.topic}: no dead letter (the broker creates the topic with the first one)"
    return (f"{d.topic}: {d.count} dead letter(s), stored {format_local(d.oldest_ts)} to "
            f"{format_local(d.newest_ts)}; the last {len(d.last)} below (asked {d.last_asked})")


__all__ = ["find_result", "track_result", "dlq_result"]
