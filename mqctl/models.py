"""Typed, immutable views of RocketMQ data.

Wire bodies are parsed by :mod:`mqctl.remoting.fastjson` into plain dicts (a queue used as a
map key is the codec's own :class:`~mqctl.remoting.fastjson.QueueKey`); the ``from_body``
constructors here turn them into frozen dataclasses, tolerating the differences between
RocketMQ versions (e.g. ``topicSynFlag`` before 4.9.0, ``pullOffset`` from 5.x).
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mqctl.errors import BodyError
from mqctl.remoting.fastjson import mq_map, queue_key
from mqctl.timeparse import is_digits

PERM_PRIORITY = 8
PERM_READ = 4
PERM_WRITE = 2
PERM_INHERIT = 1
MASTER_ID = 0
RETRY_PREFIX = "%RETRY%"
DLQ_PREFIX = "%DLQ%"
# TopicValidator.RMQ_SYS_SCHEDULE_TOPIC: a message with a delay level waits here, in queue
# level - 1, with its topic in REAL_TOPIC (ScheduleMessageService), 4.9.3 and 5.x alike
SCHEDULE_TOPIC = "SCHEDULE_TOPIC_XXXX"
SCHEDULE_TOPIC_QUEUES = 18  # TopicConfigManager's SCHEDULE_TOPIC_QUEUE_NUM

# The groups RocketMQ's own tools and components use, hidden unless asked (`groups`,
# `topic consumers`, `snapshot`, completion): MixAll.PREDEFINE_GROUP_SET (isPredefinedGroup,
# common/src/main/java/org/apache/rocketmq/common/MixAll.java, 5.3.3), whose members are
# the same MixAll constants in 4.9.3: DEFAULT_CONSUMER_GROUP, DEFAULT_PRODUCER_GROUP,
# TOOLS_CONSUMER_GROUP, SCHEDULE_CONSUMER_GROUP, FILTERSRV_CONSUMER_GROUP,
# MONITOR_CONSUMER_GROUP, CLIENT_INNER_PRODUCER_GROUP, SELF_TEST_PRODUCER_GROUP,
# SELF_TEST_CONSUMER_GROUP, ONS_HTTP_PROXY_GROUP, CID_ONSAPI_{PERMISSION,OWNER,PULL}_GROUP and
# CID_SYS_RMQ_TRANS (the constant's value is "CID_RMQ_SYS_TRANS"); and
# MixAll.isSysConsumerGroup: the prefix CID_RMQ_SYS_PREFIX, "CID_RMQ_SYS_" (both versions).
SYSTEM_GROUPS = frozenset({
    "DEFAULT_CONSUMER", "DEFAULT_PRODUCER", "TOOLS_CONSUMER", "SCHEDULE_CONSUMER",
    "FILTERSRV_CONSUMER", "__MONITOR_CONSUMER", "CLIENT_INNER_PRODUCER", "SELF_TEST_P_GROUP",
    "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER",
    "CID_ONSAPI_PULL", "CID_RMQ_SYS_TRANS"})
SYSTEM_GROUP_PREFIX = "CID_RMQ_SYS_"


def is_system_group(group: str) -> bool:
    """A group of RocketMQ itself (``SYSTEM_GROUPS``), the one rule every view hides by."""
    return group in SYSTEM_GROUPS or group.startswith(SYSTEM_GROUP_PREFIX)



def java_string_key(s: str) -> str:
    """Sort key matching Java's ``String.compareTo`` (UTF-16 code-unit order), always a str.

    Inside the Basic Multilingual Plane (every legal topic, group and broker name, and in
    practice every client id) this is the string itself. A supplementary character becomes its
    two surrogate code points, which compare below U+E000..U+FFFF exactly as UTF-16 code units
    do in Java.
    """
    if s.isascii() or all(ord(c) <= 0xFFFF for c in s):
        return s
    b = s.encode("utf-16-le", "surrogatepass")
    return "".join(map(chr, struct.unpack(f"<{len(b) // 2}H", b)))


@dataclass(frozen=True, slots=True)
class MessageQueue:
    """``org.apache.rocketmq.common.message.MessageQueue``.

    Ordering is ``MessageQueue.compareTo``: topic, then brokerName (``String.compareTo``), then
    queueId numerically, which is the dataclass field order. It equals, and hashes as, the
    codec's :class:`~mqctl.remoting.fastjson.QueueKey` of the same queue.
    """

    topic: str
    broker_name: str
    queue_id: int
    _key: tuple[str, str, int] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        # computed once: sorting thousands of queues compares these tuples in C
        object.__setattr__(self, "_key", (java_string_key(self.topic),
                                          java_string_key(self.broker_name), self.queue_id))

    def __lt__(self, other: MessageQueue) -> bool:
        return self._key < other._key

    def __le__(self, other: MessageQueue) -> bool:
        return self._key <= other._key

    def __gt__(self, other: MessageQueue) -> bool:
        return self._key > other._key

    def __ge__(self, other: MessageQueue) -> bool:
        return self._key >= other._key

    def sort_key(self) -> tuple[str, str, int]:
        return self._key

    def __str__(self) -> str:
        # MessageQueue.toString(); hashed by the consistent-hash strategy
        return (f"MessageQueue [topic={self.topic}, brokerName={self.broker_name}, "
                f"queueId={self.queue_id}]")

    @property
    def short(self) -> str:
        """``broker-a:3``: the form operators type in ``--queues``."""
        return f"{self.broker_name}:{self.queue_id}"

    def to_dict(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "queueId": self.queue_id, "topic": self.topic}

    @classmethod
    def from_dict_or_none(cls, d: Any) -> MessageQueue | None:
        k = queue_key(d)
        return None if k is None else cls(k.topic, k.broker_name, k.queue_id)

    @classmethod
    def of(cls, q: Any) -> MessageQueue:
        """This model's queue for any queue (the codec's QueueKey, or a MessageQueue)."""
        return q if isinstance(q, MessageQueue) else cls(q.topic, q.broker_name, q.queue_id)

    @classmethod
    def from_dict(cls, d: Any) -> MessageQueue:
        mq = cls.from_dict_or_none(d)
        if mq is None:
            raise BodyError(f"not a MessageQueue (needs topic, brokerName, queueId): {d!r}")
        return mq


def _req(d: Any, key: str, kind: type | tuple[type, ...], what: str) -> Any:
    if not isinstance(d, dict):
        raise BodyError(f"{what}: expected an object, found {type(d).__name__}")
    v = d.get(key)
    if not isinstance(v, kind) or (kind is int and isinstance(v, bool)):
        raise BodyError(f"{what}: field {key!r} missing or not {getattr(kind, '__name__', kind)}")
    return v


def _int(d: dict[str, Any], key: str, default: int = 0) -> int:
    v = d.get(key, default)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        return int(v)
    if isinstance(v, str) and is_digits(v.lstrip("-")) and len(v) <= 20:
        return int(v)
    return default


def decode_perm(perm: int) -> str:
    """``PermName.perm2String``-style flags: e.g. 6 -> ``RW-``."""
    return (("R" if perm & PERM_READ else "-") + ("W" if perm & PERM_WRITE else "-")
            + ("X" if perm & PERM_INHERIT else "-"))


@dataclass(frozen=True, slots=True)
class BrokerData:
    cluster: str
    broker_name: str
    addrs: dict[int, str]
    zone_name: str | None = None

    @property
    def master_addr(self) -> str | None:
        return self.addrs.get(MASTER_ID)

    def select_addr(self) -> str | None:
        """``BrokerData.selectBrokerAddr``: the master if present, else any replica."""
        if MASTER_ID in self.addrs:
            return self.addrs[MASTER_ID]
        return self.addrs[min(self.addrs)] if self.addrs else None

    @classmethod
    def from_body(cls, d: Any) -> BrokerData:
        name = _req(d, "brokerName", str, "BrokerData")
        raw = d.get("brokerAddrs") or {}
        if not isinstance(raw, dict):
            raise BodyError("BrokerData: brokerAddrs is not a map")
        addrs: dict[int, str] = {}
        for k, v in raw.items():
            try:
                addrs[int(k)] = str(v)
            except (TypeError, ValueError):
                raise BodyError(f"BrokerData: broker id {k!r} is not a number") from None
        return cls(cluster=str(d.get("cluster") or ""), broker_name=name, addrs=addrs,
                   zone_name=d.get("zoneName"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"brokerAddrs": dict(sorted(self.addrs.items())),
                             "brokerName": self.broker_name, "cluster": self.cluster,
                             "enableActingMaster": False}
        if self.zone_name:
            d["zoneName"] = self.zone_name
        return d


@dataclass(frozen=True, slots=True)
class QueueData:
    broker_name: str
    read_queue_nums: int
    write_queue_nums: int
    perm: int
    topic_sys_flag: int = 0

    @property
    def readable(self) -> bool:
        return bool(self.perm & PERM_READ)

    @property
    def writeable(self) -> bool:
        return bool(self.perm & PERM_WRITE)

    @classmethod
    def from_body(cls, d: Any) -> QueueData:
        name = _req(d, "brokerName", str, "QueueData")
        # 4.x before 4.9.0 spells it topicSynFlag (commit 4117d001)
        flag = d.get("topicSysFlag", d.get("topicSynFlag", 0))
        return cls(broker_name=name, read_queue_nums=_int(d, "readQueueNums"),
                   write_queue_nums=_int(d, "writeQueueNums"), perm=_int(d, "perm"),
                   topic_sys_flag=flag if isinstance(flag, int) else 0)

    def to_dict(self) -> dict[str, Any]:
        return {"brokerName": self.broker_name, "perm": self.perm,
                "readQueueNums": self.read_queue_nums, "topicSysFlag": self.topic_sys_flag,
                "writeQueueNums": self.write_queue_nums}


@dataclass(frozen=True, slots=True)
class TopicRoute:
    topic: str
    brokers: tuple[BrokerData, ...]
    queues: tuple[QueueData, ...]
    order_topic_conf: str | None = None

    @classmethod
    def from_body(cls, topic: str, d: Any) -> TopicRoute:
        if not isinstance(d, dict):
            raise BodyError("TopicRouteData: expected an object")
        bds = d.get("brokerDatas") or []
        qds = d.get("queueDatas") or []
        if not isinstance(bds, list) or not isinstance(qds, list):
            raise BodyError("TopicRouteData: brokerDatas/queueDatas are not lists")
        return cls(topic=topic,
                   brokers=tuple(sorted((BrokerData.from_body(b) for b in bds),
                                        key=lambda b: b.broker_name)),
                   queues=tuple(sorted((QueueData.from_body(q) for q in qds),
                                       key=lambda q: q.broker_name)),
                   order_topic_conf=d.get("orderTopicConf"))

    def broker(self, name: str) -> BrokerData | None:
        for b in self.brokers:
            if b.broker_name == name:
                return b
        return None

    def subscribe_queues(self) -> list[MessageQueue]:
        """``MQClientInstance.topicRouteData2TopicSubscribeInfo``: readable queues only."""
        out: list[MessageQueue] = []
        for qd in self.queues:
            if qd.readable:
                out.extend(MessageQueue(self.topic, qd.broker_name, q)
                           for q in range(qd.read_queue_nums))
        return sorted(out)

    def master_addrs(self) -> dict[str, str | None]:
        return {b.broker_name: b.master_addr for b in self.brokers}

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"brokerDatas": [b.to_dict() for b in self.brokers],
                             "filterServerTable": {},
                             "queueDatas": [q.to_dict() for q in self.queues]}
        if self.order_topic_conf:
            d["orderTopicConf"] = self.order_topic_conf
        return d


@dataclass(frozen=True, slots=True)
class ClusterInfo:
    brokers: dict[str, BrokerData]
    clusters: dict[str, tuple[str, ...]]

    @classmethod
    def from_body(cls, d: Any) -> ClusterInfo:
        if not isinstance(d, dict):
            raise BodyError("ClusterInfo: expected an object")
        bt = d.get("brokerAddrTable") or {}
        ct = d.get("clusterAddrTable") or {}
        if not isinstance(bt, dict) or not isinstance(ct, dict):
            raise BodyError("ClusterInfo: tables are not maps")
        return cls(brokers={str(k): BrokerData.from_body(v) for k, v in bt.items()},
                   clusters={str(k): tuple(sorted(str(x) for x in (v or [])))
                             for k, v in ct.items()})


@dataclass(frozen=True, slots=True)
class Subscription:
    topic: str
    expression: str
    expression_type: str = "TAG"
    sub_version: int = 0
    tags: tuple[str, ...] = ()

    @classmethod
    def from_body(cls, d: Any) -> Subscription:
        topic = _req(d, "topic", str, "SubscriptionData")
        tags = d.get("tagsSet") or []
        return cls(topic=topic, expression=str(d.get("subString", d.get("expression", "*"))),
                   expression_type=str(d.get("expressionType") or "TAG"),
                   sub_version=_int(d, "subVersion"),
                   tags=tuple(sorted(str(t) for t in tags)) if isinstance(tags, list) else ())

    def to_dict(self) -> dict[str, Any]:
        return {"classFilterMode": False, "codeSet": [], "expressionType": self.expression_type,
                "subString": self.expression, "subVersion": self.sub_version,
                "tagsSet": list(self.tags), "topic": self.topic}


@dataclass(frozen=True, slots=True)
class Connection:
    client_id: str
    client_addr: str
    language: str
    version: int

    @classmethod
    def from_body(cls, d: Any) -> Connection:
        return cls(client_id=_req(d, "clientId", str, "Connection"),
                   client_addr=str(d.get("clientAddr") or ""),
                   language=str(d.get("language") or ""), version=_int(d, "version"))


@dataclass(frozen=True, slots=True)
class ConsumerConnection:
    connections: tuple[Connection, ...]
    consume_type: str | None
    message_model: str | None
    consume_from_where: str | None
    subscriptions: dict[str, Subscription]

    @classmethod
    def from_body(cls, d: Any) -> ConsumerConnection:
        if not isinstance(d, dict):
            raise BodyError("ConsumerConnection: expected an object")
        conns = d.get("connectionSet") or []
        subs = d.get("subscriptionTable") or {}
        return cls(connections=tuple(sorted((Connection.from_body(c) for c in conns),
                                            key=lambda c: java_string_key(c.client_id))),
                   consume_type=d.get("consumeType"), message_model=d.get("messageModel"),
                   consume_from_where=d.get("consumeFromWhere"),
                   subscriptions={str(k): Subscription.from_body(v) for k, v in subs.items()})


@dataclass(frozen=True, slots=True)
class OffsetWrapper:
    """``OffsetWrapper`` of GET_CONSUME_STATS. ``pullOffset`` came in 5.x (4.9.3's
    admin/OffsetWrapper.java has brokerOffset, consumerOffset and lastTimestamp only; corpus
    4.9.3/never-committed/208_*): absent means unknown (``None``), never the consumer offset."""

    broker_offset: int
    consumer_offset: int
    pull_offset: int | None
    last_timestamp: int

    @property
    def diff(self) -> int:
        return self.broker_offset - self.consumer_offset

    @property
    def inflight(self) -> int | None:
        """Pulled but not committed (``pullOffset - consumerOffset``), ``None`` when the broker
        does not report ``pullOffset``."""
        if self.pull_offset is None:
            return None
        return max(0, self.pull_offset - self.consumer_offset)

    @classmethod
    def from_body(cls, d: Any) -> OffsetWrapper:
        if not isinstance(d, dict):
            raise BodyError("OffsetWrapper: expected an object")
        pull = d.get("pullOffset")
        return cls(broker_offset=_int(d, "brokerOffset"), consumer_offset=_int(d, "consumerOffset"),
                   pull_offset=_int(d, "pullOffset") if pull is not None else None,
                   last_timestamp=_int(d, "lastTimestamp"))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"brokerOffset": self.broker_offset,
                             "consumerOffset": self.consumer_offset,
                             "lastTimestamp": self.last_timestamp}
        if self.pull_offset is not None:
            d["pullOffset"] = self.pull_offset
        return d


def queue_map(value: Any, value_key: str = "offset") -> dict[MessageQueue, Any]:
    """A ``Map<MessageQueue, V>`` in any of its wire forms (:func:`mqctl.remoting.fastjson.mq_map`),
    keyed by :class:`MessageQueue`."""
    return {MessageQueue.of(k): v for k, v in mq_map(value, value_key).items()}


def _offset_table(d: Any, what: str, tps_key: str) -> tuple[dict[MessageQueue, Any], float]:
    """The ``offsetTable`` (``Map<MessageQueue, V>`` in any wire form) and the TPS field of a
    ConsumeStats or TopicStatsTable body."""
    if not isinstance(d, dict):
        raise BodyError(f"{what}: expected an object")
    tps = d.get(tps_key) or 0.0
    return queue_map(d.get("offsetTable")), float(tps) if isinstance(tps, (int, float)) else 0.0


@dataclass(frozen=True, slots=True)
class ConsumeStats:
    offsets: dict[MessageQueue, OffsetWrapper]
    consume_tps: float = 0.0

    @classmethod
    def from_body(cls, d: Any) -> ConsumeStats:
        table, tps = _offset_table(d, "ConsumeStats", "consumeTps")
        return cls({mq: OffsetWrapper.from_body(v) for mq, v in table.items()}, tps)


@dataclass(frozen=True, slots=True)
class TopicOffset:
    min_offset: int
    max_offset: int
    last_update_timestamp: int

    @classmethod
    def from_body(cls, d: Any) -> TopicOffset:
        if not isinstance(d, dict):
            raise BodyError("TopicOffset: expected an object")
        return cls(_int(d, "minOffset"), _int(d, "maxOffset"), _int(d, "lastUpdateTimestamp"))


@dataclass(frozen=True, slots=True)
class TopicStats:
    offsets: dict[MessageQueue, TopicOffset]
    put_tps: float = 0.0

    @classmethod
    def from_body(cls, d: Any) -> TopicStats:
        table, tps = _offset_table(d, "TopicStatsTable", "topicPutTps")
        return cls({mq: TopicOffset.from_body(v) for mq, v in table.items()}, tps)


@dataclass(frozen=True, slots=True)
class QueueTimeSpan:
    mq: MessageQueue
    min_timestamp: int
    max_timestamp: int
    consume_timestamp: int
    delay_time: int

    @classmethod
    def from_body(cls, d: Any) -> QueueTimeSpan:
        if not isinstance(d, dict):
            raise BodyError("QueueTimeSpan: expected an object")
        return cls(mq=MessageQueue.from_dict(d.get("messageQueue")),
                   min_timestamp=_int(d, "minTimeStamp"), max_timestamp=_int(d, "maxTimeStamp"),
                   consume_timestamp=_int(d, "consumeTimeStamp"),
                   delay_time=_int(d, "delayTime"))

    def next_store_ts(self, now_ms: int) -> int:
        """Store time of the first unconsumed message as the broker used it: ``now - delay``."""
        return now_ms - self.delay_time

    def delay_is_bogus(self, now_ms: int, slack_ms: int = 3_600_000) -> bool:
        """The broker had no store time for the next message, so ``delayTime`` is ``now - 0``.

        AdminBrokerProcessor.queryConsumeTimeSpan (4.9.3 and 5.3.3) computes ``delayTime =
        now - getMessageStoreTimeStamp(consumerOffset)`` with ``consumerOffset =
        ConsumerOffsetManager.queryOffset(...)``, which is -1 when the group never committed
        for the queue; the store has no message at -1 (nor below the min offset) and answers
        0/-1, so ``delayTime`` is about an epoch-ms (corpus */never-committed/303_*: 1.795e12,
        consumeTimeStamp == minTimeStamp). A real next message is never older than the oldest
        retained one: an implied store time more than ``slack_ms`` (clock skew between mqctl
        and the broker) before ``minTimeStamp`` can only be that fallback."""
        if self.delay_time <= 0:
            return False
        nxt = self.next_store_ts(now_ms)
        floor = self.min_timestamp if self.min_timestamp > 0 else self.consume_timestamp
        if floor <= 0:
            return nxt <= slack_ms
        return nxt < floor - slack_ms


@dataclass(frozen=True, slots=True)
class ProcessQueueInfo:
    """``ProcessQueueInfo`` of a client's ``mqTable`` (lock and progress flags)."""

    commit_offset: int = 0
    cached_msg_count: int = 0
    cached_msg_min_offset: int = 0
    cached_msg_max_offset: int = 0
    locked: bool = False
    try_unlock_times: int = 0
    last_lock_timestamp: int = 0
    dropped: bool = False
    last_pull_timestamp: int = 0
    last_consume_timestamp: int = 0
    transaction_msg_count: int = 0
    cached_msg_size_mib: int | None = None  # cachedMsgSizeInMiB (None: not reported)

    @classmethod
    def from_body(cls, d: Any) -> ProcessQueueInfo:
        if not isinstance(d, dict):
            raise BodyError("ProcessQueueInfo: expected an object")
        return cls(commit_offset=_int(d, "commitOffset"),
                   cached_msg_count=_int(d, "cachedMsgCount"),
                   cached_msg_min_offset=_int(d, "cachedMsgMinOffset"),
                   cached_msg_max_offset=_int(d, "cachedMsgMaxOffset"),
                   locked=bool(d.get("locked", False)),
                   try_unlock_times=_int(d, "tryUnlockTimes"),
                   last_lock_timestamp=_int(d, "lastLockTimestamp"),
                   dropped=bool(d.get("droped", d.get("dropped", False))),
                   last_pull_timestamp=_int(d, "lastPullTimestamp"),
                   last_consume_timestamp=_int(d, "lastConsumeTimestamp"),
                   transaction_msg_count=_int(d, "transactionMsgCount"),
                   cached_msg_size_mib=(_int(d, "cachedMsgSizeInMiB")
                                        if d.get("cachedMsgSizeInMiB") is not None else None))

    def to_dict(self) -> dict[str, Any]:
        return {"cachedMsgCount": self.cached_msg_count,
                "cachedMsgMaxOffset": self.cached_msg_max_offset,
                "cachedMsgMinOffset": self.cached_msg_min_offset,
                "cachedMsgSizeInMiB": self.cached_msg_size_mib or 0,
                "commitOffset": self.commit_offset, "droped": self.dropped,
                "lastConsumeTimestamp": self.last_consume_timestamp,
                "lastLockTimestamp": self.last_lock_timestamp,
                "lastPullTimestamp": self.last_pull_timestamp, "locked": self.locked,
                "transactionMsgCount": self.transaction_msg_count,
                "transactionMsgMaxOffset": 0, "transactionMsgMinOffset": 0,
                "tryUnlockTimes": self.try_unlock_times}


@dataclass(frozen=True, slots=True)
class ConsumerRunningInfo:
    properties: dict[str, str]
    subscriptions: tuple[Subscription, ...]
    mq_table: dict[MessageQueue, ProcessQueueInfo]
    mq_pop_table: dict[MessageQueue, dict[str, Any]] = field(default_factory=dict)
    status_table: dict[str, dict[str, Any]] = field(default_factory=dict)
    # when mqctl received this answer (epoch ms, mqctl's clock; 0: not recorded): the moment
    # what it reports was true (mqctl.admin.Admin.running_info stamps it)
    received_ts: int = field(default=0, compare=False)

    @property
    def orderly(self) -> bool:
        return self.properties.get("PROP_CONSUMEORDERLY") == "true"

    @property
    def consume_type(self) -> str | None:
        return self.properties.get("PROP_CONSUME_TYPE")

    @property
    def pops(self) -> bool:
        """The client pops (5.x): it holds pop process queues (``mqPopTable``), or reports
        CONSUME_POP. A 5.x remoting push consumer in pop mode (``clientRebalance=false`` and
        the group's message request mode POP, set with ``mqadmin setConsumeMode -m POP``)
        reports CONSUME_PASSIVELY (DefaultMQPushConsumerImpl.consumeType) and heartbeats it
        too: only its ``mqPopTable`` (RebalanceImpl.popProcessQueueTable, filled from the
        broker's QUERY_ASSIGNMENT) says that it pops. One rule for every view."""
        return self.consume_type == "CONSUME_POP" or bool(self.mq_pop_table)

    def pop_queues(self, topic: str) -> list[MessageQueue]:
        """The queues of ``topic`` the broker assigned this client to pop from
        (QueryAssignmentProcessor.allocate4Pop): queue id -1 stands for every queue of that
        broker (popShareQueueNum 0, or at least the member count - 1)."""
        return sorted(mq for mq in self.mq_pop_table if mq.topic == topic)

    @property
    def client_rebalance(self) -> bool | None:
        """``clientRebalance`` (5.x DefaultMQPushConsumer; None on 4.x): False makes the
        client ask the broker for its queues (QUERY_ASSIGNMENT) unless it is orderly or
        BROADCASTING (RebalancePushImpl.clientRebalance)."""
        v = self.properties.get("clientRebalance")
        return None if v is None else v == "true"

    @property
    def strategy_class(self) -> str | None:
        """The ``allocateMessageQueueStrategy`` class name without the identity hash."""
        s = self.properties.get("allocateMessageQueueStrategy")
        if not s:
            return None
        return s.split("@", 1)[0]

    @property
    def strategy_name(self) -> str | None:
        """The strategy's RocketMQ name (STRATEGY_CLASS_NAMES: AVG, ...), else the class's
        simple name; None when the client does not report one."""
        cls = self.strategy_class
        if not cls:
            return None
        return STRATEGY_CLASS_NAMES.get(cls, cls.rsplit(".", 1)[-1])

    @classmethod
    def from_body(cls, d: Any) -> ConsumerRunningInfo:
        if not isinstance(d, dict):
            raise BodyError("ConsumerRunningInfo: expected an object")
        props = d.get("properties") or {}
        subs = d.get("subscriptionSet") or []
        return cls(properties={str(k): str(v) for k, v in props.items()},
                   subscriptions=tuple(Subscription.from_body(s) for s in subs),
                   mq_table={mq: ProcessQueueInfo.from_body(v)
                             for mq, v in queue_map(d.get("mqTable")).items()},
                   mq_pop_table=queue_map(d.get("mqPopTable")),
                   status_table={str(k): v for k, v in (d.get("statusTable") or {}).items()})


def pop_queue_text(queues: Iterable[MessageQueue]) -> str:
    """What a pop client was assigned to pop from: ``every queue of broker-a, broker-b``
    (queue id -1: QueryAssignmentProcessor.allocate4Pop with popShareQueueNum 0, or at least
    the member count - 1), else its queues (``broker-a:0``); ``nothing`` when none."""
    qs = list(queues)
    whole = sorted({mq.broker_name for mq in qs if mq.queue_id < 0})
    some = sorted(mq for mq in qs if mq.queue_id >= 0)
    parts = ([f"every queue of {', '.join(whole)}"] if whole else []) + [
        mq.short for mq in some]
    return ", ".join(parts) or "nothing"


def wait_ack_count(pop_queue_info: Any) -> int:
    """PopProcessQueueInfo.waitAckCount of one ``mqPopTable`` entry: messages popped and not
    yet acked (invisible); 0 when absent or not a number."""
    try:
        return max(0, int((pop_queue_info or {}).get("waitAckCount") or 0))
    except (TypeError, ValueError, AttributeError):
        return 0


STRATEGY_CLASS_NAMES = {
    "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely": "AVG",
    "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle":
        "AVG_BY_CIRCLE",
    "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueConsistentHash":
        "CONSISTENT_HASH",
    "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByConfig": "CONFIG",
    "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueByMachineRoom":
        "MACHINE_ROOM",
    "org.apache.rocketmq.client.consumer.rebalance.AllocateMachineRoomNearby":
        "MACHINE_ROOM_NEARBY",
}


def parse_offset_table_key(key: str) -> tuple[str, str, bool] | None:
    """Split a ``consumerOffset.json`` key ``topic@group[@broadcast]`` at the first ``@``."""
    if "@" not in key:
        return None
    topic, group = key.split("@", 1)
    broadcast = False
    if group.endswith("@broadcast"):
        group = group[: -len("@broadcast")]
        broadcast = True
    if not topic or not group:
        return None
    return topic, group, broadcast
