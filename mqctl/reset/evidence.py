"""What proves, without catching the target in a poll, that the clients applied a legacy reset.

On the legacy push path (a broker without ``useServerSideResetOffset``) the broker only pushes
the offsets to the online clients (``Broker2Client.resetOffset``, RESET_CONSUMER_CLIENT_OFFSET,
oneway) and writes nothing itself. Each client applies a push in
``MQClientInstance.resetOffset`` (4.9.3 and 5.3.3): it suspends the consumer, marks its
ProcessQueues of the pushed topic dropped, sleeps 10 s, then for every queue of its
``processQueueTable`` that the push lists it writes the offset (``updateConsumeOffset``),
persists it and removes the queue (``removeUnnecessaryMessageQueue``, ``iterator.remove()``);
``resume()`` lets the next rebalance add the queue again with a **new** ProcessQueue that pulls
from the written offset. A fast consumer then re-consumes the rewind and commits its old
position again well under a second later (issue 25: 150 messages per queue), so a verify that
polls the committed offset every second can miss the target altogether.

The new ProcessQueue is the evidence: a ``ProcessQueue`` is created with ``lastLockTimestamp =
System.currentTimeMillis()`` and only ``RebalanceImpl.lock`` / ``lockAll`` renew it, which run
for orderly consumers only (4.9.3 RebalanceImpl lines 149/198; 5.3.3 lines 166/213). So for a
concurrent push consumer the ``lastLockTimestamp`` of its ProcessQueueInfo (the client's
running info, GET_CONSUMER_RUNNING_INFO, read-only) is the queue's creation time, in the
client's own clock (real 4.9.3: ``running-info/307_getConsumerRunningInfo_concurrent.json``,
every queue's lastLockTimestamp is the client's start-up, 34 s before the read). verify reads
the owners' running info right after the push (before any client can apply it: they all sleep
10 s) and again at the end: the same client process (id and ``PROP_CONSUMER_START_TIMESTAMP``)
holding the queue with a different creation time re-created it since the push; with no member
change a concurrent consumer's queues are not re-allocated (and ``doRebalance`` does not run
while the consumer is paused), so that is the apply step. The same process still holding the
very ProcessQueue it had before the push, not dropped, after the time every push needs (10 s
per broker, applied one after another: ``resetOffset`` is synchronized) has not applied it.

What does not work, checked in the 4.9.3 source: the broker's per-group pull statistics
(VIEW_BROKER_STATS_DATA ``GROUP_GET_NUMS`` with key ``topic@group``, the ``consumeTps`` of
GET_CONSUME_STATS) are per broker and topic, not per queue, and a minute's sum between two
10 s samples (``StatsItem.samplingInSeconds``, ``computeStatsData``: last - first of up to 7
samples), so the replayed messages cannot be told from the ones pulled before the reset
without a baseline older than the sampling; ``QUEUE_GET_NUMS`` is kept only with
``enableQueueStat`` and only the schedule service adds to it. 4.9.3's GET_CONSUME_STATS has no
``pullOffset``. An orderly consumer's lastLockTimestamp is renewed every 20 s by lockAll, so
its queues give no such evidence.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.models import MessageQueue
from mqctl.timeparse import format_ms, now_ms

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.reset.types import Plan

# a client applies a push 10 s after it arrives (MQClientInstance.resetOffset sleeps 10 s); a
# read of the owners finished this long after the push is still before any apply
BASELINE_WITHIN_MS = 8_000
# after N pushes x 10 s a client has applied every push; this much more for the rebalance that
# adds the queues again
APPLY_MARGIN_MS = 2_000


@dataclass(frozen=True, slots=True)
class SeenQueue:
    """One client's ProcessQueue of a queue, as its running info showed it."""

    client_id: str
    started: str  # PROP_CONSUMER_START_TIMESTAMP: a restart with the same id is another process
    orderly: bool
    created_ms: int  # lastLockTimestamp: the creation time for a concurrent consumer
    dropped: bool


@dataclass(slots=True)
class OwnerRead:
    """The group's ProcessQueues of the plan's topic, per queue, at one moment."""

    at_ms: int  # mqctl clock when the read finished
    queues: dict[MessageQueue, list[SeenQueue]] = field(default_factory=dict)
    members: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)  # client id -> why not read
    error: str | None = None  # the member list could not be read

    @property
    def complete(self) -> bool:
        """Every member's running info was read."""
        return self.error is None and not self.failed


OwnerReader = Callable[["Admin", "Plan"], Awaitable[OwnerRead]]


async def read_owners(admin: Admin, plan: Plan) -> OwnerRead:
    """GET_CONSUMER_LIST / GET_CONSUMER_CONNECTION_LIST and each member's
    GET_CONSUMER_RUNNING_INFO (all read-only); what could not be read is recorded, never
    raised."""
    from mqctl.views.members import capture_members

    try:
        m = await capture_members(admin, plan.group, every_broker=False)
    except MqctlError as exc:
        return OwnerRead(now_ms(), error=exc.message)
    out = OwnerRead(now_ms(), members=tuple(sorted(m.clients)))
    for cid, cv in m.clients.items():
        if cv.running is None:
            out.failed[cid] = cv.running_error or "no running info"
            continue
        started = cv.running.properties.get("PROP_CONSUMER_START_TIMESTAMP", "")
        for mq, pq in cv.running.mq_table.items():
            if mq.topic != plan.topic:
                continue
            out.queues.setdefault(mq, []).append(SeenQueue(
                cid, started, cv.running.orderly, pq.last_lock_timestamp, pq.dropped))
    return out


def baseline_usable(base: OwnerRead | None, pushed_ms: int | None) -> bool:
    """The read after the push finished before any client could apply it."""
    return (base is not None and base.error is None and pushed_ms is not None
            and base.at_ms - pushed_ms <= BASELINE_WITHIN_MS)


def applied_by(pushed_ms: int, pushes: int) -> int:
    """When every client has applied every push (one broker's push after the other)."""
    return pushed_ms + max(1, pushes) * 10_000 + APPLY_MARGIN_MS


def legacy_evidence(mq: MessageQueue, base: OwnerRead | None, final: OwnerRead | None, *,
                    pushed_ms: int | None, pushes: int) -> tuple[str, str]:
    """Pure: ``("applied" | "not-applied" | "unknown", what was read)`` for one queue of a
    legacy push, from the owners read right after the push (``base``) and at the end."""
    if final is None:
        return "unknown", "the owners' running info was not read"
    if final.error is not None:
        return "unknown", f"the owners' running info could not be read ({final.error})"
    usable = baseline_usable(base, pushed_ms)
    if not usable:
        why = ("not read" if base is None else f"not read ({base.error})" if base.error
               else "read too late to be before the clients applied it")
        return "unknown", f"the owners' process queues right after the push were {why}"
    assert base is not None and pushed_ms is not None
    before = {(s.client_id, s.started): s for s in base.queues.get(mq, [])}
    after = final.queues.get(mq, [])
    unread = sorted(set(base.failed) | set(final.failed))
    if not before:
        if base.complete:
            return "not-applied", ("no online consumer held this queue when the push came "
                                   f"({len(base.members)} member(s) read): a client applies a "
                                   "pushed reset only to the queues of its processQueueTable "
                                   "(MQClientInstance.resetOffset)")
        return "unknown", ("no owner among the members read right after the push; not read: "
                           + ", ".join(f"{c} ({base.failed[c]})" for c in sorted(base.failed)))
    notes: list[str] = []
    for s in after:
        b = before.get((s.client_id, s.started))
        if b is None:
            notes.append(f"{s.client_id} holds it now, another owner or process held it at the "
                         "push")
            continue
        if s.orderly:
            notes.append(f"{s.client_id} is orderly: lockAll renews lastLockTimestamp, so its "
                         "process queue does not show whether it was re-created")
            continue
        if s.created_ms != b.created_ms and not s.dropped:
            return "applied", (f"{s.client_id} re-created its process queue after the push "
                               f"(created {format_ms(s.created_ms)}, the one before "
                               f"{format_ms(b.created_ms)}): MQClientInstance.resetOffset "
                               "writes the offset, then removes the queue, and the rebalance "
                               "adds it again from there")
        if s.dropped:
            notes.append(f"{s.client_id} is still applying it (its process queue is dropped, "
                         "paused 10 s per push)")
            continue
        if final.at_ms >= applied_by(pushed_ms, pushes):
            return "not-applied", (f"{s.client_id} still has the process queue it had before "
                                   f"the push (created {format_ms(s.created_ms)}, not dropped) "
                                   f"{(final.at_ms - pushed_ms) / 1000:.0f} s after it: it has "
                                   "not applied the reset (a client applies each push 10 s "
                                   "after it, one broker after another)")
        notes.append(f"{s.client_id} had not applied it yet when read "
                     f"{(final.at_ms - pushed_ms) / 1000:.0f} s after the push (it applies it "
                     f"10 s per push, {pushes} push(es))")
    if not after:
        notes.append("no member held it at the end" + (
            f" (not read: {', '.join(unread)})" if unread else ""))
    elif unread:
        notes.append(f"running info not read: {', '.join(unread)}")
    return "unknown", "; ".join(notes)


__all__ = ["APPLY_MARGIN_MS", "BASELINE_WITHIN_MS", "OwnerRead", "OwnerReader", "SeenQueue",
           "applied_by", "baseline_usable", "legacy_evidence", "read_owners"]
