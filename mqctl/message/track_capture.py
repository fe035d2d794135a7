"""The reads of ``mqctl message track`` (read-only): the groups of the message's topic, and
for each what :class:`mqctl.message.track.GroupReading` holds.

* the groups: QUERY_TOPIC_CONSUME_BY_WHO on every broker of the topic (online subscriptions
  and committed offsets, each name proven a group: :func:`mqctl.views.topic.
  capture_topic_consumers`), as mqadmin's messageTrackDetail starts;
* per group, its progress on the topic as ``group progress`` reads it
  (:func:`mqctl.views.progress_capture.capture_progress`: committed offsets by the
  never-committed rule, members, owners from the clients' running info, subscriptions);
* its copies: QUERY_MESSAGE by the message's unique key on ``%RETRY%<group>``, the pop
  retry topic ``%RETRY%<group>_<topic>``, ``%DLQ%<group>`` and SCHEDULE_TOPIC_XXXX (its
  ``REAL_TOPIC`` the group's retry topic: a retry waiting out its delay level; a copy keeps the
  original's properties, UNIQ_KEY included, and the broker indexes it under the topic it is
  stored in, IndexService.buildIndex), and for a retry copy the group's committed offset on
  that retry queue (QUERY_CONSUMER_OFFSET).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqctl.admin import BrokerFailure, NotFoundError
from mqctl.errors import MqctlError, UsageError
from mqctl.message.find import FindRequest, FindResult, Found, find, find_by_key
from mqctl.message.track import DELAY_LEVELS_MS, Copy, GroupReading, TrackRow, track_row
from mqctl.models import DLQ_PREFIX, RETRY_PREFIX, SCHEDULE_TOPIC, MessageQueue, is_system_group
from mqctl.remoting.client import fan_out
from mqctl.timeparse import is_digits, now_ms
from mqctl.views.progress_capture import capture_progress
from mqctl.views.topic import capture_topic_consumers

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.remoting.message import StoredMessage
    from mqctl.views.progress import GroupProgress


@dataclass
class TrackResult:
    found: Found
    rows: list[TrackRow]
    readings: list[GroupReading]
    now: int
    failures: list[BrokerFailure] = field(default_factory=list)
    unverified: dict[str, str] = field(default_factory=dict)
    others: int = 0  # further messages the search matched (only the first is tracked)
    # subscription groups whose connection list was asked because the brokers list online
    # groups by their committed offsets only (5.3.3)
    scanned: int = 0


async def _online_subscribers(admin: Admin, topic: str, known: set[str]
                              ) -> tuple[list[str], int]:
    """The online groups subscribed to ``topic`` that QUERY_TOPIC_CONSUME_BY_WHO leaves out:
    a 5.3.3 broker lists the topic's own name instead of an online group
    (ConsumerManager.registerConsumer, apache/rocketmq#9352), so a group with no committed
    offset on the topic (a BROADCASTING one, a new one) is not named. Every subscription group
    of the topic's brokers (GET_ALL_SUBSCRIPTIONGROUP_CONFIG) not known yet is asked for its
    connection list (GET_CONSUMER_CONNECTION_LIST), bounded by the concurrency."""
    route = await admin.topic_route(topic)
    tables = await admin._per_broker(route, admin.subscription_groups)
    names = sorted({g for v in tables.values() if isinstance(v, list) for g in v
                    if not is_system_group(g)} - known - {topic})

    async def one(g: str) -> bool:
        conn = await admin.consumer_connection(g, route)
        return conn is not None and topic in conn.subscriptions

    found = [o.item for o in await fan_out(names, one, concurrency=admin.concurrency)
             if o.ok and o.value]
    return found, len(names)


async def _copies(admin: Admin, topic: str, group: str, uniq: str | None, origin: str,
                  addr_of: dict[str, str]) -> tuple[Copy, ...]:
    """The copies of the message (by its unique key) in ``topic``: ``%RETRY%<group>``, the
    pop retry topic ``%RETRY%<group>_<topic>`` (KeyBuilder.buildPopRetryTopicV1: a 5.x pop
    consumer's messages not acked in time are revived there), ``%DLQ%<group>``, or
    SCHEDULE_TOPIC_XXXX, where only those waiting for ``%RETRY%<group>`` (``REAL_TOPIC``)
    count: every group's retries wait there."""
    if not uniq:
        return ()
    try:
        res = await find_by_key(admin, topic, uniq, unique=True, limit=64)
    except NotFoundError:
        return ()  # no such topic: no copy (the broker creates it with the first one)
    out = []
    for f in res.messages:
        m = f.message
        if m.properties.get("RETRY_TOPIC", origin) != origin:
            continue
        if topic == SCHEDULE_TOPIC:
            if m.properties.get("REAL_TOPIC") == RETRY_PREFIX + group:
                out.append(_scheduled_copy(m, f.broker))
            continue
        consumed = None
        if topic.startswith(RETRY_PREFIX) and f.addr:
            off = await admin.query_offset(group, MessageQueue(m.topic, f.broker, m.queue_id),
                                           f.addr)
            consumed = off is not None and off > m.queue_offset
        out.append(Copy(m.topic, f.broker, m.queue_id, m.queue_offset, m.store_timestamp,
                        m.reconsume_times, m.msg_id, consumed))
        addr_of.setdefault(f.broker, f.addr)
    if res.failures and not out:
        raise res.failures[0].error  # a broker not read may hold the copy
    return tuple(out)


def _scheduled_copy(m: StoredMessage, broker: str) -> Copy:
    """A copy waiting in SCHEDULE_TOPIC_XXXX: its level from ``DELAY`` (else its queue + 1:
    ScheduleMessageService.delayLevel2QueueId), due at store time + the level's delay by the
    broker's default messageDelayLevel (ScheduleMessageService.computeDeliverTimestamp)."""
    text = m.properties.get("DELAY", "")
    level = int(text) if is_digits(text) else m.queue_id + 1
    level = max(1, min(len(DELAY_LEVELS_MS), level))
    return Copy(m.topic, broker, m.queue_id, m.queue_offset, m.store_timestamp,
                m.reconsume_times, m.msg_id, None, level,
                m.store_timestamp + DELAY_LEVELS_MS[level - 1])


def _reading(group: str, found: Found, p: GroupProgress, retry: tuple[Copy, ...] | None,
             dlq: tuple[Copy, ...] | None, copies_error: str | None,
             scheduled: tuple[Copy, ...] | None = None) -> GroupReading:
    m = found.message
    mq = MessageQueue(m.topic, found.broker, m.queue_id)
    q = next((x for x in p.queues if x.mq == mq), None)
    members = p.members
    conn = members.connection if members is not None else None
    sub = conn.subscriptions.get(m.topic) if conn is not None else None
    clients = tuple(sorted((cid, cv.subscriptions[m.topic])
                           for cid, cv in (members.clients.items() if members else [])
                           if cv.subscriptions and m.topic in cv.subscriptions))
    return GroupReading(
        group, online=members.online_state if members is not None else None,
        broadcasting=p.broadcasting or (q is not None and q.offsets_in_clients),
        consume_type=conn.consume_type if conn is not None else None,
        queue_read=q is not None, committed=q.current if q is not None else None,
        consume_stats_offset=q.consumer_offset if q is not None else None,
        max_offset=q.broker_offset if q is not None else None,
        owner=q.owner if q is not None else None,
        owner_unknown=q.owner_unknown if q is not None else False,
        pop=q.pop if q is not None else p.pop,
        expression=sub.expression if sub is not None else None,
        tags=sub.tags if sub is not None else None, client_expressions=clients,
        retry=retry, dlq=dlq, scheduled=scheduled, copies_error=copies_error)


async def read_group(admin: Admin, group: str, found: Found) -> GroupReading:
    m = found.message
    p: GroupProgress | None
    try:
        p = await capture_progress(admin, group, m.topic)
    except MqctlError as exc:
        p, progress_error = None, exc.message
    uniq = m.properties.get("UNIQ_KEY")
    addrs: dict[str, str] = {}
    retry: tuple[Copy, ...] | None
    dlq: tuple[Copy, ...] | None
    scheduled: tuple[Copy, ...] | None
    err = None
    try:
        retry = (await _copies(admin, RETRY_PREFIX + group, group, uniq, m.topic, addrs)
                 + await _copies(admin, f"{RETRY_PREFIX}{group}_{m.topic}", group, uniq,
                                 m.topic, addrs))
        dlq = await _copies(admin, DLQ_PREFIX + group, group, uniq, m.topic, addrs)
        scheduled = await _copies(admin, SCHEDULE_TOPIC, group, uniq, m.topic, addrs)
    except MqctlError as exc:
        retry = dlq = scheduled = None
        err = exc.message
    if p is None:
        return GroupReading(group, error=progress_error, retry=retry, dlq=dlq,
                            scheduled=scheduled, copies_error=err)
    r = _reading(group, found, p, retry, dlq, err, scheduled)
    if err is not None:
        r = GroupReading(group, error=f"its retry and dead-letter copies: {err}")
    return r


async def track_message(admin: Admin, found: Found, *, others: int = 0) -> TrackResult:
    """One row per group of the message's topic."""
    m = found.message
    if m.topic.startswith((RETRY_PREFIX, DLQ_PREFIX)):
        origin = m.properties.get("ORIGIN_MESSAGE_ID")
        raise UsageError(
            f"this message is a copy in {m.topic} (of a message of "
            f"{m.properties.get('RETRY_TOPIC', 'another topic')!r}): track the original",
            hint=f"mqctl message track --msg-id {origin}" if origin else
            "mqctl message track --unique-key ID -t TOPIC")
    consumers = await capture_topic_consumers(admin, m.topic)
    groups = sorted(g.group for g in consumers.groups)
    scanned = 0
    if any(d.name == m.topic for d in consumers.dropped):
        more, scanned = await _online_subscribers(admin, m.topic, set(groups))
        groups = sorted({*groups, *more})
    readings: list[GroupReading] = []
    for o in await fan_out(groups, lambda g: read_group(admin, g, found),
                           concurrency=max(1, admin.concurrency // 4)):
        if o.ok:
            readings.append(o.value)  # type: ignore[arg-type]
        else:
            readings.append(GroupReading(o.item, error=str(o.error)))
    now = now_ms()
    rows = [track_row(m, r, now) for r in readings]
    return TrackResult(found, rows, readings, now, consumers.failures,
                       dict(consumers.unverified), others, scanned)


def first_found(res: FindResult) -> tuple[Found, int]:
    """The message to track of a search, and how many more it matched."""
    if not res.messages:
        raise NotFoundError(f"no message of {res.topic!r} matches {res.how} {res.value!r}",
                            hint="`mqctl message find` with the same options shows what the "
                                 "brokers' index holds")
    return res.messages[0], max(0, res.total - 1)




async def track(admin: Admin, req: FindRequest) -> TrackResult:
    """``message track``: the message the request finds (the newest when several match),
    then one row per group."""
    found, others = first_found(await find(admin, req))
    return await track_message(admin, found, others=others)


__all__ = ["TrackResult", "first_found", "read_group", "track", "track_message"]
