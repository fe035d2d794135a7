"""Queue locks of orderly consumer groups: who holds what, what is stuck, and the one remedy.

No RocketMQ request reads the broker's lock table (``RebalanceLockManager.mqLockTable`` is
exposed by no request code in 4.x or 5.x), and LOCK_BATCH_MQ is not a read: it takes free or
expired locks for whoever sends it. So the lock view is derived from what the clients report
(GET_CONSUMER_RUNNING_INFO, ``mqTable[mq].{locked, lastLockTimestamp, droped,
tryUnlockTimes}``), as ``mqadmin consumer`` and the dashboard do, and kept between runs in a small
state file so that a client that stops answering (or crashes and leaves the group) keeps its
last known claims visible, with their age.

Timing facts (apache/rocketmq):

* broker lease: ``RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME`` = 60 s,
  ``LockEntry.isExpired() = now - lastUpdateTimestamp > 60000``; a renewal (LOCK_BATCH_MQ by
  the holder) refreshes ``lastUpdateTimestamp``;
* client trust: ``ProcessQueue.REBALANCE_LOCK_MAX_LIVE_TIME`` = 30 s,
  ``isLockExpired() = now - lastLockTimestamp > 30000``;
* renewal: ``ConsumeMessageOrderlyService`` runs ``RebalanceImpl.lockAll()`` every
  ``ProcessQueue.REBALANCE_LOCK_INTERVAL`` = 20 s, which sets ``lastLockTimestamp = now`` for
  every queue the broker confirmed.

The client's ``lastLockTimestamp`` is therefore the best evidence of the broker's last renewal:
the broker lease ends 60 s after it (client clock; the broker's own timestamp is invisible).
A client that has left the group since it was last seen may have renewed every 20 s until it
left, so its lease can end 60 s after any of those renewals (``Claim.lease_ends``).

States of a queue and their precedence (the first rule that applies wins):

1. ``contested``: two or more clients claim the queue (non-dropped ``mqTable`` entries, or
   their own allocation assigns it to them: split views), or its one claimer's client id is
   used by several processes (duplicate ``ip@pid``);
2. ``hung``: no answering client claims the queue or is assigned it, and the member the
   allocation assigns it to is a hung client: it answered an earlier run (mqctl's state file
   holds what it reported) and does not answer now. It stays a member (frozen, e.g.
   SIGSTOPped or in a GC pause: still connected), so every member's allocation keeps the
   queue on it and no other client asks for the lock; its lease, running or lapsed, blocks
   nobody, a release frees nobody and it re-locks its queues when it resumes (lock.log "lock
   expired, I got it" with its own client id as old and new holder). The queue moves when the
   brokers drop the member (:class:`HungMember`: 120 s after its last heartbeat) and another
   member rebalances and locks it. Real 4.9.3 and 5.3.3 (lock-crash/pause_*): the paused o2
   stayed in the consumer table, o1 never asked for its queues, the brokers dropped o2 120 s
   after its last heartbeat and o1 locked them then. A member still listed after the latest
   drop that estimate allows is not frozen (it heartbeats) but its running info does not come
   back: ``unknown``;
3. ``stale``: no answering client holds a lease on it, but a client that is gone -- no longer
   a member (crashed, left), or a member not answering while the allocation gives the queue
   to an answering client that asks for it -- was last seen holding it, its broker lease can
   still run and no other client was granted the lock since (Evidence, below): it blocks the
   queue until ``frees_at``;
4. ``lock-failed``: claimed but not locked (or the lock lapsed: last renewal older than the
   60 s lease, or the claimer consumes concurrently), or assigned by the allocation to an
   answering client that has not locked it;
5. ``expiring``: the claimer's renewal is overdue (lock older than the 20 s renewal interval
   plus slack), or the client no longer trusts it (> 30 s) while the broker lease still runs;
6. ``held``: one claimer, locked, renewed on time;
7. ``unknown``: nobody answering claims it, but a member that does not answer claimed it last
   time (lease lapsed) or is the one the allocation assigns it to, and mqctl has no earlier
   answer of it (or it outlived the drop estimate: see ``hung``);
8. ``unowned``: no client claims it and no member's allocation assigns it.

Times of a live claim are taken when its client's answer was received
(``Claim.observed_ts``), not at the end of the capture: a capture that waits for a client that
times out does not age the others' locks (real 5.3.3: the survivor renewed every 20.0 s and
read ``expiring``, "last renewal 26s ago", in a capture stretched ~11 s by the hung client). A
renewal a client reports happened before its answer arrived, so a ``lastLockTimestamp`` later
than that (the client's clock is ahead) counts as made at the answer
(``Claim.renewed_ts``): a lock age is never negative and a lease never has more than 60 s
left; the view notes the clock disagreement.

Evidence: what outranks what. The broker keeps one lock entry per queue and grants it only
when it is free, expired or already the requester's (``RebalanceLockManager.tryLockBatch``); a
holder that stops gracefully frees its entries at once (``DefaultMQPushConsumerImpl.shutdown``
-> ``ConsumeMessageOrderlyService.shutdown`` -> ``RebalanceImpl.unlockAll`` -> UNLOCK_BATCH_MQ
-> ``RebalanceLockManager.unlockBatch``, before ``persistConsumerOffset`` and
``unregisterConsumer``; 4.9.3 and 5.3.3), so its lease says nothing after that. Hence:

* a later grant outranks an earlier one, whatever their source: an orderly client's
  ``lastLockTimestamp`` is a moment the broker had given it the lock (``Claim.granted_ts``:
  a granted renewal, or the creation of a ProcessQueue, which follows a granted lock; a 4.x
  queue reads locked=false until its next lockAll), so a claim whose last renewal is older than
  another client's grant no longer holds the lock (``superseded_by``), and a remembered one is
  never ``stale`` or ``unknown`` on its own account (real 4.9.3, issue 25: the survivor was
  granted the stopped holder's queues at 02:03:00; mqctl said ``stale``, "blocked until
  02:03:50", for 8 s);
* what an answering client reports now outranks what mqctl remembers: a live lease, or a live
  concurrent consumer (it consumes without any lock, so no lease blocks it), means no
  remembered claim blocks the queue;
* a remembered claim is about one process: when the member behind the client id is a new
  process (``mqctl.locks.store.new_connection``), the record is dropped, never applied to it.

Client clocks are otherwise taken as in sync, as for every lease estimate here.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from mqctl.models import MessageQueue, ProcessQueueInfo, java_string_key
from mqctl.timeparse import format_clock, format_duration, format_local, format_ms

if TYPE_CHECKING:
    from mqctl.admin import BrokerFailure

# RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME (rocketmq.broker.rebalance.lockMaxLiveTime)
BROKER_LEASE_MS = 60_000
# ProcessQueue.REBALANCE_LOCK_MAX_LIVE_TIME (rocketmq.client.rebalance.lockMaxLiveTime)
CLIENT_TRUST_MS = 30_000
# ProcessQueue.REBALANCE_LOCK_INTERVAL (rocketmq.client.rebalance.lockInterval)
RENEW_INTERVAL_MS = 20_000
# lockAll() is scheduled at a fixed rate and waits up to 1 s per broker: allow some slack
RENEW_SLACK_MS = 5_000
# ConsumerManager.CHANNEL_EXPIRED_TIMEOUT: a broker drops a channel whose last heartbeat is
# older ("SCAN: remove expired channel"), scanned every 10 s (ClientHousekeepingService)
CHANNEL_EXPIRED_MS = 120_000
CHANNEL_SCAN_MS = 10_000
# ClientConfig.heartbeatBrokerInterval: MQClientInstance heartbeats to every broker this often
HEARTBEAT_MS = 30_000
# RebalanceService waitInterval (rocketmq.client.rebalance.waitInterval): a member the broker
# did not notify of a change rebalances within this
REBALANCE_MS = 20_000
# a lastLockTimestamp later than this after the client's answer was received: the client's
# clock is ahead of mqctl's
CLOCK_SKEW_MS = 2_000


class LockState(StrEnum):
    CONTESTED = "contested"
    HUNG = "hung"
    STALE = "stale"
    LOCK_FAILED = "lock-failed"
    EXPIRING = "expiring"
    HELD = "held"
    UNKNOWN = "unknown"
    UNOWNED = "unowned"


PRECEDENCE: tuple[LockState, ...] = tuple(LockState)
PROBLEM_STATES = frozenset({LockState.CONTESTED, LockState.HUNG, LockState.STALE,
                            LockState.LOCK_FAILED, LockState.EXPIRING, LockState.UNKNOWN,
                            LockState.UNOWNED})


def _seconds(ms: int | None) -> float | None:
    """Seconds with one decimal: the lock columns' unit in JSON and CSV alike."""
    return round(ms / 1000, 1) if ms is not None else None


def clock_text(ms: int) -> str:
    """Wall-clock time in the display zone (``--tz``) for tables and hints, with its zone:
    ``12:04:31 +08:00`` (with the date when it is not today). Prose in hints and reasons uses
    the same zone (:func:`format_local`), so a row never mixes local times with UTC ones; the
    ``*_time`` fields of JSON/CSV stay ISO-8601 UTC."""
    return format_clock(ms)


# ------------------------------------------------------------------------------ claims


@dataclass(frozen=True, slots=True)
class Claim:
    """One ``mqTable`` entry of one client: the client says the queue is its own."""

    client_id: str
    mq: MessageQueue
    locked: bool
    last_lock_ts: int
    try_unlock_times: int = 0
    dropped: bool = False
    live: bool = True          # False: remembered from an earlier run (client did not answer)
    observed_ts: int = 0       # when the client's answer was received (0: the capture's time)
    member: bool = True        # the client is a member of the group now
    orderly: bool | None = True
    gone_ts: int = 0           # remembered, not a member: when mqctl first found it gone
    silent_ts: int = 0         # remembered: when mqctl first found it a member not answering
    commit_offset: int | None = None  # ProcessQueueInfo.commitOffset: its in-memory offset

    def at(self, now: int) -> int:
        """The moment this claim is judged at: a live one when its client's answer was
        received (what it reported was true then; it may have renewed since, which mqctl
        cannot know), a remembered one now."""
        return self.observed_ts if self.live and self.observed_ts > 0 else now

    @property
    def renewed_ts(self) -> int:
        """The last renewal as a moment of mqctl's clock: ``lastLockTimestamp``, but never
        after the answer that reported it was received (a client whose clock is ahead reports
        renewals "in the future")."""
        if self.observed_ts > 0 and self.last_lock_ts > self.observed_ts:
            return self.observed_ts
        return self.last_lock_ts

    @property
    def clock_ahead_ms(self) -> int | None:
        """How far the client's ``lastLockTimestamp`` is after the moment its answer was
        received, when that is more than a clock tolerance (its clock is ahead); else None."""
        if self.observed_ts <= 0 or self.last_lock_ts <= 0:
            return None
        ahead = self.last_lock_ts - self.observed_ts
        return ahead if ahead > CLOCK_SKEW_MS else None

    def age(self, now: int) -> int | None:
        """Time since the last renewal the client reported (clamped at 0), at :meth:`at`."""
        if self.last_lock_ts <= 0:
            return None
        return max(0, self.at(now) - self.renewed_ts)

    @property
    def lease_end(self) -> int | None:
        """Last moment the broker still counts the lock (``now - ts > 60000`` = expired)."""
        if not self.locked or self.last_lock_ts <= 0:
            return None
        return self.renewed_ts + BROKER_LEASE_MS

    def lease_ends(self) -> tuple[int, ...]:
        """Every moment the broker lease can end, given what is known.

        60 s after the last renewal the client reported; for a client that has left the group
        since (crashed or stopped) and was renewing on time when last seen, also 60 s after
        each later renewal it may have made (``lockAll`` every 20 s) before mqctl found it gone
        (it cannot renew after it left). A client that mqctl found a silent member (hung: it
        did not answer) before it left gets no such extension: a client that has not answered
        since its last answer renewed nothing after it (a SIGSTOPped client, then expired by
        the broker ~120 s after its last heartbeat: real 4.9.3/5.3.3 lock-crash/pause_*).
        """
        end = self.lease_end
        if end is None:
            return ()
        if (self.live or self.member or self.gone_ts <= self.renewed_ts
                or (self.silent_ts and self.silent_ts <= self.gone_ts)
                or self.observed_ts - self.renewed_ts > RENEW_INTERVAL_MS + RENEW_SLACK_MS):
            return (end,)
        later = (self.gone_ts - self.renewed_ts) // RENEW_INTERVAL_MS
        return tuple(end + k * RENEW_INTERVAL_MS for k in range(later + 1))

    def frees_at(self, now: int) -> int | None:
        """The earliest lease end not yet past (None: the lease has lapsed)."""
        t = self.at(now)
        return next((e for e in self.lease_ends() if t <= e), None)

    def lease_runs(self, now: int) -> bool:
        return self.frees_at(now) is not None

    @property
    def granted_ts(self) -> int | None:
        """A moment the broker had given this client the lock, as this claim proves it.

        An orderly client's ProcessQueue exists only after the broker granted the lock
        (RebalanceImpl.updateProcessQueueTableInRebalance: ``lock(mq)`` first, the queue is
        skipped when it fails; 4.9.3 and 5.3.3), and its ``lastLockTimestamp`` is set at
        creation and at each granted renewal (RebalanceImpl.lock / lockAll), never on a refusal.
        So it is a grant time whether the queue reads locked or not (a 4.x queue granted at
        creation reads locked=false until the next lockAll). Not for a concurrent client: 5.x
        creates every ProcessQueue with ``setLocked(true)`` without any lock, 4.x never locks.
        """
        if self.orderly is not True or self.last_lock_ts <= 0:
            return None
        return self.renewed_ts

    def trusted(self, now: int) -> bool | None:
        """``locked && !isLockExpired()`` (ProcessQueue): the client still consumes under this
        lock. Only a client that answered now can trust anything: a claim remembered from a
        client that left the group (crashed or stopped) is trusted by no process (False), and
        one of a member that does not answer (hung) is unknown (None), however recent its last
        renewal; its broker lease is what still matters (FREES AT)."""
        if not self.live:
            return None if self.member else False
        return (self.locked and self.last_lock_ts > 0
                and self.at(now) - self.renewed_ts <= CLIENT_TRUST_MS)

    def overdue(self, now: int, slack_ms: int = RENEW_SLACK_MS) -> bool:
        age = self.age(now)
        return age is not None and (age > RENEW_INTERVAL_MS + slack_ms or age > CLIENT_TRUST_MS)

    def describe(self, now: int) -> str:
        age = self.age(now)
        bits = ["locked" if self.locked else "not locked"]
        if age is not None and self.locked:
            bits.append(f"renewed {format_duration(age)} ago")
        if self.dropped:
            bits.append("dropped")
        if self.try_unlock_times:
            bits.append(f"unlock tried {self.try_unlock_times}x")
        if not self.live:
            bits.append(f"last seen {format_duration(max(0, now - self.observed_ts))} ago")
        return f"{self.client_id} ({', '.join(bits)})"

    def to_dict(self, now: int) -> dict[str, Any]:
        end = self.lease_end
        ends = self.lease_ends()
        latest = ends[-1] if ends else None
        return {"client_id": self.client_id, "source": "live" if self.live else "unknown",
                "member": self.member, "locked": self.locked,
                "last_lock_ts": self.last_lock_ts or None,
                "last_lock_time": format_ms(self.last_lock_ts) or None,
                "lock_age_ms": self.age(now), "trusted": self.trusted(now),
                "lease_end_ts": end, "lease_end_time": format_ms(end) or None,
                "lease_end_latest_ts": latest,
                "lease_end_latest_time": format_ms(latest) or None,
                "lease_runs": self.lease_runs(now), "try_unlock_times": self.try_unlock_times,
                "dropped": self.dropped, "orderly": self.orderly,
                "commit_offset": self.commit_offset,
                "observed_ts": self.observed_ts or None,
                "observed_time": format_ms(self.observed_ts) or None,
                "clock_ahead_ms": self.clock_ahead_ms,
                "gone_ts": self.gone_ts or None, "gone_time": format_ms(self.gone_ts) or None,
                "silent_ts": self.silent_ts or None,
                "silent_time": format_ms(self.silent_ts) or None}

    @classmethod
    def of(cls, client_id: str, mq: MessageQueue, pq: ProcessQueueInfo, *, live: bool = True,
           observed_ts: int = 0, member: bool = True, orderly: bool | None = True) -> Claim:
        return cls(client_id, mq, pq.locked, pq.last_lock_timestamp, pq.try_unlock_times,
                   pq.dropped, live, observed_ts, member, orderly,
                   commit_offset=pq.commit_offset)


@dataclass(frozen=True, slots=True)
class HungMember:
    """A member that answered an earlier run and does not answer now: a hung client while it
    stays a member (state ``hung``), with what can be said of when the brokers drop it.

    A broker drops a channel whose last heartbeat is more than 120 s old
    (``ConsumerManager.scanNotActiveChannel``, every 10 s: "SCAN: remove expired channel";
    4.x also closes a connection idle for 120 s, ``NettyServerConfig
    .serverChannelMaxIdleTimeSeconds``, which is not earlier). No request reads a channel's
    last heartbeat (``ClientChannelInfo.lastUpdateTimestamp`` is in no answer: the consumer
    connection list gives id, address, language and version only), so it is bounded by what
    mqctl saw: the client heartbeats every ``heartbeatBrokerInterval`` (30 s by default; 5.x
    running info reports it), so its last heartbeat came at most that long before its last
    answer (``last_answer_ts``, mqctl's state file) and no later than mqctl's first unanswered
    request (``silent_ts``). The window narrows with the time between those two runs (``locks
    show --watch``: to about one heartbeat interval). Real lock-crash: 4.9.3 dropped o2 at
    21:01:15.9, 120.0 s after its last heartbeat (20:59:15.906, ``lastUpdateTimestamp`` in the
    broker's log), 5.3.3 at 21:01:44, 120 s after 20:59:44.772."""

    client_id: str
    last_answer_ts: int
    silent_ts: int
    heartbeat_ms: int = HEARTBEAT_MS

    @property
    def last_heartbeat(self) -> tuple[int, int]:
        """The earliest and the latest its last heartbeat can have been."""
        return self.last_answer_ts - self.heartbeat_ms, max(self.silent_ts, self.last_answer_ts)

    @property
    def dropped(self) -> tuple[int, int]:
        """The earliest and the latest moment the brokers drop it (if it stays frozen)."""
        lo, hi = self.last_heartbeat
        return lo + CHANNEL_EXPIRED_MS, hi + CHANNEL_EXPIRED_MS + CHANNEL_SCAN_MS

    @property
    def resumes_by(self) -> int:
        """The latest moment another member consumes its queues: the latest drop, one rebalance
        (a member no broker notified rebalances every 20 s; a notified one at once) and one lock
        cycle (a 4.x client marks a new queue locked at its next lockAll, 20 s)."""
        return self.dropped[1] + REBALANCE_MS + RENEW_INTERVAL_MS

    def text(self, queues: int, takers: Sequence[str] = ()) -> str:
        """What happens next, with how it is estimated (a note of the view, once per member)."""
        hb_lo, hb_hi = self.last_heartbeat
        lo, hi = self.dropped
        cid = self.client_id
        who = ", ".join(takers) if takers else "the members that remain"
        return (f"{cid} is hung: a member that answered at {format_local(self.last_answer_ts)} "
                f"and has not answered since {format_local(self.silent_ts)}; the allocation "
                f"still gives it {queues} queue(s), so no other client asks for their locks "
                "and a release frees nobody (it re-locks them when it resumes: lock.log "
                f"\"lock expired, I got it\" with {cid} as old and new holder). The brokers "
                f"drop a member {CHANNEL_EXPIRED_MS // 1000} s after its last heartbeat "
                "(ConsumerManager channel expiry, scanned every "
                f"{CHANNEL_SCAN_MS // 1000} s); no request reads that heartbeat, but {cid} "
                f"heartbeats every {self.heartbeat_ms // 1000} s, so its last one came between "
                f"{format_local(hb_lo)} ({self.heartbeat_ms // 1000} s before its last answer) "
                f"and {format_local(hb_hi)} (its first unanswered request): it is dropped "
                f"between {format_local(lo)} and {format_local(hi)} if it stays frozen (run "
                "mqctl more often, e.g. `locks show --watch`, to narrow this), then "
                f"{who} take its queues within one rebalance and one lock cycle "
                f"({REBALANCE_MS // 1000} s each): by {format_local(self.resumes_by)}. If it "
                "resumes after that, it consumes again from its in-memory offsets what the "
                "others consumed meanwhile (duplicates); restarted instead, it reads the "
                "committed offsets")

    def outlived(self, now: int) -> bool:
        """Still listed after the latest drop: it heartbeats, so it is not frozen."""
        return now > self.dropped[1]

    def to_dict(self) -> dict[str, Any]:
        hb_lo, hb_hi = self.last_heartbeat
        lo, hi = self.dropped
        return {"client_id": self.client_id, "last_answer_ts": self.last_answer_ts,
                "last_answer_time": format_ms(self.last_answer_ts) or None,
                "silent_ts": self.silent_ts, "silent_time": format_ms(self.silent_ts) or None,
                "heartbeat_interval_ms": self.heartbeat_ms,
                "last_heartbeat_earliest_ts": hb_lo, "last_heartbeat_latest_ts": hb_hi,
                "dropped_earliest_ts": lo, "dropped_earliest_time": format_ms(lo) or None,
                "dropped_latest_ts": hi, "dropped_latest_time": format_ms(hi) or None,
                "resumes_by_ts": self.resumes_by,
                "resumes_by_time": format_ms(self.resumes_by) or None}


@dataclass(frozen=True, slots=True)
class Redelivery:
    """A hung orderly holder resumed after its queue had moved: RocketMQ delivers again, from
    its in-memory offset, what the other client consumed meanwhile.

    A frozen client keeps its ProcessQueue and its in-memory offset; when it resumes and still
    finds itself in the member list it keeps the queue, re-locks it once the other client
    releases it, and pulls from where it stopped (real 5.3.3: go1, SIGSTOPped ~150 s, consumed
    712 messages again that go2 had consumed). ``from_offset``: its offset when mqctl last saw
    it before the hang; ``to_offset``: the furthest mqctl saw the other client commit;
    ``offset``: where it is now (its running info's commitOffset)."""

    client_id: str
    survivor: str
    from_offset: int
    to_offset: int
    offset: int

    @property
    def expected(self) -> int:
        return max(0, self.to_offset - self.from_offset)

    @property
    def remaining(self) -> int:
        return max(0, self.to_offset - self.offset)

    def text(self, q: str) -> str:
        return (f"{q}: duplicates expected, about {self.expected:,} message(s): {self.client_id} "
                f"resumed after its queue had moved to {self.survivor}, and consumes again "
                f"from its in-memory offset ({self.from_offset:,}) what {self.survivor} "
                f"consumed meanwhile (up to offset {self.to_offset:,}); it is at "
                f"{self.offset:,} ({self.remaining:,} to go)")

    def to_dict(self) -> dict[str, Any]:
        return {"client_id": self.client_id, "survivor": self.survivor,
                "from_offset": self.from_offset, "to_offset": self.to_offset,
                "offset": self.offset, "expected": self.expected, "remaining": self.remaining}


# ------------------------------------------------------------------------------ results


@dataclass(frozen=True, slots=True)
class QueueLock:
    """The lock view of one queue."""

    mq: MessageQueue
    state: LockState
    owner: str | None                 # the client the state is about
    claims: tuple[Claim, ...]
    predicted: tuple[str, ...]        # clients the allocation assigns the queue to
    reason: str
    hint: str | None
    now: int
    frees_at: int | None = None       # stale: when the blocking lease runs out; hung: the
    #                                   earliest moment another member can take it
    frees_latest: int | None = None   # hung: by when another member consumes it at the latest
    hung: HungMember | None = None    # hung: the member and its drop estimate
    takers: tuple[str, ...] = ()      # hung: who the allocation gives the queue once it drops
    redelivery: Redelivery | None = None  # the owner resumed after the queue had moved

    @property
    def subject(self) -> Claim | None:
        """The claim the state is about (the owner's), if any."""
        for c in self.claims:
            if c.client_id == self.owner:
                return c
        return None

    @property
    def locked(self) -> bool | None:
        c = self.subject
        return c.locked if c is not None else None

    @property
    def lock_age_ms(self) -> int | None:
        c = self.subject
        return c.age(self.now) if c is not None and c.locked else None

    @property
    def trusted(self) -> bool | None:
        c = self.subject
        return c.trusted(self.now) if c is not None else None

    @property
    def lease_end(self) -> int | None:
        if self.frees_at is not None and self.state is LockState.STALE:
            return self.frees_at
        c = self.subject
        return c.lease_end if c is not None else None

    @property
    def _frees_latest(self) -> int | None:
        if self.frees_latest is not None:
            return self.frees_latest
        c = self.subject
        if self.frees_at is None or c is None or not c.lease_ends():
            return self.frees_at
        return max(self.frees_at, c.lease_ends()[-1])

    @property
    def lease_left_ms(self) -> int | None:
        """Lease left at the moment the owner's answer was received (now for a remembered
        claim), within what a lease can be: 0 to 60 s."""
        end = self.lease_end
        if end is None:
            return None
        c = self.subject
        at = c.at(self.now) if c is not None else self.now
        return min(BROKER_LEASE_MS, max(0, end - at))

    @property
    def clock_ahead_ms(self) -> int | None:
        """The owner's clock is ahead of mqctl's by this much (its lastLockTimestamp is later
        than the moment its answer was received), else None."""
        c = self.subject
        return c.clock_ahead_ms if c is not None else None

    def to_dict(self) -> dict[str, Any]:
        c = self.subject
        end = self.lease_end
        return {
            "queue": self.mq.short, "topic": self.mq.topic, "broker": self.mq.broker_name,
            "queue_id": self.mq.queue_id, "state": self.state.value, "owner": self.owner,
            "source": ("live" if c.live else "unknown") if c is not None else None,
            "locked": self.locked,
            "last_lock_ts": (c.last_lock_ts or None) if c is not None else None,
            "last_lock_time": (format_ms(c.last_lock_ts) or None) if c is not None else None,
            "lock_age_ms": self.lock_age_ms, "trusted": self.trusted,
            "lease_end_ts": end, "lease_end_time": format_ms(end) or None,
            "lease_left_ms": self.lease_left_ms,
            # durations in seconds, as every machine format has them (docs/output.md); the
            # _ms keys stay for the scripts that read them
            "lock_age_s": _seconds(self.lock_age_ms), "lease_left_s": _seconds(self.lease_left_ms),
            # the owner's clock is ahead of mqctl's (null: no disagreement seen)
            "clock_ahead_ms": self.clock_ahead_ms, "clock_ahead_s": _seconds(self.clock_ahead_ms),
            "frees_at_ts": self.frees_at, "frees_at_time": format_ms(self.frees_at) or None,
            # the latest FREES AT can move to (see the stale hint); = frees_at when known
            "frees_at_latest_ts": self._frees_latest,
            "frees_at_latest_time": format_ms(self._frees_latest) or None,
            "try_unlock_times": c.try_unlock_times if c is not None else None,
            "dropped": c.dropped if c is not None else None,
            "predicted": list(self.predicted),
            "claimants": [x.client_id for x in self.claims],
            # superseded_by: another client the broker granted the lock after this claim's
            # last renewal (this one no longer holds it, whatever its own lease says)
            "claims": [{**x.to_dict(self.now),
                        "superseded_by": (s.client_id if (s := superseded_by(x, self.claims))
                                          else None)}
                       for x in self.claims],
            "hung": ({**self.hung.to_dict(), "takers": list(self.takers)}
                     if self.hung is not None else None),
            "redelivery": self.redelivery.to_dict() if self.redelivery is not None else None,
            "reason": self.reason, "hint": self.hint,
        }


@dataclass(frozen=True, slots=True)
class ClientLocks:
    """One client as the lock view sees it (members and remembered former members)."""

    client_id: str
    member: bool
    answered: bool
    error: str | None = None
    orderly: bool | None = None
    strategy: str | None = None
    connections: int = 1
    claimed: int = 0
    locked: int = 0
    last_seen_ts: int | None = None   # when it last answered (now, or from the state file)
    start_ts: int | None = None       # PROP_CONSUMER_START_TIMESTAMP of the process seen
    reconnected: str | None = None    # why mqctl's earlier record of it was dropped

    def to_dict(self) -> dict[str, Any]:
        return {"client_id": self.client_id, "member": self.member, "answered": self.answered,
                "error": self.error, "orderly": self.orderly, "strategy": self.strategy,
                "connections": self.connections, "claimed": self.claimed,
                "locked": self.locked, "last_seen_ts": self.last_seen_ts,
                "last_seen_time": format_ms(self.last_seen_ts) or None,
                "start_ts": self.start_ts, "start_time": format_ms(self.start_ts) or None,
                "reconnected": self.reconnected}


GROUP_KINDS = ("orderly", "concurrent", "broadcasting", "pop", "offline", "unknown")


@dataclass(frozen=True, slots=True)
class LockView:
    group: str
    now: int
    online: bool | None          # None: a broker that may list a client did not answer
    kind: str                    # one of GROUP_KINDS
    message_model: str | None
    topics: tuple[str, ...]
    queues: tuple[QueueLock, ...]
    clients: tuple[ClientLocks, ...]
    notes: tuple[str, ...] = ()
    failures: tuple[BrokerFailure, ...] = ()

    def summary(self) -> dict[str, int]:
        counts = Counter(q.state for q in self.queues)
        return {s.value: counts.get(s, 0) for s in PRECEDENCE}

    @property
    def unanswered(self) -> tuple[ClientLocks, ...]:
        return tuple(c for c in self.clients if not c.answered)

    def hints(self) -> list[str]:
        rank = {s: i for i, s in enumerate(PRECEDENCE)}
        return [q.hint for q in sorted(self.queues, key=lambda q: (rank[q.state], q.mq))
                if q.hint and q.state in PROBLEM_STATES]

    def queue(self, mq: MessageQueue) -> QueueLock | None:
        for q in self.queues:
            if q.mq == mq:
                return q
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "group": self.group, "capture_ts": self.now, "capture_time": format_ms(self.now),
            "online": self.online, "kind": self.kind, "message_model": self.message_model,
            "topics": list(self.topics),
            "queues": [q.to_dict() for q in self.queues],
            "summary": self.summary(),
            "clients": [c.to_dict() for c in self.clients],
            "unanswered": [c.to_dict() for c in self.unanswered],
            "hints": self.hints(), "notes": list(self.notes),
            "failures": [{"broker": f.broker, "addr": f.addr, "error": f.message}
                         for f in self.failures],
            "timing": {"broker_lease_ms": BROKER_LEASE_MS, "client_trust_ms": CLIENT_TRUST_MS,
                       "renew_interval_ms": RENEW_INTERVAL_MS},
        }


# ------------------------------------------------------------------------------ classify


def latest_claim(claims: Iterable[Claim]) -> Claim:
    """The claim renewed last (then: observed last)."""
    return max(claims, key=lambda c: (c.last_lock_ts, c.observed_ts))


def superseded_by(claim: Claim, claims: Iterable[Claim]) -> Claim | None:
    """The first claim of another client whose broker grant came after ``claim``'s last
    renewal: the broker keeps one lock entry per queue and grants it only when it is free,
    expired or already the requester's (RebalanceLockManager.tryLockBatch), so by then
    ``claim``'s client no longer held the lock (unlocked on shutdown, lease ended) and cannot
    take it back while the grantee's lease runs. None: no such evidence."""
    later = [o for o in claims if o.client_id != claim.client_id
             and (g := o.granted_ts) is not None and g > claim.renewed_ts]
    return min(later, key=lambda o: (o.granted_ts or 0, java_string_key(o.client_id))
               ) if later else None


def classify_queue(mq: MessageQueue, claims: Sequence[Claim], predicted: Sequence[str], *,
                   now: int, answered: Iterable[str] = (),
                   connections: Mapping[str, int] | None = None, group: str = "",
                   slack_ms: int = RENEW_SLACK_MS,
                   reconnected: Mapping[str, str] | None = None,
                   hung: Mapping[str, HungMember] | None = None,
                   after_drop: Sequence[str] = ()) -> QueueLock:
    """The state of one queue from every claim on it (see the module docstring for rules).

    ``reconnected``: members that do not answer and are a new process or connection since
    mqctl's record of them (which was dropped), with the evidence, for the hints. ``hung``:
    the members that answered an earlier run and do not answer now (the state file's records),
    beyond those whose remembered claims are on this queue (those count by themselves);
    ``after_drop``: the clients the allocation assigns the queue to once the hung members are
    dropped (who takes it over).

    The states are tried in the order of the module docstring's rules: contested (several
    claimers, or one client id used by several processes), hung, stale, one claimer, then
    nobody answering claims it."""
    f = _QueueFacts.of(mq, claims, predicted, now=now, answered=answered,
                       connections=connections, group=group, slack_ms=slack_ms,
                       reconnected=reconnected, hung=hung, after_drop=after_drop)
    for rule in (_contested, _shared_client_id, _hung, _stale):
        found = rule(f)
        if found is not None:
            return found
    if f.active:
        return _one_claimer(f, f.active[0])
    return _unclaimed(f)


@dataclass(frozen=True, slots=True)
class _QueueFacts:
    """What :func:`classify_queue` reads about one queue, sorted into the evidence its rules
    weigh."""

    mq: MessageQueue
    claims: tuple[Claim, ...]       # live ones first, then by client id
    predicted: tuple[str, ...]
    now: int
    answered: set[str]
    connections: Mapping[str, int]
    group: str
    slack_ms: int
    reconnected: Mapping[str, str]
    active: list[Claim]             # live claims of clients that have not dropped the queue
    claimers: list[str]
    releasing: list[Claim]          # live, dropped, lease still running: being released
    remembered: list[Claim]         # not live, and nothing later supersedes them
    blocking: list[Claim]           # remembered leases that still run, with no live lease
    hung: dict[str, HungMember]     # members that answered before and do not answer now
    after_drop: tuple[str, ...]     # the allocation once the hung members are dropped

    @classmethod
    def of(cls, mq: MessageQueue, claims: Sequence[Claim], predicted: Sequence[str], *,
           now: int, answered: Iterable[str], connections: Mapping[str, int] | None,
           group: str, slack_ms: int, reconnected: Mapping[str, str] | None,
           hung: Mapping[str, HungMember] | None = None,
           after_drop: Sequence[str] = ()) -> _QueueFacts:
        ordered = tuple(sorted(claims, key=lambda c: (not c.live, java_string_key(c.client_id))))
        live = [c for c in ordered if c.live]
        active = [c for c in live if not c.dropped]
        # what evidence outranks what (module docstring, "Evidence"): a remembered claim
        # counts only while nothing later says the broker gave the lock to someone else
        remembered = [c for c in ordered if not c.live and superseded_by(c, ordered) is None]
        # a live lease, or a live concurrent consumer (it consumes without any lock: a lease
        # of someone else blocks nothing it does)
        live_lease = [c for c in live
                      if c.lease_runs(now) or (c.orderly is False and not c.dropped)]
        answering = set(answered)
        # a member that does not answer and whose last answer mqctl remembers: its claims
        # carry when it last answered and when mqctl first found it silent
        silent = dict(hung or {})
        for c in ordered:
            if not c.live and c.member and c.client_id not in answering \
                    and c.client_id not in silent and c.observed_ts > 0:
                silent[c.client_id] = HungMember(c.client_id, c.observed_ts,
                                                 c.silent_ts or now)
        return cls(mq, ordered, tuple(predicted), now, answering, connections or {}, group,
                   slack_ms, reconnected or {}, active,
                   list(dict.fromkeys(c.client_id for c in active)),
                   [c for c in live if c.dropped and c.lease_runs(now)], remembered,
                   [] if live_lease else [c for c in remembered if c.lease_runs(now)],
                   silent, tuple(after_drop))

    @property
    def q(self) -> str:
        return self.mq.short

    @property
    def group_text(self) -> str:
        return self.group or "<group>"

    def make(self, state: LockState, owner: str | None, reason: str, hint: str | None,
             frees_at: int | None = None, frees_latest: int | None = None,
             hung: HungMember | None = None, takers: Sequence[str] = ()) -> QueueLock:
        return QueueLock(self.mq, state, owner, self.claims, self.predicted, reason, hint,
                         self.now, frees_at, frees_latest, hung, tuple(takers))


def _contested(f: _QueueFacts) -> QueueLock | None:
    """1. Several clients claim it, or several answering clients' own allocations assign it
    to themselves (split views: the loser's lock attempts fail every 20 s)."""
    assigned = [p for p in dict.fromkeys(f.predicted) if p in f.answered]
    contenders = list(dict.fromkeys(f.claimers + (assigned if len(assigned) >= 2 else [])))
    if len(contenders) < 2:
        return None
    # the owner: the claimer the broker granted the lock last (Evidence), else the one whose
    # lease runs
    granted = [c for c in f.active if c.granted_ts is not None]
    holders = [c for c in f.active if c.lease_runs(f.now)]
    owner = (max(granted, key=lambda c: (c.granted_ts or 0, c.observed_ts)).client_id
             if granted else latest_claim(holders).client_id if holders
             else contenders[0])
    desc = "; ".join([c.describe(f.now) for c in f.active]
                     + [f"{p} (assigned, not holding it)" for p in contenders
                        if p not in f.claimers])
    return f.make(LockState.CONTESTED, owner,
                  f"claimed by {len(contenders)} clients: {desc}",
                  f"{f.q} is claimed by {len(contenders)} clients ({', '.join(contenders)}): "
                  "their allocation views differ (member lists, strategies or "
                  f"subscriptions); check `mqctl consumers {f.group_text}`")


def _shared_client_id(f: _QueueFacts) -> QueueLock | None:
    """1. (also contested) One client id used by several processes (connections)."""
    dups = [c for c in f.active if f.connections.get(c.client_id, 1) > 1]
    if not dups:
        return None
    c = dups[0]
    n = f.connections[c.client_id]
    return f.make(LockState.CONTESTED, c.client_id,
                  f"client id {c.client_id} is used by {n} processes",
                  f"{f.q}: client id {c.client_id} is used by {n} processes; the broker sees "
                  "one lock holder, so they consume it at the same time and order is lost; "
                  "give each process a unique instanceName")


def _hung(f: _QueueFacts) -> QueueLock | None:
    """2. The member the allocation assigns it to answered before and does not answer now, and
    no answering client claims it or is assigned it: nobody else asks for its lock."""
    if f.active or any(p in f.answered for p in f.predicted):
        return None
    h = next((f.hung[p] for p in f.predicted if p in f.hung), None)
    if h is None or h.outlived(f.now):
        return None
    cid, q, now = h.client_id, f.q, f.now
    c = next((x for x in f.remembered if x.client_id == cid), None)
    drop_lo, drop_hi = h.dropped
    lease = ""
    frees = drop_lo
    if c is not None and c.lease_end is not None:
        frees = max(frees, c.lease_end)
        lease = (f"its broker lease {'runs until' if c.lease_runs(now) else 'lapsed at'} "
                 f"{clock_text(c.lease_end)} (it blocks nobody); ")
    elif c is not None:
        lease = "it had not locked it when last seen; "
    takers = [p for p in f.after_drop if p != cid]
    who = ", ".join(takers) if takers else "the members that remain"
    reason = (f"{cid} does not answer (a hung member: it answered at "
              f"{format_local(h.last_answer_ts)}, silent since {format_local(h.silent_ts)}) "
              f"and the allocation still assigns it {q}: nobody else asks for the lock")
    hint = (f"{q} is blocked by the hung client {cid}: still a member, it keeps {q} in every "
            f"member's allocation, so no other client asks for the lock; {lease}releasing its "
            f"lock frees nobody ({cid} re-locks it when it resumes). The brokers drop {cid} "
            f"between {clock_text(drop_lo)} and {clock_text(drop_hi)} (120 s after its last "
            f"heartbeat), then {who} can lock {q}: consumption resumes by "
            f"{clock_text(h.resumes_by)} at the latest; restart {cid} to move it sooner")
    return f.make(LockState.HUNG, cid, reason, hint, frees_at=frees, frees_latest=h.resumes_by,
                  hung=h, takers=takers)


def _stale(f: _QueueFacts) -> QueueLock | None:
    """3. A lease of a client that left, or of one that does not answer while an answering
    client is assigned the queue, still blocks it."""
    if not f.blocking:
        return None
    c = latest_claim(f.blocking)
    frees = c.frees_at(f.now)
    assert frees is not None
    ends = c.lease_ends()
    why = ("no longer a member: crashed or left" if not c.member
           else "does not answer: hung or overloaded")
    others = [p for p in f.predicted if p != c.client_id and p in f.answered]
    # the new owner locks it at its next rebalance after that (every 20 s, at once when
    # the broker notifies a member change); a 4.x client then consumes only after its
    # next lockAll (RebalanceImpl: the ProcessQueue is created after lock() succeeded)
    then = (f"; then {', '.join(others)} can lock it: consumption resumes up to one "
            f"rebalance and one lock cycle ({RENEW_INTERVAL_MS // 1000} s each) after "
            "that time, not at it" if others else "")
    cmd = (f"mqctl locks release --group {f.group_text} --queue {f.q} "
           f"--topic {f.mq.topic} --execute")
    basis = f"its last reported renewal {format_local(c.last_lock_ts)}"
    if frees != ends[0]:
        basis += (f", seen at {format_local(c.observed_ts)}, and the renewals every "
                  f"{RENEW_INTERVAL_MS // 1000} s it may have made before it left")
    latest = ""
    # FREES AT is the earliest lease end still possible: when the holder left between two
    # observations it may have renewed (every 20 s) until it left, so FREES AT moves 20 s
    # later each time it passes with no live client holding the lock, up to ends[-1]
    window = (f" (FREES AT: its last reported renewal + {BROKER_LEASE_MS // 1000} s)")
    if frees != ends[-1]:
        latest = (f"; {format_local(ends[-1])} at the latest if it renewed again before it "
                  f"left (gone at {format_local(c.gone_ts)})")
        window = (f" at the earliest (FREES AT moves {RENEW_INTERVAL_MS // 1000} s later "
                  f"each time it passes while no live client holds the lock, until "
                  f"{clock_text(ends[-1])} at the latest: {c.client_id} may have renewed "
                  f"every {RENEW_INTERVAL_MS // 1000} s until it left)")
    return f.make(LockState.STALE, c.client_id,
                  f"{c.client_id} {why}; its broker lease runs until "
                  f"{format_local(frees)} (estimated from {basis}){latest}",
                  f"{f.q} is blocked until {clock_text(frees)}{window} because {c.client_id} "
                  f"stopped renewing ({why}){then}; `{cmd}` frees it now",
                  frees_at=frees)


def _one_claimer(f: _QueueFacts, c: Claim) -> QueueLock:
    """4-6. One client claims it: held, expiring, or lock failed."""
    q, now = f.q, f.now
    if c.orderly is False:
        return f.make(LockState.LOCK_FAILED, c.client_id,
                      f"{c.client_id} consumes concurrently and never locks",
                      f"{q} is consumed by {c.client_id}, which is not an orderly consumer: "
                      "the group mixes orderly and concurrent clients")
    if not c.locked or c.last_lock_ts <= 0:
        return _claimed_not_locked(f, c)
    age = c.age(now) or 0
    if not c.lease_runs(now):
        return f.make(LockState.LOCK_FAILED, c.client_id,
                      f"lock lapsed: last renewal {format_duration(age)} ago, beyond the "
                      "60 s broker lease",
                      f"{q}: {c.client_id} has not renewed its lock for "
                      f"{format_duration(age)}: renewals fail (master of "
                      f"{f.mq.broker_name} unreachable?) and another client may take it")
    if c.overdue(now, f.slack_ms):
        assert c.lease_end is not None
        trust = ("the client no longer trusts it and pauses consumption; "
                 if not c.trusted(now) else "")
        return f.make(LockState.EXPIRING, c.client_id,
                      f"renewal overdue: last renewal {format_duration(age)} ago "
                      f"(every {RENEW_INTERVAL_MS // 1000} s)",
                      f"{q}: {c.client_id} last renewed its lock {format_duration(age)} ago; "
                      f"{trust}the broker lease runs until {clock_text(c.lease_end)}")
    extra = ""
    if f.predicted and c.client_id not in f.predicted:
        extra = f"; the allocation now assigns it to {', '.join(f.predicted)}"
    return f.make(LockState.HELD, c.client_id,
                  f"locked by {c.client_id}, renewed {format_duration(age)} ago{extra}",
                  None)


def _claimed_not_locked(f: _QueueFacts, c: Claim) -> QueueLock:
    """The one claimer has not (yet) locked it: another client releasing it, a lock granted
    but not yet marked, or renewals that fail."""
    q, now = f.q, f.now
    holder = f.releasing[0] if f.releasing else None
    if holder is not None:
        why = (f"{holder.client_id} still holds it while releasing it (unlock tried "
               f"{holder.try_unlock_times}x)")
        reason = f"claimed by {c.client_id} but not locked"
    elif c.last_lock_ts > 0 and c.age(now) is not None \
            and (c.age(now) or 0) <= RENEW_INTERVAL_MS + f.slack_ms:
        # a ProcessQueue that has never been marked locked: its lastLockTimestamp is
        # its creation time, and a 4.x client creates it only after the broker granted
        # the lock (RebalanceImpl.updateProcessQueueTableInRebalance: lock(mq) first;
        # lock() finds no ProcessQueue to mark), then marks it at its next lockAll
        # (ConsumeMessageOrderlyService.lockMQPeriodically, every 20 s). Real 4.9.3:
        # lock-crash/kill_survivor_o1_client.log "lock OK" 20:58:04.5, "locked OK"
        # 20:58:16.5, "pull message later because not locked in broker" in between.
        mark = c.last_lock_ts + RENEW_INTERVAL_MS
        why = (f"the broker granted the lock when {c.client_id} added the queue "
               f"({format_local(c.last_lock_ts)}); a 4.x client marks it locked at its "
               f"next lock cycle (every {RENEW_INTERVAL_MS // 1000} s, by "
               f"{clock_text(mark)}) and consumes it from then on")
        return f.make(LockState.LOCK_FAILED, c.client_id,
                      f"claimed by {c.client_id}, lock granted, not yet marked locked by "
                      "the client (next lock cycle)",
                      f"{q} is claimed by {c.client_id} but not marked locked yet: {why}")
    else:
        why = ("its lock renewals fail: the broker refused the lock (another client's "
               "lease, up to 60 s) or the master is unreachable")
        reason = f"claimed by {c.client_id} but not locked"
    return f.make(LockState.LOCK_FAILED, c.client_id, reason,
                  f"{q} is claimed by {c.client_id} but not locked: {why}; it retries "
                  "every 20 s")


def _unclaimed(f: _QueueFacts) -> QueueLock:
    """Nobody answering claims it: assigned to an answering client that has not locked it,
    unknown (a silent member), or unowned."""
    pred_answering = [p for p in f.predicted if p in f.answered]
    pred_silent = [p for p in f.predicted if p not in f.answered]
    silent = [c for c in f.remembered if c.member]
    if pred_answering:
        return _assigned_not_locked(f, pred_answering[0])
    if silent or pred_silent:
        return _unknown(f, silent, pred_silent)
    pred_text = f"; the allocation assigns it to {', '.join(f.predicted)}" if f.predicted else ""
    return f.make(LockState.UNOWNED, None, "no client claims it" + pred_text,
                  f"{f.q}: no client claims it and no member's allocation assigns it (no member "
                  "subscribes, or the clients' allocation views differ)")


def _assigned_not_locked(f: _QueueFacts, owner: str) -> QueueLock:
    gone_lapsed = [c for c in f.remembered if not c.member and c.lease_end is not None]
    if f.releasing:
        why = (f"{f.releasing[0].client_id} still holds it while releasing it (unlock tried "
               f"{f.releasing[0].try_unlock_times}x)")
    elif gone_lapsed:
        x = latest_claim(gone_lapsed)
        why = (f"{x.client_id} left the group and its lease lapsed "
               f"({format_local(x.lease_ends()[-1])}); {owner} locks it at its next rebalance "
               f"(at once when a broker notifies the change, else within "
               f"{RENEW_INTERVAL_MS // 1000} s)")
    else:
        why = ("a departed consumer's lease may still run (up to 60 s), or it has not "
               "rebalanced yet (every 20 s)")
    return f.make(LockState.LOCK_FAILED, owner, f"assigned to {owner} but not locked by it",
                  f"{f.q} is assigned to {owner} but it has not locked it: {why}")


def _unknown(f: _QueueFacts, silent: list[Claim], pred_silent: list[str]) -> QueueLock:
    """A member that claimed it does not answer, or the client it is assigned to does not."""
    q = f.q
    h = next((f.hung[p] for p in [c.client_id for c in silent] + pred_silent if p in f.hung),
             None)
    if h is not None and h.outlived(f.now):
        # listed after the latest moment the brokers drop a frozen client: it heartbeats
        owner = h.client_id
        reason = (f"{owner} does not answer but is still a member after "
                  f"{format_local(h.dropped[1])}, the latest a frozen client is dropped: it "
                  "heartbeats, so it is not hung")
        hint = (f"{q}: {owner} has not answered running-info requests since "
                f"{format_local(h.silent_ts)} but is still a member after "
                f"{clock_text(h.dropped[1])} (a frozen client is dropped "
                f"{CHANNEL_EXPIRED_MS // 1000} s after its last heartbeat): it still "
                "heartbeats, so it runs, but its answers do not come back (overloaded, or "
                "answering too slowly); whether it consumes "
                f"{q} is unknown: look at its log or a thread dump")
        return f.make(LockState.UNKNOWN, owner, reason, hint)
    if silent:
        c = latest_claim(silent)
        owner = c.client_id
        lapsed = (f"its lease lapsed at {clock_text(c.lease_end)}" if c.lease_end
                  else "it was not locked then")
        seen = clock_text(c.observed_ts) if c.observed_ts else "an earlier run"
        reason = f"{owner} does not answer; last seen claiming it at {seen}"
        hint = (f"{q}: {owner} does not answer (last seen {seen}; {lapsed}); while it stays "
                "a member the queue is allocated to it and nobody may be consuming it; a "
                "hung client is dropped by the brokers about 120 s after its last "
                "heartbeat, then the others take the queue")
    else:
        owner = pred_silent[0]
        reason = f"assigned to {owner}, which does not answer"
        hint = (f"{q} is assigned to {owner}, which does not answer running-info requests: "
                "its lock state is unknown")
        if owner in f.reconnected:
            reason += " (a new process or connection since mqctl last saw it)"
            hint += f" ({owner} {f.reconnected[owner]})"
    return f.make(LockState.UNKNOWN, owner, reason, hint)
