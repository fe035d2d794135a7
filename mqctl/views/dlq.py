"""The ``%DLQ%<group>`` topic: its queues and the dead letters they still hold (read-only:
the route and GET_TOPIC_STATS_INFO on each broker of it)."""

from __future__ import annotations

from dataclasses import dataclass

from mqctl.admin import (
    Admin,
    BrokerFailure,
    NotFoundError,
    require_addr,
)
from mqctl.errors import MqctlError
from mqctl.models import (
    DLQ_PREFIX,
    BrokerData,
    MessageQueue,
)
from mqctl.remoting.client import fan_out


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


async def read_dlq_queues(admin: Admin, group: str,
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
