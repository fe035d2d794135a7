"""What proves, without catching the target in a poll, that the clients applied a legacy reset.

On the legacy push path (a broker without ``useServerSideResetOffset``) the broker only pushes
the offsets to the online clients (``Broker2Client.resetOffset``, RESET_CONSUMER_CLIENT_OFFSET,
oneway) and writes nothing itself. Each client applies a push in
``MQClientInstance.resetOffset`` (4.9.3 and 5.3.3): it suspends the consumer, marks its
ProcessQueues of the pushed topic dropped, sleeps 10 s, then for every queue of its
``processQueueTable`` that the push lists it writes the offset (``updateConsumeOffset``),
persists it and removes the queue (``removeUnnecessaryMessageQueue``, ``iterator.remove()``);
``resume()`` lets the rebalance add the queue again with a **new** ProcessQueue that pulls
from the written offset. A fast consumer then re-consumes the rewind and commits its old
position again well under a second later (150 messages per queue), so a verify that
polls the committed offset every second can miss the target altogether.

**When.** ``resetOffset`` is ``synchronized`` and sleeps while it holds the lock, so a client
applies the pushes of several brokers one after another, 10 s each: the first push it receives
10 s after it, the next 10 s later, and so on (real 4.9.3, reset/client_log_after_reset.log:
both pushes logged at 20:59:28.7, broker-b's queues written at 38.69, broker-a's at 48.72).
mqctl sends the pushes one broker after another (:class:`PushSchedule`), so each client gets
them in that order: the first broker's queues are applied about 10 s after the push, the
second's about 20 s. With three or more the ones waiting for the lock are taken in no fixed
order (a Java monitor is not fair), so the second and later ones land between 20 s and N x 10 s.

**What is read.** The owners' running info (GET_CONSUMER_RUNNING_INFO, read-only), right after
the pushes and again after each of those moments (:meth:`PushSchedule.read_moments`), each
client's answer timed as it arrives. A push blocks one of the client's callback threads
(``NettyRemotingClient.publicExecutor``: ``clientCallbackExecutorThreads``, by default the
host's processor count) for its whole wait and pause, and GET_CONSUMER_RUNNING_INFO is served
by the same pool: on a small client host the read right after the pushes is answered only
when the first push is applied, 10 s later (or the broker's forward times out after 10 s,
``Broker2Client.callClient``). So no single read can be relied on; each of these proves that a
client applied the push of a queue (``applied``):

1. its ProcessQueue of the queue read **dropped** (``resetOffset`` drops it for the pause), and
   a later read of the same process (client id and ``PROP_CONSUMER_START_TIMESTAMP``) shows it
   not dropped: a dropped ProcessQueue is never taken up again, so that is a new one;
2. for a concurrent consumer, two reads of the same process showing the queue with different
   **creation times**: a ProcessQueue is created with ``lastLockTimestamp =
   System.currentTimeMillis()`` and only ``RebalanceImpl.lock`` / ``lockAll`` renew it, which run
   for orderly consumers only (4.9.3 RebalanceImpl lines 149/198; 5.3.3 lines 166/213; real
   4.9.3 ``running-info/307_getConsumerRunningInfo_concurrent.json``: every queue's value is the
   client's start-up);
3. on a rewind, the client's own offset of the queue (``commitOffset``, or the oldest cached
   message ``cachedMsgMinOffset``) read at or above the target and **below where the group was**
   at the plan: a client's offset of a queue it holds only moves forward, except when it applies
   a reset (``updateConsumeOffset``) and pulls from there.

1 and 2 count only between two reads with the same member list: with no member change a
concurrent consumer's queues are not re-allocated, so a new ProcessQueue is the apply step.

**Not applied** (``not-applied``): a read answered before any client could apply a push (under
8 s after the first one was sent) shows the process holding the queue, and a read answered
once every push of the run has had its turn (N x 10 s after the first, plus a margin: the
order among the waiting pushes is not fixed) shows the same process with the very same
ProcessQueue (same creation time, never dropped in between): it did not apply it. Also a queue
that no member held in a complete read before any apply: a client applies a pushed reset only to
the queues of its processQueueTable. An orderly consumer's creation time is renewed by lockAll,
so its ProcessQueue cannot be told from a new one: never ``not-applied`` on that ground.

Anything else is ``unknown``, with what was read. An offset that moved forward from the old
one is no evidence at all: a consumer that never got the push moves forward too.

What does not work, checked in the 4.9.3 source: the broker's per-group pull statistics
(VIEW_BROKER_STATS_DATA ``GROUP_GET_NUMS`` with key ``topic@group``, the ``consumeTps`` of
GET_CONSUME_STATS) are per broker and topic, not per queue, and a minute's sum between two
10 s samples (``StatsItem.samplingInSeconds``, ``computeStatsData``: last - first of up to 7
samples), so the replayed messages cannot be told from the ones pulled before the reset
without a baseline older than the sampling; ``QUEUE_GET_NUMS`` is kept only with
``enableQueueStat`` and only the schedule service adds to it. 4.9.3's GET_CONSUME_STATS has no
``pullOffset``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError
from mqctl.models import ConsumerRunningInfo, MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.timeparse import format_ms, now_ms
from mqctl.views.members import capture_members

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.reset.types import Plan

# MQClientInstance.resetOffset sleeps 10 s per push, one push at a time
PUSH_APPLY_MS = 10_000
# a client applies a push 10 s after it arrives: an answer that arrived this long after the
# first push was sent was built before any client applied any push
BASELINE_WITHIN_MS = 8_000
# after a client's pause ends, resume() runs the rebalance that adds the queues again at once
# (corpus: written at 38.690, added again by 38.707): read this long after the expected moment
APPLY_MARGIN_MS = 2_000


@dataclass(frozen=True, slots=True)
class SeenQueue:
    """One client's ProcessQueue of a queue, as its running info showed it."""

    client_id: str
    started: str  # PROP_CONSUMER_START_TIMESTAMP: a restart with the same id is another process
    orderly: bool
    created_ms: int  # lastLockTimestamp: the creation time for a concurrent consumer
    dropped: bool
    commit_offset: int | None = None  # the client's own offset of the queue (commitOffset)
    cached_min: int | None = None  # cachedMsgMinOffset, when messages are cached
    answered_ms: int | None = None  # mqctl clock when this client's answer arrived


@dataclass(slots=True)
class OwnerRead:
    """The group's ProcessQueues of the plan's topic, per queue, at one moment."""

    at_ms: int  # mqctl clock when the read finished
    queues: dict[MessageQueue, list[SeenQueue]] = field(default_factory=dict)
    members: tuple[str, ...] = ()
    failed: dict[str, str] = field(default_factory=dict)  # client id -> why not read
    error: str | None = None  # the member list could not be read
    answered: dict[str, int] = field(default_factory=dict)  # client id -> when it answered

    @property
    def complete(self) -> bool:
        """Every member's running info was read."""
        return self.error is None and not self.failed

    def answered_at(self, client_id: str) -> int:
        return self.answered.get(client_id, self.at_ms)


OwnerReader = Callable[["Admin", "Plan"], Awaitable[OwnerRead]]


async def read_owners(admin: Admin, plan: Plan) -> OwnerRead:
    """GET_CONSUMER_LIST / GET_CONSUMER_CONNECTION_LIST and each member's
    GET_CONSUMER_RUNNING_INFO (all read-only), each answer timed when it arrives (a client busy
    applying a push may answer seconds after the others); what could not be read is recorded,
    never raised."""

    try:
        m = await capture_members(admin, plan.group, running=False, every_broker=False)
    except MqctlError as exc:
        return OwnerRead(now_ms(), error=exc.message)
    out = OwnerRead(now_ms(), members=tuple(sorted(m.clients)))
    if not m.clients:
        return out

    async def one(cid: str) -> tuple[ConsumerRunningInfo | MqctlError, int]:
        got = (await admin.running_infos(plan.group, [cid], m.brokers))[cid]
        return got, now_ms()

    for o in await fan_out(sorted(m.clients), one, concurrency=admin.concurrency):
        cid = o.item
        if not o.ok or o.value is None:
            out.failed[cid] = o.error.message if o.error else "no running info"
            continue
        info, at = o.value
        out.answered[cid] = at
        if isinstance(info, MqctlError):
            out.failed[cid] = info.message
            continue
        started = info.properties.get("PROP_CONSUMER_START_TIMESTAMP", "")
        for mq, pq in info.mq_table.items():
            if mq.topic != plan.topic:
                continue
            out.queues.setdefault(mq, []).append(SeenQueue(
                cid, started, info.orderly, pq.last_lock_timestamp, pq.dropped,
                pq.commit_offset,
                pq.cached_msg_min_offset if pq.cached_msg_count > 0 else None, at))
    out.at_ms = now_ms()
    return out


# ------------------------------------------------------------------------------ when

@dataclass(frozen=True, slots=True)
class PushSchedule:
    """The legacy pushes of one run, in the order mqctl sent them (one broker after the other,
    each once the one before it answered): ``(broker, mqctl clock when its push was sent)``."""

    pushes: tuple[tuple[str, int], ...]

    @property
    def first_ms(self) -> int:
        return self.pushes[0][1]

    def position(self, broker: str) -> int | None:
        """1 for the broker pushed first, ...; None when it was not pushed."""
        for i, (name, _sent) in enumerate(self.pushes, 1):
            if name == broker:
                return i
        return None

    def steps(self) -> list[int]:
        """When a client has applied its 1st, 2nd, ... push: each 10 s after the one before it
        (or after its arrival, when it came later)."""
        out: list[int] = []
        t: int | None = None
        for _name, sent in self.pushes:
            t = (sent if t is None else max(sent, t)) + PUSH_APPLY_MS
            out.append(t)
        return out

    def expected(self, broker: str) -> tuple[int, int]:
        """(earliest, latest) moment a client applies ``broker``'s push: the first one it got
        after 10 s; a later one after 20 s at the earliest and once all are done at the latest
        (the pushes waiting for the lock are taken in no fixed order)."""
        steps = self.steps()
        if self.position(broker) == 1:
            return steps[0], steps[0]
        return steps[min(1, len(steps) - 1)], steps[-1]

    def all_applied_ms(self) -> int:
        """When every client has applied every push of the run, with the margin."""
        return self.steps()[-1] + APPLY_MARGIN_MS

    def read_moments(self) -> list[int]:
        """When to read the owners: after each step, with the margin (a new ProcessQueue from
        the step before, the next push's queues dropped for its pause)."""
        return [t + APPLY_MARGIN_MS for t in self.steps()]


def apply_text(position: int, count: int) -> str:
    """``about 10 s`` / ``about 20 s`` / ``20-30 s``: how long after the push a client applies
    the ``position``-th of ``count`` pushes."""
    if position <= 1 or count <= 1:
        return "about 10 s"
    if count == 2:
        return "about 20 s"
    return f"{2 * PUSH_APPLY_MS // 1000}-{count * PUSH_APPLY_MS // 1000} s"


def baseline_usable(base: OwnerRead | None, pushed_ms: int | None) -> bool:
    """The read after the push finished before any client could apply it."""
    return (base is not None and base.error is None and pushed_ms is not None
            and base.at_ms - pushed_ms <= BASELINE_WITHIN_MS)


def applied_by(pushed_ms: int, pushes: int) -> int:
    """When every client has applied every push (one broker's push after the other)."""
    return pushed_ms + max(1, pushes) * PUSH_APPLY_MS + APPLY_MARGIN_MS


# ------------------------------------------------------------------------------ the rule

def _rel(ms: int, first: int) -> str:
    return f"+{max(0, ms - first) / 1000:.0f} s"


def _state(s: SeenQueue) -> str:
    if s.dropped:
        return "dropped"
    bits = []
    if not s.orderly and s.created_ms:
        bits.append(f"created {format_ms(s.created_ms)}")
    if s.commit_offset is not None:
        bits.append(f"offset {s.commit_offset}")
    return ", ".join(bits) or "held"


def legacy_verdict(mq: MessageQueue, reads: Sequence[OwnerRead], schedule: PushSchedule, *,
                   target: int, current: int | None,
                   members: Sequence[str] | None = None) -> tuple[str, str]:
    """Pure: ``("applied" | "not-applied" | "unknown", what was read)`` for one queue of a
    legacy push, from the owners' reads (any order; each client's answer timed) and the
    pushes' schedule: the rule of this module's docstring. ``target``: the offset pushed;
    ``current``: the group's offset at the plan (None: unknown); ``members``: the member list
    at the plan (a client's offset below ``current`` counts only in a read with the same
    members: a queue changing hands may start from an offset another owner committed).

    The rules are tried in order (:data:`VERDICT_RULES`): a client's own offset back below
    where the group was, a process queue dropped or re-created, the same process queue from
    before to after every push's turn, no holder at the push; else unknown, with what was
    read."""
    done = [r for r in reads if r.error is None]
    if not done:
        errs = sorted({r.error for r in reads if r.error})
        return "unknown", ("the owners' running info " + (
            f"could not be read ({'; '.join(errs)})" if errs else "was not read"))
    f = Sightings.of(mq, done, schedule, target=target, current=current, members=members)
    for rule in VERDICT_RULES:
        found = rule(f)
        if found is not None:
            return found
    return "unknown", what_was_read(f)


Trail = list[tuple[int, SeenQueue, OwnerRead]]


@dataclass(frozen=True, slots=True)
class Sightings:
    """Every sighting of the queue, per process (client id, start), in the order the answers
    arrived, with what the rules compare them to."""

    first: int  # the first push
    done: tuple[OwnerRead, ...]  # the reads that answered, in time order
    seen: dict[tuple[str, str], Trail]
    schedule: PushSchedule
    target: int
    current: int | None
    members: Sequence[str] | None

    @classmethod
    def of(cls, mq: MessageQueue, done: list[OwnerRead], schedule: PushSchedule, *,
           target: int, current: int | None, members: Sequence[str] | None) -> Sightings:
        done = sorted(done, key=lambda r: r.at_ms)
        seen: dict[tuple[str, str], Trail] = {}
        for r in done:
            for s in r.queues.get(mq, []):
                at = s.answered_ms if s.answered_ms is not None else r.answered_at(s.client_id)
                seen.setdefault((s.client_id, s.started), []).append((at, s, r))
        for trail in seen.values():
            trail.sort(key=lambda x: x[0])
        return cls(schedule.first_ms, tuple(done), seen, schedule, target, current, members)


Verdict = tuple[str, str]


def offset_went_back(f: Sightings) -> Verdict | None:
    """3. A rewind: a client's own offset back below where the group was."""
    if f.current is None or f.target >= f.current:
        return None
    for trail in f.seen.values():
        for at, s, r in trail:
            if f.members is not None and set(r.members) != set(f.members):
                continue
            for what, v in (("commitOffset", s.commit_offset),
                            ("cachedMsgMinOffset", s.cached_min)):
                if v is not None and f.target <= v < f.current:
                    return "applied", (
                        f"{s.client_id}'s own offset of the queue ({what}) read {v} at "
                        f"{_rel(at, f.first)}, at or above the target and below where the "
                        f"group was ({f.current}): a client's offset goes back only when it "
                        "applies a reset (MQClientInstance.resetOffset: updateConsumeOffset)")
    return None


def process_queue_renewed(f: Sightings) -> Verdict | None:
    """1 and 2: a new ProcessQueue of the same process, the member list unchanged."""
    for trail in f.seen.values():
        for i, (at0, s0, r0) in enumerate(trail):
            for at1, s1, r1 in trail[i + 1:]:
                if s1.dropped or set(r0.members) != set(r1.members):
                    continue
                if s0.dropped:
                    return "applied", (
                        f"{s1.client_id}'s process queue was dropped at {_rel(at0, f.first)} "
                        "(MQClientInstance.resetOffset drops it for its 10 s pause) and a new "
                        f"one was held at {_rel(at1, f.first)}: the client wrote the offset, "
                        "removed the queue and the rebalance added it again from there")
                if not s0.orderly and not s1.orderly and s1.created_ms != s0.created_ms:
                    return "applied", (
                        f"{s1.client_id} re-created its process queue after the push "
                        f"(created {format_ms(s1.created_ms)}, the one read at "
                        f"{_rel(at0, f.first)} {format_ms(s0.created_ms)}): "
                        "MQClientInstance.resetOffset writes the offset, then removes the "
                        "queue, and the rebalance adds it again from there")
    return None


def same_process_queue(f: Sightings) -> Verdict | None:
    """Not applied: the same ProcessQueue from before any apply to after every push's turn."""
    due = f.schedule.all_applied_ms()
    for trail in f.seen.values():
        pre = [(at, s) for at, s, _r in trail if at - f.first <= BASELINE_WITHIN_MS
               and not s.dropped and not s.orderly]
        if not pre:
            continue
        at0, s0 = pre[-1]
        after = [(at, s) for at, s, _r in trail if at > at0]
        late = [(at, s) for at, s in after if at >= due]
        if late and all(not s.dropped and s.created_ms == s0.created_ms for _, s in after):
            at1, s1 = late[-1]
            return "not-applied", (
                f"{s1.client_id} still has the process queue it had before the push (created "
                f"{format_ms(s1.created_ms)}, not dropped) {(at1 - f.first) / 1000:.0f} s "
                "after it: it has not applied the reset (a client applies each push 10 s after "
                f"it, one broker after another: {len(f.schedule.pushes)} push(es) here)")
    return None


def held_by_nobody(f: Sightings) -> Verdict | None:
    """Not applied: a complete read right after the push where no member held the queue."""
    if f.seen:
        return None
    pre_reads = [r for r in f.done if r.complete and r.members and all(
        r.answered_at(c) - f.first <= BASELINE_WITHIN_MS for c in r.members)]
    if not pre_reads:
        return None
    r = pre_reads[0]
    return "not-applied", ("no online consumer held this queue when the push came "
                           f"({len(r.members)} member(s) read): a client applies a pushed "
                           "reset only to the queues of its processQueueTable "
                           "(MQClientInstance.resetOffset)")


VERDICT_RULES: tuple[Callable[[Sightings], Verdict | None], ...] = (
    offset_went_back, process_queue_renewed, same_process_queue, held_by_nobody)


def what_was_read(f: Sightings) -> str:
    """Unknown: what was read of each holder, and why it does not decide."""
    notes: list[str] = []
    due = f.schedule.all_applied_ms()
    for (cid, _started), trail in f.seen.items():
        notes += _holder_notes(f, cid, trail, due)
    starts: dict[str, set[str]] = {}
    for (cid, st) in f.seen:
        starts.setdefault(cid, set()).add(st)
    if any(len(v) > 1 for v in starts.values()) or len(starts) > 1:
        notes.append("another owner or process held it between the reads")
    unread = sorted({c for r in f.done for c in r.failed})
    if unread:
        why = {c: r.failed[c] for r in f.done for c in r.failed}
        notes.append("running info not read: " + ", ".join(f"{c} ({why[c]})" for c in unread))
    if not f.seen:
        notes.append("no member held it in any read")
    return "; ".join(notes) or "nothing read tells"


def _holder_notes(f: Sightings, cid: str, trail: Trail, due: int) -> list[str]:
    notes = []
    if any(s.orderly for _at, s, _r in trail):
        notes.append(f"{cid} is orderly: lockAll renews lastLockTimestamp, so its process "
                     "queue does not show whether it was re-created")
    if not any(at - f.first <= BASELINE_WITHIN_MS for at, _s, _r in trail):
        notes.append(f"{cid}'s process queues right after the push were read too late to be "
                     "before the clients applied it (a client busy with a push answers when "
                     "its pause ends)")
    last_at, last, _r = trail[-1]
    if last.dropped:
        notes.append(f"{cid} is still applying it (its process queue is dropped, paused 10 s "
                     "per push)")
    elif last_at < due:
        notes.append(f"{cid} had not applied it yet when read {(last_at - f.first) / 1000:.0f} "
                     f"s after the push (it applies it 10 s per push, "
                     f"{len(f.schedule.pushes)} push(es))")
    notes.append(f"{cid} read " + "; ".join(f"{_rel(at, f.first)} {_state(s)}"
                                            for at, s, _r in trail))
    return notes


def legacy_evidence(mq: MessageQueue, base: OwnerRead | None, final: OwnerRead | None, *,
                    pushed_ms: int | None, pushes: int) -> tuple[str, str]:
    """:func:`legacy_verdict` of two reads (right after the push and at the end) of ``pushes``
    pushes sent at ``pushed_ms``, whatever the queue's broker's turn."""
    if final is None:
        return "unknown", "the owners' running info was not read"
    if final.error is not None:
        return "unknown", f"the owners' running info could not be read ({final.error})"
    if pushed_ms is None or base is None:
        return "unknown", "the owners' process queues right after the push were not read"
    if base.error is not None:
        return "unknown", f"the owners' process queues right after the push were not read " \
                          f"({base.error})"
    sched = PushSchedule(tuple((f"#{i}", pushed_ms) for i in range(max(1, pushes))))
    return legacy_verdict(mq, [base, final], sched, target=-1, current=None)


__all__ = ["APPLY_MARGIN_MS", "BASELINE_WITHIN_MS", "PUSH_APPLY_MS", "OwnerRead",
           "OwnerReader", "PushSchedule", "SeenQueue", "apply_text", "applied_by",
           "baseline_usable", "legacy_evidence", "legacy_verdict", "read_owners"]
