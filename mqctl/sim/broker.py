"""A simulated broker: topics, offsets, resets, locks, group membership, and request handlers.

Behaviour follows apache/rocketmq (``broker/.../processor/AdminBrokerProcessor``,
``ConsumerManageProcessor``, ``ClientManageProcessor``, ``client/ConsumerManager``,
``client/rebalance/RebalanceLockManager``, ``offset/ConsumerOffsetManager``,
``client/net/Broker2Client``) as summarised in rocketmq-protocol.md sections 3-6, per the
broker's ``version`` (the release each answer changed in is named in ``mqctl.versions``); the
answers are checked against the real 4.9.3 and 5.3.3 corpus by tests/replay.
"""

from __future__ import annotations

import asyncio
import datetime
import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.models import DLQ_PREFIX, RETRY_PREFIX, MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.logs import LockLog, mq_text
from mqctl.sim.messages import encode, make_message
from mqctl.sim.ports import Channel
from mqctl.sim.server import ServerConn
from mqctl.sim.store import QueueLog
from mqctl.versions import (
    V3_0_7_SNAPSHOT,
    V3_1_8_SNAPSHOT,
    V5_0_0,
    V5_1_0,
    V5_1_1,
    V5_1_3,
    V5_3_0,
    V5_3_2,
    V5_3_3,
    version_name,
)

if TYPE_CHECKING:
    from mqctl.sim.ports import BrokerSite, SimClient

STATS_WINDOW_MS = 60_000  # BrokerStatsManager's "in minute" stats (StatsItem.getStatsDataInMinute)
LOCK_LEASE_MS = 60_000  # RebalanceLockManager.REBALANCE_LOCK_MAX_LIVE_TIME
CHANNEL_EXPIRED_MS = 120_000  # ConsumerManager.CHANNEL_EXPIRED_TIMEOUT, scanned every 10 s
# MessageStoreConfig.messageDelayLevel (levels 1..18): a message sent back with reconsumeTimes
# k reaches %RETRY%<group> after level 3 + k (AbstractSendMessageProcessor.consumerSendMsgBack)
DELAY_LEVELS_MS = (1_000, 5_000, 10_000, 30_000, 60_000, 120_000, 180_000, 240_000, 300_000,
                   360_000, 420_000, 480_000, 540_000, 600_000, 1_200_000, 1_800_000,
                   3_600_000, 7_200_000)

R = ResponseCode
C = RequestCode


@dataclass
class LockEntry:
    client_id: str
    last_update: int


@dataclass
class GroupInfo:
    """``ConsumerGroupInfo``'s group-level state (the channels live in ``SimBroker.channels``).
    """

    consume_type: str
    message_model: str
    consume_from_where: str
    subs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def update_subscription(self, new: dict[str, dict[str, Any]]) -> bool:
        changed = False
        for topic, sub in new.items():
            old = self.subs.get(topic)
            if old is None:
                self.subs[topic] = sub
                changed = True
            elif int(sub.get("subVersion") or 0) > int(old.get("subVersion") or 0):
                self.subs[topic] = sub  # replaced, but not reported as a change
        for topic in [t for t in self.subs if t not in new]:
            del self.subs[topic]  # "subscription changed, group: {} remove topic {} {}"
            changed = True
        return changed


@dataclass
class TopicConf:
    name: str
    read: int
    write: int
    perm: int = 6
    order: bool = False

    def to_body(self) -> dict[str, Any]:
        return {"attributes": {}, "order": self.order, "perm": self.perm,
                "readQueueNums": self.read, "topicFilterType": "SINGLE_TAG",
                "topicName": self.name, "topicSysFlag": 0, "writeQueueNums": self.write}


@dataclass
class GroupConf:
    """``SubscriptionGroupConfig``. An auto-created group (and the sim's scenario groups) has
    consumeFromMinEnable and consumeBroadcastEnable true; one created by mqadmin
    ``updateSubGroup`` without -m/-d has them false (other-requests/201_*: NC_NEVER)."""

    name: str
    orderly: bool = False
    broadcast: bool = False
    consume_from_min: bool = True
    consume_broadcast: bool = True
    # the rest of SubscriptionGroupConfig, at RocketMQ's defaults (other-requests/201_*)
    consume_enable: bool = True
    retry_queue_nums: int = 1
    retry_max_times: int = 16
    broker_id: int = 0
    which_broker_when_slowly: int = 1
    notify_ids_changed: bool = True
    consume_timeout_minute: int = 15
    retry_policy: dict[str, Any] = field(default_factory=lambda: {"type": "CUSTOMIZED"})


# SubscriptionGroupManager.init (4.9.3 and 5.3.3): groups every broker holds from its start,
# whatever its autoCreateSubscriptionGroup says; TOOLS_CONSUMER (MixAll.TOOLS_CONSUMER_GROUP) is
# the group mqadmin's tools pull with (queryMsgByOffset), and so does `mqctl message show`
BUILTIN_GROUPS = ("TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP",
                  "CID_ONS-HTTP-PROXY", "CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION",
                  "CID_ONSAPI_OWNER")


@dataclass
class SimBroker:
    cluster: BrokerSite  # what it sees of the cluster it runs in (mqctl.sim.ports)
    name: str
    server_side_reset: bool = True
    version: int = 479  # MQVersion ordinal the broker reports (GET_BROKER_RUNTIME_INFO)
    notify_ids_changed: bool = True
    auto_create_group: bool = True
    topics: dict[str, TopicConf] = field(default_factory=dict)
    logs: dict[tuple[str, int], QueueLog] = field(default_factory=dict)
    groups: dict[str, GroupConf] = field(default_factory=dict)
    offsets: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)  # (topic, group)
    resets: dict[tuple[str, str], dict[int, int]] = field(default_factory=dict)
    pulls: dict[tuple[str, str, int], int] = field(default_factory=dict)
    locks: dict[str, dict[MessageQueue, LockEntry]] = field(default_factory=dict)
    channels: dict[str, dict[int, Channel]] = field(default_factory=dict)  # group -> key -> ch
    group_info: dict[str, GroupInfo] = field(default_factory=dict)
    # 5.3.3's ConsumerManager.topicGroupTable: topic -> the names registerConsumer put there
    topic_groups: dict[str, set[str]] = field(default_factory=dict)
    lock_log: LockLog | None = None
    data_version: int = 1
    # BrokerStatsManager GROUP_GET_NUMS per (group, topic): (ms, messages handed out) per pull
    # tick, and where each queue's last pull started
    get_nums: dict[tuple[str, str], list[list[int]]] = field(default_factory=dict)
    pull_pos: dict[tuple[str, str, int, str], int] = field(default_factory=dict)
    # scenario ``runtime`` / ``slave_runtime``: GET_BROKER_RUNTIME_INFO entries reported as given
    runtime: dict[str, str] = field(default_factory=dict)
    slave_runtime: dict[str, str] = field(default_factory=dict)
    # messages sent back to a retry or dead-letter queue: (topic, qid) -> [[first offset,
    # count, reconsumeTimes]] in offset order
    sent_back: dict[tuple[str, int], list[list[int]]] = field(default_factory=dict)

    _keys = itertools.count(1)

    # ------------------------------------------------------------------ basics

    def now(self) -> int:
        return self.cluster.clock.now_ms()

    def add_topic(self, conf: TopicConf, log_factory: Any = None) -> None:
        self.topics[conf.name] = conf
        for q in range(max(conf.read, conf.write)):
            if (conf.name, q) not in self.logs:
                self.logs[(conf.name, q)] = (log_factory(q) if log_factory else
                                             QueueLog.from_rate(0, self.now(), 0, 0.0))
        self.data_version += 1

    def qlog(self, topic: str, qid: int) -> QueueLog | None:
        return self.logs.get((topic, qid))

    def max_offset(self, topic: str, qid: int) -> int:
        lg = self.qlog(topic, qid)
        return lg.max_offset(self.now()) if lg else 0

    def min_offset(self, topic: str, qid: int) -> int:
        lg = self.qlog(topic, qid)
        return lg.min_offset if lg else 0

    def store_ts(self, topic: str, qid: int, offset: int) -> int:
        lg = self.qlog(topic, qid)
        if lg is None or offset < lg.min_offset or offset >= lg.max_offset(self.now()):
            return 0
        return lg.store_ts(offset)

    def msg_store_ts(self, topic: str, qid: int, offset: int) -> int:
        """``DefaultMessageStore.getMessageStoreTimeStamp``: -1 for an offset not held."""
        lg = self.qlog(topic, qid)
        return lg.store_ts_or_missing(offset, self.now()) if lg else -1

    def search(self, topic: str, qid: int, ts: int, boundary: str = "LOWER") -> int:
        """getOffsetInQueueByTime: with a boundary from 5.1.1 on, the nearest message before
        (an older broker ignores ``boundaryType``)."""
        lg = self.qlog(topic, qid)
        if lg is None:
            return 0
        if self.version < V5_1_1:
            return lg.search_nearest(ts, self.now())
        return lg.search(ts, self.now(), boundary)

    def mq(self, topic: str, qid: int) -> MessageQueue:
        return MessageQueue(topic, self.name, qid)

    # ------------------------------------------------------------------ offsets

    def committed(self, group: str, topic: str, qid: int) -> int | None:
        """ConsumerOffsetManager.queryOffset: a pending server-side reset wins."""
        pending = self.resets.get((topic, group), {}).get(qid)
        if pending is not None:
            return pending
        return self.offsets.get((topic, group), {}).get(qid)

    def query_offset(self, group: str, topic: str, qid: int) -> int:
        """What a Java client's QUERY_CONSUMER_OFFSET (no setZeroIfNotFound) reads: the
        committed offset, 0 for a young queue whose message 0 is still in memory, else -1."""
        off = self.committed(group, topic, qid)
        if off is not None and off >= 0:
            return off
        return 0 if self.zero_if_not_found(topic, qid) else -1

    def zero_if_not_found(self, topic: str, qid: int) -> bool:
        """ConsumerManageProcessor.queryConsumerOffset's fallback for a queue without an offset
        (the sim holds every message in memory): before 5.1.0 ``minOffset <= 0 &&
        !checkInDiskByConsumeOffset(0)``, so an empty queue answers 0 too; from 5.1.0
        ``minOffset <= 0 && checkInMemByConsumeOffset(0, 1)``: message 0 must exist."""
        if self.min_offset(topic, qid) > 0:
            return False
        return self.version < V5_1_0 or self.max_offset(topic, qid) > 0

    def commit(self, group: str, topic: str, qid: int, offset: int) -> bool:
        """Store a commit; ignored (False) while a server-side reset is pending."""
        if qid in self.resets.get((topic, group), {}):
            return False
        self.offsets.setdefault((topic, group), {})[qid] = offset
        return True

    def pop_offset(self, group: str, topic: str, qid: int) -> int | None:
        """Where the group's next pop of the queue starts: its committed offset (a pop commits
        the offset it pops from, PopMessageProcessor), a pending reset aside (the pop itself
        takes it: :meth:`pull`)."""
        return self.offsets.get((topic, group), {}).get(qid)

    def pull(self, group: str, topic: str, qid: int, offset: int,
             commit: int | None = None, *, pop: bool = False, reader: str = "") -> int:
        """A consumer pulls from ``offset``; returns where it must continue (a pending reset
        makes it jump, and the reset entry is consumed: PULL_OFFSET_MOVED in 5.x).

        ``reader``: a BROADCASTING client's id: every client of such a group reads every
        message, and the broker counts each pull response (incGroupGetNums), so each client's
        pulls are counted apart.

        ``commit``: the pull's commitOffset (a push consumer's consumed offset). As in
        PullMessageProcessor, the pending reset is erased first (queryThenEraseResetOffset)
        and the commit is stored after it, so the pull that takes a reset writes the client's
        OLD offset back until the client persists the new one.

        ``pop``: a POP request (``commit`` is what the client acked). The pop takes a pending
        reset itself (5.3.3 PopMessageProcessor.getPopOffset -> resetPopOffset:
        queryThenEraseResetOffset, then commitOffset("ResetPopOffset", ...) of the reset offset)
        and pops from there, so the broker holds the reset offset and no client fix is needed;
        acks of messages popped before the reset do not move it back."""
        self._count_get(group, topic, qid, offset, reader)
        pend = self.resets.get((topic, group))
        new = pend.pop(qid, None) if pend else None
        if pend is not None and not pend:
            self.resets.pop((topic, group), None)
        if pop and new is not None:
            self.commit(group, topic, qid, new)  # ResetPopOffset
        elif commit is not None:
            self.commit(group, topic, qid, commit)
        if new is not None:
            self.pulls[(group, topic, qid)] = new
            self.pull_pos[(group, topic, qid, reader)] = new
            return new
        self.pulls[(group, topic, qid)] = max(offset, self.pulls.get((group, topic, qid), 0))
        return offset

    def _count_get(self, group: str, topic: str, qid: int, offset: int,
                   reader: str = "") -> None:
        """``PullMessageProcessor`` -> ``BrokerStatsManager.incGroupGetNums``: the messages this
        broker hands the group. A simulated pull does not return messages, so they are counted
        when the next pull of the queue starts further on (one consume tick late)."""
        key = (group, topic, qid, reader)
        prev = self.pull_pos.get(key)
        self.pull_pos[key] = offset
        n = offset - prev if prev is not None and offset > prev else 0
        now = self.now()
        events = self.get_nums.setdefault((group, topic), [])
        if events and events[-1][0] == now:
            events[-1][1] += n
        else:
            events.append([now, n])
        while events and now - events[0][0] > STATS_WINDOW_MS:
            events.pop(0)

    def group_get_tps(self, group: str, topic: str) -> float:
        """``BrokerStatsManager.tpsGroupGetNums(group, topic)``: messages per second this broker
        handed the group for the topic over about the last minute (the real broker samples its
        counter every 10 s and divides the last minute's growth by the time between samples).
        Only this broker's queues count, so a group's TPS is the sum over its brokers."""
        now = self.now()
        events = [e for e in self.get_nums.get((group, topic), []) if now - e[0] <= STATS_WINDOW_MS]
        if not events:
            return 0.0
        span_s = max(1.0, (now - events[0][0]) / 1000)  # decays once the pulls stop
        return sum(n for _, n in events[1:]) / span_s

    def consume_enabled(self, group: str) -> bool:
        """SubscriptionGroupConfig.consumeEnable: false makes PullMessageProcessor refuse the
        group's pulls (NO_PERMISSION ``subscription group no permission, <group>``)."""
        conf = self.groups.get(group)
        return conf is None or conf.consume_enable

    # ------------------------------------------------------------------ send back

    def send_back(self, group: str, n: int, times: int, max_times: int, *,
                  retry_topic: str | None = None, delay_ms: int | None = None) -> None:
        """CONSUMER_SEND_MSG_BACK of ``n`` messages that failed with reconsumeTimes ``times``
        (AbstractSendMessageProcessor.consumerSendMsgBack, 4.9.3 and 5.3.3): at
        ``max_times`` (the request's maxReconsumeTimes: the client's, 16 by default) they go to
        ``%DLQ%<group>`` at once; else to ``%RETRY%<group>`` (retryQueueNums 1: queue 0) with
        reconsumeTimes + 1, after delay level 3 + ``times`` (through SCHEDULE_TOPIC_XXXX). A
        pop client's unacked messages are revived into its pop retry topic after the
        invisible time instead (``retry_topic``, ``delay_ms``)."""
        if n <= 0:
            return
        if times >= max_times:
            dlq = DLQ_PREFIX + group
            self.cluster.ensure_topic(dlq, self.name)
            self._store_sent_back(dlq, n, times)
            return
        topic = retry_topic or RETRY_PREFIX + group
        if delay_ms is None:
            delay_ms = DELAY_LEVELS_MS[min(len(DELAY_LEVELS_MS) - 1, 2 + times)]

        def arrive() -> None:
            self.cluster.ensure_topic(topic, self.name)
            self._store_sent_back(topic, n, times + 1)
        self.cluster.scheduler.call_later(delay_ms, arrive)

    def _store_sent_back(self, topic: str, n: int, times: int) -> None:
        lg = self.qlog(topic, 0)
        if lg is None:
            return
        now = self.now()
        chunks = self.sent_back.setdefault((topic, 0), [])
        start = lg.max_offset(now)
        lg.append(now, n)
        if chunks and chunks[-1][0] + chunks[-1][1] == start and chunks[-1][2] == times:
            chunks[-1][1] += n
        else:
            chunks.append([start, n, times])

    def reconsume_times(self, topic: str, qid: int, start: int, n: int) -> list[tuple[int, int]]:
        """``(count, reconsumeTimes)`` of the messages at ``[start, start + n)`` of a retry
        queue, in offset order; messages that were not sent back here (a scenario's history)
        count as reconsumed once."""
        out: list[tuple[int, int]] = []
        pos, end = start, start + n
        chunks = self.sent_back.get((topic, qid), [])
        done = 0  # chunks wholly before ``start``: consumed, never asked again
        while done < len(chunks) and chunks[done][0] + chunks[done][1] <= start:
            done += 1
        del chunks[:done]
        for first, count, times in chunks:
            if first + count <= pos or first >= end:
                continue
            if first > pos:
                out.append((first - pos, 1))
                pos = first
            take = min(end, first + count) - pos
            out.append((take, times))
            pos += take
        if pos < end:
            out.append((end - pos, 1))
        return out

    def group_topics(self, group: str) -> list[str]:
        return sorted({t for (t, g) in self.offsets if g == group}
                      | {t for (t, g) in self.resets if g == group})

    # ------------------------------------------------------------------ locks

    def try_lock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str
                       ) -> set[MessageQueue]:
        """``RebalanceLockManager.tryLockBatch``: a queue locked by ``client_id`` and not
        expired is renewed (silently); a free queue is granted; an expired entry (whoever held
        it, the caller included: a hung client that resumes re-locks its own expired entries,
        "lock expired, I got it" with its id as old and new) is taken over; a live lock of
        another client is refused. Expired = no renewal for more than 60 s. The lines are the
        release's own: 4.9.3 lock-crash/pause_broker-b_lock.log, 5.3.3 *_filter.log."""
        now = self.now()
        table = self.locks.setdefault(group, {})
        ok: set[MessageQueue] = set()
        v4 = self.version < V5_0_0
        for mq in mqs:
            e = table.get(mq)
            if e is not None and e.client_id == client_id and now - e.last_update <= LOCK_LEASE_MS:
                e.last_update = now  # isLocked(): renewal, logs nothing
                ok.add(mq)
                continue
            text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
            if e is None:
                table[mq] = LockEntry(client_id, now)
                ok.add(mq)
                self._lock_log("INFO", f"tryLockBatch, message queue not locked, I got it. Group: "
                               f"{group} NewClientId: {client_id} {text}" if v4 else
                               "RebalanceLockManager#tryLockBatch: lock a message which "
                               f"has not been locked yet, group={group}, clientId={client_id}, "
                               f"mq={text}")
            elif now - e.last_update > LOCK_LEASE_MS:
                old = e.client_id
                e.client_id, e.last_update = client_id, now
                ok.add(mq)
                self._lock_log("WARN", f"tryLockBatch, message queue lock expired, I got it. "
                               f"Group: {group} OldClientId: {old} NewClientId: {client_id} "
                               f"{text}" if v4 else
                               "RebalanceLockManager#tryLockBatch: try to lock a expired "
                               f"message queue, group={group}, mq={text}, old client id={old}, "
                               f"new client id={client_id}")
            else:
                self._lock_log("WARN", f"tryLockBatch, message queue locked by other client. "
                               f"Group: {group} OtherClientId: {e.client_id} NewClientId: "
                               f"{client_id} {text}" if v4 else
                               "RebalanceLockManager#tryLockBatch: message queue has "
                               f"been locked by other client, group={group}, mq={text}, locked "
                               f"client id={e.client_id}, current client id={client_id}")
        return ok

    def unlock_batch(self, group: str, mqs: Iterable[MessageQueue], client_id: str) -> None:
        """``RebalanceLockManager.unlockBatch``: removes an entry only for its holder (expired
        or not); anything else is only logged."""
        table = self.locks.get(group)
        mqs = list(mqs)
        v4 = self.version < V5_0_0
        if table is None:
            self._lock_log("WARN", f"unlockBatch, group not exist, Group: {group} {client_id}"
                           if v4 else f"RebalanceLockManager#unlockBatch: group not exist, "
                           f"group={group}, clientId={client_id}, mqs={self._mqs_text(mqs)}")
            return
        for mq in mqs:
            e = table.get(mq)
            text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
            if e is None:
                self._lock_log("WARN", f"unlockBatch, but mq not locked, Group: {group} {text} "
                               f"{client_id}" if v4 else
                               f"RebalanceLockManager#unlockBatch: mq not locked, "
                               f"group={group}, clientId={client_id}, mq={text}")
            elif e.client_id == client_id:
                del table[mq]
                self._lock_log("INFO", f"unlockBatch, Group: {group} {text} {client_id}" if v4
                               else f"RebalanceLockManager#unlockBatch: unlock mq, "
                               f"group={group}, clientId={client_id}, mqs={text}")
            else:
                self._lock_log("WARN", f"unlockBatch, but mq locked by other client: "
                               f"{e.client_id}, Group: {group} {text} {client_id}" if v4 else
                               f"RebalanceLockManager#unlockBatch: mq locked by other "
                               f"client, group={group}, locked clientId={e.client_id}, current "
                               f"clientId={client_id}, mqs={text}")

    def lock_holder(self, group: str, mq: MessageQueue) -> LockEntry | None:
        """Test/inspection helper (not reachable over the protocol, as in RocketMQ)."""
        return self.locks.get(group, {}).get(mq)

    def _mqs_text(self, mqs: list[MessageQueue]) -> str:
        return "[" + ", ".join(mq_text(m.topic, m.broker_name, m.queue_id) for m in mqs) + "]"

    def _lock_log(self, level: str, msg: str) -> None:
        if self.lock_log is not None:
            self.lock_log.write(self.now(), level, msg)

    # ------------------------------------------------------------------ membership

    def register(self, group: str, ch: Channel) -> bool:
        """A heartbeat (``ConsumerManager.registerConsumer``). The group's consume type, model
        and consume-from-where become the heartbeat's; its subscription table is updated as
        ``ConsumerGroupInfo.updateSubscription`` does (a newer subVersion replaces a topic's
        entry, topics missing from this heartbeat are removed). A new channel or a changed
        subscription table notifies every member (not for BROADCASTING groups). Returns True
        when the member list or the subscriptions changed."""
        chans = self.channels.setdefault(group, {})
        if self.version >= V5_3_3:  # see h_consume_by_who
            for t in ch.subscriptions:
                self.topic_groups.setdefault(t, set()).add(t)
        if group not in self.groups and self.auto_create_group:
            self.groups[group] = GroupConf(group)
        info = self.group_info.get(group)
        if info is None:
            info = self.group_info[group] = GroupInfo(ch.consume_type, ch.message_model,
                                                      ch.consume_from_where)
        info.consume_type, info.message_model = ch.consume_type, ch.message_model
        info.consume_from_where = ch.consume_from_where
        new_channel = True
        for key, existing in chans.items():
            same = (existing.consumer is not None and existing.consumer is ch.consumer) or (
                existing.conn is not None and existing.conn is ch.conn)
            if same:
                ch.key = key
                chans[key] = ch
                new_channel = False
                break
        if new_channel:
            ch.key = next(self._keys)
            chans[ch.key] = ch
            if ch.message_model == "CLUSTERING":
                self.cluster.ensure_retry_topic(group, self.name)
        subs_changed = info.update_subscription(ch.subscriptions)
        if new_channel or subs_changed:
            self.notify_changed(group)
        return new_channel or subs_changed

    def unregister(self, group: str, *, consumer: SimClient | None = None,
                   conn: ServerConn | None = None, client_id: str | None = None,
                   notify: bool = True) -> bool:
        """UNREGISTER_CLIENT or a closed connection (``doChannelCloseEvent``): the channel
        leaves, the remaining members are notified."""
        chans = self.channels.get(group, {})
        drop = [k for k, c in chans.items()
                if (consumer is not None and c.consumer is consumer)
                or (conn is not None and c.conn is conn)
                or (client_id is not None and consumer is None and conn is None
                    and c.client_id == client_id)]
        for k in drop:
            del chans[k]
        if drop:
            if not chans:  # "unregister consumer ok, no any connection, and remove ..."
                self.channels.pop(group, None)
                self.group_info.pop(group, None)
            elif notify:
                self.notify_changed(group)
        return bool(drop)

    def members(self, group: str) -> list[Channel]:
        return list(self.channels.get(group, {}).values())

    def consumer_ids(self, group: str) -> list[str]:
        # ConsumerGroupInfo.getAllClientId: one entry per channel, not de-duplicated
        return [c.client_id for c in self.members(group)]

    def subscription(self, group: str, topic: str) -> dict[str, Any] | None:
        """``ConsumerManager.findSubscriptionData``: the group-level entry for a topic."""
        info = self.group_info.get(group)
        return None if info is None else info.subs.get(topic)

    def notify_changed(self, group: str) -> None:
        """``DefaultConsumerIdsChangeListener`` CHANGE: NOTIFY_CONSUMER_IDS_CHANGED (oneway) to
        every channel of the group, unless disabled or the group is BROADCASTING."""
        if not self.notify_ids_changed:
            return
        info = self.group_info.get(group)
        if info is not None and info.message_model == "BROADCASTING":
            return
        addr = self.cluster.servers[self.name].addr if self.name in self.cluster.servers else ""
        for ch in self.members(group):
            if ch.consumer is not None:
                ch.consumer.notify_ids_changed(addr)
            elif ch.conn is not None:
                ch.conn.oneway(RemotingCommand.request(
                    C.NOTIFY_CONSUMER_IDS_CHANGED, {"consumerGroup": group}, language="JAVA"))

    def scan_expired(self) -> None:
        """``ConsumerManager.scanNotActiveChannel`` (every 10 s): a channel silent for 120 s is
        closed and removed. No CHANGE event is raised on this path, so the other members
        notice at their next periodic rebalance."""
        now = self.now()
        for group in list(self.channels):
            for ch in list(self.channels.get(group, {}).values()):
                if now - ch.last_update > CHANNEL_EXPIRED_MS:
                    self.unregister(group, consumer=ch.consumer, conn=ch.conn,
                                    client_id=None if (ch.consumer or ch.conn) else ch.client_id,
                                    notify=False)
                    if ch.conn is not None:
                        ch.conn.close()

    def drop_conn(self, conn: ServerConn) -> None:
        """NETTY EVENT: an external client's connection closed -> remove its channels."""
        for group in list(self.channels):
            self.unregister(group, conn=conn)

    # ------------------------------------------------------------------ handlers

    def handle(self, cmd: RemotingCommand, conn: ServerConn, *, slave: bool = False) -> Any:
        """Answer a request: a RemotingCommand (or None) at once, or an awaitable for the
        requests the broker forwards to a client (GET_CONSUMER_RUNNING_INFO)."""
        h = HANDLERS.get(cmd.code)
        if h is None:
            resp: Any = cmd.response(R.REQUEST_CODE_NOT_SUPPORTED,
                                     f" request type {cmd.code} not supported")
        else:
            resp = h(self, cmd, conn, slave)
        if type(resp) is RemotingCommand and cmd.code != C.GET_CONSUMER_RUNNING_INFO:
            # the response header carries the broker's own MQVersion (every corpus exchange);
            # a forwarded GET_CONSUMER_RUNNING_INFO answer keeps the client's
            resp = resp.with_(version=self.version)
        return resp


# ---------------------------------------------------------------------- request handlers

def _ext(cmd: RemotingCommand, key: str, default: str | None = None) -> str | None:
    return (cmd.ext_fields or {}).get(key, default)


def _int(cmd: RemotingCommand, key: str, default: int = 0) -> int:
    v = _ext(cmd, key)
    try:
        return int(v) if v is not None else default
    except ValueError:
        return default


def _opt_int(cmd: RemotingCommand, key: str) -> int | None:
    """A header field decoded like ``decodeCommandCustomHeader``: absent or unparsable -> null.
    """
    v = _ext(cmd, key)
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _bool(cmd: RemotingCommand, key: str, default: bool = False) -> bool:
    v = _ext(cmd, key)
    return default if v is None else v.lower() == "true"


def _ok(cmd: RemotingCommand, body: Any = None, ext: dict[str, Any] | None = None,
        remark: str | None = None) -> RemotingCommand:
    b = b"" if body is None else fastjson.dumps_fastjson(body).encode("utf-8")
    return cmd.response(R.SUCCESS, remark, ext, b)


def _fail(cmd: RemotingCommand, code: int, remark: str) -> RemotingCommand:
    return cmd.response(code, remark)


def _wrapper(b: SimBroker, group: str, topic: str, qid: int) -> dict[str, Any]:
    """``OffsetWrapper`` (AdminBrokerProcessor.getConsumeStats): no committed offset reads 0,
    lastTimestamp stays 0 without one; ``pullOffset`` exists from 5.1.0 on (RIP-48), a 4.9.3
    broker has no such field (corpus 4.9.3/never-committed/208_*)."""
    mx = b.max_offset(topic, qid)
    co = b.committed(group, topic, qid)
    co = max(0, co if co is not None else 0)
    last = b.store_ts(topic, qid, co - 1) if co > 0 else 0
    w = {"brokerOffset": max(0, mx), "consumerOffset": co, "lastTimestamp": last}
    if b.version >= V5_1_0:
        w["pullOffset"] = max(co, b.pulls.get((group, topic, qid), 0))
    return w


def h_consume_stats(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                          slave: bool) -> RemotingCommand:
    group = _ext(cmd, "consumerGroup") or ""
    # the header has a topicList from 5.3.2 on (apache/rocketmq#9153); older brokers ignore it
    topic_list = _ext(cmd, "topicList") if b.version >= V5_3_2 else None
    # AdminBrokerProcessor.getTopicsForCollectingConsumeStats: a topicList is taken as is;
    # otherwise the topic (or every topic with offsets) is kept only if the online group
    # subscribes to it (no check while the group has no subscriptions: offline)
    if topic_list:
        topics = sorted({t for t in topic_list.split(";") if t})
    else:
        topics = [_ext(cmd, "topic") or ""] if _ext(cmd, "topic") else b.group_topics(group)
        info = b.group_info.get(group)
        if info is not None and info.subs:
            topics = [t for t in topics if t in info.subs]
    table: dict[MessageQueue, Any] = {}
    tps = 0.0
    for t in topics:
        conf = b.topics.get(t)
        if conf is None:
            continue
        for q in range(conf.read):  # readQueueNums on 4.9.3 and 5.3.3 (read-gt-write/208_*)
            table[b.mq(t, q)] = _wrapper(b, group, t, q)
        tps += b.group_get_tps(group, t)  # this broker's share only (issue item 15)
    return _ok(cmd, {"consumeTps": tps, "offsetTable": table})


def h_broker_consume_stats(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                           slave: bool) -> RemotingCommand:
    """GET_BROKER_CONSUME_STATS (317), AdminBrokerProcessor.fetchAllConsumeStatsInBroker
    (4.9.3 and 5.3.3; mqadmin brokerConsumeStats): every group of the subscription group table
    x every topic it has offsets for (ConsumerOffsetManager.whichTopicByConsumer), an online
    group's unsubscribed topics left out, queues ``0..writeQueueNums-1`` (not the read queues
    GET_CONSUME_STATS iterates), lastTimestamp only when the store has it, consumeTps =
    tpsGroupGetNums(group, topic). ``isOrder`` keeps the topics with order=true. The 5.x
    OffsetWrapper has a pullOffset field this handler never sets (0), so 5.x's
    totalInflightDiff (sum of pullOffset - consumerOffset) comes out negative."""
    is_order = _bool(cmd, "isOrder")
    stats_list: list[dict[str, Any]] = []
    total = inflight = 0
    by_group: dict[str, set[str]] = {}  # whichTopicByConsumer, for every group at once
    for (t, g) in b.offsets:
        by_group.setdefault(g, set()).add(t)
    for gname in b.groups:
        per_topic = []
        info = b.group_info.get(gname)
        for t in sorted(by_group.get(gname, ())):
            conf = b.topics.get(t)
            if conf is None or (is_order and not conf.order):
                continue
            if info is not None and info.subs and t not in info.subs:
                continue
            table: dict[MessageQueue, Any] = {}
            for q in range(conf.write):
                mx = max(0, b.max_offset(t, q))
                co = b.committed(gname, t, q)
                co = 0 if co is None or co < 0 else co
                w: dict[str, Any] = {"brokerOffset": mx, "consumerOffset": co, "lastTimestamp": 0}
                if co > 0:
                    ts = b.msg_store_ts(t, q, co - 1)
                    if ts > 0:
                        w["lastTimestamp"] = ts
                if b.version >= V5_1_0:
                    w["pullOffset"] = 0
                    inflight += 0 - co
                table[b.mq(t, q)] = w
                total += mx - co
            per_topic.append({"consumeTps": b.group_get_tps(gname, t), "offsetTable": table})
        stats_list.append({gname: per_topic})
    addr = b.cluster.servers[b.name].addr if b.name in b.cluster.servers else ""
    body: dict[str, Any] = {"brokerAddr": addr, "consumeStatsList": stats_list, "totalDiff": total}
    if b.version >= V5_1_0:
        body["totalInflightDiff"] = inflight
    return _ok(cmd, body)


def h_view_stats(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                 slave: bool) -> RemotingCommand:
    """VIEW_BROKER_STATS_DATA (315), AdminBrokerProcessor.ViewBrokerStatsData (4.9.3 and
    5.3.3; mqadmin statsAll): the BrokerStatsManager item ``statsName``/``statsKey`` as
    BrokerStatsData {statsMinute, statsHour, statsDay: {sum, tps, avgpt}}, SYSTEM_ERROR ``The
    stats <name> <key> not exist`` when there is none. The sim keeps TOPIC_PUT_NUMS only:
    the producers' current rate over the topic's write queues on this broker (sum = rate x
    the window)."""
    name, key = _ext(cmd, "statsName") or "", _ext(cmd, "statsKey") or ""
    conf = b.topics.get(key)
    if name != "TOPIC_PUT_NUMS" or conf is None:
        return _fail(cmd, R.SYSTEM_ERROR, f"The stats <{name}> <{key}> not exist")
    tps = float(sum(lg.segments[-1].rate for (t, q), lg in b.logs.items()
                    if t == key and q < conf.write))

    def item(window_s: int) -> dict[str, Any]:
        return {"avgpt": 0.0, "sum": int(tps * window_s), "tps": tps}

    return _ok(cmd, {"statsDay": item(86_400), "statsHour": item(3_600),
                     "statsMinute": item(60)})


def h_topic_stats(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                        slave: bool) -> RemotingCommand:
    topic = _ext(cmd, "topic") or ""
    conf = b.topics.get(topic)
    if conf is None:
        return _fail(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
    table = {}
    # AdminBrokerProcessor.getTopicStatsInfo: the write queues only before 5.3.0
    # (4.9.3/read-gt-write/202_*), max(read, write) since apache/rocketmq#7951
    n = max(conf.read, conf.write) if b.version >= V5_3_0 else conf.write
    for q in range(n):
        mx = b.max_offset(topic, q)
        last = b.msg_store_ts(topic, q, mx - 1) if mx > 0 else 0
        table[b.mq(topic, q)] = {"lastUpdateTimestamp": last, "maxOffset": mx,
                                 "minOffset": b.min_offset(topic, q)}
    out: dict[str, Any] = {"offsetTable": table}
    if b.version >= V5_3_3:  # BrokerStatsManager.tpsTopicPutNums (apache/rocketmq#9297)
        out["topicPutTps"] = float(sum(lg.segments[-1].rate for (t, _), lg in b.logs.items()
                                       if t == topic))
    return _ok(cmd, out)


def h_time_span(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                slave: bool) -> RemotingCommand:
    """AdminBrokerProcessor.queryConsumeTimeSpan, with the store's -1 for offsets it does not
    hold (so a queue without a committed offset gets delayTime = now + 1, as in RocketMQ)."""
    topic, group = _ext(cmd, "topic") or "", _ext(cmd, "group") or ""
    conf = b.topics.get(topic)
    if conf is None:
        return _fail(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
    now = b.now()
    spans = []
    for q in range(conf.write):
        lg = b.qlog(topic, q)
        min_ts = lg.earliest_ts(now) if lg else -1
        mx = b.max_offset(topic, q)
        co = b.committed(group, topic, q)
        co = -1 if co is None else co
        consume_ts = b.msg_store_ts(topic, q, co - 1) if co > 0 else min_ts
        max_ts = b.msg_store_ts(topic, q, mx - 1)
        # QueueTimeSpan's getters add the *Str fields (never-committed/303_*)
        span = {"consumeTimeStamp": consume_ts, "consumeTimeStampStr": _human(consume_ts),
                "delayTime": 0, "maxTimeStamp": max_ts, "maxTimeStampStr": _human(max_ts),
                "messageQueue": b.mq(topic, q), "minTimeStamp": min_ts,
                "minTimeStampStr": _human(min_ts)}
        if co < mx:
            span["delayTime"] = now - b.msg_store_ts(topic, q, co)
        spans.append(span)
    return _ok(cmd, {"consumeTimeSpanSet": spans})


def _human(ms: int) -> str:
    """``UtilAll.timeMillisToHumanString3``-like ``yyyy-MM-dd#HH:mm:ss:SSS`` in the broker's
    time zone (UTC here, as on the machine that recorded the corpus)."""
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC)
    return t.strftime("%Y-%m-%d#%H:%M:%S:") + f"{ms % 1000:03d}"


def h_query_offset(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                         slave: bool) -> RemotingCommand:
    group, topic, qid = _ext(cmd, "consumerGroup") or "", _ext(cmd, "topic") or "", _int(
        cmd, "queueId")
    off = b.committed(group, topic, qid)
    if off is not None and off >= 0:
        return _ok(cmd, ext={"offset": off})
    # setZeroIfNotFound came in 5.0.0: a 4.x broker ignores it and may answer 0
    zero = _ext(cmd, "setZeroIfNotFound") if b.version >= V5_0_0 else None
    if zero is None or zero.lower() != "false":
        if b.zero_if_not_found(topic, qid):
            return _ok(cmd, ext={"offset": 0})
        return cmd.response(R.QUERY_NOT_FOUND,
                            "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first", {})
    # the response was created with its header class: extFields {} (never-committed/14_*)
    return cmd.response(R.QUERY_NOT_FOUND, "Not found, do not set to zero, maybe this group "
                        "boot first", {})


def h_update_offset(b: SimBroker, cmd: RemotingCommand, conn: ServerConn,
                          slave: bool) -> RemotingCommand:
    group, topic = _ext(cmd, "consumerGroup") or "", _ext(cmd, "topic") or ""
    if group not in b.groups:
        return _fail(cmd, R.SUBSCRIPTION_GROUP_NOT_EXIST, f"Group {group} not exist!")
    if topic not in b.topics:
        return _fail(cmd, R.TOPIC_NOT_EXIST, f"Topic {topic} not exist!")
    qid, off = _opt_int(cmd, "queueId"), _opt_int(cmd, "commitOffset")
    if qid is None:
        return _fail(cmd, R.INVALID_PARAMETER, f"QueueId is null, topic is {topic}")
    if off is None:
        return _fail(cmd, R.INVALID_PARAMETER, f"Offset is null, topic is {topic}")
    if not b.commit(group, topic, qid, off):
        return _ok(cmd, remark="Offset has been previously reset")
    return _ok(cmd)


def h_max(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                ) -> RemotingCommand:
    return _ok(cmd, ext={"offset": b.max_offset(_ext(cmd, "topic") or "", _int(cmd, "queueId"))})


def h_min(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                ) -> RemotingCommand:
    # 5.x answers through RpcClientUtils.createCommandForRpcResponse: remark "" (31_*)
    return _ok(cmd, ext={"offset": b.min_offset(_ext(cmd, "topic") or "", _int(cmd, "queueId"))},
               remark="" if b.version >= V5_0_0 else None)


def h_earliest(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                     ) -> RemotingCommand:
    topic, qid = _ext(cmd, "topic") or "", _int(cmd, "queueId")
    lg = b.qlog(topic, qid)  # getEarliestMessageTime: -1 when the queue holds nothing
    return _ok(cmd, ext={"timestamp": lg.earliest_ts(b.now()) if lg else -1})


def h_search(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    boundary = (_ext(cmd, "boundaryType") or "LOWER").upper()
    off = b.search(_ext(cmd, "topic") or "", _int(cmd, "queueId"), _int(cmd, "timestamp"),
                   "UPPER" if boundary == "UPPER" else "LOWER")
    return _ok(cmd, ext={"offset": off})


def h_consumer_list(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                          ) -> RemotingCommand:
    group = _ext(cmd, "consumerGroup") or ""
    ids = b.consumer_ids(group)
    if not ids:
        return _fail(cmd, R.SYSTEM_ERROR, f"no consumer for this group, {group}")
    # created with GetConsumerListByGroupResponseHeader: extFields {} (other-requests/38_*)
    return _ok(cmd, {"consumerIdList": ids}, ext={})


def h_connection_list(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                            ) -> RemotingCommand:
    group = _ext(cmd, "consumerGroup") or ""
    members = b.members(group)
    if not members:
        return _fail(cmd, R.CONSUMER_NOT_ONLINE, f"the consumer group[{group}] not online")
    info = b.group_info[group]  # ConsumerGroupInfo: the last heartbeat's group-level values
    return _ok(cmd, {
        "connectionSet": [{"clientAddr": m.addr, "clientId": m.client_id,
                           "language": m.language, "version": m.version} for m in members],
        "consumeFromWhere": info.consume_from_where, "consumeType": info.consume_type,
        "messageModel": info.message_model, "subscriptionTable": dict(info.subs)})


def h_consume_by_who(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                           ) -> RemotingCommand:
    topic = _ext(cmd, "topic") or ""
    # ConsumerManager.queryTopicConsumeByWho + ConsumerOffsetManager.whichGroupByTopic. 5.3.3
    # answers from ConsumerManager.topicGroupTable, where registerConsumer (and the heartbeat
    # v2 path, registerConsumerWithoutSub) add subscriptionData.getTopic(), the topic's own
    # name, instead of the group (apache/rocketmq#9352, first in 5.3.3; fixed after it by #9424
    # and #9444), and unregisterConsumer removes the group's name, which is not there: the
    # topic's name stays listed once a consumer subscribed it, and an online group shows up
    # only through its committed offsets (real 5.3.3: {"groupList":["G","T"]}, issue 25)
    if b.version >= V5_3_3:
        groups = set(b.topic_groups.get(topic, ()))
    else:
        groups = {g for g, info in b.group_info.items() if topic in info.subs}
    groups |= {g for (t, g) in b.offsets if t == topic}
    return _ok(cmd, {"groupList": sorted(groups)})


CLIENT_DEFAULT_REMARK = "not set any response code"  # RemotingCommand.createResponseCommand


def h_running_info(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool) -> Any:
    """AdminBrokerProcessor.callConsumer: find the client's channel in the group, check its
    version, forward the request (same extFields and body) and return the client's answer
    verbatim. A simulated client answers from its real state; a hung one never answers, so the
    forward times out (``RemotingTimeoutException``) after the scenario's
    ``running_info_timeout`` (RocketMQ: 10 s), and so does a ``silent`` one, which stays a
    member meanwhile."""
    group, cid = _ext(cmd, "consumerGroup") or "", _ext(cmd, "clientId") or ""
    ch = next((c for c in b.members(group) if c.client_id == cid), None)
    if ch is None:
        # other-requests/307_*_offline_client: code 1, the broker's own header
        return _fail(cmd, R.SYSTEM_ERROR, f"The Consumer <{group}> <{cid}> not online").with_(
            version=b.version)
    if ch.version < V3_1_8_SNAPSHOT:
        return _fail(cmd, R.SYSTEM_ERROR, f"The Consumer <{cid}> Version "
                     f"<{version_name(ch.version)}> too low to finish, please upgrade it to "
                     "V3_1_8_SNAPSHOT")
    timeout = b.cluster.scenario.running_info_timeout_s
    if ch.consumer is not None and not ch.consumer.hung and not ch.consumer.silent:
        sim = ch.consumer
        if sim.callbacks_busy:
            return _running_info_when_free(b, cmd, ch, group, cid, timeout)
        return _client_running_info(cmd, sim)
    return _forward_running_info(cmd, ch, group, cid, timeout)


def _client_running_info(cmd: RemotingCommand, sim: SimClient) -> RemotingCommand:
    """The client's answer, forwarded verbatim: ClientRemotingProcessor.
    getConsumerRunningInfo builds it with RemotingCommand.createResponseCommand(null), whose
    remark "not set any response code" stays when only the code is set to SUCCESS
    (running-info/307_*: code 0 with that remark on 4.9.3 and 5.3.3)."""
    return cmd.response(R.SUCCESS, CLIENT_DEFAULT_REMARK, None,
                        fastjson.dumps_fastjson(sim.running_info()).encode("utf-8"),
                        language=sim.spec.language, version=sim.spec.version)


def _timed_out(ch: Channel, group: str, cid: str, timeout: float) -> str:
    return (f"consumer <{group}> <{cid}> Timeout: org.apache.rocketmq.remoting.exception."
            f"RemotingTimeoutException: wait response on the channel <{ch.addr}> timeout, "
            f"{int(timeout * 1000)}(ms), org.apache.rocketmq.remoting.netty."
            "NettyRemotingAbstract.invokeSyncImpl(NettyRemotingAbstract.java:567)")


async def _running_info_when_free(b: SimBroker, cmd: RemotingCommand, ch: Channel, group: str,
                                  cid: str, timeout: float) -> RemotingCommand:
    """A client whose callback threads all hold a pushed reset answers when one is free (its
    current push applied), or the broker's forward times out first (Broker2Client.callClient:
    10 s): on the simulated clock, and never longer than ``timeout`` of real time."""
    loop = asyncio.get_running_loop()
    real_end = loop.time() + timeout
    sim_end = b.now() + int(timeout * 1000)
    sim = ch.consumer
    while sim is not None and sim.callbacks_busy:
        if loop.time() >= real_end or b.now() >= sim_end:
            return _fail(cmd, R.CONSUME_MSG_TIMEOUT, _timed_out(ch, group, cid, timeout))
        await asyncio.sleep(0.01)
    if sim is None or sim.hung or sim.silent:
        return _fail(cmd, R.CONSUME_MSG_TIMEOUT, _timed_out(ch, group, cid, timeout))
    return _client_running_info(cmd, sim)


async def _forward_running_info(cmd: RemotingCommand, ch: Channel, group: str, cid: str,
                                timeout: float) -> RemotingCommand:
    timed_out = _timed_out(ch, group, cid, timeout)
    if ch.conn is None:  # a hung simulated client: the request is sent, nothing comes back
        await asyncio.sleep(timeout)
        return _fail(cmd, R.CONSUME_MSG_TIMEOUT, timed_out)
    fwd = RemotingCommand.request(C.GET_CONSUMER_RUNNING_INFO, dict(cmd.ext_fields or {}),
                                  cmd.body, language="JAVA")
    try:
        resp = await ch.conn.request(fwd, timeout)
    except TimeoutError:
        return _fail(cmd, R.CONSUME_MSG_TIMEOUT, timed_out)
    except ConnectionError:
        return _fail(cmd, R.SYSTEM_ERROR, f"invoke consumer <{group}> <{cid}> Exception: "
                     "org.apache.rocketmq.remoting.exception.RemotingSendRequestException: "
                     f"send request to <{ch.addr}> failed")
    return cmd.response(resp.code, resp.remark, resp.ext_fields, resp.body,
                        language=resp.language, version=resp.version)


def h_all_offsets(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                        ) -> RemotingCommand:
    table = {f"{t}@{g}": dict(sorted(v.items())) for (t, g), v in sorted(b.offsets.items())}
    if b.version < V5_0_0:  # ConsumerOffsetManager.encode: 4.9.3 has only the table (43_*)
        return _ok(cmd, {"offsetTable": table})
    gtm: dict[str, list[str]] = {}
    for (t, g) in b.offsets:
        gtm.setdefault(g, []).append(t)
    return _ok(cmd, {"dataVersion": _dv(b), "groupTopicMap": {g: sorted(ts) for g, ts in
                                                                gtm.items()},
                     "offsetTable": table})


def _dv(b: SimBroker) -> dict[str, Any]:
    """``DataVersion``: stateVersion came with 5.0.0 (RIP-29); 4.9.3 has counter+timestamp."""
    if b.version < V5_0_0:
        return {"counter": b.data_version, "timestamp": b.now()}
    return {"counter": b.data_version, "stateVersion": 0, "timestamp": b.now()}


def h_all_groups(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                       ) -> RemotingCommand:
    table = {}
    for g in sorted(b.groups.values(), key=lambda x: x.name):
        # SubscriptionGroupConfig: 4.9.3 has these 9 fields (other-requests/201_*)
        e: dict[str, Any] = {"brokerId": g.broker_id,
                             "consumeBroadcastEnable": g.consume_broadcast,
                             "consumeEnable": g.consume_enable,
                             "consumeFromMinEnable": g.consume_from_min,
                             "groupName": g.name,
                             "notifyConsumerIdsChangedEnable": g.notify_ids_changed,
                             "retryMaxTimes": g.retry_max_times,
                             "retryQueueNums": g.retry_queue_nums,
                             "whichBrokerWhenConsumeSlowly": g.which_broker_when_slowly}
        if b.version >= V5_0_0:
            e.update({"consumeMessageOrderly": g.orderly,
                      "consumeTimeoutMinute": g.consume_timeout_minute,
                      "groupRetryPolicy": dict(g.retry_policy), "groupSysFlag": 0})
        if b.version >= V5_1_3:
            e["attributes"] = {}
        table[g.name] = dict(sorted(e.items()))
    if b.version < V5_0_0:  # SubscriptionGroupManager has no forbiddenTable before 5.0.0
        return _ok(cmd, {"dataVersion": _dv(b), "subscriptionGroupTable": table})
    return _ok(cmd, {"dataVersion": _dv(b), "forbiddenTable": {},
                     "subscriptionGroupTable": table})


def h_all_topics(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                       ) -> RemotingCommand:
    def body(c: TopicConf) -> dict[str, Any]:
        d = c.to_body()
        if b.version < V5_0_0:  # 4.9.3's TopicConfig has no attributes (store-files/*_topics)
            d.pop("attributes", None)
        return d

    return _ok(cmd, {"dataVersion": _dv(b),
                     "topicConfigTable": {t: body(c) for t, c in sorted(b.topics.items())}})


def h_runtime(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                    ) -> RemotingCommand:
    table = {"brokerVersionDesc": version_name(b.version), "brokerVersion": str(b.version),
             "bootTimestamp": str(b.cluster.clock.start_ms), "msgPutTotalTodayNow": "0",
             # an idle broker's pull thread pool and page cache (both versions' 28_*)
             "pullThreadPoolQueueSize": "0", "pullThreadPoolQueueCapacity": "100000",
             "pullThreadPoolQueueHeadWaitTimeMills": "0", "pageCacheLockTimeMills": "0"}
    if b.version >= V5_0_0:  # not in 4.9.3's table (other-requests/28_*)
        table["brokerActive"] = "true"
    table.update(b.slave_runtime if slave else b.runtime)  # the scenario's reported entries
    return _ok(cmd, {"table": table})


def h_broker_config(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                          ) -> RemotingCommand:
    props = {"brokerClusterName": b.cluster.scenario.cluster, "brokerName": b.name,
             "brokerId": "1" if slave else "0",
             "notifyConsumerIdsChangedEnable": str(b.notify_ids_changed).lower(),
             "autoCreateSubscriptionGroup": str(b.auto_create_group).lower()}
    if b.version >= V5_1_0:  # BrokerConfig has no such field before RIP-48
        props["useServerSideResetOffset"] = str(b.server_side_reset).lower()
    text = "".join(f"{k}={v}\n" for k, v in sorted(props.items()))
    return cmd.response(R.SUCCESS, None, {"version": json.dumps(_dv(b))}, text.encode())


def _mq_set(body: Any) -> list[MessageQueue]:
    return [MessageQueue.from_dict(m) for m in (body.get("mqSet") or [])]


def h_lock(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                 ) -> RemotingCommand:
    body = fastjson.loads(cmd.body)
    ok = b.try_lock_batch(str(body.get("consumerGroup")), _mq_set(body),
                          str(body.get("clientId")))
    return _ok(cmd, {"lockOKMQSet": sorted(ok)})


def h_unlock(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    body = fastjson.loads(cmd.body)
    b.unlock_batch(str(body.get("consumerGroup")), _mq_set(body), str(body.get("clientId")))
    return _ok(cmd)


def h_heartbeat(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                      ) -> RemotingCommand:
    body = fastjson.loads(cmd.body) if cmd.body else {}
    cid = str(body.get("clientID") or "")
    for cd in body.get("consumerDataSet") or []:
        group = str(cd.get("groupName"))
        subs = {str(s.get("topic")): s for s in (cd.get("subscriptionDataSet") or [])}
        ch = Channel(0, cid, conn.remote, cmd.language, cmd.version,
                     str(cd.get("consumeType") or "CONSUME_PASSIVELY"),
                     str(cd.get("messageModel") or "CLUSTERING"),
                     str(cd.get("consumeFromWhere") or "CONSUME_FROM_LAST_OFFSET"), subs,
                     b.now(), conn=conn)
        b.register(group, ch)
        if b.name not in conn.watched_by:  # NETTY EVENT on close: drop its channels
            conn.watched_by.add(b.name)
            conn.on_close.append(b.drop_conn)
    return _ok(cmd, ext={"IS_SUPPORT_HEART_BEAT_V2": "true", "IS_SUB_CHANGE": "true"})


def h_unregister(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
                       ) -> RemotingCommand:
    group = _ext(cmd, "consumerGroup")
    if group:
        b.unregister(group, conn=conn)
    return _ok(cmd)


def h_reset(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
            ) -> RemotingCommand:
    """INVOKE_BROKER_TO_RESET_OFFSET: AdminBrokerProcessor.resetOffset (5.x): the server-side
    path (``resetOffsetInner``) when ``useServerSideResetOffset``, else Broker2Client's."""
    topic, group = _ext(cmd, "topic") or "", _ext(cmd, "group") or ""
    ts = _int(cmd, "timestamp", -1)
    if b.server_side_reset:
        if slave:
            return _fail(cmd, R.SYSTEM_ERROR, "Can not reset offset in slave broker")
        return _reset_server_side(b, cmd, topic, group, ts)
    return _reset_legacy(b, cmd, topic, group, ts, _bool(cmd, "isForce"),
                         cmd.language == "CPP")


def _reset_server_side(b: SimBroker, cmd: RemotingCommand, topic: str, group: str,
                       ts: int) -> RemotingCommand:
    conf = b.topics.get(topic)
    if conf is None:
        return _fail(cmd, R.TOPIC_NOT_EXIST, f"Topic {topic} does not exist")
    if group not in b.groups:
        return _fail(cmd, R.SUBSCRIPTION_GROUP_NOT_EXIST, f"Group {group} does not exist")
    qid = _int(cmd, "queueId", -1)
    explicit = _ext(cmd, "offset")
    targets: dict[int, int] = {}
    if qid >= 0:
        off = int(explicit) if explicit not in (None, "", "-1") else None
        if off is not None:
            mn, mx = b.min_offset(topic, qid), b.max_offset(topic, qid)
            if not mn <= off <= mx + 1:
                return _fail(cmd, R.SYSTEM_ERROR, f"Target offset {off} not in consume queue "
                             f"range [{mn}-{mx}]")
            targets[qid] = off
        else:
            targets[qid] = b.max_offset(topic, qid) if ts < 0 else b.search(topic, qid, ts)
    else:
        for q in range(conf.read):
            targets[q] = b.max_offset(topic, q) if ts < 0 else b.search(topic, q, ts)
    for q, off in targets.items():
        # ConsumerOffsetManager.assignResetOffset: the reset table and the offset table; the
        # pull offset table is left alone (cleared only with popConsumerKVServiceEnable), so
        # 208's pullOffset still reads the old position (5.3.3/reset/208_after_*: 0 and 50)
        b.resets.setdefault((topic, group), {})[q] = off
        b.offsets.setdefault((topic, group), {})[q] = off
    # the members' pulls held by long polling return as soon as a message arrives
    # (PullRequestHoldService.notifyMessageArriving; pops likewise), and the next pull of the
    # queue takes the reset: on a queue that is being written that is within moments
    live = [b.mq(topic, q) for q in targets
            if (lg := b.qlog(topic, q)) is not None and lg.segments
            and lg.segments[-1].rate > 0]
    for m in b.members(group) if live else []:
        if m.consumer is not None:
            m.consumer.wake_pulls(live)
    return _ok(cmd, {"offsetTable": {b.mq(topic, q): off for q, off in sorted(targets.items())}})


def _reset_legacy(b: SimBroker, cmd: RemotingCommand, topic: str, group: str, ts: int,
                  force: bool, for_c: bool) -> RemotingCommand:
    """Broker2Client.resetOffset: computes the target per queue (``isForce || target <
    current``), pushes RESET_CONSUMER_CLIENT_OFFSET to every member and writes nothing itself
    (the clients commit after their 10 s pause). Needs online members."""
    conf = b.topics.get(topic)
    if conf is None:
        return _fail(cmd, R.SYSTEM_ERROR, "[reset-offset] reset offset failed, no topic in this "
                     f"broker. topic={topic}")
    table: dict[MessageQueue, int] = {}
    for q in range(conf.write):
        current = b.committed(group, topic, q)
        if current is None or current == -1:
            return _fail(cmd, R.SYSTEM_ERROR, f"THe consumer group <{group}> not exist")
        target = b.max_offset(topic, q) if ts == -1 else b.search(topic, q, ts)
        target = max(0, target)  # "reset offset is invalid" -> 0
        table[b.mq(topic, q)] = target if (force or target < current) else current
    members = b.members(group)
    if not members:
        return _fail(cmd, R.CONSUMER_NOT_ONLINE, f"Consumer not online, so can not reset offset, "
                     f"Group: {group} Topic: {topic} Timestamp: {ts}")
    body = ({"offsetTable": [{**mq.to_dict(), "offset": off} for mq, off in table.items()]}
            if for_c else {"offsetTable": table})
    for m in members:
        if m.version < V3_0_7_SNAPSHOT:
            return _fail(cmd, R.SYSTEM_ERROR, "the client does not support this feature. "
                         f"version={version_name(m.version)}")
        if m.consumer is not None:
            m.consumer.reset_offset(b.cluster.servers[b.name].addr, topic, ts, dict(table))
        elif m.conn is not None:
            m.conn.oneway(RemotingCommand.request(
                C.RESET_CONSUMER_CLIENT_OFFSET, {"topic": topic, "group": group,
                                                 "timestamp": ts},
                fastjson.dumps_fastjson(body).encode("utf-8"), language="JAVA"))
    return _ok(cmd, {"offsetTable": table})


def h_pull(b: SimBroker, cmd: RemotingCommand, conn: ServerConn, slave: bool
           ) -> RemotingCommand:
    """PULL_MESSAGE as PullMessageProcessor (4.9.3; 5.3.3 with DefaultPullMessageResultHandler)
    answers it, without long polling: the group's SubscriptionGroupConfig is looked up (auto-
    created when autoCreateSubscriptionGroup, as findSubscriptionGroupConfig does; the builtin
    groups always exist), then the topic, the queue id and the subscription; the store's status
    (DefaultMessageStore.getMessage) becomes the response code with its name as the remark and
    nextBeginOffset/minOffset/maxOffset/suggestWhichBrokerId in the header. The request's
    commitOffset is stored only with the commit flag, on a master (tryCommitOffset:
    ``brokerAllowSuspend && hasCommitOffsetFlag``); 5.x also records the pull offset of the
    pulling group (ConsumerOffsetManager.commitPullOffset)."""
    group, topic = _ext(cmd, "consumerGroup") or "", _ext(cmd, "topic") or ""
    qid, offset = _int(cmd, "queueId", -1), _int(cmd, "queueOffset", -1)
    sys_flag, max_nums = _int(cmd, "sysFlag"), _int(cmd, "maxMsgNums", 1)
    conf_g = b.groups.get(group)
    if conf_g is None and group in BUILTIN_GROUPS:
        conf_g = GroupConf(group)  # held from the broker's start (not listed by the sim's 201)
    elif conf_g is None and b.auto_create_group:
        conf_g = b.groups[group] = GroupConf(group)  # "auto create a subscription group"
        b.data_version += 1
    if conf_g is None:
        return _fail(cmd, R.SUBSCRIPTION_GROUP_NOT_EXIST,
                     f"subscription group [{group}] does not exist, "
                     "See http://rocketmq.apache.org/docs/faq/ for further details.")
    if not conf_g.consume_enable:
        return _fail(cmd, R.NO_PERMISSION, f"subscription group no permission, {group}")
    conf = b.topics.get(topic)
    if conf is None:
        return _fail(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please! "
                     "See http://rocketmq.apache.org/docs/faq/ for further details.")
    if qid < 0 or qid >= conf.read:
        return _fail(cmd, R.INVALID_PARAMETER, f"queueId[{qid}] is illegal, topic:[{topic}] "
                     f"topicConfig.readQueueNums:[{conf.read}] consumer:[{conn.remote}]")
    if not sys_flag & 0x4 and b.subscription(group, topic) is None:
        return _fail(cmd, R.SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist")
    mn, mx = b.min_offset(topic, qid), b.max_offset(topic, qid)
    body = b""
    # queryThenEraseResetOffset(topic, group, queueId): only the pulling group's own pending
    # server-side reset is taken (keyed by topic@group)
    pend = b.resets.get((topic, group))
    reset_to = pend.pop(qid, None) if b.server_side_reset and pend else None
    if pend is not None and not pend:
        b.resets.pop((topic, group), None)
    if reset_to is not None:
        status, nxt, code = "OFFSET_RESET", reset_to, R.PULL_OFFSET_MOVED
    elif mx == 0:
        status, nxt = "NO_MESSAGE_IN_QUEUE", 0
        code = R.PULL_OFFSET_MOVED if offset != 0 else R.PULL_NOT_FOUND
    elif offset < mn:
        status, nxt, code = "OFFSET_TOO_SMALL", mn, R.PULL_OFFSET_MOVED
    elif offset == mx:
        status, nxt, code = "OFFSET_OVERFLOW_ONE", offset, R.PULL_NOT_FOUND
    elif offset > mx:
        # 4.9.3 corrects to the min offset when it is 0; 5.x always to the max offset
        nxt = mn if (b.version < V5_0_0 and mn == 0) else mx
        status, code = "OFFSET_OVERFLOW_BADLY", R.PULL_OFFSET_MOVED
    else:
        # maxMsgNums, capped as the store caps a batch in memory (maxTransferCountOnMessage
        # InMemory, 32)
        n = max(1, min(max_nums, 32, mx - offset))
        store_host = b.cluster.servers[b.name].addr if b.name in b.cluster.servers else ""
        host, _, port = store_host.rpartition(":")
        body = b"".join(encode(make_message(
            topic, b.name, qid, o, b.qlog(topic, qid).store_ts(o),  # type: ignore[union-attr]
            b.cluster.scenario.cluster, (host or "127.0.0.1", int(port or 10911))))
            for o in range(offset, offset + n))
        status, nxt, code = "FOUND", offset + n, R.SUCCESS
    if not slave:
        if b.version >= V5_1_0:
            b.pulls[(group, topic, qid)] = nxt
        if sys_flag & 0x1:
            b.commit(group, topic, qid, _int(cmd, "commitOffset"))
    ext: dict[str, Any] = {"suggestWhichBrokerId": 0, "nextBeginOffset": nxt, "minOffset": mn,
                           "maxOffset": mx}
    if b.version >= V5_0_0:
        ext.update({"topicSysFlag": 0, "groupSysFlag": 0})
    return cmd.response(code, status, ext, body)


HANDLERS: dict[int, Any] = {
    C.PULL_MESSAGE: h_pull,
    C.GET_CONSUME_STATS: h_consume_stats,
    C.GET_TOPIC_STATS_INFO: h_topic_stats,
    C.GET_BROKER_CONSUME_STATS: h_broker_consume_stats,
    C.VIEW_BROKER_STATS_DATA: h_view_stats,
    C.QUERY_CONSUME_TIME_SPAN: h_time_span,
    C.QUERY_CONSUMER_OFFSET: h_query_offset,
    C.UPDATE_CONSUMER_OFFSET: h_update_offset,
    C.GET_MAX_OFFSET: h_max,
    C.GET_MIN_OFFSET: h_min,
    C.GET_EARLIEST_MSG_STORETIME: h_earliest,
    C.SEARCH_OFFSET_BY_TIMESTAMP: h_search,
    C.GET_CONSUMER_LIST_BY_GROUP: h_consumer_list,
    C.GET_CONSUMER_CONNECTION_LIST: h_connection_list,
    C.QUERY_TOPIC_CONSUME_BY_WHO: h_consume_by_who,
    C.GET_CONSUMER_RUNNING_INFO: h_running_info,
    C.GET_ALL_CONSUMER_OFFSET: h_all_offsets,
    C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: h_all_groups,
    C.GET_ALL_TOPIC_CONFIG: h_all_topics,
    C.GET_BROKER_RUNTIME_INFO: h_runtime,
    C.GET_BROKER_CONFIG: h_broker_config,
    C.LOCK_BATCH_MQ: h_lock,
    C.UNLOCK_BATCH_MQ: h_unlock,
    C.HEART_BEAT: h_heartbeat,
    C.UNREGISTER_CLIENT: h_unregister,
    C.INVOKE_BROKER_TO_RESET_OFFSET: h_reset,
}

__all__ = ["BUILTIN_GROUPS", "CHANNEL_EXPIRED_MS", "LOCK_LEASE_MS", "RETRY_PREFIX", "Channel",
           "GroupConf", "LockEntry", "SimBroker", "TopicConf"]
