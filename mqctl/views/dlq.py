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
from mqctl.errors import BrokerError, MqctlError
from mqctl.models import (
    DLQ_PREFIX,
    BrokerData,
    MessageQueue,
)
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import ResponseCode


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


async def read_dlq_queues(admin: Admin, group: str, failures: list[BrokerFailure], *,
                          concurrency: int | None = None) -> list[DlqQueue] | None:
    """``%DLQ%<group>``'s queues, the one rule every view reads dead letters by; ``None`` when
    they are unknown (a failure is recorded for each broker or name server that did not answer).

    A broker creates ``%DLQ%<group>`` with the first message it sends to the DLQ and registers it
    (AbstractSendMessageProcessor / SendMessageProcessor.consumerSendMsgBack ->
    TopicConfigManager.createTopicInSendMessageBackMethod, 4.9.3 and 5.3.3), so:

    * the name server answers TOPIC_NOT_EXIST (corpus */other-requests/105_*_NO_SUCH_TOPIC): no
      broker holds a dead letter of the group, ``[]`` (known, as the dashboard's
      DlqMessageServiceImpl shows an empty page);
    * a broker the route does not name holds none of its queues: not asked;
    * a broker the route names that answers TOPIC_NOT_EXIST has no config for the topic
      (AdminBrokerProcessor.getTopicStatsInfo answers it only then) and so no queue of it to
      read: it adds none (known). The route can outlive the broker's topic: mqadmin deleteTopic
      deletes on the brokers first, then on the name server (DeleteTopicSubCommand), and a
      broker's registration does not drop the topic unless deleteTopicWithBrokerRegistration;
    * any other failure (no answer, another error, no master address) is unknown: ``None``.
    """
    topic = DLQ_PREFIX + group
    try:
        route = await admin.topic_route(topic)
    except NotFoundError:
        return []
    except MqctlError as exc:
        failures.append(BrokerFailure("namesrv", None, exc))
        return None

    async def one(b: BrokerData) -> list[DlqQueue]:
        try:
            st = await admin.topic_stats(topic, require_addr(b))
        except BrokerError as exc:
            if exc.code == ResponseCode.TOPIC_NOT_EXIST:
                return []
            raise
        return [DlqQueue(mq, o.min_offset, o.max_offset, o.last_update_timestamp)
                for mq, o in sorted(st.offsets.items())]

    rows: list[DlqQueue] = []
    unknown = False
    for o in await fan_out(list(route.brokers), one,
                           concurrency=concurrency or admin.concurrency):
        if o.ok:
            rows.extend(o.value or [])
        else:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.broker_name, o.item.master_addr, o.error))
            unknown = True
    return None if unknown else rows
