"""A simulated broker's state (topics, offsets, resets, locks, group membership) and the rules
that change it: ``ConsumerOffsetManager``, ``RebalanceLockManager`` and ``ConsumerManager``
of apache/rocketmq, as the processors (:mod:`mqctl.sim.broker`) use them."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.models import DLQ_PREFIX, RETRY_PREFIX, SCHEDULE_TOPIC, MessageQueue
from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker.headers import C
from mqctl.sim.index import index_copy, origin_of
from mqctl.sim.logs import LockLog, mq_text
from mqctl.sim.ports import Channel
from mqctl.sim.server import ServerConn
from mqctl.sim.store import QueueLog
from mqctl.versions import (
    V5_0_0,
    V5_1_0,
    V5_1_1,
    V5_3_3,
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


@dataclass
class LockEntry:
    client_id: str
    last_update: int


@dataclass
class GroupInfo:
    """``ConsumerGroupInfo``'s group-level state (the channels live in ``BrokerState.channels``).
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
class BrokerState:
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
    # which message each sent-back copy is a copy of: (topic, qid) -> [(first offset, [(original
    # topic, queue, offset, reconsumeTimes) or None per offset])] in offset order, and the
    # index of those copies by key (IndexService entries, written when the copy is stored)
    copies: dict[tuple[str, int], list[tuple[int, list[tuple[str, int, int, int] | None]]]] = (
        field(default_factory=dict))
    copy_index: dict[tuple[str, str], list[tuple[int, int]]] = field(default_factory=dict)
    # messages a producer sent (SEND_MESSAGE, :mod:`.send_message_processor`), kept as sent:
    # (topic, qid) -> offset -> the message
    sent: dict[tuple[str, int], dict[int, Any]] = field(default_factory=dict)
    # SCHEDULE_TOPIC_XXXX queue -> runs (first offset, count, REAL_TOPIC) of the copies waiting
    # out a delay level there
    scheduled: dict[int, list[tuple[int, int, str]]] = field(default_factory=dict)

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
                  retry_topic: str | None = None, delay_ms: int | None = None,
                  origins: Sequence[tuple[str, int, int] | None] = ()) -> None:
        """CONSUMER_SEND_MSG_BACK of ``n`` messages that failed with reconsumeTimes ``times``
        (AbstractSendMessageProcessor.consumerSendMsgBack, 4.9.3 and 5.3.3): at
        ``max_times`` (the request's maxReconsumeTimes: the client's, 16 by default) they go to
        ``%DLQ%<group>`` at once; else to ``%RETRY%<group>`` (retryQueueNums 1: queue 0) with
        reconsumeTimes + 1, after delay level 3 + ``times``, waiting in SCHEDULE_TOPIC_XXXX
        until then (:meth:`_schedule`). A
        pop client's unacked messages are revived into its pop retry topic after the
        invisible time instead (``retry_topic``, ``delay_ms``). ``origins``: the original
        (topic, queue, offset) of each message, when known: the copies stored are copies of
        them (:mod:`mqctl.sim.index`)."""
        if n <= 0:
            return
        if times >= max_times:
            dlq = DLQ_PREFIX + group
            self.cluster.ensure_topic(dlq, self.name)
            self._store_sent_back(dlq, n, times, origins, times + 1)
            return
        topic = retry_topic or RETRY_PREFIX + group
        if delay_ms is None:
            level = min(len(DELAY_LEVELS_MS), 3 + times)
            delay_ms = DELAY_LEVELS_MS[level - 1]
            self._schedule(topic, level, n, times + 1, origins)

        def arrive() -> None:
            self.cluster.ensure_topic(topic, self.name)
            self._store_sent_back(topic, n, times + 1, origins, times + 1)
        self.cluster.scheduler.call_later(delay_ms, arrive)

    def _schedule(self, real_topic: str, level: int, n: int, times: int,
                  origins: Sequence[tuple[str, int, int] | None]) -> None:
        """The copies wait out delay level ``level`` in SCHEDULE_TOPIC_XXXX queue ``level - 1``
        with ``REAL_TOPIC`` = ``real_topic`` and ``DELAY`` = the level, indexed there (4.9.3
        CommitLog.asyncPutMessage; 5.3.3 HookUtils.transformDelayLevelMessage: a delay level is
        never a timer-wheel message, checkIfTimerMessage); ScheduleMessageService puts them
        into ``real_topic`` when due and leaves them where they are."""
        self.cluster.ensure_topic(SCHEDULE_TOPIC, self.name)
        start = self.max_offset(SCHEDULE_TOPIC, level - 1)
        runs = self.scheduled.setdefault(level - 1, [])
        if runs and runs[-1][0] + runs[-1][1] == start and runs[-1][2] == real_topic:
            runs[-1] = (runs[-1][0], runs[-1][1] + n, real_topic)
        else:
            runs.append((start, n, real_topic))
        self._store_sent_back(SCHEDULE_TOPIC, n, times, origins, times, qid=level - 1)

    def _store_sent_back(self, topic: str, n: int, times: int,
                         origins: Sequence[tuple[str, int, int] | None] = (),
                         copy_times: int = 1, qid: int = 0) -> None:
        lg = self.qlog(topic, qid)
        if lg is None:
            return
        now = self.now()
        chunks = self.sent_back.setdefault((topic, qid), [])
        start = lg.max_offset(now)
        lg.append(now, n)
        recs = [(o[0], o[1], o[2], copy_times) if o is not None else None
                for o in list(origins)[:n]]
        if any(r is not None for r in recs):
            self.copies.setdefault((topic, qid), []).append((start, recs))
            for k, r in enumerate(recs):
                if r is not None:
                    index_copy(self, topic, qid, start + k)
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

    def original_of(self, topic: str, qid: int, offset: int) -> tuple[str, int, int] | None:
        """The original (topic, queue, offset) of the message at ``offset``: itself for a
        producer's message of a topic that is not a retry topic, the one it is a copy of for a
        sent-back copy, None for a retry topic's message of a scenario's history."""
        o = origin_of(self, topic, qid, offset)
        if o is not None:
            return o[0], o[1], o[2]
        return None if topic.startswith(RETRY_PREFIX) else (topic, qid, offset)

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

