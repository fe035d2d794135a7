"""The rule about an orderly group's queue locks (pure): queues whose lock is hung, stale or
failed in the lock classification of ``mqctl locks show`` (:mod:`mqctl.locks.view`), and the
redelivery a lock that moved causes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.diagnose import explain as x
from mqctl.diagnose.explain import qfacts
from mqctl.diagnose.rules.common import LISTED, Ctx, lag_facts, n_, q_, qlist, queue_lag
from mqctl.diagnose.types import (
    ERROR,
    FOUND,
    NOT_APPLICABLE,
    NOT_CHECKED,
    OK,
    WARNING,
    Check,
    Evidence,
    Finding,
)

if TYPE_CHECKING:
    from mqctl.locks.types import LockView


# ---------------------------------------------------------------- orderly


def locks(ctx: Ctx, code: str) -> tuple[list[Finding], Check]:
    if ctx.kind != "orderly":
        return [], Check(code, NOT_APPLICABLE, f"{ctx.kind} group: locks apply to orderly "
                                               "consumers")
    view = ctx.now.locks
    if view is None:
        return [], Check(code, NOT_CHECKED, "no lock view")
    lag = {q.mq: queue_lag(q) for q in ctx.queues}
    ts = ctx.now.ts
    out = []
    for state, fcode in (("hung", "lock-hung"), ("stale", "lock-stale"),
                         ("lock-failed", "lock-failed")):
        # a 4.x queue granted at its creation is marked locked at the next lock cycle: not
        # stuck (mqctl.locks.model.classify_queue says so in its reason)
        qs = [q for q in view.queues if q.state.value == state
              and "not yet marked locked" not in q.reason
              and (ctx.topic is None or q.mq.topic == ctx.topic)]
        if not qs:
            continue
        ctx.explained |= {q.mq for q in qs}
        total = sum(lag.get(q.mq, 0) for q in qs)
        sev = ERROR if total > 0 or state in ("stale", "hung") else WARNING
        title = (f"{len(qs)} orderly queue(s) blocked by a stale lock" if state == "stale" else
                 f"{len(qs)} orderly queue(s) blocked by the hung client(s) "
                 f"{', '.join(sorted({q.owner for q in qs if q.owner}))}"
                 if state == "hung" else
                 f"{len(qs)} orderly queue(s) not locked by their consumer")
        out.append(Finding(
            fcode, sev, f"{title} (lag {n_(total)}): {qlist(q.mq for q in qs)}",
            why="an orderly consumer consumes a queue only while the broker's lock is its own "
                "(ConsumeMessageOrderlyService; RebalanceLockManager: a 60 s lease from the "
                "last renewal): until it gets the lock the queue's messages wait",
            next=(qs[0].hint or f"`mqctl locks show {ctx.group}`")
            + (f"; `mqctl locks show {ctx.group}` shows every queue" if len(qs) > 1 else ""),
            evidence=tuple(Evidence(f"{q_(q.mq)}: {q.reason}; lag {n_(lag.get(q.mq))}",
                                    ctx.src("GET_CONSUMER_RUNNING_INFO (mqTable locked, "
                                            "lastLockTimestamp)") + (
                                        "; mqctl locks show's state file"
                                        if ctx.now.locks_remembered else ""), ts)
                           for q in qs[:LISTED]),
            values={"state": state, "lag": total,
                    "frees_at_ts": max((q.frees_at for q in qs if q.frees_at), default=None)},
            queues=tuple(q.mq for q in qs), clients=tuple(sorted({q.owner for q in qs
                                                                    if q.owner})),
            rocketmq="RebalanceLockManager, ProcessQueue (lock timing), "
                     "mqctl.locks classification",
            shows=qfacts(x.LOCK, (q.mq for q in qs)), explains=lag_facts(q.mq for q in qs)))
    out += _redelivery(ctx, view)
    if not out:
        states = view.summary()
        return [], Check(code, OK, ", ".join(f"{k} {v}" for k, v in states.items() if v)
                         or "no queue")
    return out, Check(code, FOUND, ", ".join(f.code for f in out))


def _redelivery(ctx: Ctx, view: LockView) -> list[Finding]:
    """A hung orderly holder resumed after its queues had moved: RocketMQ delivers again,
    from its in-memory offset, what the other client consumed meanwhile (mqctl.locks
    Redelivery, from what ``locks show`` remembered of both)."""
    qs = [q for q in view.queues if q.redelivery is not None
          and (ctx.topic is None or q.mq.topic == ctx.topic)]
    if not qs:
        return []
    total = sum(q.redelivery.expected for q in qs if q.redelivery is not None)
    left = sum(q.redelivery.remaining for q in qs if q.redelivery is not None)
    who = sorted({q.redelivery.client_id for q in qs if q.redelivery is not None})
    return [Finding(
        "duplicates-expected", WARNING,
        f"{', '.join(who)} resumed after its orderly queue(s) had moved: about {n_(total)} "
        f"message(s) delivered twice ({n_(left)} still to come): {qlist(q.mq for q in qs)}",
        why="a frozen client keeps its ProcessQueues and in-memory offsets; when it resumes and "
            "still finds itself in the member list it keeps its queues, re-locks them once the "
            "client that took them over releases them, and pulls from where it stopped: what "
            "that client consumed meanwhile is delivered again, in order",
        next="make the listener idempotent (deduplicate by message key or offset); to avoid "
             "it, restart a hung consumer instead of resuming it (a new process reads the "
             "committed offsets)",
        evidence=tuple(Evidence(q.redelivery.text(q_(q.mq)),
                                ctx.src("GET_CONSUMER_RUNNING_INFO (mqTable commitOffset); "
                                        "mqctl locks show's state file"), ctx.now.ts)
                       for q in qs[:LISTED] if q.redelivery is not None),
        values={"messages": total, "remaining": left, "clients": who},
        queues=tuple(q.mq for q in qs), clients=tuple(who),
        rocketmq="RebalanceImpl.updateProcessQueueTableInRebalance, ProcessQueue, "
                 "RemoteBrokerOffsetStore (in-memory offsets)")]
