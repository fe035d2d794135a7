"""Topic views: ``mqctl topic status`` and ``mqctl topic consumers`` (read-only).

``topic status`` is mqadmin ``topicStatus`` (tools/.../command/topic/TopicStatusSubCommand):
GET_TOPIC_STATS_INFO (202) on each broker of the route, whose ``TopicStatsTable`` maps every
queue to a ``TopicOffset`` {minOffset, maxOffset, lastUpdateTimestamp} (remoting/.../admin/
TopicOffset.java; ``lastUpdateTimestamp`` is the store time of the queue's last message,
``AdminBrokerProcessor.getTopicStatsInfo``: ``getMessageStoreTimeStamp(topic, i, max - 1)``,
0 for an empty queue), plus ``topicPutTps`` from 5.3.x. Where a 4.9.3 broker leaves out the
queues beyond the write queue number (corpus 4.9.3/read-gt-write/202_*: only the write
queues), their min and max offsets are read with GET_MIN_OFFSET / GET_MAX_OFFSET and their
last update is unknown, so that no readable queue is hidden (mqadmin hides them).

``topic consumers`` is QUERY_TOPIC_CONSUME_BY_WHO (300) on each broker
(``ConsumerManager.queryTopicConsumeByWho``: groups online with a subscription to the topic,
plus ``ConsumerOffsetManager.whichGroupByTopic``: groups with committed offsets on it), then
per group GET_CONSUME_STATS (208) with the topic on each broker for the lag, and
GET_CONSUMER_CONNECTION_LIST (203) for the members.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure, NothingRead
from mqctl.errors import MqctlError
from mqctl.models import MessageQueue, TopicRoute, is_system_group
from mqctl.remoting.client import fan_out
from mqctl.views.offsets import committed_offsets

if TYPE_CHECKING:
    from mqctl.admin import Admin


@dataclass(frozen=True, slots=True)
class QueueStatus:
    mq: MessageQueue
    min_offset: int
    max_offset: int
    last_update_ts: int | None  # None: unknown (see ``unknown``)
    readable: bool
    writable: bool
    unknown: str | None = None  # "empty" (no message stored) | "not-reported"

    @property
    def messages(self) -> int:
        return max(0, self.max_offset - self.min_offset)


@dataclass
class _BrokerStats:
    rows: list[QueueStatus]
    put_tps: float | None


@dataclass
class TopicStatus:
    topic: str
    queues: list[QueueStatus]
    put_tps: float | None  # None when no broker reports topicPutTps (before 5.3)
    failures: list[BrokerFailure] = field(default_factory=list)

    @property
    def not_included(self) -> list[str]:
        return sorted({f.broker for f in self.failures})


async def capture_topic_status(admin: Admin, topic: str) -> TopicStatus:
    route = await admin.topic_route(topic, cached=False)
    qdata = {q.broker_name: q for q in route.queues}

    async def per_broker(addr: str) -> _BrokerStats:
        stats, tps = await admin.topic_stats_tps(topic, addr)
        rows: list[QueueStatus] = []
        for mq, off in sorted(stats.offsets.items()):
            qd = qdata.get(mq.broker_name)
            ts = off.last_update_timestamp
            # 0 (or the store's -1) for no last message: an empty queue, or one whose last
            # message the store no longer holds
            why = (None if ts > 0 else "empty" if off.max_offset <= off.min_offset
                   else "not-reported")
            rows.append(QueueStatus(mq, off.min_offset, off.max_offset,
                                    ts if ts > 0 else None,
                                    bool(qd and mq.queue_id < qd.read_queue_nums),
                                    bool(qd and mq.queue_id < qd.write_queue_nums), why))
        return _BrokerStats(rows, tps)

    got = await admin._per_broker(route, per_broker)
    failures = [v for v in got.values() if isinstance(v, BrokerFailure)]
    if len(failures) == len(got) and got:
        raise NothingRead(f"topic stats of {topic}", failures)
    queues: list[QueueStatus] = []
    tps_values: list[float] = []
    missing: list[tuple[MessageQueue, str]] = []
    for b in route.brokers:
        v = got.get(b.broker_name)
        if v is None or isinstance(v, BrokerFailure):
            continue
        queues.extend(v.rows)
        if v.put_tps is not None:
            tps_values.append(v.put_tps)
        seen = {q.mq.queue_id for q in v.rows if q.mq.broker_name == b.broker_name}
        qd = qdata.get(b.broker_name)
        addr = b.master_addr or b.select_addr()
        if qd is not None and addr:
            for q in range(max(qd.read_queue_nums, qd.write_queue_nums)):
                if q not in seen:
                    missing.append((MessageQueue(topic, b.broker_name, q), addr))
    if missing:
        queues.extend(await _fill(admin, missing, qdata, failures))
    queues.sort(key=lambda q: q.mq)
    return TopicStatus(topic, queues, sum(tps_values) if tps_values else None, failures)


async def _fill(admin: Admin, missing: list[tuple[MessageQueue, str]], qdata: dict[str, Any],
                failures: list[BrokerFailure]) -> list[QueueStatus]:
    """Queues a broker's stats left out (4.9.3: beyond the write queues): min and max offsets
    from GET_MIN_OFFSET / GET_MAX_OFFSET, last update unknown."""
    async def one(t: tuple[MessageQueue, str]) -> QueueStatus:
        mq, addr = t
        mn, mx = await admin.min_offset(mq, addr), await admin.max_offset(mq, addr)
        qd = qdata[mq.broker_name]
        return QueueStatus(mq, mn, mx, None, mq.queue_id < qd.read_queue_nums,
                           mq.queue_id < qd.write_queue_nums,
                           "not-reported" if mx > mn else "empty")

    out = []
    for o in await fan_out(missing, one, concurrency=admin.concurrency):
        if o.ok:
            out.append(o.value)
        else:
            assert o.error is not None
            failures.append(BrokerFailure(o.item[0].broker_name, o.item[1], o.error))
    return out  # type: ignore[return-value]


# ------------------------------------------------------------------------------ consumers

@dataclass
class TopicConsumer:
    group: str
    listed_by: list[str]  # brokers whose QUERY_TOPIC_CONSUME_BY_WHO named the group
    lag: int | None  # total over the brokers read; None when none was
    queues: int
    lag_not_included: list[str]  # brokers whose consume stats could not be read
    consume_tps: float | None
    online: bool | None  # None: unknown (the connection list could not be read)
    members: int | None
    message_model: str | None
    consume_type: str | None
    expression: str | None  # the group's subscription to this topic, when online
    system: bool
    # why ``lag`` is None: "not-read" (no broker's consume stats), "no-queue" (the brokers
    # answered and list no queue of the topic for the group), "broadcasting" (each client
    # keeps its offsets in a local file, LocalFileOffsetStore: the brokers' numbers are not
    # the group's progress)
    lag_unknown: str | None = None


@dataclass(frozen=True, slots=True)
class DroppedEntry:
    """A name QUERY_TOPIC_CONSUME_BY_WHO listed that is not a group."""

    name: str
    listed_by: list[str]
    reason: str


@dataclass
class TopicConsumers:
    topic: str
    groups: list[TopicConsumer]
    failures: list[BrokerFailure] = field(default_factory=list)  # QUERY_TOPIC_CONSUME_BY_WHO
    hidden_system: list[str] = field(default_factory=list)
    dropped: list[DroppedEntry] = field(default_factory=list)
    # names kept although whether they are groups could not be told (a broker's subscription
    # group table did not answer and they hold no committed offset): name -> why
    unverified: dict[str, str] = field(default_factory=dict)
    config_failures: list[BrokerFailure] = field(default_factory=list)

    @property
    def not_included(self) -> list[str]:
        return sorted({f.broker for f in self.failures})


async def capture_topic_consumers(admin: Admin, topic: str, *, include_system: bool = False
                                  ) -> TopicConsumers:
    """The groups the route's brokers name as consumers of ``topic``
    (QUERY_TOPIC_CONSUME_BY_WHO), each proven a group (``_GroupProof``) and read: lag, TPS,
    members, subscription. RocketMQ's own groups are hidden unless ``include_system``."""
    route = await admin.topic_route(topic, cached=False)
    who = await admin._per_broker(route, lambda addr: admin.topics_consumed_by(topic, addr))
    failures = [v for v in who.values() if isinstance(v, BrokerFailure)]
    if who and len(failures) == len(who):
        raise NothingRead(f"the groups of {topic}", failures)
    listed: dict[str, list[str]] = {}
    for b, v in sorted(who.items()):
        if isinstance(v, list):
            for g in v:
                listed.setdefault(g, []).append(b)
    hidden = sorted(g for g in listed if is_system_group(g)) if not include_system else []
    groups = sorted(g for g in listed if g not in hidden)
    proof = _GroupProof(admin, route, topic)
    unverified: dict[str, str] = {}

    async def one(group: str) -> TopicConsumer | DroppedEntry:
        stats = await admin._per_broker(
            route, lambda addr: admin.consume_stats(group, addr, topic))
        verdict, reason = await proof.is_group(group, stats)
        if verdict is False:
            return DroppedEntry(group, listed[group], reason)
        if verdict is None:
            unverified[group] = reason
        return await _topic_consumer(admin, route, topic, group, listed[group], stats)

    out: list[TopicConsumer] = []
    dropped: list[DroppedEntry] = []
    for o in await fan_out(groups, one, concurrency=max(1, admin.concurrency // 4)):
        if o.ok:
            (dropped if isinstance(o.value, DroppedEntry) else out).append(
                o.value)  # type: ignore[arg-type]
        else:
            raise o.error  # type: ignore[misc]
    # the subscription group tables that did not answer matter where a name stayed unverified
    config_failed = [v for v in proof.tables.values() if isinstance(v, BrokerFailure)] \
        if unverified else []
    return TopicConsumers(topic, out, failures, hidden, dropped, unverified, config_failed)


class _GroupProof:
    """Whether a name QUERY_TOPIC_CONSUME_BY_WHO listed is a group of ``topic``.

    A name passes on only where it is a group: a subscription group config on a broker, or a
    committed offset on the topic. 5.3.3 also lists the topic's own name: its
    ConsumerManager.registerConsumer / registerConsumerWithoutSub (heartbeat v2) add
    subscriptionData.getTopic() to topicGroupTable instead of the group
    (apache/rocketmq#9352, released in 5.3.3; fixed after it by #9424 and #9444)."""

    def __init__(self, admin: Admin, route: TopicRoute, topic: str):
        self.admin, self.route, self.topic = admin, route, topic
        self.tables: dict[str, list[str] | BrokerFailure] = {}
        self._lock = asyncio.Lock()

    async def configured(self) -> tuple[set[str], list[str]]:
        """The subscription group names of the route's brokers (asked once, when a listed
        name has no committed offset to prove it a group), and the brokers that failed."""
        async with self._lock:
            if not self.tables:
                self.tables.update(await self.admin._per_broker(
                    self.route, self.admin.subscription_groups))
        return ({g for v in self.tables.values() if isinstance(v, list) for g in v},
                sorted(b for b, v in self.tables.items() if isinstance(v, BrokerFailure)))

    async def is_group(self, group: str, stats: dict[str, Any]) -> tuple[bool | None, str]:
        """(True, ""): a committed offset on the topic or a subscription group config;
        (False, why): neither; (None, why): cannot be told. Committed offsets by the
        never-committed rule of mqctl.views.offsets (a 0 is not an offset by itself)."""
        topic = self.topic
        reported = {mq: w.consumer_offset for s in stats.values()
                    if not isinstance(s, BrokerFailure) for mq, w in s.offsets.items()
                    if mq.topic == topic}
        if any(v > 0 for v in reported.values()):
            return True, ""
        names, table_failed = await self.configured()
        if group in names:
            return True, ""
        got = await committed_offsets(self.admin, group, reported, reported,
                                      self.route.master_addrs())
        unsure = {mq for _e, zs in got.unchecked.values() for mq in zs}
        if any(v is not None for mq, v in got.offsets.items() if mq not in unsure):
            return True, ""
        unread = sorted({*table_failed, *got.failed, *got.unchecked,
                         *(b for b, s in stats.items() if isinstance(s, BrokerFailure))})
        if unread:
            return None, (f"no subscription group config of that name and no committed offset "
                          f"on {topic} on the brokers that answered ({', '.join(unread)} did "
                          "not)")
        return False, ("not a group: no broker has a subscription group config of that name "
                       f"and it has no committed offset on {topic}"
                       + (" (5.3.3 brokers list the topic's own name: ConsumerManager."
                          "registerConsumer adds the topic, not the group, to topicGroupTable; "
                          "apache/rocketmq#9352)" if group == topic else ""))


async def _topic_consumer(admin: Admin, route: TopicRoute, topic: str, group: str,
                          listed_by: list[str], stats: dict[str, Any]) -> TopicConsumer:
    """One group's row: its lag and TPS on ``topic`` over the brokers read (``stats``), and its
    connection list (online, members, model, subscription)."""
    lag = 0
    queues = 0
    tps = 0.0
    read = False
    not_inc = []
    for b, s in sorted(stats.items()):
        if isinstance(s, BrokerFailure):
            not_inc.append(b)
            continue
        read = True
        tps += s.consume_tps
        for mq, w in s.offsets.items():
            if mq.topic == topic:
                queues += 1
                lag += max(0, w.diff)
    conn = None
    online: bool | None
    try:
        conn = await admin.consumer_connection(group, route)
        online = conn is not None
    except MqctlError:  # BrokerError, ConnectError, a body that cannot be decoded
        online = None
    sub = conn.subscriptions.get(topic) if conn is not None else None
    broadcasting = conn is not None and conn.message_model == "BROADCASTING"
    # a lag (and a consume TPS) over no queue of the topic read is unknown, not 0
    why = ("broadcasting" if broadcasting else "not-read" if not read
           else "no-queue" if not queues else None)
    return TopicConsumer(
        group, listed_by, lag if why is None else None, queues, not_inc,
        tps if read and queues else None, online,
        len(conn.connections) if conn is not None else (0 if online is False else None),
        conn.message_model if conn else None, conn.consume_type if conn else None,
        sub.expression if sub is not None else None, is_system_group(group), why)


__all__ = ["DroppedEntry", "QueueStatus", "TopicConsumer", "TopicConsumers",
           "TopicStatus", "capture_topic_consumers", "capture_topic_status"]
