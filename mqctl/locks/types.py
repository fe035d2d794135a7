"""The lock model's types (pure): the states of a queue, a claim on it (live or remembered), a
hung member, a redelivery, a queue's classification, a client's locks, a group's lock view,
and RocketMQ's timings they are computed with (:mod:`mqctl.locks.model` explains them and
classifies a queue)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
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


# ------------------------------------------------------------------------------ evidence


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
