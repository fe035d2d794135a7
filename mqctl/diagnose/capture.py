"""One read of everything ``mqctl diagnose`` looks at (read-only requests only).

It calls the views mqctl already has, over :class:`mqctl.admin.Admin`:

* members and running info on EVERY broker (:func:`mqctl.views.members.capture_members`:
  GET_CONSUMER_LIST_BY_GROUP, GET_CONSUMER_CONNECTION_LIST, GET_CONSUMER_RUNNING_INFO);
* offsets, lag, time lag, produce TPS and the DLQ
  (:func:`mqctl.views.progress_capture.capture_progress`: GET_CONSUME_STATS,
  QUERY_CONSUME_TIME_SPAN, GET_TOPIC_STATS_INFO, VIEW_BROKER_STATS_DATA,
  GET_MIN_OFFSET, routes);
* the group's subscription config on every master (:func:`mqctl.views.group_config.
  capture_group_config`: GET_ALL_SUBSCRIPTIONGROUP_CONFIG);
* the routes of its topics (GET_ROUTEINFO_BY_TOPIC: permissions), each broker's view of the
  group (GET_CONSUMER_CONNECTION_LIST: its group-level subscription table);
* each broker's runtime info (GET_BROKER_RUNTIME_INFO, master and slave) and config
  (GET_BROKER_CONFIG: the thresholds);
* for an orderly group, the lock view of ``mqctl locks show`` (:func:`mqctl.locks.view.
  queue_locks`, with what ``locks show`` remembered, never writing its state file);
* for a pop group, its pop retry topics (GET_ROUTEINFO_BY_TOPIC, GET_TOPIC_STATS_INFO).

Never HEART_BEAT, LOCK_BATCH_MQ, UNLOCK_BATCH_MQ, an offset update or a committing pull.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure, NotFoundError, NothingRead
from mqctl.diagnose.types import Reading, RetryTopic
from mqctl.errors import MqctlError, UsageError
from mqctl.locks.view import group_kind, queue_locks
from mqctl.models import DLQ_PREFIX, RETRY_PREFIX, BrokerData
from mqctl.remoting.client import fan_out
from mqctl.timeparse import now_ms
from mqctl.views.existence import require_group
from mqctl.views.group_config import capture_group_config
from mqctl.views.members import GroupMembers, capture_members
from mqctl.views.paused import paused_by
from mqctl.views.progress_capture import capture_progress

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.locks.store import LockStore

SLAVE_ID = 1


def is_main_topic(topic: str) -> bool:
    return not topic.startswith((RETRY_PREFIX, DLQ_PREFIX))


def pop_retry_topic(group: str, topic: str) -> str:
    """KeyBuilder.buildPopRetryTopicV1 (5.x; BrokerConfig.enableRetryTopicV2 is false by
    default): ``%RETRY%<group>_<topic>``, where a pop consumer's unacked messages are revived."""
    return f"{RETRY_PREFIX}{group}_{topic}"


async def sleep(seconds: float) -> None:
    """The pause between the two reads of ``--sample`` (tests replace it with the simulated
    clock's advance)."""
    await asyncio.sleep(seconds)


async def capture_reading(admin: Admin, group: str, *, topic: str | None = None,
                          store: LockStore | None = None, first: bool = True) -> Reading:
    """Read everything about ``group`` once. ``first``: an unknown group is a usage error
    (exit 2); the second read of ``--sample`` does not ask again. ``store``: the state file of
    ``mqctl locks show``, read (never written) for the claims of clients that left."""
    r = Reading(group, now_ms())
    m = await _read_members(admin, r, group, first)
    await _read_progress(admin, r, group, m)
    await _read_config(admin, r, group)
    await _read_routes(admin, r, group, m, topic, first)
    # each broker's own view of the group (its group-level subscription table)
    if m.online_state:
        conns = await admin.connections_by_broker(group, m.brokers)
        for b, c in conns.items():
            if isinstance(c, BrokerFailure):
                r.failures.append(c)
                r.unread[f"consumer connection on {b}"] = c.message
            else:
                r.connections[b] = c
    # runtime info and config of every broker that serves the group's topics
    brokers: dict[str, BrokerData] = {}
    for t, rt in r.routes.items():
        if not is_main_topic(t):
            continue
        for bd in rt.brokers:
            brokers.setdefault(bd.broker_name, bd)
    blist = [brokers[k] for k in sorted(brokers)]
    if blist:
        await _broker_facts(admin, r, blist)
    # the lock view of `locks show`, for an orderly group: the one classification
    if group_kind(m) == "orderly":
        queues = {t: rt.subscribe_queues() for t, rt in r.routes.items() if is_main_topic(t)}
        previous = store.load(group) if store is not None else {}
        # the lock view's own moment: every answer it judges came before it (each live claim
        # is judged when its answer arrived)
        r.locks = queue_locks(m, queues, now=max(r.ts, now_ms()), previous=previous)
        r.locks_remembered = bool(previous)
    elif group_kind(m) == "pop":
        r.pop_retry = await _pop_retry(admin, r, group, sorted(
            t for t in (m.connection.subscriptions if m.connection else {})
            if is_main_topic(t)))
    return r


async def _read_members(admin: Admin, r: Reading, group: str, first: bool) -> GroupMembers:
    m = await capture_members(admin, group, must_read=False)
    r.members = m
    r.failures.extend(m.failures)
    if m.online_state is None:
        r.unread["members"] = ("member list: " + ", ".join(m.unread_brokers)
                               + " did not answer")
    for cid, cv in m.clients.items():
        if cv.running is None:
            r.unread[f"running info of {cid}"] = cv.running_error or "not answered"
    if first and m.online_state is False:
        await require_group(admin, group)
    return m


async def _read_progress(admin: Admin, r: Reading, group: str, m: GroupMembers) -> None:
    try:
        r.progress = await capture_progress(admin, group, None, running=False, dlq=True,
                                            produce_tps=True)
        r.failures.extend(r.progress.failures)
        if r.progress.not_included:
            r.unread["offsets"] = ("GET_CONSUME_STATS: " + ", ".join(r.progress.not_included)
                                   + " did not answer")
    except NothingRead as exc:
        r.failures.extend(exc.failures)
        r.unread["offsets"] = exc.message
        if not any(isinstance(v, list) for v in m.members.values()):
            raise  # neither members nor offsets were read: nothing to diagnose


async def _read_config(admin: Admin, r: Reading, group: str) -> None:
    try:
        r.config = await capture_group_config(admin, group)
        if any((c or {}).get("consumeEnable") is False for c in r.config.configs.values()):
            r.paused_by = paused_by(admin.namesrv, group)  # (the local audit record)
        r.failures.extend(r.config.failures)
        if r.config.failures:
            r.unread["group config"] = ("GET_ALL_SUBSCRIPTIONGROUP_CONFIG: "
                                        + ", ".join(r.config.not_included) + " did not answer")
    except NotFoundError:
        r.config_missing = True
    except NothingRead as exc:
        r.failures.extend(exc.failures)
        r.unread["group config"] = exc.message


async def _read_routes(admin: Admin, r: Reading, group: str, m: GroupMembers,
                       topic: str | None, first: bool) -> None:
    """The routes of the group's topics: what it subscribes to and what it has offsets for."""
    topics: set[str] = set()
    if m.connection is not None:
        topics |= set(m.connection.subscriptions)
    for cv in m.clients.values():
        topics |= set(cv.subscriptions or {})
    if r.progress is not None:
        topics |= {q.mq.topic for q in r.progress.queues}
    if topic is not None:
        if first and topics and topic not in topics:
            await admin.topic_route(topic)  # a topic that does not exist: say that first

            raise UsageError(f"group {group} neither subscribes to {topic} nor has offsets on "
                             "it", hint="its topics: " + ", ".join(
                                 sorted(t for t in topics if is_main_topic(t))))
        topics.add(topic)
    for t in sorted(x for x in topics if is_main_topic(x) or x == RETRY_PREFIX + group):
        try:
            r.routes[t] = await admin.topic_route(t)
        except NotFoundError as exc:
            if t == topic:
                raise
            r.unread.setdefault(f"route of {t}", exc.message)
        except MqctlError as exc:
            r.failures.append(BrokerFailure("namesrv", None, exc))
            r.unread[f"route of {t}"] = exc.message


async def _broker_facts(admin: Admin, r: Reading, blist: list[BrokerData]) -> None:
    async def each(fn: Callable[[str], Awaitable[Any]], what: str,
                   addrs: dict[str, str | None]) -> dict[str, Any]:
        names = [n for n, a in addrs.items() if a]
        out: dict[str, Any] = {}
        for o in await fan_out(names, lambda n: fn(addrs[n] or ""),
                               concurrency=admin.concurrency):
            if o.ok:
                out[o.item] = o.value
            else:
                assert o.error is not None
                r.failures.append(BrokerFailure(o.item, addrs[o.item], o.error))
                r.unread[f"{what} of {o.item}"] = o.error.message
        return out

    masters = {b.broker_name: b.master_addr for b in blist}
    slaves = {b.broker_name: b.addrs.get(SLAVE_ID) for b in blist if b.addrs.get(SLAVE_ID)}
    r.runtime = await each(admin.broker_runtime_info, "runtime info", masters)
    if slaves:
        r.slave_runtime = await each(admin.broker_runtime_info, "slave runtime info", slaves)
    r.broker_config = await each(admin.broker_config, "broker config", masters)


async def _pop_retry(admin: Admin, r: Reading, group: str, topics: list[str]
                     ) -> dict[str, RetryTopic]:
    """Each subscribed topic's pop retry topic: its queues' min/max offset and last store time
    on every broker of its route; a topic without a route has had no revived message."""
    out: dict[str, RetryTopic] = {}
    for t in topics:
        name = pop_retry_topic(group, t)
        try:
            route = await admin.topic_route(name)
        except NotFoundError:
            out[t] = RetryTopic(name, {})
            continue
        queues = {}

        async def stats(addr: str, name: str = name) -> Any:
            return await admin.topic_stats(name, addr)

        got = await admin._per_broker(route, stats)
        for b, st in sorted(got.items()):
            if isinstance(st, BrokerFailure):
                r.failures.append(st)
                r.unread[f"stats of {name} on {b}"] = st.message
                continue
            for mq, off in sorted(st.offsets.items()):
                queues[mq.short] = off
        out[t] = RetryTopic(name, queues)
    return out


__all__ = ["capture_reading", "is_main_topic", "pop_retry_topic", "sleep"]
