"""Rows and the JSON document of ``mqctl allocate`` (pure; :mod:`mqctl.render` formats them).

JSON shape (stable; docs/allocate.md)::

    {"strategy": str, "group": str, "topics": [str],
     "assignments": {clientId: [{"topic", "brokerName", "queueId"}, ...]},
     "unassigned": [queue, ...], "idle": [clientId, ...],
     "duplicates": {clientId: count}, "notes": [str, ...],
     # what-if only (--add-consumer / --remove-consumer / --compare):
     "moves": [{"queue": queue, "from": clientId|null, "to": clientId|null}],
     "before": {"strategy", "assignments", "unassigned", "idle"}, "summary": {...},
     # live only:
     "live": {...}, "strategySource": "clients"|"option"|"default",
     "clientStrategies": {clientId: strategy}, "warnings": [str, ...],
     and with --against-live "differences": [...]}
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from mqctl.allocate.base import Allocation, java_key, mq_key
from mqctl.allocate.plan import LiveDifference, WhatIf, balance_line
from mqctl.allocate.registry import StrategyInfo
from mqctl.models import MessageQueue
from mqctl.render import Column, Result, Table

if TYPE_CHECKING:
    from mqctl.allocate.live import LiveGroup, LiveReports, StrategyChoice
    from mqctl.render import Result, Table

MAX_LISTED = 10


def _ranges(ids: Sequence[int]) -> str:
    parts: list[str] = []
    start = prev = None
    for i in ids:
        if start is None:
            start = prev = i
        elif prev is not None and i == prev + 1:
            prev = i
        else:
            parts.append(str(start) if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        parts.append(str(start) if start == prev else f"{start}-{prev}")
    return ",".join(parts)


def compact_queues(queues: Iterable[MessageQueue], with_topic: bool = False) -> str:
    """``broker-a:0-3,7 broker-b:1`` (``Topic/broker-a:0-3`` when several topics)."""
    by: dict[tuple[str, str], list[int]] = {}
    for mq in sorted(set(queues), key=mq_key):
        by.setdefault((mq.topic, mq.broker_name), []).append(mq.queue_id)
    return " ".join((f"{t}/" if with_topic else "") + f"{b}:{_ranges(ids)}"
                    for (t, b), ids in by.items())


def queue_label(mq: MessageQueue, with_topic: bool) -> str:
    return f"{mq.topic}/{mq.short}" if with_topic else mq.short


def _listed(items: Sequence[str]) -> str:
    more = f" and {len(items) - MAX_LISTED} more" if len(items) > MAX_LISTED else ""
    return ", ".join(items[:MAX_LISTED]) + more


def _multi_topic(*allocs: Allocation) -> bool:
    return len({mq.topic for a in allocs for mq in a.queues}) > 1


def allocation_notes(a: Allocation) -> list[str]:
    notes = list(a.notes)
    with_topic = _multi_topic(a)
    notes.append(f"balance: {balance_line(a.balance())}")
    dups = a.duplicates
    if dups:
        for cid, n in dups.items():
            notes.append(f"client id {cid} appears {n} times (two clients with the same id, "
                         "e.g. a pid collision in containers): every copy computes the same "
                         "share")
    un = a.unassigned
    if un:
        why = " because of the duplicate client id(s)" if dups else ""
        notes.append(f"{len(un)} queue(s) get no consumer{why}: "
                     f"{_listed([queue_label(q, with_topic) for q in un])}")
    idle = a.idle
    if idle:
        notes.append(f"{len(idle)} consumer(s) get no queue: {_listed(idle)}")
    shared = a.shared
    if shared and a.strategy != "broadcasting":
        notes.append(f"{len(shared)} queue(s) go to more than one consumer (each is consumed "
                     "twice)")
    return notes


def allocation_document(a: Allocation) -> dict[str, Any]:
    d = a.to_dict()
    d["topics"] = sorted({mq.topic for mq in a.queues}, key=java_key)
    d["duplicates"] = a.duplicates
    return d


def consumer_table(a: Allocation, title: str | None = None) -> Table:

    with_topic = _multi_topic(a)
    rows = [{"consumer": c, "count": len(a.assignments.get(c, ())),
             "queues": compact_queues(a.assignments.get(c, ()), with_topic)}
            for c in a.distinct_consumers]
    return Table([Column("consumer", "CONSUMER"), Column("count", "COUNT", "right"),
                  Column("queues", "QUEUES")], rows, title=title, name="consumers")


def queue_table(a: Allocation, title: str | None = None) -> Table:

    rows = [{"topic": mq.topic, "broker": mq.broker_name, "queue": mq.queue_id,
             "owner": ", ".join(owners) or "(none)"}
            for mq, owners in sorted(a.owners().items(), key=lambda kv: mq_key(kv[0]))]
    return Table([Column("topic", "TOPIC"), Column("broker", "BROKER"),
                  Column("queue", "QUEUE", "right"), Column("owner", "OWNER")], rows,
                 title=title, name="queues")


def _title(a: Allocation) -> str:
    g = f" for group {a.group}" if a.group else ""
    n, d = len(a.consumers), len(a.distinct_consumers)
    distinct = f" ({d} distinct ids)" if d != n else ""
    return f"{a.strategy}{g}: {len(a.queues)} queue(s), {n} consumer(s){distinct}"


def allocation_result(a: Allocation, by_queue: bool = False) -> Result:

    table = queue_table(a, _title(a)) if by_queue else consumer_table(a, _title(a))
    doc = allocation_document(a)
    notes = allocation_notes(a)
    doc["notes"] = notes
    return Result([table], data=doc, notes=notes)


def whatif_result(w: WhatIf, by_queue: bool = False) -> Result:

    with_topic = _multi_topic(w.before, w.after)
    move_rows = [{"queue": queue_label(m.queue, with_topic), "from": m.source or "(none)",
                  "to": m.target or "(none)"} for m in w.moves]
    tables = [Table([Column("queue", "QUEUE", kind="key"), Column("from", "FROM", kind="id"),
                     Column("to", "TO", kind="id")],
                    move_rows, title=f"moves: {w.moved_queues} of {len(w.after.queues)} "
                                     "queue(s) change owner", name="moves")]
    # numbers stay numbers (CSV: empty when unknown, plain signed ints); the table shows
    # "-" and "+2" (Column.unknown, Column.signed)
    delta_rows = [{"consumer": d.consumer, "before": d.before, "after": d.after,
                   "delta": d.delta,
                   "change": ("added" if d.before is None else "removed" if d.after is None
                              else "")}
                  for d in w.deltas()]
    tables.append(Table([Column("consumer", "CONSUMER", kind="id"),
                         Column("before", "BEFORE", "right"),
                         Column("after", "AFTER", "right"),
                         Column("delta", "DELTA", "right", signed=True),
                         Column("change", "CHANGE")], delta_rows,
                        title=f"queues per consumer: {w.before.strategy} -> {w.after.strategy}",
                        name="counts"))
    if by_queue:
        ob, oa = w.before.owners(), w.after.owners()
        rows = [{"topic": mq.topic, "broker": mq.broker_name, "queue": mq.queue_id,
                 "before": ", ".join(ob.get(mq, [])) or "(none)",
                 "after": ", ".join(oa.get(mq, [])) or "(none)",
                 "moved": set(ob.get(mq, [])) != set(oa.get(mq, []))}
                for mq in sorted(set(ob) | set(oa), key=mq_key)]
        tables.append(Table([Column("topic", "TOPIC", kind="key"),
                             Column("broker", "BROKER", kind="key"),
                             Column("queue", "QUEUE", "right"),
                             Column("before", "BEFORE", kind="id"),
                             Column("after", "AFTER", kind="id"),
                             Column("moved", "MOVED", kind="low")], rows,
                            title="queues", name="queues"))
    total = len(w.after.queues)
    pct = f" ({100 * w.moved_queues / total:.0f}%)" if total else ""
    notes = [f"{w.moved_queues} of {total} queue(s) move{pct}",
             f"before ({w.before.strategy}): {balance_line(w.before.balance())}",
             f"after ({w.after.strategy}): {balance_line(w.after.balance())}"]
    after_notes = [n for n in allocation_notes(w.after) if not n.startswith("balance:")]
    notes += [f"after: {n}" for n in after_notes]
    doc = allocation_document(w.after)
    doc["moves"] = [m.to_dict() for m in w.moves]
    doc["before"] = w.before.to_dict()
    doc["summary"] = w.summary()
    doc["notes"] = notes
    return Result(tables, data=doc, notes=notes)


def strategies_result(infos: Sequence[StrategyInfo]) -> Result:

    rows = [{"name": i.name, "origin": i.origin, "version": i.version,
             "java_name": i.java_name or "", "description": i.description} for i in infos]
    return Result([Table([Column("name", "NAME"), Column("origin", "ORIGIN"),
                          Column("version", "VERSION"), Column("java_name", "ROCKETMQ NAME"),
                          Column("description", "DESCRIPTION")], rows, name="strategies")],
                  data=[i.to_dict() for i in infos])


# ------------------------------------------------------------------------------- live


def add_live(result: Result, live: LiveGroup) -> None:
    """Per-broker membership table and notes; ``live`` block in the JSON."""

    rows = []
    for broker in sorted(live.by_broker, key=java_key):
        ids = live.by_broker[broker]
        rows.append({"broker": broker, "consumers": len(ids),
                     "agrees": ("yes" if sorted(ids, key=java_key) == list(live.consumers)
                                else "NO"), "error": ""})
    for f in live.failures:
        rows.append({"broker": f.broker, "consumers": "", "agrees": "", "error": f.message})
    result.tables.append(Table([Column("broker", "BROKER"),
                                Column("consumers", "CONSUMERS", "right"),
                                Column("agrees", "AGREES"), Column("error", "ERROR")], rows,
                               title=f"consumer ids of {live.group} per broker of {live.topic}",
                               name="brokers"))
    notes = live.notes()
    result.notes[:0] = notes
    if isinstance(result.data, dict):
        result.data["live"] = live.to_dict()
        result.data["notes"] = notes + list(result.data.get("notes", []))


def add_differences(result: Result, diffs: Sequence[LiveDifference], reports: LiveReports,
                    predicted: Allocation) -> None:

    with_topic = _multi_topic(predicted)
    rows = [{"queue": queue_label(d.queue, with_topic),
             "predicted": ", ".join(d.predicted) or "(none)",
             "reported": ", ".join(d.reported) or "(none)", "kind": d.kind} for d in diffs]
    result.tables.append(Table([Column("queue", "QUEUE"), Column("predicted", "PREDICTED"),
                                Column("reported", "REPORTED BY CLIENTS"),
                                Column("kind", "DIFFERENCE")], rows,
                               title=f"prediction vs. what clients report: {len(diffs)} "
                                     "difference(s)", name="differences"))
    notes = reports.notes(predicted)
    if not diffs and not reports.failures:
        notes.insert(0, f"prediction matches what all {len(reports.owned)} client(s) report")
    elif diffs:
        notes.insert(0, f"{len(diffs)} queue(s) differ between the prediction and what the "
                        "clients report: a client with an inconsistent view (stale member "
                        "list or route, another strategy) or a rebalance in progress")
    result.notes.extend(notes)
    if isinstance(result.data, dict):
        result.data["differences"] = [d.to_dict() for d in diffs]
        result.data["reported"] = reports.to_dict()
        result.data["notes"] = list(result.data.get("notes", [])) + notes


def add_strategy_choice(result: Result, choice: StrategyChoice) -> None:
    """Why the live prediction uses its strategy (first notes; JSON ``strategySource``)."""
    lines = [f"warning: {w}" for w in choice.warnings] + list(choice.notes)
    result.notes[:0] = lines
    if isinstance(result.data, dict):
        result.data["strategySource"] = choice.source
        if choice.per_client:
            result.data["clientStrategies"] = dict(choice.per_client)
        result.data["warnings"] = list(choice.warnings)
        result.data["notes"] = lines + list(result.data.get("notes", []))
