"""Reading a group's progress (read-only): the fan-out over the brokers and clients behind
:class:`mqctl.views.progress.GroupProgress`, with per-broker failures kept next to what
succeeded.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from mqctl.admin import (
    Admin,
    BrokerFailure,
    NotFoundError,
    NothingRead,
    broker_addr,
    dedupe,
    require_addr,
)
from mqctl.errors import MqctlError
from mqctl.locks.view import queue_locks
from mqctl.models import (
    RETRY_PREFIX,
    BrokerData,
    ConsumeStats,
    MessageQueue,
    OffsetWrapper,
    QueueTimeSpan,
    TopicOffset,
    java_string_key,
    wait_ack_count,
)
from mqctl.remoting.client import fan_out
from mqctl.timeparse import now_ms
from mqctl.views.dlq import DlqQueue, read_dlq_queues
from mqctl.views.existence import read_nothing_of, require_group
from mqctl.views.members import GroupMembers, capture_members, unanswered_members
from mqctl.views.offsets import OffsetTableCache, committed_offsets, min_offsets
from mqctl.views.progress import (
    BROADCASTING_LAG,
    NEVER_COMMITTED,
    NO_STORE_TIME,
    NOT_REPORTED,
    SPAN_FAILED,
    GroupProgress,
    QueueProgress,
    classify_span,
)

if TYPE_CHECKING:
    from mqctl.locks.store import LockStore
    from mqctl.locks.types import LockView


@dataclass
class CaptureCache:
    """Per-capture cache shared by all groups of one snapshot (topic stats per broker)."""

    topic_stats: dict[tuple[str, str], Any] = field(default_factory=dict)
    # the never-committed rule's broker versions and offset tables (mqctl.views.offsets)
    offset_tables: Any = field(default_factory=lambda: _offset_table_cache())
    min_offsets: dict[MessageQueue, int] = field(default_factory=dict)  # GET_MIN_OFFSET
    put_tps: dict[tuple[str, str], float | None] = field(default_factory=dict)  # topicPutTps
    locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)


def _offset_table_cache() -> Any:
    return OffsetTableCache()


async def _cover_routes(admin: Admin, group: str, topics: list[str],
                        offsets: dict[MessageQueue, OffsetWrapper],
                        pairs: set[tuple[str, str]], brokers: list[BrokerData],
                        stats_failed: list[BrokerFailure], failures: list[BrokerFailure],
                        tps: list[float] | None = None) -> dict[str, str]:
    """Every readable queue of every topic the group consumes or has offsets for, on every
    broker of the topic's route. Asked without a topic, a broker lists only
    the topics it holds offsets of the group for (AdminBrokerProcessor.getConsumeStats:
    ``ConsumerOffsetManager.whichTopicByConsumer``), so one that holds none answers an empty
    table (corpus */never-committed/208_getConsumeStats_NC_NEVER_no_topic.broker-a.json)
    although it hosts the topic; asked with the topic it lists the topic's read queues
    (never-committed ones as consumerOffset 0). So each (broker, topic) of the routes whose
    queues are missing is asked GET_CONSUME_STATS with the topic. Adds to ``offsets``,
    ``pairs``, ``brokers`` and ``stats_failed`` (a broker that fails is not included), and each
    answer's ``consumeTps`` to ``tps`` (the broker's rate for that topic, which its answer
    without a topic did not count: it sums the topics it listed); returns the topics whose
    coverage is unknown, with why."""
    uncovered: dict[str, str] = {}
    failed = {f.broker for f in stats_failed}
    known = {b.broker_name for b in brokers}
    todo: list[tuple[BrokerData, str]] = []
    for t in topics:
        try:
            route = await admin.topic_route(t)
        except NotFoundError:
            continue  # no route: the topic is gone, nothing more to read
        except MqctlError as exc:
            uncovered[t] = f"its route could not be read: {exc.message}"
            failures.append(BrokerFailure("namesrv", None, exc))
            continue
        for qd in route.queues:
            b = route.broker(qd.broker_name)
            if not qd.readable or b is None or qd.broker_name in failed:
                continue
            want = [MessageQueue(t, qd.broker_name, q) for q in range(qd.read_queue_nums)]
            if any(mq not in offsets for mq in want):
                todo.append((b, t))
            if qd.broker_name not in known:
                known.add(qd.broker_name)
                brokers.append(b)

    async def ask(item: tuple[BrokerData, str]) -> Any:
        b, t = item
        addr = require_addr(b)
        return await admin.consume_stats(group, addr, t)

    for o in await fan_out(todo, ask, concurrency=admin.concurrency):
        b, t = o.item
        if not o.ok:
            assert o.error is not None
            bf = BrokerFailure(b.broker_name, b.master_addr, o.error)
            stats_failed.append(bf)
            failures.append(bf)
            continue
        assert o.value is not None
        if tps is not None:
            tps.append(o.value.consume_tps)
        for mq, w in o.value.offsets.items():
            if mq.topic == t and mq.broker_name == b.broker_name and mq not in offsets:
                offsets[mq] = w
                pairs.add((b.broker_name, t))
    return uncovered


async def capture_progress(admin: Admin, group: str, topic: str | None = None, *,
                           running: bool = True, topic_stats: bool = True,
                           cache: CaptureCache | None = None, running_info: bool = True,
                           dlq: bool = False, produce_tps: bool = False,
                           locks: bool = False, lock_store: LockStore | None = None
                           ) -> GroupProgress:
    """Everything ``group progress`` and ``snapshot`` need, for one group.

    ``running=False``: no member list at all; ``running_info=False`` (``--no-clients``): the
    member list but no GET_CONSUMER_RUNNING_INFO (owners, locks, client caches unknown).
    ``dlq``: also the ``%DLQ%<group>`` topic's queues (route + GET_TOPIC_STATS_INFO).
    ``produce_tps``: where a broker's topic stats carry no ``topicPutTps`` (before 5.3), ask
    its TOPIC_PUT_NUMS stats (VIEW_BROKER_STATS_DATA) for the topic's produce TPS.
    ``locks``: an orderly group's queues get their state and owner in the lock
    classification of ``mqctl locks show`` (:func:`mqctl.locks.view.queue_locks`), with what
    ``lock_store`` remembers (read, never written).

    The steps, in order (each broker's failure is kept in that order): the members, the
    consume stats of every broker that may hold the group's offsets (:func:`_consume_stats`)
    and of the routes' brokers that left queues out (:func:`_cover_routes`), the
    never-committed rule (:func:`_known_committed`), the time spans (:func:`_time_spans`),
    the topic stats and the bounds they left out (:func:`_topic_stats`,
    :func:`_min_offsets`), then the queues (:func:`_queue_progress`, pure) and the rates."""
    ts = now_ms()
    members = (await capture_members(admin, group, running=running_info, every_broker=False,
                                     must_read=False) if running else None)
    failures: list[BrokerFailure] = list(members.failures) if members else []
    brokers = await _brokers_to_ask(admin, group, topic, members)
    cluster = next((b.cluster for b in brokers if b.cluster), None)
    stats = await _consume_stats(admin, group, topic, brokers, failures)
    conn = members.connection if members is not None else None
    # a BROADCASTING group keeps its offsets in the clients: its queues are listed (the
    # brokers' offsets, bounds and rates are real) with the group's offset, lag and time lag
    # unknown; a broker's offsets of the group (left from a CLUSTERING past) are not its
    # progress
    broadcast = conn is not None and conn.message_model == "BROADCASTING"
    wanted = {topic} if topic else ({mq.topic for mq in stats.offsets}
                                     | (set(conn.subscriptions) if conn else set()))
    more_tps: list[float] = []
    uncovered = await _cover_routes(admin, group, sorted(wanted), stats.offsets, stats.pairs,
                                    brokers, stats.failed, failures, more_tps)
    stats.tps += sum(more_tps)
    baddr = {b.broker_name: broker_addr(b) for b in brokers}
    known_committed = await _known_committed(admin, group, stats.offsets, broadcast, baddr,
                                             cache, failures)
    plist = sorted(stats.pairs)
    # no time span of a broadcasting group: the broker measures it from an offset that is not
    # the group's
    delays, span_ok = await _time_spans(admin, group, [] if broadcast else plist, baddr,
                                        failures)
    tstats = _TopicStats()
    if topic_stats:
        tstats = await _topic_stats(admin, plist, baddr, cache, failures)
    holders = _holders(members, running_info)
    mins: dict[MessageQueue, int] = {}
    if topic_stats:
        mins = await _min_offsets(admin, stats.offsets, tstats, baddr, cache, failures)
    reads = _Reads(ts, broadcast, delays, span_ok, tstats.offsets, mins, known_committed)
    queues = [_queue_progress(mq, w, reads, holders) for mq, w in sorted(stats.offsets.items())]
    unread = sorted({f.broker for f in stats.failed})
    by_topic = _unread_by_topic(admin, unread, {q.mq.topic for q in queues}
                                | ({topic} if topic else set()))
    produce: dict[str, float | None] = {}
    if topic_stats:
        if produce_tps:
            await _ask_put_tps(admin, plist, tstats, baddr, failures)
        produce = _produce_tps(plist, tstats, by_topic)
    lock_view = None
    if locks and members is not None and running_info:
        lock_view = _lock_view(admin, group, members, queues, lock_store)
        if lock_view is not None:
            queues = _with_locks(queues, lock_view)
    client_tps = _client_tps(members, running_info, queues)
    retry_topic = await _retry_topic(admin, group, topic, queues)
    dlq_rows: list[DlqQueue] | None = None
    if dlq:
        dlq_rows = await read_dlq_queues(admin, group, failures)
    # the brokers' consumeTps is a sum over the topics the group has offsets on: over no queue
    # read it is not a rate of the group (a sum of nothing is unknown, never 0)
    return GroupProgress(group, ts, cluster, queues, members, dedupe(failures),
                         None if stats.failed or not queues else stats.tps,
                         unread, {tp: bs for tp, bs in by_topic.items() if bs},
                         produce_tps=produce, client_tps=client_tps, running_info=running_info,
                         pop=holders.pop, dlq=dlq_rows, dlq_asked=dlq, uncovered=uncovered,
                         pop_inflight=(dict(holders.pop_pairs)
                                       if holders.pop and holders.pop_complete else None),
                         unanswered=holders.unanswered, locks=lock_view,
                         retry_topic=retry_topic)


def _lock_view(admin: Admin, group: str, members: GroupMembers, queues: list[QueueProgress],
               store: LockStore | None) -> LockView | None:
    """The lock classification of an orderly group's main topics, over each topic's route
    (the queues its clients allocate, as `locks show` reads them) or, without one read, the
    queues listed here."""
    qbt: dict[str, list[MessageQueue]] = defaultdict(list)
    for q in queues:
        if not q.mq.topic.startswith(RETRY_PREFIX):
            qbt[q.mq.topic].append(q.mq)
    cached = getattr(admin, "cached_route", None)
    for t in list(qbt):
        rt = cached(t) if cached is not None else None
        if rt is not None and rt.subscribe_queues():
            qbt[t] = list(rt.subscribe_queues())
    previous = store.load(group) if store is not None else {}
    return queue_locks(members, {t: sorted(qs) for t, qs in qbt.items()}, now=now_ms(),
                       previous=previous)


def _with_locks(queues: list[QueueProgress], view: LockView) -> list[QueueProgress]:
    by = {q.mq: q for q in view.queues}
    out = []
    for q in queues:
        lk = by.get(q.mq)
        out.append(q if lk is None else replace(q, lock_state=lk.state.value,
                                                lock_owner=lk.owner))
    return out


async def _retry_topic(admin: Admin, group: str, topic: str | None,
                       queues: list[QueueProgress]) -> bool | None:
    """Whether ``%RETRY%<group>`` exists, where no queue of it was read (the whole group
    asked): without it nothing waits for redelivery (a backlog of 0, as a missing %DLQ%
    topic), with it the backlog is unknown. The route is the one the member list already
    read (cached); None where it was not asked or could not be read."""
    if topic or any(q.mq.topic.startswith(RETRY_PREFIX) for q in queues):
        return None
    try:
        return await admin.group_route(group) is not None
    except MqctlError:
        return None


async def _brokers_to_ask(admin: Admin, group: str, topic: str | None,
                          members: GroupMembers | None) -> list[BrokerData]:
    """The brokers whose GET_CONSUME_STATS may hold the group's offsets: the topic's route
    (``-t``), else the members' brokers (or the group's), and every broker of the cluster
    when the group is not known online (an offline group may have offsets anywhere)."""
    if topic:
        return list((await admin.topic_route(topic)).brokers)
    brokers = list(members.brokers) if members else await admin.group_brokers(group)
    if members is None or not members.online_state:
        info = await admin.cluster_info()
        names = {b.broker_name for b in brokers}
        brokers = brokers + [b for n, b in sorted(info.brokers.items()) if n not in names]
    return brokers


@dataclass
class _ConsumeStats:
    """What the brokers' GET_CONSUME_STATS said: each broker's own queues, the (broker,
    topic) pairs seen, the consume TPS summed, and the brokers that failed."""

    offsets: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    pairs: set[tuple[str, str]] = field(default_factory=set)
    tps: float = 0.0
    failed: list[BrokerFailure] = field(default_factory=list)


async def _consume_stats(admin: Admin, group: str, topic: str | None,
                         brokers: list[BrokerData],
                         failures: list[BrokerFailure]) -> _ConsumeStats:
    """GET_CONSUME_STATS on every broker; NothingRead when none answered (nothing was read,
    which is not "lag 0")."""
    async def stats_of(b: BrokerData) -> ConsumeStats:
        return await admin.consume_stats(group, require_addr(b), topic)

    outs = await fan_out(brokers, stats_of, concurrency=admin.concurrency)
    got = _ConsumeStats(failed=[BrokerFailure(o.item.broker_name, o.item.master_addr, o.error)
                                for o in outs if o.error is not None])
    if outs and len(got.failed) == len(outs):
        raise NothingRead(f"GET_CONSUME_STATS for group {group}",
                          dedupe([*failures, *got.failed]))
    for o in outs:
        if not o.ok:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.broker_name, o.item.master_addr, o.error))
            continue
        assert o.value is not None
        got.tps += o.value.consume_tps
        for mq, w in o.value.offsets.items():
            # a broker answers for its own queues; keep only those of this broker
            if mq.broker_name == o.item.broker_name or len(brokers) == 1:
                got.offsets[mq] = w
                got.pairs.add((o.item.broker_name, mq.topic))
    return got


async def _known_committed(admin: Admin, group: str,
                           offsets: dict[MessageQueue, OffsetWrapper], broadcast: bool,
                           baddr: dict[str, str | None], cache: CaptureCache | None,
                           failures: list[BrokerFailure]) -> dict[MessageQueue, bool]:
    """Which queues that read consumerOffset 0 have a committed offset (True) or none
    (False, ``none``): the reset plans' rule (mqctl.views.offsets.committed_offsets); a queue
    the rule could not check is left out."""
    zeros = [mq for mq, w in offsets.items() if w.consumer_offset == 0 and not broadcast]
    if not zeros:
        return {}
    got = await committed_offsets(admin, group, zeros, {mq: 0 for mq in zeros}, baddr,
                                  cache=cache.offset_tables if cache is not None else None)
    for name, exc in sorted(got.failed.items()):
        failures.append(BrokerFailure(name, baddr.get(name), exc))
    for name, (exc, _zs) in sorted(got.unchecked.items()):
        failures.append(BrokerFailure(name, baddr.get(name), exc))
    unsure = {m for _e, zs in got.unchecked.values() for m in zs}
    return {mq: v is not None for mq, v in got.offsets.items() if mq not in unsure}


async def _time_spans(admin: Admin, group: str, plist: list[tuple[str, str]],
                      baddr: dict[str, str | None], failures: list[BrokerFailure]
                      ) -> tuple[dict[MessageQueue, QueueTimeSpan], set[tuple[str, str]]]:
    """QUERY_CONSUME_TIME_SPAN per (broker, topic): each queue's span, and the pairs that
    answered."""
    async def spans_of(pair: tuple[str, str]) -> list[QueueTimeSpan]:
        return await admin.time_spans(pair[1], group, baddr[pair[0]] or "")

    delays: dict[MessageQueue, QueueTimeSpan] = {}
    span_ok: set[tuple[str, str]] = set()
    for so in await fan_out(plist, spans_of, concurrency=admin.concurrency):
        if so.ok:
            span_ok.add(so.item)
            for s in so.value or []:
                delays[s.mq] = s
        else:
            assert so.error is not None
            failures.append(BrokerFailure(so.item[0], baddr.get(so.item[0]), so.error))
    return delays, span_ok


@dataclass
class _TopicStats:
    """GET_TOPIC_STATS_INFO per (broker, topic): the queues' bounds, the pairs that answered,
    and each pair's produce TPS (None: not reported)."""

    offsets: dict[MessageQueue, TopicOffset] = field(default_factory=dict)
    ok: set[tuple[str, str]] = field(default_factory=set)
    put_tps: dict[tuple[str, str], float | None] = field(default_factory=dict)


async def _topic_stats(admin: Admin, plist: list[tuple[str, str]],
                       baddr: dict[str, str | None], cache: CaptureCache | None,
                       failures: list[BrokerFailure]) -> _TopicStats:
    got = _TopicStats()

    async def one(pair: tuple[str, str]) -> dict[MessageQueue, TopicOffset]:
        offsets, got.put_tps[pair] = await _cached_topic_stats(admin, pair[1],
                                                               baddr[pair[0]] or "", cache)
        return offsets

    for to in await fan_out(plist, one, concurrency=admin.concurrency):
        if to.ok:
            got.ok.add(to.item)
            got.offsets.update(to.value or {})
        else:
            assert to.error is not None
            failures.append(BrokerFailure(to.item[0], baddr.get(to.item[0]), to.error))
    return got


async def _cached_topic_stats(admin: Admin, topic: str, addr: str, cache: CaptureCache | None
                              ) -> tuple[dict[MessageQueue, TopicOffset], float | None]:
    """One broker's topic stats and produce TPS, read once per capture (``cache``: the groups
    of one snapshot share it, one reader at a time per (address, topic))."""
    if cache is None:
        st, tps = await _fetch_topic_stats(admin, topic, addr)
        return st.offsets, tps
    key = (addr, topic)
    if key not in cache.topic_stats:
        async with cache.locks.setdefault(key, asyncio.Lock()):
            if key not in cache.topic_stats:
                st, tps = await _fetch_topic_stats(admin, topic, addr)
                cache.topic_stats[key] = st.offsets
                cache.put_tps[key] = tps
    return cache.topic_stats[key], cache.put_tps.get(key)


async def _fetch_topic_stats(admin: Admin, topic: str, addr: str) -> tuple[Any, float | None]:
    # an Admin stand-in without topic_stats_tps (tests' corpus replays): no produce TPS
    fn = getattr(admin, "topic_stats_tps", None)
    if fn is None:
        return await admin.topic_stats(topic, addr), None
    return await fn(topic, addr)  # type: ignore[no-any-return]


async def _min_offsets(admin: Admin, offsets: dict[MessageQueue, OffsetWrapper],
                       tstats: _TopicStats, baddr: dict[str, str | None],
                       cache: CaptureCache | None,
                       failures: list[BrokerFailure]) -> dict[MessageQueue, int]:
    """Queues the topic stats left out (4.x GET_TOPIC_STATS_INFO iterates writeQueueNums,
    GET_CONSUME_STATS readQueueNums: corpus 4.9.3/read-gt-write/202_*, 208_*): one
    GET_MIN_OFFSET each, so every readable queue has its bounds. Only where the broker
    answered the topic stats without the queue: a broker that failed is reported once, not
    asked again per queue."""
    missing = [mq for mq in sorted(offsets) if mq not in tstats.offsets
               and (mq.broker_name, mq.topic) in tstats.ok and baddr.get(mq.broker_name)]

    async def min_of(mq: MessageQueue) -> int:
        if cache is not None and mq in cache.min_offsets:
            return cache.min_offsets[mq]
        v = await admin.min_offset(mq, baddr[mq.broker_name] or "")
        if cache is not None:
            cache.min_offsets[mq] = v
        return v

    mins: dict[MessageQueue, int] = {}
    for mo in await fan_out(missing, min_of, concurrency=admin.concurrency):
        if mo.ok and mo.value is not None:
            mins[mo.item] = mo.value
        else:
            assert mo.error is not None
            failures.append(BrokerFailure(mo.item.broker_name, baddr.get(mo.item.broker_name),
                                          mo.error))
    return mins


@dataclass
class _Holders:
    """Who holds which queue, from the members' running info (pure)."""

    owners: dict[MessageQueue, list[tuple[str, Any]]]  # queue -> (client, ProcessQueueInfo)
    pop: bool  # the group consumes with pop (5.x): no owners
    pop_ack: dict[MessageQueue, int]  # the pop clients' waitAckCount per queue
    pop_complete: bool  # every client answered its running info
    # a 5.3.3 pop client keys its pop table per broker (queue id -1:
    # QueryAssignmentProcessor.allocate4Pop with popShareQueueNum 0, the default, assigns
    # MessageQueue(topic, broker, -1)); per queue only where it keys real queues
    pop_pairs: dict[tuple[str, str], int]
    per_broker: set[tuple[str, str]]
    # known that no client holds a queue: the group has no member, or every
    # member answered its running info and none lists the queue
    holders_known: bool
    unanswered: list[str]  # members whose running info did not answer


def _holders(members: GroupMembers | None, running_info: bool) -> _Holders:
    owners: dict[MessageQueue, list[tuple[str, Any]]] = defaultdict(list)
    pop_ack: dict[MessageQueue, int] = defaultdict(int)
    conn = members.connection if members is not None else None
    pop = conn is not None and conn.consume_type == "CONSUME_POP"
    pop_complete = False
    if members is not None:
        pop = pop or any(cv.running is not None and cv.running.pops
                         for cv in members.clients.values())
        pop_complete = running_info and bool(members.clients) and all(
            cv.running is not None for cv in members.clients.values())
        for cid, cv in members.clients.items():
            if cv.running is not None:
                for mq, pq in cv.running.mq_table.items():
                    if not pq.dropped:
                        owners[mq].append((cid, pq))
                for mq, pinfo in cv.running.mq_pop_table.items():
                    pop_ack[mq] += wait_ack_count(pinfo)
    pop_pairs: dict[tuple[str, str], int] = defaultdict(int)
    per_broker: set[tuple[str, str]] = set()
    for pmq, n in pop_ack.items():
        pop_pairs[(pmq.topic, pmq.broker_name)] += n
        if pmq.queue_id < 0:
            per_broker.add((pmq.topic, pmq.broker_name))
    holders_known = members is not None and (members.online_state is False or (
        running_info and bool(members.clients)
        and all(cv.running is not None for cv in members.clients.values())))
    unanswered = (unanswered_members(members) if members is not None and running_info
                  else [])
    return _Holders(owners, pop, pop_ack, pop_complete, pop_pairs, per_broker, holders_known,
                    unanswered)


@dataclass(frozen=True)
class _Reads:
    """What the brokers said about the queues, beyond their consume stats."""

    ts: int  # the capture's time (the time lag's now)
    broadcast: bool
    delays: dict[MessageQueue, QueueTimeSpan]
    span_ok: set[tuple[str, str]]
    tstats: dict[MessageQueue, TopicOffset]
    mins: dict[MessageQueue, int]
    known_committed: dict[MessageQueue, bool]


def _queue_progress(mq: MessageQueue, w: OffsetWrapper, r: _Reads, h: _Holders
                    ) -> QueueProgress:
    """One queue's progress from what was read (pure)."""
    span = r.delays.get(mq)
    t = r.tstats.get(mq)
    own = sorted(h.owners.get(mq, []), key=lambda x: java_string_key(x[0]))
    delay, reason, committed = classify_span(w, span, r.ts)
    if reason == NOT_REPORTED and (mq.broker_name, mq.topic) not in r.span_ok:
        reason = SPAN_FAILED
    # the group's %RETRY% topic is not the clients' (only CLUSTERING clients subscribe to
    # it, DefaultMQPushConsumerImpl.copySubscription): its broker offsets are its own
    in_clients = r.broadcast and not mq.topic.startswith(RETRY_PREFIX)
    if in_clients:
        delay, reason, committed = None, BROADCASTING_LAG, None
        own = []  # every client reads every queue: no one owner
    if mq in r.known_committed:  # the rule's answer wins over the time span's hint
        committed = r.known_committed[mq]
        if not committed and w.consumer_offset < w.broker_offset:
            delay, reason = None, NEVER_COMMITTED
        elif committed and reason == NEVER_COMMITTED:
            reason = NO_STORE_TIME  # committed 0, below the oldest message held
    first = own[0][1] if own else None
    return QueueProgress(
        mq=mq, broker_offset=w.broker_offset, consumer_offset=w.consumer_offset,
        pull_offset=None if in_clients else w.pull_offset,
        last_timestamp=0 if in_clients else w.last_timestamp,
        min_offset=t.min_offset if t else r.mins.get(mq),
        max_timestamp=(t.last_update_timestamp or None) if t else (
            span.max_timestamp or None if span else None),
        delay_ms=delay, delay_reason=reason, committed=committed,
        owners=tuple(c for c, _ in own),
        locked=first.locked if first is not None else None,
        last_lock_ts=(first.last_lock_timestamp or None) if first is not None else None,
        cached_msg_count=first.cached_msg_count if first is not None else None,
        cached_msg_max_offset=(first.cached_msg_max_offset if first is not None
                               and first.cached_msg_count > 0 else None),
        min_offset_source=("topic-stats" if t else "min-offset" if mq in r.mins else None),
        no_holder=h.holders_known and not h.pop and not own and not in_clients,
        pop=h.pop, pop_wait_ack=(h.pop_ack.get(mq, 0) if h.pop and h.pop_complete
                                 and (mq.topic, mq.broker_name) not in h.per_broker else None),
        offsets_in_clients=in_clients,
        owner_unknown=not h.pop and not own and not in_clients and bool(h.unanswered))


def _unread_by_topic(admin: Admin, unread: list[str], topics: set[str]) -> dict[str, list[str]]:
    """Per topic, the brokers whose GET_CONSUME_STATS failed that its route names (all of
    them when its route was not read)."""
    by_topic: dict[str, list[str]] = {}
    if not unread:
        return by_topic
    for tp in sorted(topics):
        rt = admin.cached_route(tp)
        in_route = {b.broker_name for b in rt.brokers} if rt is not None else None
        by_topic[tp] = [b for b in unread if in_route is None or b in in_route]
    return by_topic


async def _ask_put_tps(admin: Admin, plist: list[tuple[str, str]], tstats: _TopicStats,
                       baddr: dict[str, str | None], failures: list[BrokerFailure]) -> None:
    """Where a broker's topic stats carried no topicPutTps (before 5.3): its TOPIC_PUT_NUMS
    stats, into ``tstats.put_tps``."""
    fetch_put = getattr(admin, "topic_put_tps", None)  # absent on tests' corpus replays
    ask = [pr for pr in plist if pr in tstats.ok and tstats.put_tps.get(pr) is None
           and baddr.get(pr[0]) and not pr[1].startswith(RETRY_PREFIX)]
    if fetch_put is None or not ask:
        return
    for po in await fan_out(ask, lambda pr: fetch_put(pr[1], baddr[pr[0]] or ""),
                            concurrency=admin.concurrency):
        if po.ok:
            tstats.put_tps[po.item] = po.value
        else:
            assert po.error is not None
            failures.append(BrokerFailure(po.item[0], baddr.get(po.item[0]), po.error))


def _produce_tps(plist: list[tuple[str, str]], tstats: _TopicStats,
                 by_topic: dict[str, list[str]]) -> dict[str, float | None]:
    """Per topic, the brokers' produce TPS summed; None where one is unknown or a broker of
    the topic did not answer (a partial sum is not the topic's rate)."""
    produce: dict[str, float | None] = {}
    for (b, tp) in plist:
        v = tstats.put_tps.get((b, tp)) if (b, tp) in tstats.ok else None
        produce[tp] = None if v is None or (tp in produce and produce[tp] is None) else (
            (produce.get(tp) or 0.0) + v)
    for tp, bs in by_topic.items():
        if bs and tp in produce:
            produce[tp] = None
    return produce


def _client_tps(members: GroupMembers | None, running_info: bool,
                queues: list[QueueProgress]) -> dict[str, float | None]:
    """Per topic, the clients' consumeOKTPS summed; None when a client did not answer."""
    client_tps: dict[str, float | None] = {}
    if members is None or not running_info or not members.clients:
        return client_tps
    infos = [cv.running for cv in members.clients.values()]
    for tp in sorted({q.mq.topic for q in queues}):
        if any(i is None for i in infos):
            client_tps[tp] = None
            continue
        client_tps[tp] = sum(_ok_tps(i.status_table.get(tp)) for i in infos if i is not None)
    return client_tps


def _ok_tps(status: Any) -> float:
    """ConsumeStatus.consumeOKTPS of a client's statusTable entry (0 when absent)."""
    v = (status or {}).get("consumeOKTPS") if isinstance(status, dict) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


async def capture_offsets(admin: Admin, group: str, topic: str | None = None
                          ) -> tuple[GroupProgress, dict[MessageQueue, int]]:
    """What ``mqctl offsets show`` reads (read-only): the group's progress without the
    clients (the member list, one GET_CONSUMER_CONNECTION_LIST, says whether the group is
    BROADCASTING: its offsets live in the clients), refused when no broker knows the group
    (:func:`mqctl.views.existence.require_group`), and the min offset of each readable queue
    the topic stats left out (GET_TOPIC_STATS_INFO of a broker before 5.3.0 covers the write
    queues only), asked per queue."""
    p = await capture_progress(admin, group, topic, running_info=False)
    if read_nothing_of(p):
        await require_group(admin, group)
    failed = {f.broker for f in p.failures}
    mins, more = await min_offsets(admin, [q.mq for q in p.queues if q.min_offset is None
                                           and q.mq.broker_name not in failed])
    p.failures.extend(more)
    return p, mins
