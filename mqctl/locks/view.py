"""The lock view of a group (pure): each member's predicted share, every claim (live and
remembered) classified per queue, the clients, and the state to save for the next run."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from mqctl.allocate.engine import allocate_group
from mqctl.errors import MqctlError, RefusedError
from mqctl.locks.model import classify_queue, superseded_by
from mqctl.locks.store import Moved, StoredClient, client_addrs, merge_state, new_connection
from mqctl.locks.types import (
    HEARTBEAT_MS,
    RENEW_SLACK_MS,
    Claim,
    ClientLocks,
    HungMember,
    LockView,
    QueueLock,
    Redelivery,
)
from mqctl.models import MessageQueue, java_string_key
from mqctl.timeparse import format_duration, format_local

if TYPE_CHECKING:
    from mqctl.views.members import ClientView, GroupMembers


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


# ------------------------------------------------------------------------------ the view


def start_ts(cv: ClientView) -> int:
    """``PROP_CONSUMER_START_TIMESTAMP`` of the client's running info (0: unknown): the
    ``consumerStartTimestamp`` field of DefaultMQPushConsumerImpl, set once per process (4.9.3
    and 5.3.3). Real lock-crash: o2's changed across its restart, o1's did not
    (``consumerStatus_dump_files``)."""
    if cv.running is None:
        return 0
    raw = cv.running.properties.get("PROP_CONSUMER_START_TIMESTAMP")
    try:
        return max(0, int(str(raw)))
    except ValueError:
        return 0


def heartbeat_ms(cv: ClientView) -> int:
    """``heartbeatBrokerInterval`` of the client's running info (5.x dumps ClientConfig's
    fields; 4.x does not: 0, the 30 s default then applies)."""
    if cv.running is None:
        return 0
    try:
        return max(0, int(str(cv.running.properties.get("heartbeatBrokerInterval") or 0)))
    except ValueError:
        return 0


def _observed(cv: ClientView, now: int) -> StoredClient | None:
    """What the client reported, as of the moment its answer was received (not the end of the
    capture: a capture that waited for another client's timeout would age its locks)."""
    if cv.running is None:
        return None
    at = cv.running.received_ts or now
    orderly = cv.running.orderly
    claims = tuple(Claim.of(cv.client_id, mq, pq, observed_ts=at, orderly=orderly)
                   for mq, pq in sorted(cv.running.mq_table.items()))
    return StoredClient(cv.client_id, at, claims, orderly, addrs=client_addrs(cv.addr),
                        start_ts=start_ts(cv), heartbeat_ms=heartbeat_ms(cv))


def _track_moves(records: Mapping[str, StoredClient], live: Mapping[MessageQueue, list[Claim]]
                 ) -> dict[str, StoredClient]:
    """For each client found hung (``silent_ts``) that does not answer now: the queues it held
    that another client was granted since (the survivor's live claim, granted after its last
    renewal), with the furthest offset the survivor committed there (Moved)."""
    out: dict[str, StoredClient] = {}
    for cid, st in records.items():
        if not st.silent_ts:
            continue
        moved = {m.mq: m for m in st.moved}
        for c in st.claims:
            if c.commit_offset is None or c.commit_offset < 0:
                continue
            takers = [o for o in live.get(c.mq, []) if o.client_id != cid
                      and o.granted_ts is not None and o.granted_ts > c.renewed_ts
                      and o.commit_offset is not None and o.commit_offset >= 0]
            if not takers:
                continue
            o = max(takers, key=lambda x: x.commit_offset or 0)
            old = moved.get(c.mq)
            to = max(o.commit_offset or 0, old.to_offset if old is not None else 0)
            moved[c.mq] = Moved(c.mq, o.client_id, c.commit_offset, to)
        if moved and tuple(moved.values()) != st.moved:
            out[cid] = replace(st, moved=tuple(v for _, v in sorted(moved.items())))
    return out


def _redeliveries(previous: Mapping[str, StoredClient], observed: Mapping[str, StoredClient],
                  live: Mapping[MessageQueue, list[Claim]], restarted: Mapping[str, str]
                  ) -> tuple[dict[MessageQueue, Redelivery], dict[str, StoredClient]]:
    """A client found hung that answers again, as the same process (not ``restarted``), and
    claims a queue that moved while it was hung with an offset behind what the survivor
    committed: RocketMQ delivers that stretch again (Redelivery). Its record keeps the moves
    until it has passed the survivor's offset: the observations are returned with them."""
    out: dict[MessageQueue, Redelivery] = {}
    seen = dict(observed)
    for cid, obs in observed.items():
        st = previous.get(cid)
        if st is None or not st.moved or cid in restarted:
            continue
        mine = {c.mq: c for c in obs.claims if not c.dropped}
        keep: list[Moved] = []
        for m in st.moved:
            others = [o.commit_offset for o in live.get(m.mq, []) if o.client_id != cid
                      and o.commit_offset is not None and o.commit_offset >= 0]
            to = max([m.to_offset, *others])
            c = mine.get(m.mq)
            if c is None:
                keep.append(replace(m, to_offset=to))   # not taken back yet
                continue
            if c.commit_offset is None or c.commit_offset < 0 or c.commit_offset >= to:
                continue  # re-read from the broker, or done: nothing more comes again
            keep.append(replace(m, to_offset=to))
            out[m.mq] = Redelivery(cid, m.survivor, min(m.from_offset, c.commit_offset), to,
                                   c.commit_offset)
        seen[cid] = replace(obs, moved=tuple(keep))
    return out, seen


def _restarts(previous: Mapping[str, StoredClient], clients: Mapping[str, ClientView],
              observed: Mapping[str, StoredClient], member_set: set[str]) -> dict[str, str]:
    """Client ids whose record is about an earlier process or connection, with the evidence:
    for a member that answered, a new start time in its running info; for one that did not, a
    new connection (:func:`mqctl.locks.store.new_connection`)."""
    out: dict[str, str] = {}
    for cid, st in previous.items():
        obs = observed.get(cid)
        if obs is not None:
            if st.start_ts and obs.start_ts and obs.start_ts != st.start_ts:
                out[cid] = (f"restarted at {format_local(obs.start_ts)} (a new "
                            "PROP_CONSUMER_START_TIMESTAMP in its running info since mqctl "
                            f"last saw it at {format_local(st.observed_ts)}): its claims are "
                            "the new process's")
            continue
        if cid not in member_set:
            continue
        cv = clients.get(cid)
        if why := new_connection(st, client_addrs(cv.addr) if cv is not None else ()):
            out[cid] = f"{why}; what it reported then no longer applies"
    return out


def _superseded_notes(queues: Iterable[QueueLock]) -> list[str]:
    """Remembered claims that a later grant to another client outranks (model: Evidence)."""
    by: dict[tuple[str, str], list[str]] = defaultdict(list)
    for q in queues:
        for c in q.claims:
            if not c.live and (s := superseded_by(c, q.claims)) is not None:
                by[(c.client_id, s.client_id)].append(q.mq.short)
    return [f"{old}'s last known claim on {', '.join(qs)} is superseded: the broker granted "
            f"{new} the lock after {old}'s last reported renewal ({old} unlocked it when it "
            "stopped, or its lease ended), so it blocks nothing"
            for (old, new), qs in sorted(by.items())]


def _with_redelivery(q: QueueLock, r: Redelivery | None) -> QueueLock:
    return q if r is None else replace(q, redelivery=r)


def _hung_notes(queues: Iterable[QueueLock]) -> list[str]:
    """One note per hung member: what happens next and how it is estimated."""
    by: dict[str, list[QueueLock]] = defaultdict(list)
    for q in queues:
        if q.hung is not None:
            by[q.hung.client_id].append(q)
    out = []
    for _cid, qs in sorted(by.items()):
        h = qs[0].hung
        assert h is not None
        takers = list(dict.fromkeys(p for q in qs for p in q.takers))
        out.append(h.text(len(qs), takers))
    return out


def _redelivery_notes(queues: Iterable[QueueLock]) -> list[str]:
    """One note per resumed client and survivor: the duplicates to expect, per queue."""
    by: dict[tuple[str, str], list[QueueLock]] = defaultdict(list)
    for q in queues:
        if q.redelivery is not None:
            by[(q.redelivery.client_id, q.redelivery.survivor)].append(q)
    out = []
    for (cid, survivor), qs in sorted(by.items()):
        total = sum(q.redelivery.expected for q in qs if q.redelivery is not None)
        left = sum(q.redelivery.remaining for q in qs if q.redelivery is not None)
        each = "; ".join(f"{q.mq.short} offsets {r.from_offset:,}-{r.to_offset:,} (now at "
                         f"{r.offset:,})" for q in qs if (r := q.redelivery) is not None)
        out.append(f"duplicates expected: {cid} resumed after {len(qs)} of its queue(s) had "
                   f"moved to {survivor} while it was hung, and consumes again from its "
                   f"in-memory offset what {survivor} consumed meanwhile: about {total:,} "
                   f"message(s) delivered twice, {left:,} still to come ({each}); orderly "
                   "consumers see them again in order (make the listener idempotent)")
    return out


def _clock_notes(queues: Iterable[QueueLock]) -> list[str]:
    """Clients whose lastLockTimestamp is later than the moment their answer was received."""
    ahead: dict[str, Claim] = {}
    for q in queues:
        for c in q.claims:
            if c.clock_ahead_ms is not None and (c.client_id not in ahead or (
                    c.clock_ahead_ms > (ahead[c.client_id].clock_ahead_ms or 0))):
                ahead[c.client_id] = c
    return [f"the clock of {cid} disagrees with mqctl's: it reported a renewal at "
            f"{format_local(c.last_lock_ts)}, {format_duration(c.clock_ahead_ms or 0)} after "
            f"its answer was received ({format_local(c.observed_ts)}); its renewals are taken "
            "as made when it answered, so LOCK AGE and LEASE LEFT (at most the 60 s lease) "
            "are estimates; check NTP on its host"
            for cid, c in sorted(ahead.items())]


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


# ------------------------------------------------------------------------------ the view
# build_view is a sequence of steps, each a pure function of what the ones before it found,
# returning a new frozen result: who is in the group, whom the allocation gives each queue,
# what mqctl remembers weighed against what the clients report now, each queue's state
# (classify_queue), the clients, and the notes.


@dataclass(frozen=True, slots=True)
class _Members:
    """Who is in the group, as the brokers list it and as the clients answered."""

    cid_all: tuple[str, ...]   # cidAll as the broker returns it, duplicate ids kept
    member_set: frozenset[str]
    answered: frozenset[str]
    observed: Mapping[str, StoredClient]  # what each client that answered reported


def _members(members: GroupMembers, now: int) -> _Members:
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
    return _Members(tuple(cid_all), frozenset(clients) | frozenset(cid_all),
                    frozenset(cid for cid, cv in clients.items() if cv.running is not None),
                    {cid: st for cid, cv in clients.items()
                     if (st := _observed(cv, now)) is not None})


@dataclass(frozen=True, slots=True)
class _Allocation:
    """Whom each member's own strategy gives each queue (as each client rebalances)."""

    strategies: Mapping[str, str | None]
    default: str
    subscriptions: Mapping[str, set[str] | None]
    predicted: Mapping[MessageQueue, list[str]]
    notes: tuple[str, ...]

    def without(self, queues_by_topic: Mapping[str, Sequence[MessageQueue]],
                cid_all: Sequence[str], group: str, gone: Iterable[str]
                ) -> dict[MessageQueue, list[str]]:
        """Who takes the queues once ``gone`` are dropped from the member list."""
        left = set(gone)
        owners, _ = predict_owners(queues_by_topic, [c for c in cid_all if c not in left],
                                   self.strategies, self.subscriptions, group=group,
                                   default_strategy=self.default)
        return owners


def _allocation(members: GroupMembers, m: _Members,
                queues_by_topic: Mapping[str, Sequence[MessageQueue]]) -> _Allocation:
    clients = members.clients
    strategies = {cid: cv.strategy for cid, cv in clients.items()}
    known = Counter(s for s in strategies.values() if s)
    default = known.most_common(1)[0][0] if known else "AVG"
    subs: dict[str, set[str] | None] = {}
    for cid, cv in clients.items():
        s = cv.subscriptions
        subs[cid] = set(s) if s is not None else None
    if members.connection is not None:
        # non-answering clients: the broker's subscription table is the best guess
        for cid in m.member_set - m.answered:
            subs[cid] = set(members.connection.subscriptions) or None
    predicted, notes = predict_owners(queues_by_topic, list(m.cid_all), strategies, subs,
                                      group=members.group, default_strategy=default)
    return _Allocation(strategies, default, subs, predicted, tuple(notes))


@dataclass(frozen=True, slots=True)
class _History:
    """What mqctl remembers, weighed against what the clients report now."""

    restarted: Mapping[str, str]            # records about an earlier process, and why
    previous: Mapping[str, StoredClient]    # the records kept (departed ones marked), moves
    observed: Mapping[str, StoredClient]    # the observations, with the moves still owed
    redeliveries: Mapping[MessageQueue, Redelivery]
    hung: Mapping[str, HungMember]          # members that answered before and do not now
    remembered: Mapping[str, StoredClient]  # the records whose claims still count
    live: Mapping[MessageQueue, list[Claim]]  # what the answering clients claim now


def _history(members: GroupMembers, m: _Members, previous: Mapping[str, StoredClient],
             wanted: set[MessageQueue], now: int) -> _History:
    live: dict[MessageQueue, list[Claim]] = defaultdict(list)
    for st in m.observed.values():
        for c in st.claims:
            if c.mq in wanted:
                live[c.mq].append(c)
    # a record of an earlier process (or connection) of a member is dropped, never applied to
    # the process behind the id now
    restarted = _restarts(previous, members.clients, m.observed, set(m.member_set))
    kept = {cid: st if cid in m.answered else st.departed(member=cid in m.member_set, now=now)
            for cid, st in previous.items() if cid in m.answered or cid not in restarted}
    # queues of clients found hung that others took since, and what comes again when such a
    # client answers again as the same process (duplicates)
    kept.update(_track_moves(kept, live))
    redeliveries, observed = _redeliveries(kept, m.observed, live, restarted)
    hung = {cid: HungMember(cid, st.observed_ts, st.silent_ts or now,
                            st.heartbeat_ms or HEARTBEAT_MS)
            for cid, st in kept.items()
            if cid not in m.answered and cid in m.member_set and st.observed_ts > 0}
    remembered = {cid: st for cid, st in kept.items() if cid not in m.answered
                  and (cid in m.member_set or st.lease_may_run(now))}
    return _History(restarted, kept, observed, redeliveries, hung, remembered, dict(live))


def _claims_by_queue(h: _History, m: _Members, wanted: set[MessageQueue]
                     ) -> dict[MessageQueue, list[Claim]]:
    """Every claim on each queue: the live ones, then the remembered ones."""
    out = {mq: list(cs) for mq, cs in h.live.items()}
    for cid, st in h.remembered.items():
        for c in st.remembered(member=cid in m.member_set):
            if c.mq in wanted:
                out.setdefault(c.mq, []).append(c)
    return out


def _client_locks(members: GroupMembers, m: _Members, h: _History,
                  queues: Sequence[QueueLock]) -> tuple[ClientLocks, ...]:
    """Each member, then each former member whose claims still count."""
    clients = members.clients
    infos: list[ClientLocks] = []
    claimed = Counter(c.client_id for q in queues for c in q.claims if not c.dropped)
    locked = Counter(c.client_id for q in queues for c in q.claims
                     if c.locked and not c.dropped)
    for cid, cv in clients.items():
        st = h.observed.get(cid) or h.remembered.get(cid)
        infos.append(ClientLocks(
            cid, True, cv.running is not None, cv.running_error,
            cv.running.orderly if cv.running else (st.orderly if st else None),
            cv.strategy, cv.connections, claimed[cid], locked[cid],
            st.observed_ts if st else None, start_ts(cv) or (st.start_ts if st else 0) or None,
            h.restarted.get(cid)))
    for cid, st in h.remembered.items():
        if cid in clients:
            continue
        infos.append(ClientLocks(cid, False, False, "not a member any more (crashed or left)",
                                 st.orderly, None, 1, claimed[cid], locked[cid],
                                 st.observed_ts, st.start_ts or None))
    infos.sort(key=lambda c: (not c.member, java_string_key(c.client_id)))
    return tuple(infos)


def _view_notes(group: str, kind: str, notes: Sequence[str], a: _Allocation, h: _History,
                queues: Sequence[QueueLock]) -> tuple[str, ...]:
    out = list(notes) + list(a.notes)
    if kind == "offline":
        out.append(f"group {group} is offline: no consumer is connected, so no client holds or "
                   "renews a lock; leases of consumers that just stopped run out 60 s after "
                   "their last renewal")
    out += [f"{cid} {why}" for cid, why in h.restarted.items()]
    out += _superseded_notes(queues)
    out += _hung_notes(queues)
    out += _redelivery_notes(queues)
    out += _clock_notes(queues)
    if any(not c.live for q in queues for c in q.claims):
        out.append("claims of clients that did not answer are their last known ones "
                   "(source 'unknown'), from the state file of an earlier run")
    out.append("lease ends are estimated from the clients' lastLockTimestamp (their last "
               "renewal, client clock) + 60 s: no request reads the broker's lock table")
    return tuple(out)


def build_view(members: GroupMembers, *, now: int,
               queues_by_topic: Mapping[str, Sequence[MessageQueue]],
               previous: Mapping[str, StoredClient] | None = None,
               slack_ms: int = RENEW_SLACK_MS, notes: Sequence[str] = ()
               ) -> tuple[LockView, dict[str, StoredClient]]:
    """The lock view (pure) and the state to save for the next run."""
    group = members.group
    m = _members(members, now)
    a = _allocation(members, m, queues_by_topic)
    all_queues = sorted({mq for qs in queues_by_topic.values() for mq in qs})
    wanted = set(all_queues)
    h = _history(members, m, previous or {}, wanted, now)
    by_mq = _claims_by_queue(h, m, wanted)
    connections = {cid: cv.connections for cid, cv in members.clients.items()}
    fresh = {cid: why for cid, why in h.restarted.items() if cid not in m.answered}
    # who takes a hung member's queues once the brokers drop it
    after_drop = a.without(queues_by_topic, m.cid_all, group, h.hung) if h.hung else {}
    queues = tuple(_with_redelivery(
        classify_queue(mq, by_mq.get(mq, []), a.predicted.get(mq, []), now=now,
                       answered=m.answered, connections=connections, group=group,
                       slack_ms=slack_ms, reconnected=fresh, hung=h.hung,
                       after_drop=after_drop.get(mq, [])), h.redeliveries.get(mq))
        for mq in all_queues)
    kind = group_kind(members)
    model = members.connection.message_model if members.connection else None
    view = LockView(group, now, members.online_state, kind, model, tuple(sorted(queues_by_topic)),
                    queues, _client_locks(members, m, h, queues),
                    _view_notes(group, kind, notes, a, h, queues), tuple(members.failures))
    return view, merge_state(h.previous, h.observed, m.member_set, now)


def queue_locks(members: GroupMembers, queues_by_topic: Mapping[str, Sequence[MessageQueue]],
                *, now: int, previous: Mapping[str, StoredClient] | None = None
                ) -> LockView | None:
    """The lock classification of an orderly group's queues, exactly as ``mqctl locks show``
    has it (:func:`build_view` over the same member list, running info and state file), for
    the views that name a queue's owner (``group progress``, ``diagnose``); None for a group
    that does not lock queues (concurrent, broadcasting, pop, offline). Pure; writes nothing."""
    if group_kind(members) != "orderly":
        return None
    view, _ = build_view(members, now=now, queues_by_topic=queues_by_topic, previous=previous)
    return view


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
