"""Broker reads ``mqctl offsets`` needs that :class:`mqctl.admin.Admin` does not offer (read-only).

``GET_ALL_CONSUMER_OFFSET`` (43): which queues of a topic a group has a committed offset for.
A broker before 5.0.0 has no ``setZeroIfNotFound``: its QUERY_CONSUMER_OFFSET answers SUCCESS
with offset 0 for a queue the group never committed while the queue's message 0 is still in
memory (4.9.3 ``ConsumerManageProcessor.queryConsumerOffset``: ``minOffset <= 0 &&
!checkInDiskByConsumeOffset(topic, queueId, 0)``), and GET_CONSUME_STATS reports such a queue
as ``consumerOffset: 0`` too (``AdminBrokerProcessor.getConsumeStats``). The broker's offset
table (``ConsumerOffsetManager.offsetTable``, keyed ``topic@group``) lists only committed
queues: real 4.9.3 answers ``"NC_T@NC_ONE":{0:25}`` and nothing for the never-consumed
``NC_NEVER`` (corpus 4.9.3/other-requests/43_getAllConsumerOffset.broker-a.json).

The answer is the broker's whole table (every group and topic), so it is asked only of a
broker that may not honour setZeroIfNotFound, and only when one of the plan's queues read 0.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from mqctl.admin import Admin, BrokerFailure
from mqctl.errors import BodyError, MqctlError
from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import RequestCode

# the table grows with groups x topics: give it the time a big subscription table gets
ALL_OFFSETS_MIN_TIMEOUT_S = 10.0


def committed_queue_ids(body: Any, topic: str, group: str) -> set[int]:
    """Queue ids of ``topic`` that ``group`` has a committed offset for, from a
    GET_ALL_CONSUMER_OFFSET body (``ConsumerOffsetSerializeWrapper``: ``offsetTable`` maps
    ``topic@group`` to ``{queueId: offset}``; 5.x adds ``dataVersion`` and
    ``groupTopicMap``)."""
    table = body.get("offsetTable") if isinstance(body, dict) else None
    if not isinstance(table, dict):
        raise BodyError("GET_ALL_CONSUMER_OFFSET: no offsetTable")
    queues = table.get(f"{topic}@{group}")
    if not isinstance(queues, dict):
        return set()
    out: set[int] = set()
    for k in queues:
        try:
            out.add(int(k))
        except (TypeError, ValueError):
            raise BodyError(f"GET_ALL_CONSUMER_OFFSET: queue id {k!r} is not a number") \
                from None
    return out


async def committed_queues(admin: Admin, addr: str, topic: str, group: str) -> set[int]:
    """GET_ALL_CONSUMER_OFFSET on one broker: the queue ids of ``topic`` that ``group`` has
    committed (raises :class:`mqctl.errors.MqctlError` when the broker does not answer)."""
    resp = await admin.client.invoke(
        addr, RequestCode.GET_ALL_CONSUMER_OFFSET, idempotent=True,
        timeout=max(admin.client.options.timeout, ALL_OFFSETS_MIN_TIMEOUT_S))
    if not resp.body:
        raise BodyError("GET_ALL_CONSUMER_OFFSET: empty body")
    return committed_queue_ids(fastjson.loads(resp.body), topic, group)


async def min_offsets(admin: Admin, mqs: Iterable[MessageQueue]
                      ) -> tuple[dict[MessageQueue, int], list[BrokerFailure]]:
    """GET_MIN_OFFSET per queue, for the readable queues GET_TOPIC_STATS_INFO left out: a
    broker before 5.3.0 answers it over writeQueueNums only
    (AdminBrokerProcessor.getTopicStatsInfo before apache/rocketmq#7951; corpus
    4.9.3/read-gt-write/202_*), while
    GET_CONSUME_STATS covers readQueueNums and gives the max (brokerOffset)."""
    wanted = sorted(set(mqs))
    addrs: dict[tuple[str, str], str | None] = {}
    failures: list[BrokerFailure] = []
    for topic in sorted({m.topic for m in wanted}):
        try:
            route = await admin.topic_route(topic)
        except MqctlError as exc:
            failures.extend(BrokerFailure(b, None, exc)
                            for b in sorted({m.broker_name for m in wanted if m.topic == topic}))
            continue
        for b in route.brokers:
            addrs[(topic, b.broker_name)] = b.master_addr or b.select_addr()
    todo = [m for m in wanted if addrs.get((m.topic, m.broker_name))]

    async def one(mq: MessageQueue) -> int:
        return await admin.min_offset(mq, addrs[(mq.topic, mq.broker_name)] or "")

    out: dict[MessageQueue, int] = {}
    for o in await fan_out(todo, one, concurrency=admin.concurrency):
        if o.ok and o.value is not None:
            out[o.item] = o.value
        elif o.error is not None:
            failures.append(BrokerFailure(o.item.broker_name,
                                          addrs[(o.item.topic, o.item.broker_name)], o.error))
    return out, failures


__all__ = ["ALL_OFFSETS_MIN_TIMEOUT_S", "committed_queue_ids", "committed_queues", "min_offsets"]
