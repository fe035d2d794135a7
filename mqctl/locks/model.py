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
2. ``stale``: no answering client holds a lease on it, but a client that is gone -- no longer
   a member (crashed, left) or not answering (hung, overloaded) -- was last seen holding it and
   its broker lease can still run: it blocks the queue until ``frees_at``;
3. ``lock-failed``: claimed but not locked (or the lock lapsed: last renewal older than the
   60 s lease, or the claimer consumes concurrently), or assigned by the allocation to an
   answering client that has not locked it;
4. ``expiring``: the claimer's renewal is overdue (lock older than the 20 s renewal interval
   plus slack), or the client no longer trusts it (> 30 s) while the broker lease still runs;
5. ``held``: one claimer, locked, renewed on time;
6. ``unknown``: nobody answering claims it, but a member that does not answer claimed it last
   time (lease lapsed) or is the one the allocation assigns it to;
7. ``unowned``: no client claims it and no member's allocation assigns it.

A live claim whose lease still runs supersedes remembered claims: the broker gave the lock to
the live client, so the remembered holder's lease must have ended.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mqctl.errors import ConnectError, MqctlError, RefusedError, UsageError
from mqctl.fsutil import atomic_write_text
from mqctl.models import RETRY_PREFIX, MessageQueue, ProcessQueueInfo, java_string_key
from mqctl.timeparse import format_clock, format_duration, format_local, format_ms, now_ms

if TYPE_CHECKING:
    from mqctl.admin import Admin, BrokerFailure
    from mqctl.inspect import ClientView, GroupMembers
    from mqctl.interrupt import Stop
    from mqctl.models import TopicRoute

# RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME (rocketmq.broker.rebalance.lockMaxLiveTime)
BROKER_LEASE_MS = 60_000
# ProcessQueue.REBALANCE_LOCK_MAX_LIVE_TIME (rocketmq.client.rebalance.lockMaxLiveTime)
CLIENT_TRUST_MS = 30_000
# ProcessQueue.REBALANCE_LOCK_INTERVAL (rocketmq.client.rebalance.lockInterval)
RENEW_INTERVAL_MS = 20_000
# lockAll() is scheduled at a fixed rate and waits up to 1 s per broker: allow some slack
RENEW_SLACK_MS = 5_000
# remembered observations of members that never answer again are dropped after a week
STATE_RETENTION_MS = 7 * 24 * 3600 * 1000
STATE_VERSION = 1


class LockState(StrEnum):
    CONTESTED = "contested"
    STALE = "stale"
    LOCK_FAILED = "lock-failed"
    EXPIRING = "expiring"
    HELD = "held"
    UNKNOWN = "unknown"
    UNOWNED = "unowned"


PRECEDENCE: tuple[LockState, ...] = tuple(LockState)
PROBLEM_STATES = frozenset({LockState.CONTESTED, LockState.STALE, LockState.LOCK_FAILED,
                            LockState.EXPIRING, LockState.UNKNOWN, LockState.UNOWNED})


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
    observed_ts: int = 0       # when the client reported it
    member: bool = True        # the client is a member of the group now
    orderly: bool | None = True
    gone_ts: int = 0           # remembered, not a member: when mqctl first found it gone
    silent_ts: int = 0         # remembered: when mqctl first found it a member not answering

    def age(self, now: int) -> int | None:
        """Time since the last renewal the client reported (clamped at 0)."""
        if self.last_lock_ts <= 0:
            return None
        return max(0, now - self.last_lock_ts)

    @property
    def lease_end(self) -> int | None:
        """Last moment the broker still counts the lock (``now - ts > 60000`` = expired)."""
        if not self.locked or self.last_lock_ts <= 0:
            return None
        return self.last_lock_ts + BROKER_LEASE_MS

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
        if (self.live or self.member or self.gone_ts <= self.last_lock_ts
                or (self.silent_ts and self.silent_ts <= self.gone_ts)
                or self.observed_ts - self.last_lock_ts > RENEW_INTERVAL_MS + RENEW_SLACK_MS):
            return (end,)
        later = (self.gone_ts - self.last_lock_ts) // RENEW_INTERVAL_MS
        return tuple(end + k * RENEW_INTERVAL_MS for k in range(later + 1))

    def frees_at(self, now: int) -> int | None:
        """The earliest lease end not yet past (None: the lease has lapsed)."""
        return next((e for e in self.lease_ends() if now <= e), None)

    def lease_runs(self, now: int) -> bool:
        return self.frees_at(now) is not None

    def trusted(self, now: int) -> bool | None:
        """``locked && !isLockExpired()`` (ProcessQueue): the client still consumes under this
        lock. Only a client that answered now can trust anything: a claim remembered from a
        client that left the group (crashed or stopped) is trusted by no process (False), and
        one of a member that does not answer (hung) is unknown (None), however recent its last
        renewal; its broker lease is what still matters (FREES AT)."""
        if not self.live:
            return None if self.member else False
        return (self.locked and self.last_lock_ts > 0
                and now - self.last_lock_ts <= CLIENT_TRUST_MS)

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
                "observed_ts": self.observed_ts or None,
                "observed_time": format_ms(self.observed_ts) or None,
                "gone_ts": self.gone_ts or None, "gone_time": format_ms(self.gone_ts) or None,
                "silent_ts": self.silent_ts or None,
                "silent_time": format_ms(self.silent_ts) or None}

    @classmethod
    def of(cls, client_id: str, mq: MessageQueue, pq: ProcessQueueInfo, *, live: bool = True,
           observed_ts: int = 0, member: bool = True, orderly: bool | None = True) -> Claim:
        return cls(client_id, mq, pq.locked, pq.last_lock_timestamp, pq.try_unlock_times,
                   pq.dropped, live, observed_ts, member, orderly)


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
    frees_at: int | None = None       # stale: when the blocking lease runs out

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
        if self.frees_at is not None:
            return self.frees_at
        c = self.subject
        return c.lease_end if c is not None else None

    @property
    def _frees_latest(self) -> int | None:
        c = self.subject
        if self.frees_at is None or c is None or not c.lease_ends():
            return self.frees_at
        return max(self.frees_at, c.lease_ends()[-1])

    @property
    def lease_left_ms(self) -> int | None:
        end = self.lease_end
        return max(0, end - self.now) if end is not None else None

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
            "frees_at_ts": self.frees_at, "frees_at_time": format_ms(self.frees_at) or None,
            # the latest FREES AT can move to (see the stale hint); = frees_at when known
            "frees_at_latest_ts": self._frees_latest,
            "frees_at_latest_time": format_ms(self._frees_latest) or None,
            "try_unlock_times": c.try_unlock_times if c is not None else None,
            "dropped": c.dropped if c is not None else None,
            "predicted": list(self.predicted),
            "claimants": [x.client_id for x in self.claims],
            "claims": [x.to_dict(self.now) for x in self.claims],
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

    def to_dict(self) -> dict[str, Any]:
        return {"client_id": self.client_id, "member": self.member, "answered": self.answered,
                "error": self.error, "orderly": self.orderly, "strategy": self.strategy,
                "connections": self.connections, "claimed": self.claimed,
                "locked": self.locked, "last_seen_ts": self.last_seen_ts,
                "last_seen_time": format_ms(self.last_seen_ts) or None}


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


def _latest(claims: Iterable[Claim]) -> Claim:
    return max(claims, key=lambda c: (c.last_lock_ts, c.observed_ts))


def classify_queue(mq: MessageQueue, claims: Sequence[Claim], predicted: Sequence[str], *,
                   now: int, answered: Iterable[str] = (),
                   connections: Mapping[str, int] | None = None, group: str = "",
                   slack_ms: int = RENEW_SLACK_MS) -> QueueLock:
    """The state of one queue from every claim on it (see the module docstring for rules)."""
    answered = set(answered)
    connections = connections or {}
    q = mq.short
    claims = tuple(sorted(claims, key=lambda c: (not c.live, java_string_key(c.client_id))))
    predicted = tuple(predicted)
    live = [c for c in claims if c.live]
    active = [c for c in live if not c.dropped]
    claimers = list(dict.fromkeys(c.client_id for c in active))
    releasing = [c for c in live if c.dropped and c.lease_runs(now)]
    remembered = [c for c in claims if not c.live]
    live_lease = [c for c in live if c.lease_runs(now)]
    blocking = [] if live_lease else [c for c in remembered if c.lease_runs(now)]

    def make(state: LockState, owner: str | None, reason: str, hint: str | None,
             frees_at: int | None = None) -> QueueLock:
        return QueueLock(mq, state, owner, claims, predicted, reason, hint, now, frees_at)

    pred_text = f"; the allocation assigns it to {', '.join(predicted)}" if predicted else ""

    # 1. contested: several clients claim it, or several answering clients' own allocations
    # assign it to themselves (split views: the loser's lock attempts fail every 20 s)
    assigned = [p for p in dict.fromkeys(predicted) if p in answered]
    contenders = list(dict.fromkeys(claimers + (assigned if len(assigned) >= 2 else [])))
    if len(contenders) >= 2:
        holders = [c for c in active if c.lease_runs(now)]
        owner = _latest(holders).client_id if holders else contenders[0]
        desc = "; ".join([c.describe(now) for c in active]
                         + [f"{p} (assigned, not holding it)" for p in contenders
                            if p not in claimers])
        return make(LockState.CONTESTED, owner,
                    f"claimed by {len(contenders)} clients: {desc}",
                    f"{q} is claimed by {len(contenders)} clients ({', '.join(contenders)}): "
                    "their allocation views differ (member lists, strategies or "
                    f"subscriptions); check `mqctl consumers {group or '<group>'}`")
    dups = [c for c in active if connections.get(c.client_id, 1) > 1]
    if dups:
        c = dups[0]
        n = connections[c.client_id]
        return make(LockState.CONTESTED, c.client_id,
                    f"client id {c.client_id} is used by {n} processes",
                    f"{q}: client id {c.client_id} is used by {n} processes; the broker sees "
                    "one lock holder, so they consume it at the same time and order is lost; "
                    "give each process a unique instanceName")
    # 2. stale
    if blocking:
        c = _latest(blocking)
        frees = c.frees_at(now)
        assert frees is not None
        ends = c.lease_ends()
        why = ("no longer a member: crashed or left" if not c.member
               else "does not answer: hung or overloaded")
        others = [p for p in predicted if p != c.client_id and p in answered]
        # the new owner locks it at its next rebalance after that (every 20 s, at once when
        # the broker notifies a member change); a 4.x client then consumes only after its
        # next lockAll (RebalanceImpl: the ProcessQueue is created after lock() succeeded)
        then = (f"; then {', '.join(others)} can lock it: consumption resumes up to one "
                f"rebalance and one lock cycle ({RENEW_INTERVAL_MS // 1000} s each) after "
                "that time, not at it" if others else "")
        cmd = (f"mqctl locks release --group {group or '<group>'} --queue {q} "
               f"--topic {mq.topic} --execute")
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
        return make(LockState.STALE, c.client_id,
                    f"{c.client_id} {why}; its broker lease runs until "
                    f"{format_local(frees)} (estimated from {basis}){latest}",
                    f"{q} is blocked until {clock_text(frees)}{window} because {c.client_id} "
                    f"stopped renewing ({why}){then}; `{cmd}` frees it now",
                    frees_at=frees)
    # 3-5. one claimer
    if active:
        c = active[0]
        if c.orderly is False:
            return make(LockState.LOCK_FAILED, c.client_id,
                        f"{c.client_id} consumes concurrently and never locks",
                        f"{q} is consumed by {c.client_id}, which is not an orderly consumer: "
                        "the group mixes orderly and concurrent clients")
        if not c.locked or c.last_lock_ts <= 0:
            holder = releasing[0] if releasing else None
            if holder is not None:
                why = (f"{holder.client_id} still holds it while releasing it (unlock tried "
                       f"{holder.try_unlock_times}x)")
                reason = f"claimed by {c.client_id} but not locked"
            elif c.last_lock_ts > 0 and c.age(now) is not None \
                    and (c.age(now) or 0) <= RENEW_INTERVAL_MS + slack_ms:
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
                return make(LockState.LOCK_FAILED, c.client_id,
                            f"claimed by {c.client_id}, lock granted, not yet marked locked by "
                            "the client (next lock cycle)",
                            f"{q} is claimed by {c.client_id} but not marked locked yet: {why}")
            else:
                why = ("its lock renewals fail: the broker refused the lock (another client's "
                       "lease, up to 60 s) or the master is unreachable")
                reason = f"claimed by {c.client_id} but not locked"
            return make(LockState.LOCK_FAILED, c.client_id, reason,
                        f"{q} is claimed by {c.client_id} but not locked: {why}; it retries "
                        "every 20 s")
        age = c.age(now) or 0
        if not c.lease_runs(now):
            return make(LockState.LOCK_FAILED, c.client_id,
                        f"lock lapsed: last renewal {format_duration(age)} ago, beyond the "
                        "60 s broker lease",
                        f"{q}: {c.client_id} has not renewed its lock for "
                        f"{format_duration(age)}: renewals fail (master of "
                        f"{mq.broker_name} unreachable?) and another client may take it")
        if c.overdue(now, slack_ms):
            assert c.lease_end is not None
            trust = ("the client no longer trusts it and pauses consumption; "
                     if not c.trusted(now) else "")
            return make(LockState.EXPIRING, c.client_id,
                        f"renewal overdue: last renewal {format_duration(age)} ago "
                        f"(every {RENEW_INTERVAL_MS // 1000} s)",
                        f"{q}: {c.client_id} last renewed its lock {format_duration(age)} ago; "
                        f"{trust}the broker lease runs until {clock_text(c.lease_end)}")
        extra = ""
        if predicted and c.client_id not in predicted:
            extra = f"; the allocation now assigns it to {', '.join(predicted)}"
        return make(LockState.HELD, c.client_id,
                    f"locked by {c.client_id}, renewed {format_duration(age)} ago{extra}",
                    None)
    # nobody answering claims it
    pred_answering = [p for p in predicted if p in answered]
    pred_silent = [p for p in predicted if p not in answered]
    silent = [c for c in remembered if c.member]
    if pred_answering:
        owner = pred_answering[0]
        gone_lapsed = [c for c in remembered if not c.member and c.lease_end is not None]
        if releasing:
            why = (f"{releasing[0].client_id} still holds it while releasing it (unlock tried "
                   f"{releasing[0].try_unlock_times}x)")
        elif gone_lapsed:
            x = _latest(gone_lapsed)
            why = (f"{x.client_id} left the group and its lease lapsed "
                   f"({format_local(x.lease_ends()[-1])}); {owner} locks it at its next rebalance "
                   f"(at once when a broker notifies the change, else within "
                   f"{RENEW_INTERVAL_MS // 1000} s)")
        else:
            why = ("a departed consumer's lease may still run (up to 60 s), or it has not "
                   "rebalanced yet (every 20 s)")
        return make(LockState.LOCK_FAILED, owner, f"assigned to {owner} but not locked by it",
                    f"{q} is assigned to {owner} but it has not locked it: {why}")
    if silent or pred_silent:
        if silent:
            c = _latest(silent)
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
        return make(LockState.UNKNOWN, owner, reason, hint)
    return make(LockState.UNOWNED, None, "no client claims it" + pred_text,
                f"{q}: no client claims it and no member's allocation assigns it (no member "
                "subscribes, or the clients' allocation views differ)")


# ------------------------------------------------------------------------------ prediction


def predict_owners(queues_by_topic: Mapping[str, Sequence[MessageQueue]],
                   members: Sequence[str], strategies: Mapping[str, str | None],
                   subscriptions: Mapping[str, Iterable[str] | None], *, group: str = "",
                   default_strategy: str = "AVG"
                   ) -> tuple[dict[MessageQueue, list[str]], list[str]]:
    """Each member's own share, computed with its own strategy (as each client rebalances).

    ``members`` is cidAll with duplicates; ``strategies[cid]`` the client's strategy (None:
    unknown -> ``default_strategy``); ``subscriptions[cid]`` the client's topics (None: unknown
    -> assume it subscribes). Returns ``{mq: [client ids]}`` and notes about strategies that
    cannot be replayed (CONFIG and machine-room strategies need the client's parameters).
    """
    from mqctl.allocate import allocate_group

    out: dict[MessageQueue, list[str]] = defaultdict(list)
    notes: list[str] = []
    distinct = list(dict.fromkeys(members))
    cache: dict[tuple[str, str], dict[str, list[MessageQueue]] | None] = {}
    failed: dict[str, str] = {}
    for cid in sorted(distinct, key=java_string_key):
        strat = strategies.get(cid) or default_strategy
        subs = subscriptions.get(cid)
        topics_of = set(subs) if subs is not None else None
        for topic, queues in sorted(queues_by_topic.items()):
            if topics_of is not None and topic not in topics_of:
                continue
            key = (strat, topic)
            if key not in cache:
                try:
                    cache[key] = allocate_group(strat, queues, members, group=group)
                except MqctlError as exc:
                    cache[key] = None
                    failed.setdefault(strat, exc.message)
            share = cache[key]
            if share is None:
                continue
            for mq in share.get(cid, []):
                out[mq].append(cid)
    for strat, why in sorted(failed.items()):
        notes.append(f"cannot predict the owners of clients using strategy {strat}: {why}")
    return dict(out), notes


# ------------------------------------------------------------------------------ state file


@dataclass(frozen=True, slots=True)
class StoredClient:
    """What a client last reported (its whole mqTable), and when."""

    client_id: str
    observed_ts: int
    claims: tuple[Claim, ...]
    orderly: bool | None = True
    gone_ts: int = 0           # when mqctl first found it no longer a member (0: a member)
    silent_ts: int = 0         # when mqctl first found it a member that did not answer

    def to_json(self) -> dict[str, Any]:
        doc: dict[str, Any] = {"observedTs": self.observed_ts, "orderly": self.orderly}
        if self.gone_ts:
            doc["goneTs"] = self.gone_ts
        if self.silent_ts:
            doc["silentTs"] = self.silent_ts
        doc["mqTable"] = [{**c.mq.to_dict(), "locked": c.locked,
                           "lastLockTimestamp": c.last_lock_ts,
                           "tryUnlockTimes": c.try_unlock_times, "droped": c.dropped}
                          for c in self.claims]
        return doc

    @classmethod
    def from_json(cls, cid: str, d: Any) -> StoredClient:
        if not isinstance(d, dict):
            raise ValueError(f"client {cid}: not an object")
        ts = int(d.get("observedTs") or 0)
        gone = int(d.get("goneTs") or 0)
        silent = int(d.get("silentTs") or 0)
        orderly = d.get("orderly")
        claims = []
        for e in d.get("mqTable") or []:
            mq = MessageQueue.from_dict(e)
            claims.append(Claim(cid, mq, bool(e.get("locked")),
                                int(e.get("lastLockTimestamp") or 0),
                                int(e.get("tryUnlockTimes") or 0), bool(e.get("droped")),
                                live=False, observed_ts=ts,
                                orderly=orderly if isinstance(orderly, bool) else None))
        return cls(cid, ts, tuple(claims), orderly if isinstance(orderly, bool) else None,
                   gone, silent)

    def remembered(self, *, member: bool) -> list[Claim]:
        return [replace(c, live=False, member=member, observed_ts=self.observed_ts,
                        orderly=self.orderly, gone_ts=0 if member else self.gone_ts,
                        silent_ts=self.silent_ts)
                for c in self.claims]

    def departed(self, *, member: bool, now: int) -> StoredClient:
        """This record as of ``now`` for a client that did not answer: a client that left keeps
        the moment it was first found gone (it cannot have renewed a lock after that); one that
        is a member again has none. A member that does not answer is silent from the first
        time it was found so (kept after it leaves: it renewed nothing after its last answer)."""
        if member:
            st = replace(self, gone_ts=0) if self.gone_ts else self
            return st if st.silent_ts else replace(st, silent_ts=now)
        return self if self.gone_ts else replace(self, gone_ts=now)

    def lease_may_run(self, now: int) -> bool:
        return any(c.lease_runs(now) for c in self.remembered(member=not self.gone_ts))


def merge_state(previous: Mapping[str, StoredClient], observed: Mapping[str, StoredClient],
                members: Iterable[str], now: int) -> dict[str, StoredClient]:
    """The next state file: fresh observations replace old ones; clients that did not answer
    keep their last observation while they are members (their claims show as ``unknown``) or
    while a lease of theirs may still run (their queues show as ``stale``)."""
    members = set(members)
    out: dict[str, StoredClient] = dict(observed)
    for cid, st in previous.items():
        if cid in out:
            continue
        if now - st.observed_ts > STATE_RETENTION_MS:
            continue
        st = st.departed(member=cid in members, now=now)
        if cid in members or st.lease_may_run(now):
            out[cid] = st
    return dict(sorted(out.items(), key=lambda kv: java_string_key(kv[0])))


def default_state_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mqctl" / "locks"


def namesrv_hash(namesrv: Sequence[str] | str) -> str:
    if isinstance(namesrv, str):
        namesrv = [p.strip() for p in namesrv.split(";") if p.strip()]
    key = ";".join(sorted(namesrv))
    return hashlib.sha256(key.encode()).hexdigest()[:16]


_SAFE = re.compile(r"[^A-Za-z0-9._%|-]")


def _file_name(group: str) -> str:
    safe = _SAFE.sub("_", group)
    if safe != group or safe.startswith("."):
        safe = f"{safe.lstrip('.')}-{hashlib.sha256(group.encode()).hexdigest()[:8]}"
    return f"{safe}.json"


class LockStore:
    """``<dir>/<namesrv-hash>/<group>.json``: the previous observation of each client.

    Written atomically (temp file + rename); an unreadable file is ignored with a note.
    """

    def __init__(self, directory: str | os.PathLike[str] | None, namesrv: Sequence[str] | str):
        self.root = Path(directory) if directory is not None else default_state_dir()
        self.namesrv = namesrv if isinstance(namesrv, str) else ";".join(namesrv)
        self.dir = self.root / namesrv_hash(namesrv)
        self.problems: list[str] = []

    def path(self, group: str) -> Path:
        return self.dir / _file_name(group)

    def load(self, group: str) -> dict[str, StoredClient]:
        p = self.path(group)
        try:
            text = p.read_text(encoding="utf-8")
        except FileNotFoundError:
            return {}
        except OSError as exc:
            self.problems.append(f"cannot read lock state {p}: {exc.strerror}")
            return {}
        try:
            d = json.loads(text)
            if not isinstance(d, dict) or d.get("version") != STATE_VERSION:
                raise ValueError("unknown format")
            if d.get("group") not in (None, group):
                raise ValueError(f"file is for group {d.get('group')!r}")
            clients = d.get("clients") or {}
            if not isinstance(clients, dict):
                raise ValueError("clients is not an object")
            return {str(k): StoredClient.from_json(str(k), v) for k, v in clients.items()}
        except (ValueError, TypeError, KeyError, AttributeError, MqctlError) as exc:
            self.problems.append(f"ignoring unreadable lock state {p}: {exc}")
            return {}

    def save(self, group: str, clients: Mapping[str, StoredClient], now: int) -> None:
        doc = {"version": STATE_VERSION, "group": group, "namesrv": self.namesrv,
               "savedTs": now, "savedTime": format_ms(now),
               "clients": {cid: st.to_json() for cid, st in clients.items()}}
        try:
            atomic_write_text(self.path(group), json.dumps(doc, indent=1, sort_keys=False)
                              + "\n")
        except OSError as exc:
            self.problems.append(f"cannot write lock state {self.path(group)}: "
                                 f"{exc.strerror or exc}")

    def mark_released(self, group: str, client_id: str, mq: MessageQueue, now: int) -> None:
        """Record that ``client_id``'s lock on ``mq`` was released on its behalf."""
        clients = self.load(group)
        st = clients.get(client_id)
        if st is None:
            return
        claims = tuple(replace(c, locked=False) if c.mq == mq else c for c in st.claims)
        clients[client_id] = replace(st, claims=claims)
        self.save(group, clients, now)


# ------------------------------------------------------------------------------ the view


def _observed(cv: ClientView, now: int) -> StoredClient | None:
    if cv.running is None:
        return None
    orderly = cv.running.orderly
    claims = tuple(Claim.of(cv.client_id, mq, pq, observed_ts=now, orderly=orderly)
                   for mq, pq in sorted(cv.running.mq_table.items()))
    return StoredClient(cv.client_id, now, claims, orderly)


def group_kind(m: GroupMembers) -> str:
    online = m.online_state
    if online is False:
        return "offline"
    if online is None and not m.clients:
        return "unknown"  # no client seen, but a broker's member list was not read
    conn = m.connection
    running = [cv.running for cv in m.clients.values() if cv.running is not None]
    if (conn is not None and conn.consume_type == "CONSUME_POP") or any(
            r.consume_type == "CONSUME_POP" or r.mq_pop_table for r in running):
        return "pop"
    model = conn.message_model if conn is not None else None
    if model is None:
        model = next((r.properties.get("messageModel") for r in running
                      if r.properties.get("messageModel")), None)
    if model == "BROADCASTING":
        return "broadcasting"
    if any(r.orderly for r in running):
        return "orderly"
    if running:
        return "concurrent"
    return "unknown"


def build_view(members: GroupMembers, *, now: int,
               queues_by_topic: Mapping[str, Sequence[MessageQueue]],
               previous: Mapping[str, StoredClient] | None = None,
               slack_ms: int = RENEW_SLACK_MS, notes: Sequence[str] = ()
               ) -> tuple[LockView, dict[str, StoredClient]]:
    """The lock view (pure) and the state to save for the next run."""
    previous = previous or {}
    group = members.group
    clients = members.clients
    # cidAll as the broker returns it, keeping duplicate ids (max count seen on any broker)
    dup: Counter[str] = Counter()
    for ids in members.members.values():
        if isinstance(ids, list):
            for cid, n in Counter(ids).items():
                dup[cid] = max(dup[cid], n)
    cid_all = [cid for cid in sorted(dup, key=java_string_key) for _ in range(dup[cid])]
    if not cid_all:
        cid_all = list(clients)
    member_set = set(clients) | set(cid_all)
    answered = {cid for cid, cv in clients.items() if cv.running is not None}
    observed = {cid: st for cid, cv in clients.items()
                if (st := _observed(cv, now)) is not None}

    strategies = {cid: cv.strategy for cid, cv in clients.items()}
    known = Counter(s for s in strategies.values() if s)
    default = known.most_common(1)[0][0] if known else "AVG"
    subs: dict[str, set[str] | None] = {}
    for cid, cv in clients.items():
        s = cv.subscriptions
        subs[cid] = set(s) if s is not None else None
    if members.connection is not None:
        # non-answering clients: the broker's subscription table is the best guess
        for cid in member_set - answered:
            subs[cid] = set(members.connection.subscriptions) or None
    predicted, pnotes = predict_owners(queues_by_topic, cid_all, strategies, subs,
                                       group=group, default_strategy=default)

    all_queues = sorted({mq for qs in queues_by_topic.values() for mq in qs})
    wanted = set(all_queues)
    by_mq: dict[MessageQueue, list[Claim]] = defaultdict(list)
    for st in observed.values():
        for c in st.claims:
            if c.mq in wanted:
                by_mq[c.mq].append(c)
    remembered_clients: dict[str, StoredClient] = {}
    previous = {cid: st.departed(member=cid in member_set, now=now)
                for cid, st in previous.items()}
    for cid, st in previous.items():
        if cid in answered:
            continue
        is_member = cid in member_set
        if not is_member and not st.lease_may_run(now):
            continue
        remembered_clients[cid] = st
        for c in st.remembered(member=is_member):
            if c.mq in wanted:
                by_mq[c.mq].append(c)

    connections = {cid: cv.connections for cid, cv in clients.items()}
    queues = tuple(classify_queue(mq, by_mq.get(mq, []), predicted.get(mq, []), now=now,
                                  answered=answered, connections=connections, group=group,
                                  slack_ms=slack_ms)
                   for mq in all_queues)

    infos: list[ClientLocks] = []
    claimed = Counter(c.client_id for q in queues for c in q.claims if not c.dropped)
    locked = Counter(c.client_id for q in queues for c in q.claims
                     if c.locked and not c.dropped)
    for cid, cv in clients.items():
        st = observed.get(cid) or remembered_clients.get(cid)
        infos.append(ClientLocks(
            cid, True, cv.running is not None, cv.running_error,
            cv.running.orderly if cv.running else (st.orderly if st else None),
            cv.strategy, cv.connections, claimed[cid], locked[cid],
            st.observed_ts if st else None))
    for cid, st in remembered_clients.items():
        if cid in clients:
            continue
        infos.append(ClientLocks(cid, False, False, "not a member any more (crashed or left)",
                                 st.orderly, None, 1, claimed[cid], locked[cid],
                                 st.observed_ts))
    infos.sort(key=lambda c: (not c.member, java_string_key(c.client_id)))

    kind = group_kind(members)
    allnotes = list(notes) + pnotes
    if kind == "offline":
        allnotes.append(f"group {group} is offline: no consumer is connected, so no client "
                        "holds or renews a lock; leases of consumers that just stopped run out "
                        "60 s after their last renewal")
    if any(not c.live for q in queues for c in q.claims):
        allnotes.append("claims of clients that did not answer are their last known ones "
                        "(source 'unknown'), from the state file of an earlier run")
    allnotes.append("lease ends are estimated from the clients' lastLockTimestamp (their last "
                    "renewal, client clock) + 60 s: no request reads the broker's lock table")
    model = members.connection.message_model if members.connection else None
    view = LockView(group, now, members.online_state, kind, model, tuple(sorted(queues_by_topic)),
                    queues, tuple(infos), tuple(allnotes), tuple(members.failures))
    return view, merge_state(previous, observed, member_set, now)


def ensure_lockable(view: LockView) -> None:
    """Refuse groups whose consumers never lock queues."""
    g = view.group
    if view.kind == "concurrent":
        raise RefusedError(f"group {g} consumes concurrently: queue locks apply to orderly "
                           "consumers (MessageListenerOrderly) only",
                           hint=f"see queue owners and lag with `mqctl group progress {g}`")
    if view.kind == "broadcasting":
        raise RefusedError(f"group {g} is a BROADCASTING group: its consumers do not lock "
                           "queues (locks apply to CLUSTERING orderly consumers)",
                           hint=f"see its consumers with `mqctl consumers {g}`")
    if view.kind == "pop":
        raise RefusedError(f"group {g} uses pop consumption: pop consumers take no queue "
                           "locks (orderly pop is coordinated by the broker per message)",
                           hint=f"see its consumers with `mqctl consumers {g}`")


# ------------------------------------------------------------------------------ capture


async def _offset_topics(admin: Admin, group: str, brokers: Sequence[Any]) -> set[str]:
    """Topics an offline group has committed offsets for (GET_CONSUME_STATS, read-only)."""
    from mqctl.remoting.client import fan_out

    addrs = [a for a in (b.master_addr or b.select_addr() for b in brokers) if a]

    async def one(addr: str) -> set[str]:
        stats = await admin.consume_stats(group, addr)
        return {mq.topic for mq in stats.offsets}

    out: set[str] = set()
    for o in await fan_out(addrs, one, concurrency=admin.concurrency):
        if o.ok:
            out |= o.value or set()
    return out


async def capture_locks(admin: Admin, group: str, *, topic: str | None = None,
                        include_retry: bool = False, store: LockStore | None = None,
                        slack_ms: int = RENEW_SLACK_MS) -> LockView:
    """Read-only capture of a group's lock view (and update of the state file).

    Requests: GET_ROUTEINFO_BY_TOPIC, GET_CONSUMER_LIST_BY_GROUP,
    GET_CONSUMER_CONNECTION_LIST, GET_CONSUMER_RUNNING_INFO (and, for an offline group,
    GET_BROKER_CLUSTER_INFO / GET_ALL_SUBSCRIPTIONGROUP_CONFIG to tell it from an unknown one
    and GET_CONSUME_STATS for the topics it has offsets for).
    Never LOCK_BATCH_MQ, UNLOCK_BATCH_MQ or HEART_BEAT.
    """
    from mqctl.admin import NotFoundError
    from mqctl.inspect import capture_members, require_group

    m = await capture_members(admin, group)
    now = now_ms()
    previous = store.load(group) if store is not None else {}
    if not m.online and not previous:
        await require_group(admin, group)
    topics: set[str] = set()
    if m.connection is not None:
        topics |= set(m.connection.subscriptions)
    for cv in m.clients.values():
        if cv.subscriptions is not None:
            topics |= set(cv.subscriptions)
    for st in previous.values():
        topics |= {c.mq.topic for c in st.claims}
    if not topics and topic is None and not m.online:
        topics = await _offset_topics(admin, group, m.brokers)
    notes: list[str] = []
    if topic is not None:
        if topics and topic not in topics:
            notes.append(f"group {group} does not subscribe to {topic} (it subscribes to "
                         f"{', '.join(sorted(topics))})")
        topics = {topic}
    elif not include_retry:
        retry = sorted(t for t in topics if t.startswith(RETRY_PREFIX))
        topics -= set(retry)
    queues_by_topic: dict[str, list[MessageQueue]] = {}
    for t in sorted(topics):
        try:
            route = await admin.topic_route(t)
        except NotFoundError:
            if topic is not None:
                raise
            notes.append(f"topic {t} has no route: its queues are not shown")
            continue
        queues_by_topic[t] = route.subscribe_queues()
    view, state = build_view(m, now=now, queues_by_topic=queues_by_topic, previous=previous,
                             slack_ms=slack_ms, notes=notes)
    if store is not None:
        store.save(group, state, now)
        if store.problems:
            view = replace(view, notes=view.notes + tuple(store.problems))
    return view


# ------------------------------------------------------------------------------ release

_QUEUE_SPEC = re.compile(r"^(?P<broker>.+):(?P<qid>\d+)$")


def parse_queue_spec(text: str) -> tuple[str, int]:
    """``broker-a:3`` -> ("broker-a", 3)."""
    m = _QUEUE_SPEC.match(text.strip())
    if not m or not m.group("broker").strip():
        raise UsageError(f"bad --queue {text!r}: expected BROKER:QUEUE_ID, e.g. broker-a:3",
                         hint="see `mqctl locks show` for the queue names")
    return m.group("broker").strip(), int(m.group("qid"))


@dataclass(frozen=True, slots=True)
class ReleasePlan:
    group: str
    mq: MessageQueue
    holder: str
    broker_addr: str
    queue: QueueLock
    alive_renewing: bool
    forced: bool
    warnings: tuple[str, ...] = field(default_factory=tuple)

    def body(self) -> dict[str, Any]:
        """UnlockBatchRequestBody (remoting/.../protocol/body/UnlockBatchRequestBody.java)."""
        return {"consumerGroup": self.group, "clientId": self.holder,
                "mqSet": [self.mq.to_dict()], "onlyThisBroker": False}

    def describe(self) -> str:
        return (f"send UNLOCK_BATCH_MQ to {self.mq.broker_name} master {self.broker_addr}: "
                f"release the lock of {self.holder} on {self.mq} for group {self.group}")

    def to_dict(self) -> dict[str, Any]:
        return {"group": self.group, "queue": self.mq.short, "topic": self.mq.topic,
                "broker": self.mq.broker_name, "queue_id": self.mq.queue_id,
                "holder": self.holder, "broker_addr": self.broker_addr,
                "state": self.queue.state.value, "alive_renewing": self.alive_renewing,
                "forced": self.forced, "request": "UNLOCK_BATCH_MQ", "body": self.body(),
                "action": self.describe(), "warnings": list(self.warnings)}


def resolve_queue(view: LockView, broker: str, queue_id: int, topic: str | None
                  ) -> MessageQueue:
    matches = sorted({q.mq for q in view.queues
                      if q.mq.broker_name == broker and q.mq.queue_id == queue_id
                      and (topic is None or q.mq.topic == topic)})
    if topic is not None and not matches:
        # a topic the group does not (or no longer) subscribe to: still a valid target
        return MessageQueue(topic, broker, queue_id)
    if not matches:
        known = sorted({q.mq.broker_name for q in view.queues})
        raise UsageError(f"group {view.group} has no queue {broker}:{queue_id}"
                         + (f" (brokers: {', '.join(known)})" if known else ""),
                         hint="see `mqctl locks show` for the queue names; add --topic for "
                              "a topic the group no longer subscribes to")
    if len(matches) > 1:
        raise UsageError(f"--queue {broker}:{queue_id} matches queues of {len(matches)} topics "
                         f"({', '.join(m.topic for m in matches)}): add --topic",
                         hint="e.g. --topic " + matches[0].topic)
    return matches[0]


def plan_release(view: LockView, mq: MessageQueue, broker_addr: str, *,
                 client: str | None = None, force: bool = False,
                 slack_ms: int = RENEW_SLACK_MS) -> ReleasePlan:
    """Decide on whose behalf to release ``mq`` and whether that is safe (pure).

    The broker removes an entry only when the clientId sent equals the holder
    (``RebalanceLockManager.unlockBatch``), so the holder must be known: the latest locked
    claim (live or remembered) unless ``client`` names it.
    """
    q = view.queue(mq) or classify_queue(mq, (), (), now=view.now, group=view.group)
    now = view.now
    warnings: list[str] = []
    if client is not None:
        holder = client
        other = [c for c in q.claims if c.client_id != client and c.live and c.locked
                 and not c.overdue(now, slack_ms) and c.lease_runs(now)]
        if other and not force:
            raise RefusedError(f"{other[0].client_id} holds and renews the lock of {mq.short}, "
                               f"not {client}: the broker releases a lock only for its holder "
                               "and would ignore this request",
                               hint="drop --client to act on the recorded holder, or --force")
        if not any(c.client_id == client for c in q.claims):
            warnings.append(f"{client} is not recorded as a claimer of {mq.short}: if it does "
                            "not hold the broker lock the broker ignores the request")
    else:
        locked = [c for c in q.claims if c.locked and c.last_lock_ts > 0]
        holders = list(dict.fromkeys(c.client_id for c in locked))
        if not holders:
            raise UsageError(f"no client is recorded as holding the lock of {mq.short} in group "
                             f"{view.group} (state {q.state.value})",
                             hint="pass --client ID of the holder (e.g. from the broker's "
                                  "lock.log); the broker only releases a lock for its holder")
        live_holders = [c for c in locked if c.live and not c.dropped]
        if len({c.client_id for c in live_holders}) > 1:
            raise UsageError(f"{len(holders)} clients claim the lock of {mq.short} "
                             f"({', '.join(holders)}): pass --client to pick one",
                             hint="see `mqctl locks show` for their lock ages")
        holder = _latest(locked).client_id
    claim = next((c for c in q.claims if c.client_id == holder), None)
    alive_renewing = bool(claim is not None and claim.live and claim.locked
                          and not claim.overdue(now, slack_ms) and claim.lease_runs(now))
    if alive_renewing and not force:
        age = claim.age(now) if claim is not None else None
        raise RefusedError(f"{holder} is alive and renewing its lock on {mq.short} (last "
                           f"renewal {format_duration(age or 0)} ago): releasing it would not "
                           "help, it re-locks the queue at its next renewal",
                           hint="use --force to release it anyway; to move the queue, stop or "
                                "restart that consumer")
    if alive_renewing:
        warnings.append(f"{holder} is alive and renewing: it takes the lock back at its next "
                        "renewal (within 20 s) while it is still assigned the queue")
    if claim is not None and not claim.live and claim.lease_end is not None \
            and now > claim.lease_end:
        warnings.append(f"the lease of {holder} has probably lapsed already "
                        f"({format_local(claim.lease_end)}); releasing is harmless")
    return ReleasePlan(view.group, mq, holder, broker_addr, q, alive_renewing, force,
                       tuple(warnings))


def master_addr(route: TopicRoute, broker: str) -> str:
    b = route.broker(broker)
    if b is None:
        raise UsageError(f"broker {broker} is not in the route of {route.topic}",
                         hint="brokers: " + ", ".join(x.broker_name for x in route.brokers))
    addr = b.master_addr
    if not addr:
        raise ConnectError(f"broker {broker} has no master in the route: locks live on the "
                           "master only", hint="wait for the master to come back")
    return addr


async def apply_release(admin: Admin, plan: ReleasePlan) -> None:
    """Send UNLOCK_BATCH_MQ (mutating) to the master of the queue's broker.

    The header (UnlockBatchMqRequestHeader) has no field of its own; ``bname`` names the target
    broker as RpcRequestHeader does. SUCCESS carries no body: the broker does not say whether an
    entry was removed (it only logs it in lock.log).
    """
    from mqctl.remoting import fastjson
    from mqctl.remoting.codes import RequestCode

    body = fastjson.dumps(plan.body()).encode()
    await admin.client.invoke(plan.broker_addr, RequestCode.UNLOCK_BATCH_MQ,
                              {"bname": plan.mq.broker_name}, body)


class ReleaseStatus(StrEnum):
    RELEASED = "released"  # SUCCESS: the broker removed the entry if the holder held it
    FAILED = "failed"  # the request failed (it may or may not have reached the broker)
    NOT_SENT = "not-sent"  # an interrupt, or an earlier request to the same broker failed
    UNKNOWN = "unknown"  # sent, no answer before mqctl stopped (interrupt): may have changed


@dataclass(frozen=True, slots=True)
class ReleaseResult:
    plan: ReleasePlan
    status: ReleaseStatus
    detail: str
    error: MqctlError | None = None

    def to_dict(self) -> dict[str, Any]:
        p = self.plan
        return {"queue": p.mq.short, "topic": p.mq.topic, "broker": p.mq.broker_name,
                "queue_id": p.mq.queue_id, "holder": p.holder, "broker_addr": p.broker_addr,
                "status": self.status.value, "detail": self.detail}


async def apply_releases(admin: Admin, plans: Sequence[ReleasePlan], *,
                         stop: Stop | None = None, grace_s: float | None = None,
                         concurrency: int | None = None) -> list[ReleaseResult]:
    """Send one UNLOCK_BATCH_MQ per queue (so each queue's outcome is known): brokers
    concurrently (bounded), a broker's queues one at a time in the given order; the first
    failure on a broker stops that broker (its remaining queues are ``not-sent``). Never
    re-sends.

    ``stop`` (SIGINT/SIGTERM, the ``offsets reset --execute`` mechanism,
    :class:`mqctl.interrupt.Stop`): no new request is sent (``not-sent``); the ones in flight
    are waited for up to ``grace_s`` (default ``INTERRUPT_GRACE_S``, 5 s; a second interrupt
    ends the wait) and are ``unknown`` if still unanswered."""
    import asyncio

    from mqctl.interrupt import INTERRUPT_GRACE_S

    grace = INTERRUPT_GRACE_S if grace_s is None else grace_s
    by_broker: dict[str, list[ReleasePlan]] = defaultdict(list)
    for p in plans:
        by_broker[p.mq.broker_name].append(p)
    results: dict[MessageQueue, ReleaseResult] = {}
    inflight: set[MessageQueue] = set()
    sem = asyncio.Semaphore(concurrency or admin.concurrency)

    def not_sent(name: str) -> str:
        return (f"not sent: interrupted ({stop.reason})" if stop is not None and stop.stopped
                else f"not sent: an earlier request to {name} failed")

    async def one_broker(name: str) -> None:
        async with sem:
            try:
                for p in by_broker[name]:
                    if stop is not None and stop.stopped:
                        break
                    inflight.add(p.mq)
                    try:
                        await apply_release(admin, p)
                    except MqctlError as exc:
                        inflight.discard(p.mq)
                        results[p.mq] = ReleaseResult(p, ReleaseStatus.FAILED, exc.message, exc)
                        break
                    inflight.discard(p.mq)  # (still in flight if cancelled: unknown)
                    results.setdefault(p.mq, ReleaseResult(
                        p, ReleaseStatus.RELEASED, "the broker answered SUCCESS"))
            finally:
                for p in by_broker[name]:
                    if p.mq in inflight:  # cancelled while waiting for the answer
                        results.setdefault(p.mq, ReleaseResult(
                            p, ReleaseStatus.UNKNOWN, "sent, no answer before mqctl stopped "
                            f"({stop.reason if stop else 'cancelled'}): it may or may not have "
                            "been released; sending it again is harmless"))

    task = asyncio.ensure_future(asyncio.gather(*(one_broker(n) for n in by_broker)))
    if stop is None:
        await task
    else:
        await stop.race(task, grace)
    return [results.get(p.mq) or ReleaseResult(p, ReleaseStatus.NOT_SENT,
                                                not_sent(p.mq.broker_name))
            for p in plans]


def record_releases(store: LockStore | None, results: Iterable[ReleaseResult]) -> None:
    """Mark the released queues in the state file (not the unknown ones: their holder may
    still hold them)."""
    if store is None:
        return
    for r in results:
        if r.status == ReleaseStatus.RELEASED:
            store.mark_released(r.plan.group, r.plan.holder, r.plan.mq, now_ms())


async def prepare_releases(admin: Admin, group: str, queues: Sequence[tuple[str, int]], *,
                           topic: str | None = None, client: str | None = None,
                           force: bool = False, store: LockStore | None = None,
                           slack_ms: int = RENEW_SLACK_MS
                           ) -> tuple[list[ReleasePlan], LockView]:
    """Capture the group's lock view once (read-only) and plan the release of each queue's
    lock; any queue that cannot be released safely refuses the whole command (nothing sent)."""
    view = await capture_locks(admin, group, topic=topic, store=store, slack_ms=slack_ms)
    ensure_lockable(view)
    mqs = list(dict.fromkeys(resolve_queue(view, b, q, topic) for b, q in queues))
    routes: dict[str, TopicRoute] = {}
    plans = []
    for mq in mqs:
        if mq.topic not in routes:
            routes[mq.topic] = await admin.topic_route(mq.topic)
        plans.append(plan_release(view, mq, master_addr(routes[mq.topic], mq.broker_name),
                                  client=client, force=force, slack_ms=slack_ms))
    return plans, view


async def prepare_release(admin: Admin, group: str, broker: str, queue_id: int, *,
                          topic: str | None = None, client: str | None = None,
                          force: bool = False, store: LockStore | None = None,
                          slack_ms: int = RENEW_SLACK_MS) -> tuple[ReleasePlan, LockView]:
    """Capture the group's lock view (read-only) and plan the release of one queue's lock."""
    plans, view = await prepare_releases(admin, group, [(broker, queue_id)], topic=topic,
                                         client=client, force=force, store=store,
                                         slack_ms=slack_ms)
    return plans[0], view


async def recheck(admin: Admin, plans: Sequence[ReleasePlan], *,
                  store: LockStore | None = None, slack_ms: int = RENEW_SLACK_MS) -> LockView:
    """Re-capture the lock view of the released queues' topics (read-only)."""
    topics = {p.mq.topic for p in plans}
    one = next(iter(topics)) if len(topics) == 1 else None
    return await capture_locks(admin, plans[0].group, topic=one, store=store,
                               include_retry=any(t.startswith(RETRY_PREFIX) for t in topics),
                               slack_ms=slack_ms)


async def execute_release(admin: Admin, plan: ReleasePlan, *, store: LockStore | None = None,
                          slack_ms: int = RENEW_SLACK_MS) -> LockView:
    """Send the release, record it in the state file, and re-check the queue."""
    (r,) = await apply_releases(admin, [plan])
    if r.error is not None:
        raise r.error
    record_releases(store, [r])
    return await recheck(admin, [plan], store=store, slack_ms=slack_ms)


__all__ = [
    "BROKER_LEASE_MS", "CLIENT_TRUST_MS", "PRECEDENCE", "RENEW_INTERVAL_MS", "RENEW_SLACK_MS",
    "Claim", "ClientLocks", "LockState", "LockStore", "LockView", "QueueLock", "ReleasePlan",
    "ReleaseResult", "ReleaseStatus", "StoredClient", "apply_release", "apply_releases",
    "build_view", "capture_locks", "classify_queue",
    "default_state_dir", "ensure_lockable", "group_kind", "master_addr", "merge_state",
    "namesrv_hash", "parse_queue_spec", "plan_release", "predict_owners", "prepare_release",
    "prepare_releases", "execute_release", "recheck", "record_releases", "resolve_queue",
]
