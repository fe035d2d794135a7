"""The rows of ``mqctl message show`` (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_local
from mqctl.views.message import TOOLS_CONSUMER_GROUP, message_record, printable

if TYPE_CHECKING:
    from mqctl.remoting.message import StoredMessage
    from mqctl.views.message import MessageAt


def _copy_fields(m: StoredMessage) -> list[tuple[str, str]]:
    """A retry or dead-letter copy (consumerSendMsgBack): the topic it was first sent to
    (RETRY_TOPIC) and the original's offset message id (ORIGIN_MESSAGE_ID)."""
    p = m.properties
    if "RETRY_TOPIC" not in p and "ORIGIN_MESSAGE_ID" not in p:
        return []
    return [("original topic", printable(p.get("RETRY_TOPIC", "-").encode())),
            ("original msg id", printable(p.get("ORIGIN_MESSAGE_ID", "-").encode()))]


def show_result(at: MessageAt, body_bytes: int) -> Result:
    rec = message_record(at, body_bytes)
    m = at.message
    assert m is not None
    body_cell = (rec["bodyHead"] if rec["bodyHead"] is not None else rec["bodyNote"]) or ""
    if rec["bodyTruncated"]:
        body_cell += f" … ({rec['bodyHeadBytes']} of {rec['uncompressedBodySize']} bytes)"
    fields = [
        ("topic", printable(m.topic.encode())),
        ("broker", at.mq.broker_name),
        ("queue id", str(m.queue_id)),
        ("queue offset", str(m.queue_offset)),
        ("store time", f"{format_local(m.store_timestamp)} ({rec['storeTime']})"),
        ("born time", f"{format_local(m.born_timestamp)} ({rec['bornTime']})"),
        ("born host", m.born_host),
        ("store host", m.store_host),
        ("keys", printable(" ".join(m.keys).encode()) or "-"),
        ("tags", printable(m.tags.encode()) if m.tags else "-"),
        ("msg id", m.msg_id),
        ("commit log offset", str(m.commit_log_offset)),
        ("unique key", printable(m.properties.get("UNIQ_KEY", "").encode()) or "-"),
        ("reconsume times", str(m.reconsume_times)),
        *_copy_fields(m),
        ("body size", f"{len(m.body)} bytes" + (
            f" stored, {m.compression} compressed"
            + (f" ({rec['uncompressedBodySize']} bytes plain)"
               if rec["uncompressedBodySize"] is not None else "") if m.compressed else "")),
        ("body", body_cell or "(empty)"),
    ]
    frows = [{"field": k, "value": v} for k, v in fields]
    prows = [{"name": printable(k.encode()), "value": printable(v.encode())}
             for k, v in sorted(m.properties.items())]
    notes = [f"read with one PULL_MESSAGE as group {TOOLS_CONSUMER_GROUP} without the commit "
             f"flag: no group's offset moved (queue {at.mq.broker_name}/{at.mq.queue_id} "
             f"holds offsets {at.min_offset} to {at.max_offset - 1})"]
    return Result([Table([Column("field", "FIELD"), Column("value", "VALUE")], frows,
                         title=f"message at {at.mq.topic} {at.mq.broker_name}/"
                               f"{at.mq.queue_id} offset {at.offset}", name="message"),
                   Table([Column("name", "PROPERTY"), Column("value", "VALUE")], prows,
                         title="properties", name="properties")],
                  data=rec, notes=notes)
