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
  never ``stale`` or ``unknown`` on its own account (real 4.9.3: the survivor was
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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

# the types the classification works with are the model's too (mqctl.locks.types)
from mqctl.locks.types import (
    BROKER_LEASE_MS,
    CHANNEL_EXPIRED_MS,
    CHANNEL_SCAN_MS,
    CLIENT_TRUST_MS,
    CLOCK_SKEW_MS,
    GROUP_KINDS,
    HEARTBEAT_MS,
    PRECEDENCE,
    PROBLEM_STATES,
    REBALANCE_MS,
    RENEW_INTERVAL_MS,
    RENEW_SLACK_MS,
    Claim,
    ClientLocks,
    HungMember,
    LockState,
    LockView,
    QueueLock,
    Redelivery,
    clock_text,
    latest_claim,
    superseded_by,
)
from mqctl.models import MessageQueue, java_string_key
from mqctl.timeparse import format_duration, format_local

# ------------------------------------------------------------------------------ classify


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


__all__ = ["BROKER_LEASE_MS", "CHANNEL_EXPIRED_MS", "CHANNEL_SCAN_MS", "CLIENT_TRUST_MS",
           "CLOCK_SKEW_MS", "GROUP_KINDS", "HEARTBEAT_MS", "PRECEDENCE", "PROBLEM_STATES",
           "REBALANCE_MS", "RENEW_INTERVAL_MS", "RENEW_SLACK_MS", "Claim", "ClientLocks",
           "HungMember", "LockState", "LockView", "QueueLock", "Redelivery", "classify_queue",
           "clock_text", "latest_claim", "superseded_by"]
