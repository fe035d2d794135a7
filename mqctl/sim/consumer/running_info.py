"""What a simulated consumer answers to GET_CONSUMER_RUNNING_INFO
(``DefaultMQPushConsumerImpl.consumerRunningInfo``): its properties, process queues,
subscriptions and per-topic statistics (``ConsumerStatsManager``)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mqctl.models import RETRY_PREFIX, MessageQueue
from mqctl.sim.consumer.state import (
    CACHE_CAP,
    COMMIT_MS,
    HEARTBEAT_MS,
    MAX_SPAN,
    PQ,
    PULL_BATCH,
    PULL_THRESHOLD_FOR_QUEUE,
    STATS_HOUR_MS,
    ConsumerState,
    strategy_class,
)
from mqctl.versions import V5_0_0, version_name

if TYPE_CHECKING:
    pass


class RunningInfo(ConsumerState):
    """A simulated consumer's running info."""

    # --------------------------------------------------------------- running info

    def _properties(self) -> dict[str, str]:
        """``ConsumerRunningInfo.properties``: the push consumer's fields (the real client
        dumps DefaultMQPushConsumer by reflection, MixAll.object2Properties) plus the PROP_*
        entries. The keys and constant values are those of the real 4.9.3 and 5.3.3 clients
        (running-info/307_*.json); object-valued fields read ``class@identityHash``."""
        v5 = self.spec.version >= V5_0_0

        def obj(cls: str) -> str:
            return f"{cls}@{abs(hash((self.client_id, cls))) % 0x7FFFFFFF:x}"

        threads = str(self.consume_threads)
        store = ("org.apache.rocketmq.client.consumer.store.LocalFileOffsetStore"
                 if self.group.model == "BROADCASTING"
                 else "org.apache.rocketmq.client.consumer.store.RemoteBrokerOffsetStore")
        start = datetime.fromtimestamp((self.start_ts - 30 * 60_000) / 1000, UTC)
        props = {
            "PROP_CLIENT_VERSION": version_name(self.spec.version),
            "PROP_CONSUMEORDERLY": "true" if self.group.orderly else "false",
            "PROP_CONSUMER_START_TIMESTAMP": str(self.start_ts),
            "PROP_CONSUME_TYPE": self.reported_consume_type,
            "PROP_NAMESERVER_ADDR": self.cluster.namesrv_addr + ";",
            "PROP_THREADPOOL_CORE_SIZE": threads,
            "adjustThreadPoolNumsThreshold": "100000",
            "allocateMessageQueueStrategy": obj(strategy_class(self.strategy)),
            "awaitTerminationMillisWhenShutdown": "0",
            "consumeConcurrentlyMaxSpan": "2000",
            "consumeFromWhere": self.group.consume_from,
            "consumeMessageBatchMaxSize": "1",
            "consumeThreadMax": threads, "consumeThreadMin": threads,
            "consumeTimeout": "15",
            # DefaultMQPushConsumer: now - 30 min, yyyyMMddHHmmss in the host's zone (UTC)
            "consumeTimestamp": start.strftime("%Y%m%d%H%M%S"),
            "consumerGroup": self.group.name,
            "defaultMQPushConsumerImpl": obj(
                "org.apache.rocketmq.client.impl.consumer.DefaultMQPushConsumerImpl"),
            "log": ("Logger[org.apache.rocketmq.client.consumer.DefaultMQPushConsumer]" if v5
                    else obj("org.apache.rocketmq.logging.InnerLoggerFactory$InnerLogger")),
            "maxReconsumeTimes": "-1",
            "messageListener": obj("mqctl.sim.consumer.SimListener"),
            "messageModel": self.group.model,
            "offsetStore": obj(store),
            "postSubscriptionWhenPull": "false",
            "pullBatchSize": str(PULL_BATCH),
            "pullInterval": "0",
            "pullThresholdForQueue": str(PULL_THRESHOLD_FOR_QUEUE),
            "pullThresholdForTopic": "-1",
            "pullThresholdSizeForQueue": "100",
            "pullThresholdSizeForTopic": "-1",
            "subscription": "{}",
            "suspendCurrentQueueTimeMillis": "1000",
            "unitMode": "false",
        }
        if v5:  # ClientConfig's fields joined the dump in 5.x
            ns = self.cluster.namesrv_addr
            props.update({
                "accessChannel": "LOCAL", "clientCallbackExecutorThreads": "2",
                # a pop client asks the broker for its queues (QUERY_ASSIGNMENT): its
                # clientRebalance is off (RebalancePushImpl.clientRebalance)
                "clientIP": self.client_id.split("@", 1)[0],
                "clientRebalance": "false" if self.pop else "true",
                "decodeDecompressBody": "true", "decodeReadBody": "true",
                "detectInterval": "2000", "detectTimeout": "200",
                "enableHeartbeatChannelEventListener": "true",
                "enableStreamRequestType": "false", "enableTrace": "false",
                "heartbeatBrokerInterval": str(HEARTBEAT_MS),
                "instanceName": self.client_id.split("@", 1)[-1], "language": "JAVA",
                "mqClientApiTimeout": "3000", "namespaceInitialized": "true",
                "namesrvAddr": ns, "persistConsumerOffsetInterval": str(COMMIT_MS),
                "pollNameServerInterval": "30000", "popBatchNums": "32",
                "popInvisibleTime": "60000", "popThresholdForQueue": "96",
                "pullBatchSizeInBytes": "262144", "pullTimeDelayMillsWhenException": "1000",
                "sendLatencyEnable": "false", "socksProxyConfig": "{}",
                "startDetectorEnable": "false", "traceMsgBatchNum": "10",
                "useHeartbeatV2": "false", "useTLS": "false", "vipChannelEnabled": "false"})
        return props

    def _pq_info(self, mq: MessageQueue, pq: PQ) -> dict[str, Any]:
        """ProcessQueue.fillProcessQueueInfo. The cache holds what was pulled and not consumed
        yet: everything up to the queue's end, at most ~1024 (flow control); an orderly 4.x
        queue not yet marked locked is not pulled, nor a queue whose pulls the broker refuses
        (consumeEnable=false). commitOffset is the offset store's value
        (RemoteBrokerOffsetStore, MEMORY_FIRST_THEN_STORE): 5.x reads -1 for a retry queue no
        message came through (4.9.3 reads 0: its broker answers 0 for a missing offset). A
        hung message (``stuck_message_at``) stays cached with the ones pulled after it (one
        batch once they span more than consumeConcurrentlyMaxSpan)."""
        b = self.cluster.brokers.get(mq.broker_name)
        cached = 0
        lo = pq.position if pq.head is None else pq.head
        hung = 0
        if (b is not None and not pq.dropped and (pq.locked or not self.orderly)
                and self.cluster.broker_up(mq.broker_name)
                and b.consume_enabled(self.group.name)):
            mx = b.max_offset(mq.topic, mq.queue_id)
            cap = CACHE_CAP
            if pq.head is not None:
                hung = 1 if mx > pq.position else 0
                if pq.head - pq.position > MAX_SPAN:
                    # the span flow control: a pull waits until the batch before it is
                    # consumed (the span of the cache is then 0 again), so one batch at most
                    cap = PULL_BATCH + hung
            cached = min(cap - hung, max(0, mx - lo))
        elif b is not None and not pq.dropped and pq.refused_end is not None:
            cached = max(0, pq.refused_end - lo)  # pulled before the broker refused
        commit = pq.position
        if (self.spec.version >= V5_0_0 and mq.topic.startswith(RETRY_PREFIX)
                and not pq.consumed_any):
            commit = -1
        count = cached + hung
        return {
            "cachedMsgCount": count,
            "cachedMsgMaxOffset": (lo + cached - 1 if cached else pq.position) if count else 0,
            "cachedMsgMinOffset": (pq.position if hung else lo) if count else 0,
            "cachedMsgSizeInMiB": 0, "commitOffset": commit, "droped": pq.dropped,
            "lastConsumeTimestamp": pq.last_consume_ts,
            "lastLockTimestamp": pq.last_lock_ts, "lastPullTimestamp": pq.last_pull_ts,
            "locked": pq.locked, "transactionMsgCount": 0,
            "transactionMsgMaxOffset": 0, "transactionMsgMinOffset": 0,
            "tryUnlockTimes": pq.try_unlock_times}

    def consume_rt(self) -> float:
        """The statusTable's consumeRT (ms per message, one message a batch): ``consume_rt``,
        else the time that makes ``rate`` the capacity of every consume thread, else 1."""
        if self.spec.consume_rt_ms:
            return float(self.spec.consume_rt_ms)
        if self.spec.rate:
            return self.consume_threads * 1000.0 / self.spec.rate
        if self.behaviour == "slow":
            return self.consume_threads * 1000.0
        return 1.0

    def status(self, topic: str) -> dict[str, Any]:
        """ConsumerStatsManager.consumeStatus(group, topic): consumeOKTPS and consumeFailedTPS
        over the last minute, consumeFailedMsgs over the last hour, consumeRT while consuming
        (0 when nothing was consumed in the last hour)."""
        now = self.now()
        minute = [x for x in self._stats if x[1] == topic and now - x[0] <= 60_000]
        hour = [x for x in self._stats if x[1] == topic and now - x[0] <= STATS_HOUR_MS]
        span = max(1.0, (now - minute[0][0]) / 1000 + 1) if minute else 1.0
        ok = sum(x[2] for x in minute) / span
        failed = sum(x[3] for x in minute) / span
        done = sum(x[2] + x[3] for x in hour)
        return {"consumeFailedMsgs": sum(x[3] for x in hour), "consumeFailedTPS": failed,
                "consumeOKTPS": ok, "consumeRT": self.consume_rt() if done else 0.0,
                "pullRT": 1.0 if done else 0.0, "pullTPS": ok + failed}

    def running_info(self) -> dict[str, Any]:
        """ConsumerRunningInfo as the client of this version answers it (4.x has no
        mqPopTable and no userConsumerInfo)."""
        mq_table: dict[MessageQueue, Any] = {}
        pop_table: dict[MessageQueue, Any] = {}
        for mq, pq in self.pqs.items():
            if self.pop:
                # one PopProcessQueue per broker, queue id -1: QueryAssignmentProcessor.
                # allocate4Pop (popShareQueueNum 0, the default) assigns
                # MessageQueue(topic, broker, -1) to every pop client (5.3.3)
                key = MessageQueue(mq.topic, mq.broker_name, -1)
                e = pop_table.setdefault(key, {"droped": False, "lastPopTimestamp": 0,
                                               "waitAckCount": 0})
                e["droped"] = e["droped"] or pq.dropped
                e["lastPopTimestamp"] = max(e["lastPopTimestamp"], pq.last_pull_ts)
                e["waitAckCount"] += pq.last_batch
                continue
            mq_table[mq] = self._pq_info(mq, pq)
        status = {t: self.status(t) for t in self.topics()}
        out: dict[str, Any] = {"mqTable": mq_table, "properties": self._properties(),
                               "statusTable": status,
                               "subscriptionSet": list(self.subscription_data().values())}
        if self.spec.version >= V5_0_0:
            out["mqPopTable"] = pop_table
            out["userConsumerInfo"] = {}
        return out
