"""Read-only views of a live cluster: group membership with a consistency check, and the
per-queue progress of a group (offsets, lag, exact time lag, owners, lock flags).

The capture functions fan out over brokers and clients with bounded concurrency and keep
per-broker failures next to what succeeded; the checks are pure functions over the capture.
"""

from __future__ import annotations

import asyncio
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

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
from mqctl.models import (
    DLQ_PREFIX,
    RETRY_PREFIX,
    BrokerData,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    OffsetWrapper,
    QueueTimeSpan,
    TopicOffset,
    TopicRoute,
    java_string_key,
    wait_ack_count,
)
from mqctl.remoting.client import fan_out
from mqctl.timeparse import now_ms

# ------------------------------------------------------------------------------ membership


@dataclass
class ClientView:
    client_id: str
    addr: str = ""
    language: str = ""
    version: int = 0
    brokers: list[str] = field(default_factory=list)  # brokers that list this client
    running: ConsumerRunningInfo | None = None
    running_error: str | None = None
    # its GET_CONSUMER_RUNNING_INFO answered "not online" on every broker asked: it left
    # between the member list and the request (not a member that did not answer)
    running_gone: bool = False
    connections: int = 1  # >1: the same client id on several channels (pid collision)

    @property
    def strategy(self) -> str | None:
        return self.running.strategy_name if self.running is not None else None

    @property
    def subscriptions(self) -> dict[str, str] | None:
        if self.running is None:
            return None
        return {s.topic: s.expression for s in self.running.subscriptions}


@dataclass
class GroupMembers:
    group: str
    brokers: list[BrokerData]
    members: dict[str, list[str] | BrokerFailure]  # broker -> consumer id list (raw, with dups)
    connection: ConsumerConnection | None
    clients: dict[str, ClientView]
    queue_counts: dict[str, int]  # subscribed topic -> readable queue count
    failures: list[BrokerFailure]

    @property
    def online(self) -> bool:
        """A client was seen (False also when the member lists could not be read: use
        :attr:`online_state` for a fact that may be unknown)."""
        return bool(self.clients)

    @property
    def unread_brokers(self) -> list[str]:
        """Brokers whose member list could not be read."""
        return sorted(b for b, v in self.members.items() if isinstance(v, BrokerFailure))

    @property
    def online_state(self) -> bool | None:
        """True: a client was seen; False: every broker asked answered and none lists a
        client; None: unknown (a broker that may list one did not answer)."""
        if self.clients:
            return True
        if not self.members or self.unread_brokers:
            return None
        return False


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    severity: str  # error | warning | info
    message: str
    clients: tuple[str, ...] = ()


async def capture_members(admin: Admin, group: str, *, running: bool = True,
                          every_broker: bool = True, must_read: bool = True) -> GroupMembers:
    """Members as every broker of the group sees them, plus each client's running info.

    ``every_broker=False`` (snapshots, progress) asks brokers in turn until one knows the
    group, instead of all of them: the member list without the cross-broker comparison.
    When no broker answered the member list it raises :class:`NothingRead` (exit 5 or 3),
    unless ``must_read=False``: then the result has no member list and ``online_state`` None.
    """
    brokers = await admin.group_brokers(group)
    if every_broker:
        members = await admin.members_by_broker(group, brokers)
        conns = await admin.connections_by_broker(group, brokers)
    else:
        conns = {}
        members = {}
        for b in brokers:
            addr = broker_addr(b)
            if addr is None:
                continue
            try:
                conn = await admin.consumer_connection(group, addr)
            except MqctlError as exc:
                conns[b.broker_name] = BrokerFailure(b.broker_name, addr, exc)
                continue
            conns[b.broker_name] = conn
            members[b.broker_name] = [c.client_id for c in conn.connections] if conn else []
            break
    failures = [v for v in members.values() if isinstance(v, BrokerFailure)]
    failures += [v for v in conns.values() if isinstance(v, BrokerFailure)
                 and v.broker not in {f.broker for f in failures}]
    if must_read and failures and not any(not isinstance(v, BrokerFailure)
                                          for v in members.values()):
        raise NothingRead(f"the member list of group {group} (GET_CONSUMER_LIST_BY_GROUP / "
                          "GET_CONSUMER_CONNECTION_LIST)", failures)
    connection = next((c for c in conns.values() if isinstance(c, ConsumerConnection)), None)
    # subscribed topics may live on brokers the retry topic does not: ask those too
    topics = sorted(connection.subscriptions) if connection else []
    known = {b.broker_name for b in brokers}
    extra: list[BrokerData] = []
    queue_counts: dict[str, int] = {}
    for t in topics:
        try:
            route = await admin.topic_route(t)
        except NotFoundError:
            continue
        if not t.startswith(RETRY_PREFIX):
            queue_counts[t] = len(route.subscribe_queues())
        for b in route.brokers:
            if b.broker_name not in known:
                known.add(b.broker_name)
                extra.append(b)
    if extra and every_broker:
        members.update(await admin.members_by_broker(group, extra))
        failures += [members[b.broker_name] for b in extra  # type: ignore[misc]
                     if isinstance(members[b.broker_name], BrokerFailure)]
        brokers = sorted([*brokers, *extra], key=lambda b: b.broker_name)

    clients: dict[str, ClientView] = {}
    for broker, ids in sorted(members.items()):
        if isinstance(ids, BrokerFailure):
            continue
        for cid in ids:
            cv = clients.setdefault(cid, ClientView(cid))
            if broker not in cv.brokers:
                cv.brokers.append(broker)
        for cid, n in Counter(ids).items():
            clients[cid].connections = max(clients[cid].connections, n)
    for c in conns.values():
        if not isinstance(c, ConsumerConnection):
            continue
        per_id = Counter(x.client_id for x in c.connections)
        for x in c.connections:
            cv = clients.setdefault(x.client_id, ClientView(x.client_id))
            if not cv.addr or x.client_addr not in cv.addr.split(","):
                cv.addr = x.client_addr if not cv.addr else f"{cv.addr},{x.client_addr}"
            cv.language, cv.version = x.language, x.version
            cv.connections = max(cv.connections, per_id[x.client_id])
    if running and clients:
        infos = await admin.running_infos(group, clients, brokers)
        for cid, info in infos.items():
            if isinstance(info, ConsumerRunningInfo):
                clients[cid].running = info
            else:
                clients[cid].running_error = info.message
                clients[cid].running_gone = _not_online(info)
    ordered = dict(sorted(clients.items(), key=lambda kv: java_string_key(kv[0])))
    return GroupMembers(group, brokers, members, connection, ordered, queue_counts, failures)


def _not_online(exc: MqctlError) -> bool:
    """A GET_CONSUMER_RUNNING_INFO refused because the client is not (any more) in the group:
    AdminBrokerProcessor.callConsumer answers SYSTEM_ERROR "The Consumer <G> <C> not online"
    (corpus other-requests/307_*_offline_client); a timeout or any other error is a member that
    did not answer."""
    from mqctl.errors import BrokerError
    from mqctl.remoting.codes import ResponseCode

    return (isinstance(exc, BrokerError) and exc.code == ResponseCode.SYSTEM_ERROR
            and "not online" in (exc.remark or ""))


def unanswered_members(m: GroupMembers) -> list[str]:
    """Members whose GET_CONSUMER_RUNNING_INFO was asked and did not answer (a timeout, an
    error), still members: what they own is unknown, not absent (a hung or loaded client
    stays a member until the broker drops it)."""
    return [cid for cid, cv in m.clients.items()
            if cv.running is None and cv.running_error is not None and not cv.running_gone]


def check_members(m: GroupMembers) -> list[Finding]:
    """The consistency check of ``mqctl consumers``."""
    out: list[Finding] = []
    if m.online_state is None:
        out.append(Finding("unknown", "warning", f"membership of {m.group} unknown: "
                           f"{', '.join(m.unread_brokers) or 'no broker'} did not answer and the "
                           "others list no client"))
        return out
    if not m.online:
        out.append(Finding("offline", "warning", f"group {m.group} has no online consumer on "
                           "any broker"))
        return out
    # 1. brokers that disagree on membership (a client asks ONE random broker for cidAll)
    answered = {b: set(ids) for b, ids in m.members.items() if not isinstance(ids, BrokerFailure)}
    union = set().union(*answered.values()) if answered else set()
    for b, ids in sorted(answered.items()):
        missing = sorted(union - ids, key=java_string_key)
        if missing:
            out.append(Finding("membership", "error",
                               f"broker {b} does not list {', '.join(missing)}: clients that ask "
                               f"{b} for the member list compute a different allocation",
                               tuple(missing)))
    # 2. duplicate client ids (two processes with the same ip@pid, e.g. containers)
    for cid, cv in m.clients.items():
        if cv.connections > 1:
            out.append(Finding("duplicate-id", "error",
                               f"client id {cid} is used by {cv.connections} connections "
                               f"({cv.addr}): both get the same queues and other queues get no "
                               "consumer; set a unique instanceName", (cid,)))
    # 3. subscriptions that differ within the group
    subs = {cid: cv.subscriptions for cid, cv in m.clients.items() if cv.subscriptions is not None}
    if len({tuple(sorted(s.items())) for s in subs.values()}) > 1:
        by_topic: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        for cid, s in subs.items():
            for topic in set().union(*[set(x) for x in subs.values()]):
                by_topic[topic][s.get(topic, "(not subscribed)")].append(cid)
        for topic, variants in sorted(by_topic.items()):
            if len(variants) > 1:
                desc = "; ".join(f"{expr}: {', '.join(c)}" for expr, c in sorted(variants.items()))
                out.append(Finding("subscription", "error",
                                   f"clients disagree on the subscription of {topic} ({desc}): "
                                   "the broker keeps only one version and queues allocated to "
                                   "non-subscribers are not consumed",
                                   tuple(c for cs in variants.values() for c in cs)))
    # 4. different allocation strategies
    strategies: dict[str, list[str]] = defaultdict(list)
    for cid, cv in m.clients.items():
        if cv.strategy:
            strategies[cv.strategy].append(cid)
    if len(strategies) > 1:
        desc = "; ".join(f"{s}: {', '.join(c)}" for s, c in sorted(strategies.items()))
        out.append(Finding("strategy", "error", f"clients use different allocation strategies "
                           f"({desc}): their allocations overlap and leave gaps"))
    # 5. more consumers than queues
    n = len(m.clients)
    model = m.connection.message_model if m.connection else None
    if model != "BROADCASTING":
        for topic, q in sorted(m.queue_counts.items()):
            if q and n > q:
                out.append(Finding("idle", "warning", f"{n} consumers for {q} queues of {topic}: "
                                   f"{n - q} consumer(s) get no queue of it"))
    else:
        out.append(Finding("broadcasting", "info", "BROADCASTING group: every consumer reads "
                           "every queue; allocation and locks do not apply"))
    # 6. pop / gRPC consumers
    pop = [cid for cid, cv in m.clients.items()
           if (m.connection and m.connection.consume_type == "CONSUME_POP")
           or (cv.running and (cv.running.consume_type == "CONSUME_POP"
                               or bool(cv.running.mq_pop_table)))]
    if pop:
        out.append(Finding("pop", "info", f"{len(pop)} pop/gRPC consumer(s) ({', '.join(pop)}): "
                           "they balance per message, queue allocation does not apply",
                           tuple(pop)))
    silent = [cid for cid, cv in m.clients.items() if cv.running_error]
    for cid in silent:
        out.append(Finding("no-running-info", "warning",
                           f"{cid} did not answer GET_CONSUMER_RUNNING_INFO: "
                           f"{m.clients[cid].running_error}", (cid,)))
    return out


# ------------------------------------------------------------------------------ progress


# why a queue's time lag is unknown (QueueProgress.delay_reason)
NEVER_COMMITTED = "never-committed"
NO_STORE_TIME = "no-store-time"
NOT_REPORTED = "not-reported"
SPAN_FAILED = "failed"
# why a queue's lag (and committed offset, time lag, inflight) is unknown: a BROADCASTING
# group's clients keep their offsets in a local file (LocalFileOffsetStore) and commit none to
# the brokers, so what a broker holds for the group is not its progress. The one name every
# view gives it: `groups` (state UNKNOWN), `group progress`, `offsets show`, `topic
# consumers` and the snapshot rows (``lag_unknown``)
BROADCASTING_LAG = "broadcasting"
# what every view says next to a queue without a committed offset (``none``)
NO_OFFSET_LAG_CAVEAT = ("LAG counts such a queue whole (max offset - 0, as mqadmin's Diff); "
                        "where a new consumer would start there depends on its "
                        "consumeFromWhere (FIRST_OFFSET: the oldest message held; LAST_OFFSET: "
                        "the newest, except that a broker answers 0 for a queue whose message "
                        "0 is still in memory; TIMESTAMP: the first message at that time)")
DELAY_REASONS = {
    NEVER_COMMITTED: "the group has no committed offset for the queue (the broker's "
                     "QUERY_CONSUME_TIME_SPAN delayTime is now - 0)",
    NO_STORE_TIME: "the broker has no store time for the next message (committed offset "
                   "below the oldest retained message)",
    NOT_REPORTED: "the broker's QUERY_CONSUME_TIME_SPAN does not cover the queue (it iterates "
                  "the write queues only: a read-only queue, corpus */read-gt-write/303_*)",
    SPAN_FAILED: "QUERY_CONSUME_TIME_SPAN failed",
    BROADCASTING_LAG: "the group is BROADCASTING: each client keeps its own offsets in a local "
                      "file (LocalFileOffsetStore) and commits none to the brokers",
}


@dataclass(frozen=True, slots=True)
class QueueProgress:
    mq: MessageQueue
    broker_offset: int
    consumer_offset: int
    pull_offset: int | None
    last_timestamp: int
    min_offset: int | None = None
    max_timestamp: int | None = None
    delay_ms: int | None = None
    owners: tuple[str, ...] = ()
    locked: bool | None = None
    last_lock_ts: int | None = None
    # False: the group has no committed offset for the queue (``none``: the rule of
    # mqctl.reset.probe.committed_offsets, shared with the reset plans); None: cannot tell
    committed: bool | None = None
    delay_reason: str | None = None  # a DELAY_REASONS key when delay_ms is None
    # True: known that no client holds the queue (the group has no member, or every member
    # answered its running info and none lists it); False: held or unknown
    no_holder: bool = False
    cached_msg_count: int | None = None  # the owner's ProcessQueueInfo.cachedMsgCount
    cached_msg_max_offset: int | None = None  # ... and cachedMsgMaxOffset (None when empty)
    min_offset_source: str | None = None  # "topic-stats" | "min-offset" (GET_MIN_OFFSET)
    # pop (5.x): the broker hands any queue's messages to whoever pops; no owner. The
    # clients' PopProcessQueueInfo.waitAckCount (popped, not yet acked: invisible) summed,
    # None when not every pop client reported it
    pop: bool = False
    pop_wait_ack: int | None = None
    # a BROADCASTING group's queue: its offsets live in the clients (BROADCASTING_LAG), so
    # the committed offset, the lag, the time lag and the inflight are unknown
    offsets_in_clients: bool = False
    # no answering member claims the queue while a member did not answer its running info:
    # the owner is unknown (``owners`` stays empty), not absent (issue 25 item 6)
    owner_unknown: bool = False

    @property
    def lag(self) -> int | None:
        """``broker_offset - consumer_offset``, mqadmin's Diff: a queue without a committed
        offset (the broker's placeholder 0) counts whole; where a new consumer would start
        there depends on its consumeFromWhere (:data:`NO_OFFSET_LAG_CAVEAT`). None (unknown)
        where the offsets live in the clients (:attr:`lag_unknown`)."""
        if self.offsets_in_clients:
            return None
        return max(0, self.broker_offset - self.consumer_offset)

    @property
    def lag_unknown(self) -> str | None:
        """Why :attr:`lag` is None (``broadcasting``), else None."""
        return BROADCASTING_LAG if self.offsets_in_clients else None

    @property
    def current(self) -> int | None:
        """The committed offset, None where the group has none (``none``: ``committed`` is
        False) or where it is unknown (the clients keep it: ``offsets_in_clients``)."""
        if self.offsets_in_clients:
            return None
        return None if self.committed is False else self.consumer_offset

    @property
    def inflight(self) -> int | None:
        """Messages pulled and not yet committed: 0 on a queue no client holds (a pullOffset
        ahead of the committed offset there is what a departed owner pulled and never
        committed: the next owner consumes it again, nobody holds it now); else the broker's
        ``pullOffset - consumerOffset`` (5.x), else the owner's cachedMsgCount (the client
        reports it), else unknown. A pop queue: the pop clients' waitAckCount where they
        report it per queue, else unknown here (a 5.x pop client keys it per broker, queue id
        -1: :attr:`GroupProgress.pop_inflight`; a pop does not move pullOffset)."""
        if self.offsets_in_clients:
            return None
        if self.pop:
            return self.pop_wait_ack
        if self.no_holder:
            return 0
        if self.pull_offset is not None:
            return max(0, self.pull_offset - self.consumer_offset)
        return self.cached_msg_count

    @property
    def inflight_source(self) -> str | None:
        if self.offsets_in_clients:
            return None
        if self.pop:
            return "client" if self.pop_wait_ack is not None else None
        if self.no_holder:
            return "no-owner"
        if self.pull_offset is not None:
            return "broker"
        return "client" if self.cached_msg_count is not None else None

    @property
    def owner(self) -> str | None:
        return self.owners[0] if self.owners else None


def classify_span(w: OffsetWrapper, span: QueueTimeSpan | None, now: int
                  ) -> tuple[int | None, str | None, bool | None]:
    """``(delay_ms, reason when unknown, committed)`` of one queue.

    The rule for "never committed" (docs/exports.md, section 1): the broker's
    QUERY_CONSUME_TIME_SPAN delayTime implies a next-message store time before the queue's
    oldest retained message (QueueTimeSpan.delay_is_bogus: the broker looked up offset -1) AND
    GET_CONSUME_STATS shows
    consumerOffset 0 with lastTimestamp 0 (AdminBrokerProcessor.getConsumeStats turns the -1 of
    queryOffset into 0). Both versions answer so (corpus */never-committed/208_*, 303_*). A
    caught-up queue (lag 0) has time lag 0 even when the broker did not report it.
    """
    committed: bool | None = True if (w.consumer_offset > 0 or w.last_timestamp > 0) else None
    if span is None:
        if w.consumer_offset >= w.broker_offset:
            return 0, None, committed
        return None, NOT_REPORTED, committed
    if span.delay_is_bogus(now):
        if w.consumer_offset == 0 and w.last_timestamp == 0:
            return None, NEVER_COMMITTED, False
        return None, NO_STORE_TIME, committed
    if w.consumer_offset < w.broker_offset:
        committed = True  # the broker found an offset: with -1 the span would be bogus
    return span.delay_time, None, committed


@dataclass
class GroupProgress:
    group: str
    capture_ts: int
    cluster: str | None
    queues: list[QueueProgress]
    members: GroupMembers | None
    failures: list[BrokerFailure]
    # the brokers' GET_CONSUME_STATS consumeTps summed: messages they handed the group per
    # second over the last minute (BrokerStatsManager.tpsGroupGetNums; mqadmin's "Consume TPS";
    # pulled into the clients' caches or popped, not necessarily processed); None when a
    # broker did not answer (a partial sum is not the group's rate)
    consume_tps: float | None = 0.0
    # brokers whose GET_CONSUME_STATS failed: their queues (and lag) are not in ``queues``;
    # per topic: the failed brokers the topic's route names (all of them when no route known)
    not_included: list[str] = field(default_factory=list)
    not_included_by_topic: dict[str, list[str]] = field(default_factory=dict)
    # issue 18 items 2, 9, 10: produce TPS per topic (sum of the brokers' topicPutTps; None
    # when a broker does not report it: 4.x, or did not answer) and the clients' consumeOKTPS
    # per topic (None without running info): each client's statusTable entry counts what THAT
    # client processed OK over the last minute (ConsumerStatsManager, keyed topic@group, fed by
    # ConsumeMessage{Concurrently,Orderly,PopConcurrently}Service.processConsumeResult), so
    # the group's rate is their sum, pop clients included; whether running info was asked; the
    # group consumes with pop; the %DLQ% topic's queues (None: not asked or unknown)
    produce_tps: dict[str, float | None] = field(default_factory=dict)
    client_tps: dict[str, float | None] = field(default_factory=dict)
    running_info: bool = True
    pop: bool = False
    dlq: list[DlqQueue] | None = None
    dlq_asked: bool = False
    # issue 25 item 3: topics whose queues may be missing (their route could not be read)
    uncovered: dict[str, str] = field(default_factory=dict)
    # issue 25 item 4b: pop groups' inflight per (topic, broker), the clients' waitAckCount
    # summed (a 5.x pop client keys it per broker, queue id -1); None: not every client answered
    pop_inflight: dict[tuple[str, str], int] | None = None
    # members whose GET_CONSUMER_RUNNING_INFO did not answer (:func:`unanswered_members`)
    unanswered: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """Every broker's offsets were read and every topic's route is known."""
        return not self.not_included and not self.uncovered

    @property
    def broadcasting(self) -> bool:
        """The online group consumes BROADCASTING (its member list says so)."""
        conn = self.members.connection if self.members is not None else None
        return conn is not None and conn.message_model == "BROADCASTING"

    @property
    def lag_unknown(self) -> str | None:
        """Why the group's lag is unknown whatever was read (``broadcasting``), else None."""
        return BROADCASTING_LAG if self.broadcasting else None

    def topics(self) -> list[str]:
        return sorted({q.mq.topic for q in self.queues})


@dataclass(frozen=True, slots=True)
class DlqQueue:
    """One queue of ``%DLQ%<group>``: messages that exhausted their retries (maxReconsumeTimes)
    and are kept, not consumed by the group; ``max - min`` of them are still stored."""

    mq: MessageQueue
    min_offset: int
    max_offset: int
    last_update_timestamp: int

    @property
    def messages(self) -> int:
        return max(0, self.max_offset - self.min_offset)


@dataclass
class CaptureCache:
    """Per-capture cache shared by all groups of one snapshot (topic stats per broker)."""

    topic_stats: dict[tuple[str, str], Any] = field(default_factory=dict)
    # the never-committed rule's broker versions and offset tables (mqctl.reset.probe)
    offset_tables: Any = field(default_factory=lambda: _offset_table_cache())
    min_offsets: dict[MessageQueue, int] = field(default_factory=dict)  # GET_MIN_OFFSET
    put_tps: dict[tuple[str, str], float | None] = field(default_factory=dict)  # topicPutTps
    locks: dict[tuple[str, str], asyncio.Lock] = field(default_factory=dict)


def _offset_table_cache() -> Any:
    from mqctl.reset.probe import OffsetTableCache

    return OffsetTableCache()


async def _cover_routes(admin: Admin, group: str, topics: list[str],
                        offsets: dict[MessageQueue, OffsetWrapper],
                        pairs: set[tuple[str, str]], brokers: list[BrokerData],
                        stats_failed: list[BrokerFailure], failures: list[BrokerFailure],
                        tps: list[float] | None = None) -> dict[str, str]:
    """Every readable queue of every topic the group consumes or has offsets for, on every
    broker of the topic's route (issue 25 item 3). Asked without a topic, a broker lists only
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
                           dlq: bool = False, produce_tps: bool = False) -> GroupProgress:
    """Everything ``group progress`` and ``snapshot`` need, for one group.

    ``running=False``: no member list at all; ``running_info=False`` (``--no-clients``): the
    member list but no GET_CONSUMER_RUNNING_INFO (owners, locks, client caches unknown).
    ``dlq``: also the ``%DLQ%<group>`` topic's queues (route + GET_TOPIC_STATS_INFO).
    ``produce_tps``: where a broker's topic stats carry no ``topicPutTps`` (before 5.3), ask
    its TOPIC_PUT_NUMS stats (VIEW_BROKER_STATS_DATA) for the topic's produce TPS."""
    ts = now_ms()
    members = (await capture_members(admin, group, running=running_info, every_broker=False,
                                     must_read=False) if running else None)
    failures: list[BrokerFailure] = list(members.failures) if members else []
    if topic:
        route = await admin.topic_route(topic)
        brokers = list(route.brokers)
    else:
        brokers = list(members.brokers) if members else await admin.group_brokers(group)
        # offline groups may have offsets anywhere: ask every broker of the cluster
        if members is None or not members.online_state:
            info = await admin.cluster_info()
            names = {b.broker_name for b in brokers}
            brokers = brokers + [b for n, b in sorted(info.brokers.items()) if n not in names]
    cluster = next((b.cluster for b in brokers if b.cluster), None)

    async def stats_of(b: BrokerData) -> tuple[BrokerData, Any]:
        addr = require_addr(b)
        return b, await admin.consume_stats(group, addr, topic)

    stats = await fan_out(brokers, stats_of, concurrency=admin.concurrency)
    stats_failed = [BrokerFailure(o.item.broker_name, o.item.master_addr, o.error)
                    for o in stats if o.error is not None]
    if stats and len(stats_failed) == len(stats):
        # no broker answered GET_CONSUME_STATS: nothing was read, which is not "lag 0"
        raise NothingRead(f"GET_CONSUME_STATS for group {group}",
                          dedupe([*failures, *stats_failed]))
    offsets: dict[MessageQueue, OffsetWrapper] = {}
    tps = 0.0
    pairs: set[tuple[str, str]] = set()  # (broker, topic) seen
    for o in stats:
        if not o.ok:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.broker_name, o.item.master_addr, o.error))
            continue
        assert o.value is not None
        _, cs = o.value
        tps += cs.consume_tps
        for mq, w in cs.offsets.items():
            # a broker answers for its own queues; keep only those of this broker
            if mq.broker_name == o.item.broker_name or len(brokers) == 1:
                offsets[mq] = w
                pairs.add((o.item.broker_name, mq.topic))
    conn0 = members.connection if members is not None else None
    # a BROADCASTING group keeps its offsets in the clients: its queues are listed (the
    # brokers' offsets, bounds and rates are real) with the group's offset, lag and time lag
    # unknown; a broker's offsets of the group (left from a CLUSTERING past) are not its
    # progress
    broadcast = conn0 is not None and conn0.message_model == "BROADCASTING"
    wanted = {topic} if topic else ({mq.topic for mq in offsets}
                                     | (set(conn0.subscriptions) if conn0 else set()))
    more_tps: list[float] = []
    uncovered = await _cover_routes(admin, group, sorted(wanted), offsets, pairs, brokers,
                                    stats_failed, failures, more_tps)
    tps += sum(more_tps)
    baddr = {b.broker_name: broker_addr(b) for b in brokers}
    # which queues have no committed offset (``none``): the reset plans' rule
    from mqctl.reset.probe import committed_offsets

    zeros = [mq for mq, w in offsets.items() if w.consumer_offset == 0 and not broadcast]
    known_committed: dict[MessageQueue, bool] = {}
    if zeros:
        got = await committed_offsets(admin, group, zeros, {mq: 0 for mq in zeros}, baddr,
                                      cache=cache.offset_tables if cache is not None else None)
        for name, exc in sorted(got.failed.items()):
            failures.append(BrokerFailure(name, baddr.get(name), exc))
        for name, (exc, _zs) in sorted(got.unchecked.items()):
            failures.append(BrokerFailure(name, baddr.get(name), exc))
        unsure = {m for _e, zs in got.unchecked.values() for m in zs}
        known_committed = {mq: v is not None for mq, v in got.offsets.items()
                           if mq not in unsure}

    async def spans_of(pair: tuple[str, str]) -> list[QueueTimeSpan]:
        return await admin.time_spans(pair[1], group, baddr[pair[0]] or "")

    put_tps: dict[tuple[str, str], float | None] = {}

    async def fetch_tstats(tp: str, addr: str) -> tuple[Any, float | None]:
        # an Admin stand-in without topic_stats_tps (tests' corpus replays): no produce TPS
        fn = getattr(admin, "topic_stats_tps", None)
        if fn is None:
            return await admin.topic_stats(tp, addr), None
        return await fn(tp, addr)  # type: ignore[no-any-return]

    async def tstats_of(pair: tuple[str, str]) -> dict[MessageQueue, TopicOffset]:
        addr = baddr[pair[0]] or ""
        key = (addr, pair[1])
        if cache is not None and key in cache.topic_stats:
            put_tps[pair] = cache.put_tps.get(key)
            return cache.topic_stats[key]  # type: ignore[no-any-return]
        lock = cache.locks.setdefault(key, asyncio.Lock()) if cache is not None else None
        if lock is not None:
            async with lock:
                if key in cache.topic_stats:  # type: ignore[union-attr]
                    put_tps[pair] = cache.put_tps.get(key)  # type: ignore[union-attr]
                    return cache.topic_stats[key]  # type: ignore[union-attr, no-any-return]
                st, tps = await fetch_tstats(pair[1], addr)
                cache.topic_stats[key] = st.offsets  # type: ignore[union-attr]
                cache.put_tps[key] = tps  # type: ignore[union-attr]
                put_tps[pair] = tps
                return st.offsets
        st, tps = await fetch_tstats(pair[1], addr)
        put_tps[pair] = tps
        return st.offsets

    plist = sorted(pairs)
    # no time span of a broadcasting group: the broker measures it from an offset that is not
    # the group's
    span_out = await fan_out([] if broadcast else plist, spans_of,
                             concurrency=admin.concurrency)
    delays: dict[MessageQueue, QueueTimeSpan] = {}
    span_ok: set[tuple[str, str]] = set()
    for so in span_out:
        if so.ok:
            span_ok.add(so.item)
            for s in so.value or []:
                delays[s.mq] = s
        else:
            assert so.error is not None
            failures.append(BrokerFailure(so.item[0], baddr.get(so.item[0]), so.error))
    tstats: dict[MessageQueue, TopicOffset] = {}
    tstats_ok: set[tuple[str, str]] = set()
    if topic_stats:
        for to in await fan_out(plist, tstats_of, concurrency=admin.concurrency):
            if to.ok:
                tstats_ok.add(to.item)
                tstats.update(to.value or {})
            else:
                assert to.error is not None
                failures.append(BrokerFailure(to.item[0], baddr.get(to.item[0]), to.error))

    owners: dict[MessageQueue, list[tuple[str, Any]]] = defaultdict(list)
    pop_ack: dict[MessageQueue, int] = defaultdict(int)
    conn = members.connection if members is not None else None
    pop = conn is not None and conn.consume_type == "CONSUME_POP"
    pop_complete = False  # every client answered its running info
    if members is not None:
        pop = pop or any(cv.running is not None and (cv.running.consume_type == "CONSUME_POP"
                                                      or bool(cv.running.mq_pop_table))
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

    # queues the topic stats left out (4.x GET_TOPIC_STATS_INFO iterates writeQueueNums,
    # GET_CONSUME_STATS readQueueNums: corpus 4.9.3/read-gt-write/202_*, 208_*): one
    # GET_MIN_OFFSET each, so every readable queue has its bounds
    mins: dict[MessageQueue, int] = {}
    if topic_stats:
        # only where the broker answered the topic stats without the queue: a broker that
        # failed is reported once, not asked again per queue
        missing = [mq for mq in sorted(offsets) if mq not in tstats
                   and (mq.broker_name, mq.topic) in tstats_ok and baddr.get(mq.broker_name)]

        async def min_of(mq: MessageQueue) -> int:
            if cache is not None and mq in cache.min_offsets:
                return cache.min_offsets[mq]
            v = await admin.min_offset(mq, baddr[mq.broker_name] or "")
            if cache is not None:
                cache.min_offsets[mq] = v
            return v

        for mo in await fan_out(missing, min_of, concurrency=admin.concurrency):
            if mo.ok and mo.value is not None:
                mins[mo.item] = mo.value
            else:
                assert mo.error is not None
                failures.append(BrokerFailure(mo.item.broker_name, baddr.get(mo.item.broker_name),
                                              mo.error))

    # issue 25 item 4b: a 5.3.3 pop client keys its pop table per broker (queue id -1:
    # QueryAssignmentProcessor.allocate4Pop with popShareQueueNum 0, the default, assigns
    # MessageQueue(topic, broker, -1)); per queue only where it keys real queues
    pop_pairs: dict[tuple[str, str], int] = defaultdict(int)
    per_broker: set[tuple[str, str]] = set()
    for pmq, n in pop_ack.items():
        pop_pairs[(pmq.topic, pmq.broker_name)] += n
        if pmq.queue_id < 0:
            per_broker.add((pmq.topic, pmq.broker_name))
    # issue 25 item 4c: known that no client holds a queue: the group has no member, or every
    # member answered its running info and none lists the queue
    holders_known = members is not None and (members.online_state is False or (
        running_info and bool(members.clients)
        and all(cv.running is not None for cv in members.clients.values())))
    unanswered = (unanswered_members(members) if members is not None and running_info
                  else [])
    queues = []
    for mq in sorted(offsets):
        w = offsets[mq]
        span = delays.get(mq)
        t = tstats.get(mq)
        own = sorted(owners.get(mq, []), key=lambda x: java_string_key(x[0]))
        first = own[0][1] if own else None
        delay, reason, committed = classify_span(w, span, ts)
        if reason == NOT_REPORTED and (mq.broker_name, mq.topic) not in span_ok:
            reason = SPAN_FAILED
        # the group's %RETRY% topic is not the clients' (only CLUSTERING clients subscribe to
        # it, DefaultMQPushConsumerImpl.copySubscription): its broker offsets are its own
        in_clients = broadcast and not mq.topic.startswith(RETRY_PREFIX)
        if in_clients:
            delay, reason, committed = None, BROADCASTING_LAG, None
            own, first = [], None  # every client reads every queue: no one owner
        if mq in known_committed:  # the rule's answer wins over the time span's hint
            committed = known_committed[mq]
            if not committed and w.consumer_offset < w.broker_offset:
                delay, reason = None, NEVER_COMMITTED
            elif committed and reason == NEVER_COMMITTED:
                reason = NO_STORE_TIME  # committed 0, below the oldest message held
        queues.append(QueueProgress(
            mq=mq, broker_offset=w.broker_offset, consumer_offset=w.consumer_offset,
            pull_offset=None if in_clients else w.pull_offset,
            last_timestamp=0 if in_clients else w.last_timestamp,
            min_offset=t.min_offset if t else mins.get(mq),
            max_timestamp=(t.last_update_timestamp or None) if t else (
                span.max_timestamp or None if span else None),
            delay_ms=delay, delay_reason=reason, committed=committed,
            owners=tuple(c for c, _ in own),
            locked=first.locked if first is not None else None,
            last_lock_ts=(first.last_lock_timestamp or None) if first is not None else None,
            cached_msg_count=first.cached_msg_count if first is not None else None,
            cached_msg_max_offset=(first.cached_msg_max_offset if first is not None
                                   and first.cached_msg_count > 0 else None),
            min_offset_source=("topic-stats" if t else "min-offset" if mq in mins else None),
            no_holder=holders_known and not pop and not own and not in_clients,
            pop=pop, pop_wait_ack=(pop_ack.get(mq, 0) if pop and pop_complete
                                   and (mq.topic, mq.broker_name) not in per_broker else None),
            offsets_in_clients=in_clients,
            owner_unknown=not pop and not own and not in_clients and bool(unanswered)))
    unread = sorted({f.broker for f in stats_failed})
    by_topic: dict[str, list[str]] = {}
    for tp in sorted({q.mq.topic for q in queues} | ({topic} if topic else set())):
        if not unread:
            break
        rt = admin.cached_route(tp)
        in_route = {b.broker_name for b in rt.brokers} if rt is not None else None
        by_topic[tp] = [b for b in unread if in_route is None or b in in_route]
    if topic_stats and produce_tps:
        fetch_put = getattr(admin, "topic_put_tps", None)  # absent on tests' corpus replays
        ask = [pr for pr in plist if pr in tstats_ok and put_tps.get(pr) is None
               and baddr.get(pr[0]) and not pr[1].startswith(RETRY_PREFIX)]
        if fetch_put is not None and ask:
            for po in await fan_out(ask, lambda pr: fetch_put(pr[1], baddr[pr[0]] or ""),
                                    concurrency=admin.concurrency):
                if po.ok:
                    put_tps[po.item] = po.value
                else:
                    assert po.error is not None
                    failures.append(BrokerFailure(po.item[0], baddr.get(po.item[0]), po.error))
    produce: dict[str, float | None] = {}
    if topic_stats:
        for (b, tp) in plist:
            v = put_tps.get((b, tp)) if (b, tp) in tstats_ok else None
            produce[tp] = None if v is None or (tp in produce and produce[tp] is None) else (
                (produce.get(tp) or 0.0) + v)
        for tp, bs in by_topic.items():
            if bs and tp in produce:  # a broker of the topic did not answer: no partial sum
                produce[tp] = None
    client_tps: dict[str, float | None] = {}
    if members is not None and running_info and members.clients:
        infos = [cv.running for cv in members.clients.values()]
        for tp in sorted({q.mq.topic for q in queues}):
            if any(i is None for i in infos):
                client_tps[tp] = None
                continue
            client_tps[tp] = sum(_ok_tps(i.status_table.get(tp)) for i in infos
                                 if i is not None)
    dlq_rows: list[DlqQueue] | None = None
    if dlq:
        dlq_rows = await _dlq_queues(admin, group, failures)
    return GroupProgress(group, ts, cluster, queues, members, dedupe(failures),
                         None if stats_failed else tps,
                         unread, {tp: bs for tp, bs in by_topic.items() if bs},
                         produce_tps=produce, client_tps=client_tps, running_info=running_info,
                         pop=pop, dlq=dlq_rows, dlq_asked=dlq, uncovered=uncovered,
                         pop_inflight=dict(pop_pairs) if pop and pop_complete else None,
                         unanswered=unanswered)


def _ok_tps(status: Any) -> float:
    """ConsumeStatus.consumeOKTPS of a client's statusTable entry (0 when absent)."""
    v = (status or {}).get("consumeOKTPS") if isinstance(status, dict) else None
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else 0.0


async def _dlq_queues(admin: Admin, group: str,
                      failures: list[BrokerFailure]) -> list[DlqQueue] | None:
    """``%DLQ%<group>``'s queues on every broker of its route: [] when the topic does not
    exist (brokers create it with the first dead letter); None when a broker did not answer."""
    topic = DLQ_PREFIX + group
    try:
        route = await admin.topic_route(topic)
    except NotFoundError:
        return []
    except MqctlError as exc:
        failures.append(BrokerFailure("namesrv", None, exc))
        return None

    async def one(b: BrokerData) -> list[DlqQueue]:
        addr = require_addr(b)
        st = await admin.topic_stats(topic, addr)
        return [DlqQueue(mq, o.min_offset, o.max_offset, o.last_update_timestamp)
                for mq, o in sorted(st.offsets.items())]

    rows: list[DlqQueue] = []
    unknown = False
    for o in await fan_out(list(route.brokers), one, concurrency=admin.concurrency):
        if o.ok:
            rows.extend(o.value or [])
        else:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.broker_name, o.item.master_addr, o.error))
            unknown = True
    return None if unknown else rows


# TopicValidator.SYSTEM_TOPIC_SET (4.9.3 and 5.3.3; CHECKPOINT_TOPIC from 5.x) and topics
# brokers register with addSystemTopic (TopicConfigManager: trace topic, SELF_TEST_TOPIC, ...)
SYSTEM_TOPICS = {"TBW102", "SCHEDULE_TOPIC_XXXX", "BenchmarkTest", "OFFSET_MOVED_EVENT",
                 "SELF_TEST_TOPIC", "RMQ_SYS_TRANS_HALF_TOPIC", "RMQ_SYS_TRACE_TOPIC",
                 "RMQ_SYS_TRANS_OP_HALF_TOPIC", "TRANS_CHECK_MAX_TIME_TOPIC",
                 "CHECKPOINT_TOPIC", "DefaultHeartBeatSyncerTopic", "rocketmq-controller"}
REPLY_TOPIC_POSTFIX = "REPLY_TOPIC"  # MixAll.REPLY_TOPIC_POSTFIX


def is_system_topic(topic: str, cluster_names: set[str], broker_names: set[str]) -> str:
    """Classify a topic name as TopicValidator.isSystemTopic does once a broker started:
    TopicConfigManager calls addSystemTopic for the cluster name, the broker name and
    ``<cluster>_REPLY_TOPIC`` (4.9.3 and 5.3.3); ``rmq_sys_`` is SYSTEM_TOPIC_PREFIX."""
    if topic in cluster_names:
        return "cluster"
    if topic in broker_names:
        return "broker"
    if topic.startswith(RETRY_PREFIX):
        return "retry"
    if topic.startswith(DLQ_PREFIX):
        return "dlq"
    if topic.startswith(("rmq_sys_", "RMQ_SYS_", "%LMQ%", "%SYS%")) or topic in SYSTEM_TOPICS \
            or any(topic == f"{c}_{REPLY_TOPIC_POSTFIX}" for c in cluster_names):
        return "system"
    return "normal"


# --kind system lists every system topic, the cluster- and broker-name ones included
KIND_GROUPS = {"system": {"system", "cluster", "broker"}}


def topic_queue_info(tables: Mapping[str, Mapping[str, Mapping[str, Any]]]
                     ) -> dict[str, dict[str, Any]]:
    """Per topic, from each master's GET_ALL_TOPIC_CONFIG table (``{broker: {topic:
    TopicConfig}}``): read and write queues summed over the brokers that have it, those
    brokers, and the message type. A 5.x TopicConfig carries ``attributes``; its type is the
    ``message.type`` attribute (set with ``mqadmin updateTopic -a +message.type=FIFO``), NORMAL
    when absent (TopicConfig.getTopicMessageType, TopicAttributes.TOPIC_MESSAGE_TYPE_ATTRIBUTE
    in apache/rocketmq). 4.x has no message types and no ``attributes``: type None. Brokers
    that disagree give ``FIFO/NORMAL``."""
    out: dict[str, dict[str, Any]] = {}
    for broker in sorted(tables):
        for topic, conf in tables[broker].items():
            d = out.setdefault(topic, {"read_queues": 0, "write_queues": 0, "brokers": [],
                                       "types": set()})
            d["read_queues"] += _int_or_zero(conf.get("readQueueNums"))
            d["write_queues"] += _int_or_zero(conf.get("writeQueueNums"))
            d["brokers"].append(broker)
            attrs = conf.get("attributes")
            if isinstance(attrs, dict):
                mt = attrs.get("message.type") or attrs.get("+message.type") or "NORMAL"
                d["types"].add(str(mt).upper())
    for d in out.values():
        types = d.pop("types")
        d["message_type"] = "/".join(sorted(types)) or None
    return out


def _int_or_zero(v: Any) -> int:
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def topic_rows(names: list[str], cluster_names: set[str], broker_names: set[str], kind: str,
               match: str | None = None,
               info: Mapping[str, Mapping[str, Any]] | None = None) -> list[dict[str, Any]]:
    """Rows of ``mqctl topics``: ``kind`` all lists every name the name server returned
    (GET_ALL_TOPIC_LIST_FROM_NAMESERVER), as mqadmin topicList does. ``match`` is a
    case-insensitive substring. ``info`` (:func:`topic_queue_info`) adds the queue counts and
    the message type; a topic no answering broker has gets None (unknown), never 0."""
    rows = []
    needle = match.casefold() if match else None
    for t in names:
        k = is_system_topic(t, cluster_names, broker_names)
        if kind != "all" and k not in KIND_GROUPS.get(kind, {kind}):
            continue
        if needle and needle not in t.casefold():
            continue
        row: dict[str, Any] = {"topic": t, "kind": k}
        if info is not None:
            i = info.get(t)
            row.update({"read_queues": i["read_queues"] if i else None,
                        "write_queues": i["write_queues"] if i else None,
                        "brokers": list(i["brokers"]) if i else [],
                        "message_type": i["message_type"] if i else None})
        rows.append(row)
    return rows


def route_rows(route: TopicRoute) -> list[dict[str, Any]]:
    from mqctl.models import decode_perm

    qd = {q.broker_name: q for q in route.queues}
    rows = []
    for b in route.brokers:
        q = qd.get(b.broker_name)
        for bid, addr in sorted(b.addrs.items()):
            rows.append({"cluster": b.cluster, "broker": b.broker_name, "broker_id": bid,
                         "role": "master" if bid == 0 else "slave", "addr": addr,
                         "read_queues": q.read_queue_nums if q else 0,
                         "write_queues": q.write_queue_nums if q else 0,
                         "perm": q.perm if q else None,
                         "perm_flags": decode_perm(q.perm) if q else ""})
    return rows


__all__ = ["CaptureCache", "ClientView", "DELAY_REASONS", "Finding", "GroupMembers",
           "GroupProgress", "QueueProgress", "capture_members", "capture_progress",
           "check_members", "classify_span", "is_system_topic", "route_rows", "topic_rows",
           "unanswered_members",
           "MqctlError", "NothingRead"]


async def group_exists(admin: Admin, group: str) -> bool | None:
    """Whether the cluster knows ``group``: its ``%RETRY%`` topic has a route, or a master
    keeps its subscription group (brokers create both when the group's first consumer
    registers, autoCreateSubscriptionGroup). ``None`` when it cannot tell (the name server
    or a master did not answer). Read-only."""
    try:
        if await admin.group_route(group) is not None:
            return True
        info = await admin.cluster_info()
    except MqctlError:
        return None
    masters = [b.master_addr for b in info.brokers.values() if b.master_addr]
    outs = await fan_out(masters, admin.subscription_groups, concurrency=admin.concurrency)
    if any(o.ok and group in (o.value or []) for o in outs):
        return True
    return None if any(not o.ok for o in outs) or not masters else False


def read_nothing_of(p: GroupProgress) -> bool:
    """The capture shows nothing of the group itself: no online member, no failure, and no
    queue with a committed offset (or one that may have it). That is how a group no broker
    knows reads, with a topic too: a broker answers GET_CONSUME_STATS with a topic for any
    group name, with 0 everywhere (corpus
    other-requests/208_getConsumeStats_NO_SUCH_GROUP), so its queues show up as never
    committed. The views then ask :func:`require_group` (issue 26 item 6: the same rule with
    and without ``-t``)."""
    online = p.members is not None and p.members.online_state
    return not p.failures and not online and all(q.committed is False for q in p.queues)


async def require_group(admin: Admin, group: str) -> None:
    """For a command that found nothing: a usage error (exit 2) when no broker knows the
    group; nothing when it is known or when that cannot be told."""
    if await group_exists(admin, group) is False:
        raise NotFoundError(f"group {group!r} is not known to any broker (no member, no "
                            "committed offset, no subscription group)",
                            hint="check the name (it is case-sensitive); brokers create a "
                            "group when its first consumer starts")
