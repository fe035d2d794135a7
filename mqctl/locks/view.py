"""The lock view of a group (pure): each member's predicted share, every claim (live and
remembered) classified per queue, the clients, and the state to save for the next run."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from mqctl.errors import MqctlError, RefusedError
from mqctl.locks.model import (
    RENEW_SLACK_MS,
    Claim,
    ClientLocks,
    LockView,
    QueueLock,
    classify_queue,
    superseded_by,
)
from mqctl.locks.store import StoredClient, client_addrs, merge_state, new_connection
from mqctl.models import MessageQueue, java_string_key
from mqctl.timeparse import format_local

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


def _observed(cv: ClientView, now: int) -> StoredClient | None:
    if cv.running is None:
        return None
    orderly = cv.running.orderly
    claims = tuple(Claim.of(cv.client_id, mq, pq, observed_ts=now, orderly=orderly)
                   for mq, pq in sorted(cv.running.mq_table.items()))
    return StoredClient(cv.client_id, now, claims, orderly, addrs=client_addrs(cv.addr),
                        start_ts=start_ts(cv))


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
    # a record of an earlier process (or connection) of a member is dropped, never applied to
    # the process behind the id now (issue 25 item 4c)
    restarted = _restarts(previous, clients, observed, member_set)
    previous = {cid: st.departed(member=cid in member_set, now=now)
                for cid, st in previous.items() if cid in answered or cid not in restarted}
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
    fresh = {cid: why for cid, why in restarted.items() if cid not in answered}
    queues = tuple(classify_queue(mq, by_mq.get(mq, []), predicted.get(mq, []), now=now,
                                  answered=answered, connections=connections, group=group,
                                  slack_ms=slack_ms, reconnected=fresh)
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
            st.observed_ts if st else None, start_ts(cv) or (st.start_ts if st else 0) or None,
            restarted.get(cid)))
    for cid, st in remembered_clients.items():
        if cid in clients:
            continue
        infos.append(ClientLocks(cid, False, False, "not a member any more (crashed or left)",
                                 st.orderly, None, 1, claimed[cid], locked[cid],
                                 st.observed_ts, st.start_ts or None))
    infos.sort(key=lambda c: (not c.member, java_string_key(c.client_id)))

    kind = group_kind(members)
    allnotes = list(notes) + pnotes
    if kind == "offline":
        allnotes.append(f"group {group} is offline: no consumer is connected, so no client "
                        "holds or renews a lock; leases of consumers that just stopped run out "
                        "60 s after their last renewal")
    allnotes += [f"{cid} {why}" for cid, why in restarted.items()]
    allnotes += _superseded_notes(queues)
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
