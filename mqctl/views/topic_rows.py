"""The rows and notes of ``mqctl topic status`` and ``mqctl topic consumers`` (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_local, format_ms

if TYPE_CHECKING:
    from mqctl.views.topic import TopicConsumers, TopicStatus


UNKNOWN_TEXT = {"empty": "no message stored", "not-reported": "not reported by the broker"}


def status_result(s: TopicStatus) -> Result:
    rows = []
    for q in s.queues:
        rows.append({
            "broker": q.mq.broker_name, "queue_id": q.mq.queue_id,
            "min_offset": q.min_offset, "max_offset": q.max_offset, "messages": q.messages,
            "last_updated": format_local(q.last_update_ts) or "-",
            "last_update_ts": q.last_update_ts,
            "last_update_time": format_ms(q.last_update_ts) or None,
            "last_update_unknown": q.unknown,
            "perm": ("r" if q.readable else "-") + ("w" if q.writable else "-"),
            "readable": q.readable, "writable": q.writable})
    missing = f" (not included: {', '.join(s.not_included)})" if s.not_included else ""
    total = sum(q.messages for q in s.queues)
    data = {"topic": s.topic, "queues": rows,
            "total": {"queues": len(rows), "messages": total, "complete": not s.failures,
                      "brokers_not_included": s.not_included},
            "putTps": s.put_tps,
            "failures": [f.to_dict() for f in s.failures]}
    cols = [Column("broker", "BROKER"), Column("queue_id", "QID", "right"),
            Column("min_offset", "MIN OFFSET", "right"),
            Column("max_offset", "MAX OFFSET", "right"),
            Column("messages", "MESSAGES", "right"), Column("perm", "PERM", drop=1),
            Column("last_updated", "LAST UPDATED", raw="last_update_time")]
    notes = [f"topic {s.topic}: {len(rows)} queue(s), {total} message(s) held{missing}; put "
             f"TPS " + (f"{s.put_tps:.2f}" if s.put_tps is not None else
                         "- (brokers before 5.3 do not report it)")]
    empty = sum(1 for q in s.queues if q.unknown == "empty")
    if empty:
        notes.append(f"LAST UPDATED `-` on {empty} empty queue(s): no message stored")
    unrep = sum(1 for q in s.queues if q.unknown == "not-reported")
    if unrep:
        notes.append(f"LAST UPDATED `-` on {unrep} queue(s) holding messages: the broker's "
                     "topic stats give no time for their last message (4.x reports the write "
                     "queues only; the offsets of the others come from GET_MIN_OFFSET / "
                     "GET_MAX_OFFSET)")
    return Result([Table(cols, rows, title=f"status of {s.topic}", name="queues")], data=data,
                  notes=notes)


def consumers_result(c: TopicConsumers) -> Result:
    rows = []
    for g in c.groups:
        rows.append({
            "group": g.group,
            "online": g.online, "state": ("online" if g.online else "offline"
                                          if g.online is False else "-"),
            "members": g.members, "message_model": g.message_model,
            "consume_type": g.consume_type, "subscription": g.expression,
            "lag": g.lag, "lag_cell": "-" if g.lag is None else str(g.lag),
            "lag_unknown": g.lag_unknown,
            "queues": g.queues,
            "consume_tps": round(g.consume_tps, 3) if g.consume_tps is not None else None,
            "lag_not_included": g.lag_not_included,
            "not_included": ", ".join(g.lag_not_included) or None,
            "listed_by": g.listed_by, "system": g.system,
            "unverified": c.unverified.get(g.group)})
    data = {"topic": c.topic, "groups": rows, "hiddenSystemGroups": c.hidden_system,
            "dropped": [{"name": d.name, "listed_by": d.listed_by, "reason": d.reason}
                        for d in c.dropped],
            "brokers_not_included": c.not_included,
            "failures": [f.to_dict() for f in c.failures]}
    cols = [Column("group", "GROUP"), Column("state", "STATE", raw="online"),
            Column("members", "MEMBERS", "right"), Column("message_model", "MODEL"),
            Column("subscription", "SUBSCRIPTION", drop=3),
            Column("lag_cell", "LAG", "right", raw="lag"),
            Column("consume_tps", "CONSUME TPS", "right", drop=2),
            Column("listed_by", "LISTED BY", drop=1)]
    if any(g.lag_not_included for g in c.groups):
        cols.append(Column("not_included", "LAG NOT INCLUDED", raw="not_included"))
    missing = f" (not included: {', '.join(c.not_included)})" if c.not_included else ""
    notes = [f"{len(rows)} group(s) consume {c.topic}{missing}: groups online with a "
             "subscription to it, or with committed offsets on it (QUERY_TOPIC_CONSUME_BY_WHO)"]
    for d in c.dropped:
        notes.append(f"dropped {d.name} (listed by {', '.join(d.listed_by)}): {d.reason}")
    if any(d.name == c.topic for d in c.dropped):
        notes.append(f"a broker that lists the topic's own name (5.3.3) names online groups "
                     f"only through their committed offsets: an online group that has not "
                     f"committed on {c.topic} yet is not listed (see `mqctl groups`)")
    for name, why in sorted(c.unverified.items()):
        notes.append(f"{name}: shown, but whether it is a group is unknown: {why}")
    if c.hidden_system:
        notes.append(f"{len(c.hidden_system)} RocketMQ system group(s) not shown "
                     f"({', '.join(c.hidden_system)}): --include-system")
    if any(g.lag_unknown == "not-read" for g in c.groups):
        notes.append("LAG `-`: no broker's consume stats could be read for that group")
    if any(g.lag_unknown == "no-queue" for g in c.groups):
        notes.append("LAG `-`: the brokers list no queue of the topic for that group (no "
                     "offset of it there): its lag is unknown, not 0")
    if any(g.lag_unknown == "broadcasting" for g in c.groups):
        notes.append("LAG `-` for BROADCASTING groups: each client keeps its own offsets in a "
                     "local file (LocalFileOffsetStore), so the brokers' numbers are not the "
                     "group's progress")
    return Result([Table(cols, rows, title=f"groups consuming {c.topic}", name="groups")],
                  data=data, notes=notes)
