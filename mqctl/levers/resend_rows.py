"""The rows, notes and JSON of ``mqctl group dlq resend``'s plan and outcome (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.levers.resend import ResendOutcome, plan_command
from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_local, format_ms

if TYPE_CHECKING:
    from mqctl.levers.resend import ResendPlan

COLUMNS = [Column("dlq_msg_id", "DLQ MSG ID"), Column("unique_key", "UNIQUE KEY"),
           Column("original_topic", "ORIGINAL TOPIC"),
           Column("original_id", "ORIGINAL ID", drop=1), Column("stored", "STORED",
                                                              raw="storeTime"),
           Column("reconsume", "RECONSUME", align="right"),
           Column("destination", "DESTINATION"), Column("queue", "QUEUE"),
           Column("status", "STATUS", kind="state"), Column("new_msg_id", "NEW MSG ID", drop=1),
           Column("detail", "DETAIL", drop=1)]


def _summary(o: ResendOutcome) -> str:
    p = o.plan
    n = len(p.letters)
    held = "-" if p.held is None else str(p.held)
    if p.stopped:
        return (f"stopped at {n} of {held} dead letter(s) in %DLQ%{p.group} (--limit "
                f"{p.request.limit}; {p.scanned} read)")
    return f"{n} dead letter(s) selected of {held} in %DLQ%{p.group}"


def resend_result(o: ResendOutcome) -> Result:
    p = o.plan
    results = {r.letter.msg_id: r for r in o.results or ()}
    rows: list[dict[str, Any]] = []
    for x in p.letters:
        r = results.get(x.msg_id)
        sent = p.journal.sent.get(x.msg_id) if p.journal else None
        status = r.status if r else ("skipped" if sent else "duplicate" if x.duplicate_of
                                     else "planned" if x.destination else "no-destination")
        rows.append({"dlq_msg_id": x.msg_id, "unique_key": x.unique_key,
                     "original_topic": x.original_topic, "original_id": x.original_id,
                     "stored": format_local(x.store_ts),
                     "storeTime": format_ms(x.store_ts) or None,
                     "reconsume": x.reconsume_times, "destination": x.destination,
                     "queue": r.queue if r and r.queue else None, "status": status,
                     "new_msg_id": r.new_msg_id if r else None,
                     "queue_offset": r.queue_offset if r else None,
                     "detail": r.detail if r else ""})
    notes = [_summary(o), *p.notes, *o.notes, *(f"refused: {x}" for x in p.refusals)]
    if o.results is None and not o.declined and not p.refusals and p.to_send():
        notes.append(f"plan only: nothing was sent; to send: {plan_command(p)}")
    if o.journal:
        notes.append(f"journal: {o.journal}")
    resume = o.resume_command()
    if resume and (o.signal or any(r.status in ("failed", "unknown", "not-sent")
                                   for r in o.results or ())):
        notes.append(f"finish: {resume}")
    counts = {s: sum(1 for row in rows if row["status"] == s)
              for s in sorted({row["status"] for row in rows})}
    data = {"group": p.group, "namesrv": p.namesrv, "to": p.request.to,
            "execute": p.request.execute, "phase": o.phase, "selected": len(p.letters),
            "held": p.held, "scanned": p.scanned, "stopped": p.stopped,
            "limit": p.request.limit, "journal": o.journal, "counts": counts,
            "messages": rows, "refusals": list(p.refusals), "notes": notes,
            "interrupted": {"signal": o.signal, "during": o.phase} if o.signal else None,
            "resume_command": resume}
    return Result([Table(COLUMNS, rows, title=f"dlq resend {p.group}", name="messages")],
                  data=data, notes=notes)


def ready_result(plan: ResendPlan, journal: str | None) -> Result:
    r = resend_result(ResendOutcome(plan))
    r.notes = [n for n in r.notes if not n.startswith("plan only")]
    if journal:
        r.notes.append(f"the journal is written first: {journal}")
    return r


__all__ = ["resend_result", "ready_result"]
