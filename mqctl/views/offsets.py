"""The offsets a group committed, by the never-committed rule, and the queues' min offsets: the
reads every view and the reset plans share (read-only; every request through
:class:`mqctl.admin.Admin`).

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

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mqctl.admin import Admin, BrokerFailure
from mqctl.errors import BodyError, ConnectError, MqctlError
from mqctl.models import MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.versions import V5_0_0


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


@dataclass
class OffsetTableCache:
    """What the never-committed rule read from each broker, shared by the groups of one
    capture (``snapshot``, ``groups``): its version and its offset table, asked once per
    address."""

    versions: dict[str, int | None] = field(default_factory=dict)
    tables: dict[str, Any] = field(default_factory=dict)  # addr -> body or MqctlError
    locks: dict[str, asyncio.Lock] = field(default_factory=dict)

    async def version(self, admin: Admin, addr: str) -> int | None:
        async with self.locks.setdefault("v:" + addr, asyncio.Lock()):
            if addr not in self.versions:
                try:
                    self.versions[addr] = await admin.broker_version(addr)
                except MqctlError:
                    self.versions[addr] = None
            return self.versions[addr]

    async def queue_ids(self, admin: Admin, addr: str, topic: str, group: str) -> set[int]:
        async with self.locks.setdefault("t:" + addr, asyncio.Lock()):
            if addr not in self.tables:
                try:
                    self.tables[addr] = await admin.all_consumer_offsets(addr)
                except MqctlError as exc:
                    self.tables[addr] = exc
        got = self.tables[addr]
        if isinstance(got, MqctlError):
            raise got
        return committed_queue_ids(got, topic, group)


@dataclass
class CommittedOffsets:
    """The answer of :func:`committed_offsets`."""

    # per queue: the committed offset, None when the group has none there
    offsets: dict[MessageQueue, int | None] = field(default_factory=dict)
    # brokers whose QUERY_CONSUMER_OFFSET failed (or that have no address): their queues are
    # not in ``offsets``
    failed: dict[str, MqctlError] = field(default_factory=dict)
    # brokers before 5.0.0 whose offset table could not be read: the queues that read 0 there
    # (committed 0 or nothing, the broker answers 0 for both) stay 0 in ``offsets``
    unchecked: dict[str, tuple[MqctlError, list[MessageQueue]]] = field(default_factory=dict)


async def committed_offsets(admin: Admin, group: str, mqs: Iterable[MessageQueue],
                            reported: Mapping[MessageQueue, int],
                            addrs: Mapping[str, str | None], *,
                            cache: OffsetTableCache | None = None) -> CommittedOffsets:
    """THE rule for "the group has no committed offset on this queue" (``none``), used by the
    reset plans and every view (``offsets show``, ``group progress``, ``groups``, snapshots):

    1. GET_CONSUME_STATS (``reported``, the broker's consumerOffset) above 0 is committed;
    2. a 0 (the broker reports a missing offset as 0, AdminBrokerProcessor.getConsumeStats) or
       a queue it did not report: QUERY_CONSUMER_OFFSET with setZeroIfNotFound=false,
       QUERY_NOT_FOUND = none (corpus 5.3.3/never-committed/14_*: code 22);
    3. a broker before 5.0.0 ignores setZeroIfNotFound and answers 0 for a queue nobody
       committed while its message 0 is in memory (corpus 4.9.3/never-committed/14_*), so its
       remaining zeros are checked against its offset table (GET_ALL_CONSUMER_OFFSET, which
       lists committed queues only): a queue not listed = none. A broker whose version is
       unknown is treated as one before 5.0.0.

    ``addrs``: broker name -> master address. Read-only."""
    out = CommittedOffsets()
    wanted = sorted(set(mqs))
    ask: list[MessageQueue] = []
    for mq in wanted:
        v = reported.get(mq)
        if v is not None and v > 0:
            out.offsets[mq] = v
        elif addrs.get(mq.broker_name):
            ask.append(mq)
        elif mq.broker_name not in out.failed:
            out.failed[mq.broker_name] = ConnectError(f"broker {mq.broker_name} has no address")

    async def current(mq: MessageQueue) -> int | None:
        return await admin.query_offset(group, mq, addrs[mq.broker_name] or "")

    for o in await fan_out(ask, current, concurrency=admin.concurrency):
        if o.ok:
            out.offsets[o.item] = o.value
        elif o.error is not None:
            out.failed.setdefault(o.item.broker_name, o.error)
    for name in out.failed:  # a broker is read whole or not at all
        for mq in [m for m in out.offsets if m.broker_name == name]:
            del out.offsets[mq]

    zeros: dict[str, list[MessageQueue]] = {}
    for mq, off in out.offsets.items():
        if off == 0:
            zeros.setdefault(mq.broker_name, []).append(mq)
    tables = cache if cache is not None else OffsetTableCache()

    async def check(name: str) -> dict[str, set[int]] | None:
        addr = addrs[name] or ""
        version = await tables.version(admin, addr)
        if version is not None and version >= V5_0_0:
            return None  # QUERY_NOT_FOUND already told the missing ones apart
        return {t: await tables.queue_ids(admin, addr, t, group)
                for t in sorted({m.topic for m in zeros[name]})}

    for c in await fan_out(sorted(zeros), check, concurrency=admin.concurrency):
        if not c.ok:
            assert c.error is not None
            out.unchecked[c.item] = (c.error, zeros[c.item])
        elif c.value is not None:
            for mq in zeros[c.item]:
                if mq.queue_id not in c.value[mq.topic]:
                    out.offsets[mq] = None
    return out


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


__all__ = ["CommittedOffsets", "OffsetTableCache",
           "committed_offsets", "committed_queue_ids", "min_offsets"]
