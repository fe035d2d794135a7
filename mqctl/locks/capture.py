"""Capture of a group's lock view over the network (read-only requests only)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from mqctl.admin import NotFoundError
from mqctl.locks.types import RENEW_SLACK_MS, LockView
from mqctl.locks.view import build_view
from mqctl.models import RETRY_PREFIX, MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.timeparse import now_ms
from mqctl.views.existence import require_group
from mqctl.views.members import capture_members

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.locks.store import LockStore


async def _offset_topics(admin: Admin, group: str, brokers: Sequence[Any]) -> set[str]:
    """Topics an offline group has committed offsets for (GET_CONSUME_STATS, read-only)."""
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
