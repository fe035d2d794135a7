"""``mqctl group dlq G``: what ``%DLQ%<group>`` holds (read-only, bounded).

The queues and their counts come from the one rule every view reads dead letters by
(:func:`mqctl.views.dlq.read_dlq_queues`: route + GET_TOPIC_STATS_INFO, ``max - min`` per
queue). Then, per queue that holds any, pulls that commit nothing (group TOOLS_CONSUMER, no
commit flag): one message at the min offset for the oldest store time, and the last ``last``
messages (at most 32 per pull). The newest store time is the queue's ``lastUpdateTimestamp``
(the store time of its last message, AdminBrokerProcessor.getTopicStatsInfo).

A dead letter is a copy of the message that failed (consumerSendMsgBack): its ``RETRY_TOPIC``
property names the topic it was first sent to, ``ORIGIN_MESSAGE_ID`` the original's offset
message id, ``UNIQ_KEY`` the producer's id, ``RECONSUMETIMES`` (the record's field) how many
times it was consumed before. The broker records no failure reason: what the client logged is
only in the client's log. 5.x dead letters may also carry ``DLQ_ORIGIN_TOPIC`` /
``DLQ_ORIGIN_MESSAGE_ID`` (MessageConst, 5.x; the gRPC proxy reads them): they come first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqctl.admin import BrokerFailure, require_addr
from mqctl.models import DLQ_PREFIX, MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.message import StoredMessage, decode_messages
from mqctl.views.dlq import DlqQueue, read_dlq_queues

if TYPE_CHECKING:
    from mqctl.admin import Admin

DEFAULT_LAST = 20
PULL_BATCH = 32


@dataclass(frozen=True, slots=True)
class DeadLetter:
    broker: str
    message: StoredMessage

    @property
    def original_topic(self) -> str | None:
        p = self.message.properties
        return p.get("DLQ_ORIGIN_TOPIC") or p.get("RETRY_TOPIC")

    @property
    def original_id(self) -> str | None:
        p = self.message.properties
        return p.get("DLQ_ORIGIN_MESSAGE_ID") or p.get("ORIGIN_MESSAGE_ID")


@dataclass
class OriginalTopic:
    topic: str | None  # None: the dead letters carry no original topic
    count: int
    unique_keys: list[str]
    reconsume_times: tuple[int, int]  # min, max


@dataclass
class GroupDlq:
    group: str
    queues: list[DlqQueue] | None  # None: unknown (a broker did not answer)
    count: int | None
    oldest_ts: int | None
    newest_ts: int | None
    last: list[DeadLetter]
    last_asked: int
    by_topic: list[OriginalTopic]
    failures: list[BrokerFailure] = field(default_factory=list)

    @property
    def topic(self) -> str:
        return DLQ_PREFIX + self.group


async def _pull(admin: Admin, mq: MessageQueue, offset: int, n: int, addr: str
                ) -> list[StoredMessage]:
    resp = await admin.pull_message(mq, offset, addr, max_nums=n)
    if resp.code != ResponseCode.SUCCESS or not resp.body:
        return []
    return decode_messages(resp.body)[0]


async def _read_queue(admin: Admin, q: DlqQueue, addr: str, last: int
                      ) -> tuple[int | None, list[DeadLetter]]:
    """(store time of the oldest, the last ``last`` dead letters) of one queue."""
    if q.messages <= 0:
        return None, []
    first = await _pull(admin, q.mq, q.min_offset, 1, addr)
    oldest = first[0].store_timestamp if first else None
    out: list[StoredMessage] = []
    offset = max(q.min_offset, q.max_offset - last)
    while offset < q.max_offset and len(out) < last:
        got = await _pull(admin, q.mq, offset, min(PULL_BATCH, q.max_offset - offset), addr)
        if not got:
            break
        out.extend(got)
        offset = got[-1].queue_offset + 1
    return oldest, [DeadLetter(q.mq.broker_name, m) for m in out[-last:]]


def group_by_topic(letters: list[DeadLetter]) -> list[OriginalTopic]:
    """The dead letters by original topic: count, unique keys (newest first), reconsume
    times."""
    groups: dict[str | None, list[DeadLetter]] = {}
    for d in sorted(letters, key=lambda d: -d.message.store_timestamp):
        groups.setdefault(d.original_topic, []).append(d)
    out = []
    for t, ds in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0] or "")):
        keys = [k for k in dict.fromkeys(d.message.properties.get("UNIQ_KEY") for d in ds) if k]
        times = [d.message.reconsume_times for d in ds]
        out.append(OriginalTopic(t, len(ds), keys, (min(times), max(times))))
    return out


async def group_dlq(admin: Admin, group: str, *, last: int = DEFAULT_LAST) -> GroupDlq:
    failures: list[BrokerFailure] = []
    queues = await read_dlq_queues(admin, group, failures)
    if queues is None:
        return GroupDlq(group, None, None, None, None, [], last, [], failures)
    route = admin.cached_route(DLQ_PREFIX + group)
    addrs = {b.broker_name: require_addr(b) for b in (route.brokers if route else [])}
    held = [q for q in queues if q.messages > 0 and q.mq.broker_name in addrs]

    async def one(q: DlqQueue) -> tuple[int | None, list[DeadLetter]]:
        return await _read_queue(admin, q, addrs[q.mq.broker_name], last)

    oldest: list[int] = []
    letters: list[DeadLetter] = []
    for o in await fan_out(held, one, concurrency=admin.concurrency):
        if o.ok:
            ts, ds = o.value  # type: ignore[misc]
            if ts is not None:
                oldest.append(ts)
            letters.extend(ds)
        else:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.mq.broker_name, addrs.get(
                o.item.mq.broker_name), o.error))
    letters.sort(key=lambda d: -d.message.store_timestamp)
    letters = letters[:last]
    newest = [q.last_update_timestamp for q in held if q.last_update_timestamp > 0]
    return GroupDlq(group, queues, sum(q.messages for q in queues),
                    min(oldest) if oldest and len(oldest) == len(held) else None,
                    max(newest) if newest else None, letters, last,
                    group_by_topic(letters), failures)


__all__ = ["DEFAULT_LAST", "DeadLetter", "GroupDlq", "OriginalTopic", "group_by_topic",
           "group_dlq"]
