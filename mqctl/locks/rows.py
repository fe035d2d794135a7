"""The rows and notes of ``mqctl locks show`` and ``mqctl locks release`` (pure): a
:class:`~mqctl.locks.model.LockView` (and release plans and results) in, a
:class:`mqctl.render.Result` out."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.locks.release import ReleaseStatus
from mqctl.locks.types import clock_text
from mqctl.render import Column, Result, Table
from mqctl.timeparse import format_duration, format_local

if TYPE_CHECKING:
    from mqctl.locks.release import ReleasePlan, ReleaseResult
    from mqctl.locks.types import LockView, QueueLock


def _secs(ms: int | None) -> float | None:
    return round(ms / 1000, 1) if ms is not None else None


def queue_row(q: QueueLock) -> dict[str, Any]:
    d = q.to_dict()
    d["lock_age_s"] = _secs(q.lock_age_ms)
    d["lease_left_s"] = _secs(q.lease_left_ms)
    # tables: durations as people read them (27s, 1m 5s); CSV/JSON: seconds (lock_age_s)
    d["lock_age"] = format_duration(q.lock_age_ms) if q.lock_age_ms is not None else None
    d["lease_left"] = (format_duration(q.lease_left_ms) if q.lease_left_ms is not None
                       else None)
    d["frees_at"] = clock_text(q.frees_at) if q.frees_at else None
    return d


STATE_MEANING = {
    "contested": "two clients claim it (or one id used by two processes)",
    "hung": "assigned to a member that stopped answering: nobody else asks for it until the "
            "brokers drop that member (120 s after its last heartbeat)",
    "stale": "owner gone while its broker lease still blocks others",
    "lock-failed": "claimed or assigned but not locked (4.x: granted, marked at the next "
                   "20 s lock cycle)",
    "expiring": "renewal overdue; lease still runs",
    "held": "locked and renewed on time",
    "unknown": "owner does not answer; lease lapsed or never seen",
    "unowned": "no client claims it and none is assigned it",
}


def view_result(view: LockView) -> Result:
    rows = [queue_row(q) for q in view.queues]
    # an unknown (None: no owner, or an owner that does not answer) shows as "-" (docs/output.md);
    # FREES AT stays empty but for stale queues (the earliest lease end) and hung ones (the
    # earliest moment another member can take the queue)
    # width policy (docs/output.md): TOPIC, QUEUE, STATE, OWNER and LEASE LEFT are never left
    # out; DROPPED, UNLOCK TRIES, TRUSTED, LOCKED, LOCK AGE, PREDICTED, FREES AT go in this order
    qcols = [Column("topic", "TOPIC", kind="key"), Column("queue", "QUEUE", kind="key"),
             Column("state", "STATE", kind="state"),
             Column("owner", "OWNER", kind="id", unknown="-"),
             Column("locked", "LOCKED", kind="low", drop=4, unknown="-"),
             Column("lock_age", "LOCK AGE", "right", raw="lock_age_s", drop=5),
             Column("trusted", "TRUSTED", kind="low", drop=3, unknown="-"),
             Column("lease_left", "LEASE LEFT", "right", raw="lease_left_s"),
             Column("frees_at", "FREES AT", raw="frees_at_time", kind="low", drop=7),
             Column("try_unlock_times", "UNLOCK TRIES", "right", drop=2),
             Column("dropped", "DROPPED", kind="low", drop=1, unknown="-"),
             Column("predicted", "PREDICTED", kind="id", drop=6, unknown="-")]
    summary = view.summary()
    srows = [{"state": s, "queues": n, "meaning": STATE_MEANING[s]} for s, n in summary.items()]
    crows = []
    for c in view.clients:
        d = c.to_dict()
        d["last_seen"] = format_local(c.last_seen_ts) if c.last_seen_ts else None
        crows.append(d)
    ccols = [Column("client_id", "CLIENT ID", kind="id"),
             Column("member", "MEMBER", kind="low", drop=4),
             Column("answered", "ANSWERED", kind="low", drop=3),
             Column("orderly", "ORDERLY", kind="low", drop=1),
             Column("strategy", "STRATEGY", kind="low", drop=2),
             Column("claimed", "CLAIMED", "right"),
             Column("locked", "LOCKED", "right"),
             Column("last_seen", "LAST SEEN", raw="last_seen_time", kind="low", drop=5),
             Column("error", "ERROR")]
    notes = [f"group {view.group} ({view.kind}): {len(view.queues)} queue(s) of "
             f"{len(view.topics)} topic(s) at {format_local(view.now)}"]
    notes += [f"{s}: {n} queue(s) - {STATE_MEANING[s]}" for s, n in summary.items() if n]
    notes += view.hints()
    notes += list(view.notes)
    return Result([Table(qcols, rows, title=f"locks of {view.group}", name="queues"),
                   Table([Column("state", "STATE", kind="state"),
                          Column("queues", "QUEUES", "right"),
                          Column("meaning", "MEANING")], srows, title="summary",
                         name="summary"),
                   Table(ccols, crows, title="clients", name="clients")],
                  data=view.to_dict(), notes=notes)


PLAN_COLS = (("group", "GROUP"), ("topic", "TOPIC"), ("queue", "QUEUE"), ("state", "STATE"),
             ("holder", "HOLDER"), ("broker_addr", "MASTER"), ("action", "ACTION"))


def release_result(plans: list[ReleasePlan], before: LockView, after: LockView | None,
                   executed: bool, results: list[ReleaseResult] | None = None, *,
                   extra_notes: list[str] | None = None, plan_shown: bool = False) -> Result:
    """The plan and, once executed, each queue's result and state before/after. JSON: ``plan``,
    ``before`` and ``after`` describe the first queue (as before several --queue were
    accepted); ``plans``, ``queues`` and ``results`` cover every queue. ``plan_shown``: the plan
    was printed before the apply started; only the result follows (text formats)."""
    prows = [p.to_dict() for p in plans]
    tables = [Table([Column(k, h) for k, h in PLAN_COLS], prows, title="release plan",
                    name="plan")]
    qcols = [Column("queue", "QUEUE"), Column("when", "WHEN"), Column("state", "STATE"),
             Column("owner", "OWNER", unknown="-"), Column("locked", "LOCKED", unknown="-"),
             Column("lock_age", "LOCK AGE", "right", raw="lock_age_s"),
             Column("frees_at", "FREES AT", raw="frees_at_time"),
             Column("predicted", "PREDICTED", unknown="-"), Column("reason", "REASON")]
    qrows: list[dict[str, Any]] = []
    per_queue = []
    notes = [w for p in plans for w in p.warnings]
    for p in plans:
        bq = before.queue(p.mq)
        aq = after.queue(p.mq) if after is not None else None
        qrows += [{"when": w, **queue_row(q)} for w, q in (("before", bq), ("after", aq))
                  if q is not None]
        per_queue.append({"queue": p.mq.short, "topic": p.mq.topic,
                          "before": bq.to_dict() if bq is not None else None,
                          "after": aq.to_dict() if aq is not None else None})
        if aq is not None:
            nxt = ", ".join(aq.predicted) or "the client the allocation assigns it to"
            notes.append(f"{p.mq.short} now: {aq.state.value} ({aq.reason}); {nxt} locks it "
                         "at its next rebalance or lock renewal (within 20 s)")
    topics = sorted({p.mq.topic for p in plans})
    tables.append(Table(qcols, qrows, title=f"{len(plans)} queue(s) of {', '.join(topics)}",
                        name="queue"))
    if not executed:
        notes += [f"dry run: nothing was sent; add --execute to {p.describe()}" for p in plans]
    elif results is not None:
        done = sum(1 for r in results if r.status == ReleaseStatus.RELEASED)
        notes.append(f"{done} of {len(plans)} lock(s) were released (UNLOCK_BATCH_MQ sent on "
                     "behalf of the holder; the broker answers SUCCESS without saying whether "
                     "an entry was removed)"
                     + (f"; {len(plans) - done} were not (see STATUS)"
                        if done < len(plans) else ""))
    notes += list(extra_notes or [])
    if plan_shown:
        tables = tables[1:]
    if results is not None:
        rcols = [Column("queue", "QUEUE"), Column("topic", "TOPIC"), Column("holder", "HOLDER"),
                 Column("status", "STATUS"), Column("detail", "DETAIL")]
        tables.append(Table(rcols, [r.to_dict() for r in results], title="result",
                            name="results"))
    first = per_queue[0] if per_queue else {}
    data = {"plan": prows[0] if prows else None, "plans": prows, "executed": executed,
            "before": first.get("before"), "after": first.get("after"), "queues": per_queue,
            "results": [r.to_dict() for r in results] if results is not None else None}
    return Result(tables, data=data, notes=notes)
