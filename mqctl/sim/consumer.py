"""Simulated consumers that behave like the Java push consumer (``DefaultMQPushConsumerImpl``,
``RebalanceImpl``, ``ConsumeMessageOrderlyService``, ``RemoteBrokerOffsetStore``,
``MQClientInstance``), driven by the simulated clock:

* heartbeat to the group's brokers every 30 s (``heartbeatBrokerInterval``);
* rebalance every 20 s (``rocketmq.client.rebalance.waitInterval``) and at once when a broker
  says the member list changed, with ``mqctl.allocate`` over the sorted route queues and the
  member list of ONE broker of the route (chosen at random, as ``findConsumerIdList`` does);
* orderly: lock a new queue on its broker before adding it (``RebalanceImpl.lock`` runs before
  the ProcessQueue exists, so on 4.x the new ProcessQueue reads ``locked=false`` and is not
  pulled -- "pull message later because not locked in broker" -- until the next ``lockAll``;
  5.x creates it with ``setLocked(true)`` and retries a refused lock within a second
  (``rebalanceLater(500)``)), ``lockAll`` every 20 s, trust a lock for 30 s, unlock a queue that
  moves away;
* commit every 5 s (``persistConsumerOffsetInterval``); consume at the behaviour's rate;
* honour a broker-pushed reset (legacy path: suspend, drop, 10 s pause, apply, resume) and a
  server-side reset (the next pull answers PULL_OFFSET_MOVED: a 5.2.0+ client persists the new
  offset and re-adds the queue at once, an older one drops the queue and does so 10 s later).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from mqctl.allocate import allocate_group
from mqctl.models import RETRY_PREFIX, STRATEGY_CLASS_NAMES, MessageQueue, java_string_key
from mqctl.sim.logs import ClientLog, mq_text
from mqctl.sim.ports import Channel
from mqctl.sim.scenario import ConsumerSpec, GroupSpec
from mqctl.versions import V5_0_0, V5_2_0, version_name

if TYPE_CHECKING:
    from mqctl.sim.clock import _Event
    from mqctl.sim.ports import BrokerLink, ConsumerSite

HEARTBEAT_MS = 30_000
REBALANCE_MS = 20_000
LOCK_MS = 20_000
LOCK_TRUST_MS = 30_000
COMMIT_MS = 5_000
# a push consumer pulls 32 messages at a time while its ProcessQueue caches at most
# pullThresholdForQueue (1000): up to 1024 cached (DefaultMQPushConsumerImpl.pullMessage flow
# control)
PULL_BATCH = 32
PULL_THRESHOLD_FOR_QUEUE = 1000
CACHE_CAP = (PULL_THRESHOLD_FOR_QUEUE // PULL_BATCH + 1) * PULL_BATCH
CONSUME_TICK_MS = 1_000
# DefaultMQPushConsumer.consumeConcurrentlyMaxSpan: a concurrent consumer stops pulling a queue
# whose cached messages span more offsets (pullMessage flow control)
MAX_SPAN = 2000
# DefaultMQPushConsumer.consumeTimeout (minutes): ConsumeMessageConcurrentlyService runs
# ProcessQueue.cleanExpiredMsg at this period and sends back a message consumed for longer
CONSUME_TIMEOUT_MS = 15 * 60_000
# 5.x pop: popThresholdForQueue (96) unacked messages stop popping, a pop takes popBatchNums
# (32) at a time (DefaultMQPushConsumerImpl.popMessage flow control); popInvisibleTime
POP_THRESHOLD = 96
POP_BATCH = 32
POP_INVISIBLE_MS = 60_000
STATS_HOUR_MS = 3_600_000
RESET_PAUSE_MS = 10_000
# a 5.2.0+ client writes a server-side reset's offset in the callback of the pull that took it:
# one round trip after that pull committed its old position (tests lengthen it to read between)
CURRENT_CLIENT_FIX_MS = 0
LOCK_RETRY_MS = 1_000
PERSIST_LOG_MS = 30_000

_CLASS_OF = {v: k for k, v in STRATEGY_CLASS_NAMES.items()}


def _new_connection_addr(addr: str, run: int) -> str:
    """The clientAddr of a restarted process: the broker's member list shows each channel's
    remote address (AdminBrokerProcessor.getConsumerConnectionList:
    RemotingHelper.parseChannelRemoteAddr), and a new process connects from another ephemeral
    port (real 4.9.3/5.3.3 lock-crash: o2's port after its restart, consumerConnection_*)."""
    host, sep, port = addr.rpartition(":")
    if not sep or not (port.isascii() and port.isdigit()):
        return f"{addr}#{run}"
    return f"{host}:{32768 + (int(port) * 31 + run * 7919) % 28000}"


def strategy_class(name: str) -> str:
    key = name.strip().upper().replace("-", "_")
    if key.startswith("MACHINE_ROOM_NEARBY"):
        key = "MACHINE_ROOM_NEARBY"
    return _CLASS_OF.get(key, name)


@dataclass
class PQ:
    """ProcessQueue: a queue this client consumes."""

    position: int  # next offset to consume (the in-memory offset store value)
    locked: bool = False
    last_lock_ts: int = 0
    try_unlock_times: int = 0
    dropped: bool = False
    last_pull_ts: int = 0
    last_consume_ts: int = 0
    budget: float = 0.0
    last_persist_log: int = 0
    consumed_any: bool = False  # a message of this queue was consumed by this process
    # pop: the messages the last consume tick took and has not acked yet (a pop consumer acks
    # a batch once it is processed: PopProcessQueue's waitAckCount until the next tick)
    last_batch: int = 0
    fail_budget: float = 0.0  # the fraction of a failed message carried to the next tick
    # scenario ``stuck_message_at``: the message at ``position`` hangs in the listener; the
    # consumer goes on from ``head`` while the committed offset stays at ``position``
    # (ProcessQueue.removeMessage returns the smallest offset still cached)
    head: int | None = None


class SimConsumer:
    def __init__(self, cluster: ConsumerSite, group: GroupSpec, spec: ConsumerSpec, index: int):
        self.cluster = cluster  # what it sees of the cluster (mqctl.sim.ports)
        self.group = group
        self.spec = spec
        self.client_id = spec.client_id
        self.state = "pending"  # pending | running | hung | crashed | stopped
        self.pqs: dict[MessageQueue, PQ] = {}
        self.timers: list[_Event] = []
        self.rng = random.Random(f"{cluster.scenario.seed}:{group.name}:{index}")
        self.addr = spec.addr or f"{spec.client_id.split('@', 1)[0]}:{50000 + index}"
        self.start_ts = 0
        self.suspended = False
        self._reset_busy_until = 0  # ms: resets are applied one at a time
        # (process run, ms) when each pushed reset received is applied: until then it holds
        # one of the client's callback threads (waiting for the synchronized
        # MQClientInstance.resetOffset, or in its pause)
        self._push_ends: list[tuple[int, int]] = []
        # queues whose reset was just applied: re-consumed at once when they are added again
        self._replay_on_add: set[MessageQueue] = set()
        self.consumed_total = 0
        self.log: ClientLog | None = None
        self.strategy = spec.strategy or group.strategy
        # (ms, topic, messages consumed): ConsumerStatsManager's CONSUME_OK_TPS is keyed
        # topic@group, so the running info reports each topic's own rate
        self._tps_window: list[tuple[int, str, int]] = []
        # (ms, topic, consumed OK, failed) per consume tick: the statusTable's per-topic TPS
        # (last minute) and consumeFailedMsgs (last hour), as ConsumerStatsManager keeps them
        self._stats: list[tuple[int, str, int, int]] = []
        self._wakeup_pending = False
        self._retry_pending = False  # a rebalance is scheduled soon (_rebalance_later)
        self._notified_by = ""
        self.sub_versions: dict[str, int] = {}  # topic -> SubscriptionData.subVersion
        # broker name -> last request sent on the connection to it (heartbeat, pull, lock,
        # commit): the broker's Netty idle check closes a connection silent for 120 s
        self.traffic: dict[str, int] = {}
        self.consume_threads = spec.threads  # consumeThreadMin/Max (scenario ``threads``)
        self.runs = 0  # processes started under this client id (a restart is a new one)
        self._resuming = False

    # --------------------------------------------------------------- lifecycle

    @property
    def hung(self) -> bool:
        return self.state == "hung"

    @property
    def alive(self) -> bool:
        return self.state == "running"

    @property
    def silent(self) -> bool:
        """Its running info goes unanswered now (scenario ``silent_at``/``silent_for``): a
        loaded machine whose answer comes after the broker's forward timeout (real 4.9.3: a
        consumer stalled ~40 s, its 307 did not come back, it stayed a member and kept its
        queues). Nothing else changes: it heartbeats, rebalances and consumes."""
        at, dur = self.spec.silent_at_s, self.spec.silent_for_s
        if at is None:
            return False
        since = self.now() - (self.cluster.clock.start_ms + int(at * 1000))
        return since >= 0 and (dur is None or since < int(dur * 1000))

    @property
    def pop(self) -> bool:
        return self.group.consume_type == "CONSUME_POP"

    @property
    def orderly(self) -> bool:
        return self.group.orderly and self.group.model == "CLUSTERING"

    def now(self) -> int:
        return self.cluster.clock.now_ms()

    @property
    def behaviour(self) -> str:
        """The consumption behaviour in effect now: ``slow``/``stuck`` start at their ``at``
        time (healthy before); ``crash``/``hang`` are events, healthy until they happen."""
        b = self.spec.behaviour
        if b in ("crash", "hang"):
            return "healthy"
        if self.spec.behaviour_at_s and self.now() < (self.cluster.clock.start_ms
                                                       + int(self.spec.behaviour_at_s * 1000)):
            return "healthy"
        return b

    def _log(self, kind: str, msg: str, level: str = "INFO") -> None:
        if self.log is not None:
            self.log.write(self.now(), kind, msg, level, self.group.name)

    def start(self) -> None:
        if self.state == "running":
            return
        self.state = "running"
        fresh = not self._resuming  # a new process (not one waking up from a hang)
        self._resuming = False
        if fresh:
            self.runs += 1
            self.start_ts = self.now()
            if self.runs > 1:
                self.addr = _new_connection_addr(self.addr, self.runs)
        for t in self.topics():
            self.sub_versions.setdefault(t, self.start_ts)
        if self.cluster.log_dir and self.log is None:
            self.log = ClientLog(self.cluster.log_dir, self.client_id,
                                 v5=self.spec.version >= V5_0_0, pid=4000 + hash(self.client_id)
                                 % 1000)
        if fresh:
            if self.log is not None and self.runs > 1:
                self.log.pid += 17  # a restarted process gets another pid (5.x lines show it)
            # DefaultMQPushConsumerImpl.start / MQClientInstance.start: the same lines start
            # each run of the process, also a restart with the same client id (real:
            # client-logs/cl-c2_rocketmq_client.log, both runs, 4.9.3 and 5.3.3)
            g = self.group.name
            self._log("start_begin", f"the consumer [{g}] start beginning. messageModel="
                      f"{self.group.model}, isUnitMode=false")
            self._log("factory_ok", f"the client factory [{self.client_id}] start OK")
            self._log("start_ok", f"the consumer [{g}] start OK.")
        sched = self.cluster.scheduler
        self.heartbeat()
        self.timers = [
            sched.call_every(HEARTBEAT_MS, self.heartbeat),
            sched.call_every(REBALANCE_MS, self.rebalance),
            sched.call_every(COMMIT_MS, self.commit),
            sched.call_every(CONSUME_TICK_MS, self.consume_tick),
        ]
        if self.orderly:
            self.timers.append(sched.call_every(LOCK_MS, self.lock_all, first_delay_ms=1000))
        self.rebalance()

    def _stop_timers(self) -> None:
        for t in self.timers:
            t.cancel()
        self.timers = []

    def crash(self) -> None:
        """The process dies: its connections close (the broker drops it from the group at
        once: NETTY EVENT); broker locks stay until their 60 s lease runs out."""
        if self.state in ("crashed", "stopped"):
            return
        self.state = "crashed"
        self._stop_timers()
        for b in self.cluster.brokers.values():
            b.unregister(self.group.name, consumer=self)

    def hang(self) -> None:
        """A frozen process (GC pause, deadlock, SIGSTOP): still connected, so still a member
        until each broker drops it, 120 s after its last traffic on that connection
        (``SimCluster.watch_idle``) or its last heartbeat (``SimBroker.scan_expired``);
        renews nothing and answers nothing."""
        if self.state != "running":
            return
        self.state = "hung"
        self._stop_timers()
        self.cluster.watch_idle(self)

    def resume(self) -> None:
        """A hung process wakes up (SIGCONT) with its ProcessQueues and in-memory offsets as
        they were: it heartbeats (re-registering, on a new connection, where a broker dropped
        it: real lock-crash, "NETTY CLIENT PIPELINE: CLOSE", reconnect), rebalances and keeps
        the queues it still finds allocated to it, re-locks them at its next lockAll (its own
        expired entries: "lock expired, I got it" with its id as old and new holder; after a
        survivor's release once that one rebalanced) and pulls them from where it stopped, so
        what another client consumed meanwhile is consumed again (real 5.3.3: 712 messages)."""
        if self.state == "hung":
            group = self.group.name
            if any(self.client_id not in b.consumer_ids(group)
                   for b in self.heartbeat_brokers()):
                self.addr = _new_connection_addr(self.addr, self.runs + 100)
            self.state = "pending"
            self._resuming = True
            self.start()

    def join(self) -> None:
        """Start the consumer now (a new process after a crash or a leave: empty process-queue
        table, offsets read from the broker)."""
        if self.state in ("crashed", "stopped"):
            self.pqs.clear()
            self.sub_versions.clear()
            self.state = "pending"
        if self.state == "pending":
            self.start()

    def leave(self) -> None:
        """Graceful shutdown in DefaultMQPushConsumerImpl.shutdown's order (4.9.3 and 5.3.3):
        ConsumeMessageOrderlyService.shutdown -> RebalanceImpl.unlockAll (orderly: one
        UNLOCK_BATCH_MQ per broker, "the message queue unlock OK"), persistConsumerOffset,
        unregisterConsumer (UNREGISTER_CLIENT: the broker notifies the others, who take the
        queues at once)."""
        if self.state not in ("running", "hung"):
            return
        if self.orderly:
            by_broker: dict[str, list[MessageQueue]] = {}
            for mq in self.pqs:
                by_broker.setdefault(mq.broker_name, []).append(mq)
            for bn, mqs in by_broker.items():
                b = self.cluster.brokers.get(bn)
                if b is not None and self.cluster.broker_up(bn):
                    b.unlock_batch(self.group.name, mqs, self.client_id)
                    for mq in mqs:
                        self.pqs[mq].locked = False
                        self._log("unlock_ok", "the message queue unlock OK, Group: "
                                  f"{self.group.name} "
                                  f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}")
        self.commit()
        self.state = "stopped"
        self._stop_timers()
        self.pqs.clear()
        for b in self.cluster.brokers.values():
            if b.unregister(self.group.name, consumer=self):
                addr = (self.cluster.servers[b.name].addr if b.name in self.cluster.servers
                        else "")
                self._log("unregister", f"unregister client[Producer: null Consumer: "
                          f"{self.group.name}] from broker[{b.name} 0 {addr}] success")
        self._log("shutdown_ok", f"the consumer [{self.group.name}] shutdown OK")

    # --------------------------------------------------------------- heartbeat

    def topics(self) -> list[str]:
        ts = list(self.spec.subscriptions)
        if self.group.model == "CLUSTERING" and self.group.consume_type == "CONSUME_PASSIVELY":
            ts.append(RETRY_PREFIX + self.group.name)
        return ts

    def subscription_data(self) -> dict[str, dict[str, Any]]:
        out = {}
        for t in self.topics():
            expr = self.spec.subscriptions.get(t, "*")
            tags = [] if expr.strip() == "*" else sorted(x.strip() for x in expr.split("||"))
            out[t] = {"classFilterMode": False, "codeSet": [], "expressionType": "TAG",
                      "subString": expr, "subVersion": self.sub_versions.get(t, self.start_ts),
                      "tagsSet": tags, "topic": t}
        return out

    def heartbeat_brokers(self) -> list[BrokerLink]:
        names: set[str] = set()
        for t in self.topics():
            names.update(self.cluster.topic_brokers(t))
        if self.spec.heartbeat_brokers is not None:
            names &= set(self.spec.heartbeat_brokers)
        return [self.cluster.brokers[n] for n in sorted(names) if n in self.cluster.brokers
                and self.cluster.broker_up(n)]

    @property
    def reported_consume_type(self) -> str:
        """The consume type the client heartbeats and reports in its running info: a pop
        group's clients are 5.x push consumers in pop mode, which report CONSUME_PASSIVELY
        (DefaultMQPushConsumerImpl.consumeType; CONSUME_POP is the broker's own mark of a
        pop without a heartbeat, ConsumerManager.compensateBasicConsumerInfo, which no
        connection list shows); only their mqPopTable says that they pop."""
        return "CONSUME_PASSIVELY" if self.pop else self.group.consume_type

    def heartbeat(self) -> None:
        if not self.alive:
            return
        subs = self.subscription_data()
        for b in self.heartbeat_brokers():
            self.traffic[b.name] = self.now()
            b.register(self.group.name, Channel(
                0, self.client_id, self.addr, self.spec.language, self.spec.version,
                self.reported_consume_type, self.group.model, self.group.consume_from, subs,
                self.now(), consumer=self))

    def notify_ids_changed(self, broker_addr: str = "") -> None:
        """The broker's NOTIFY_CONSUMER_IDS_CHANGED: one immediate rebalance, however many
        brokers notify at the same instant (RebalanceService.wakeup coalesces them too)."""
        if self._wakeup_pending:
            return
        self._wakeup_pending = True
        self._notified_by = broker_addr
        self.cluster.scheduler.call_later(0, self.on_ids_changed)

    def on_ids_changed(self) -> None:
        self._wakeup_pending = False
        if self.alive:
            self._log("notify", f"receive broker's notification[{self._notified_by}], "
                      f"the consumer group: {self.group.name} changed, rebalance immediately")
            self.rebalance()

    # --------------------------------------------------------------- rebalance

    def rebalance(self) -> None:
        if not self.alive or self.suspended:
            return
        for topic in self.topics():
            self._rebalance_topic(topic)

    def _rebalance_topic(self, topic: str) -> None:

        route_brokers = [n for n in self.cluster.topic_brokers(topic) if self.cluster.broker_up(n)]
        mq_all = self.cluster.subscribe_queues(topic)
        if not mq_all:
            if not topic.startswith(RETRY_PREFIX):
                self._log("topic_missing", f"doRebalance, {self.group.name}, but the "
                          f"topic[{topic}] not exist.", "WARN")
            return
        if self.group.model == "BROADCASTING" or self.pop:
            # broadcasting: every queue; pop (5.x): the broker hands out messages of every
            # queue to whoever pops, so each pop client works on all of them
            result = set(mq_all)
            cid_all: list[str] = [self.client_id]
        else:
            if not route_brokers:
                return
            b = self.cluster.brokers[self.rng.choice(sorted(route_brokers))]
            cid_all = sorted(b.consumer_ids(self.group.name), key=java_string_key)
            if not cid_all:
                self._log("no_cids", f"doRebalance, {self.group.name} {topic}, get consumer "
                          "id list failed", "WARN")
                return
            if self.client_id not in cid_all:
                self._log("not_in_cids", f"[BUG] ConsumerGroup: {self.group.name} The consumerId: "
                          f"{self.client_id} not in cidAll: {cid_all}", "INFO")
                result = set()
            else:
                try:
                    result = set(allocate_group(self.strategy, mq_all, cid_all).get(
                        self.client_id, []))
                except Exception as exc:  # the Java client logs and keeps its assignment
                    self._log("alloc_error", f"allocate message queue exception. strategy name: "
                              f"{self.strategy}, ex: {exc}", "ERROR")
                    return
        if self._update(topic, result):
            self._log("changed", ("client " if self.spec.version >= V5_0_0 else "")
                      + "rebalanced result changed. "
                      f"allocateMessageQueueStrategyName={self.strategy.upper()}, "
                      f"group={self.group.name}, topic={topic}, clientId={self.client_id}, "
                      f"mqAllSize={len(mq_all)}, cidAllSize={len(cid_all)}, "
                      f"rebalanceResultSize={len(result)}, rebalanceResultSet=["
                      + ", ".join(mq_text(m.topic, m.broker_name, m.queue_id)
                                  for m in sorted(result)) + "]")
            if self.group.model == "BROADCASTING":
                self._log("broadcast", f"messageQueueChanged {self.group.name} {topic} ["
                          + ", ".join(mq_text(m.topic, m.broker_name, m.queue_id)
                                      for m in mq_all) + "] [" + ", ".join(
                              mq_text(m.topic, m.broker_name, m.queue_id)
                              for m in sorted(result)) + "]")
            elif self.group.consume_type == "CONSUME_PASSIVELY":
                self._message_queue_changed(topic)

    def _message_queue_changed(self, topic: str) -> None:
        """RebalancePushImpl.messageQueueChanged: a new subVersion for the topic, then a
        heartbeat to every broker (``sendHeartbeatToAllBrokerWithLock``)."""
        old = self.sub_versions.get(topic, self.start_ts)
        new = max(self.now(), old + 1)
        self.sub_versions[topic] = new
        self._log("mqchanged", f"{topic} Rebalance changed, also update version: {old}, {new}")
        self.heartbeat()

    def _update(self, topic: str, result: set[MessageQueue]) -> bool:
        """RebalanceImpl.updateProcessQueueTableInRebalance (4.9.3 and 5.3.3)."""
        changed = False
        refused = False
        g = self.group.name
        v5 = self.spec.version >= V5_0_0
        for mq in [m for m in self.pqs if m.topic == topic and m not in result]:
            pq = self.pqs[mq]
            pq.dropped = True
            b = self.cluster.brokers.get(mq.broker_name)
            if b is not None and self.cluster.broker_up(mq.broker_name):
                if self.group.model == "CLUSTERING":
                    # RebalancePushImpl.removeUnnecessaryMessageQueue: persist, removeOffset
                    b.commit(g, mq.topic, mq.queue_id, pq.position)
                    self._log("persist_one", f"[persist] Group: {g} ClientId: {self.client_id} "
                              "updateConsumeOffsetToBroker "
                              f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)} {pq.position}")
                    self._log_offset_removed(mq, len(self.pqs) - 1)
                if self.orderly:  # removeUnnecessaryMessageQueue -> unlock(mq, oneway=true)
                    text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
                    self._log("unlock", f"unlock messageQueue. group:{g}, clientId:"
                              f"{self.client_id}, mq:{text}", "WARN")
                    b.unlock_batch(g, [mq], self.client_id)
            del self.pqs[mq]
            changed = True
            self._log("remove", f"doRebalance, {g}, remove unnecessary mq, "
                      f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}")
        for mq in sorted(result):
            if mq in self.pqs:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
            now = self.now()
            if self.orderly:
                self.traffic[mq.broker_name] = now
                ok = mq in b.try_lock_batch(g, [mq], self.client_id)
                # RebalanceImpl.lock: "the message queue lock OK" (4.x), "message queue lock
                # OK" (5.x); corpus lock-crash/kill_survivor_o1_client.log
                self._log("lock", ("" if v5 else "the ")
                          + f"message queue lock {'OK' if ok else 'Failed'}, {g} {text}")
                if not ok:
                    self._log("add_failed", f"doRebalance, {g}, add a new mq failed, {text}, "
                              "because lock failed", "WARN")
                    refused = True
                    continue
            self._log_offset_removed(mq)
            offset = self._compute_pull_from_where(b, mq)
            # a new ProcessQueue: lastLockTimestamp and lastConsumeTimestamp start at its
            # creation; 5.x marks it locked at once (pq.setLocked(true), every consumer), 4.x
            # leaves it unlocked until the next lockAll (the lock() above found no
            # ProcessQueue to mark). Real 307 answers: running-info/307_*.json
            self.pqs[mq] = PQ(position=offset, locked=v5, last_lock_ts=now,
                              last_pull_ts=now, last_consume_ts=now)
            changed = True
            self._log("add", f"doRebalance, {g}, add a new mq, {text}")
            if mq in self._replay_on_add:
                self._replay_on_add.discard(mq)
                self._replay_now(mq, self.pqs[mq], b)
        if refused and v5:
            # 5.x: rebalanceLater(500) when a lock was refused; the real client retried about
            # once a second (5.3.3 kill_survivor_o1_client.log: 280 "lock Failed" lines in 57 s)
            self._rebalance_later(LOCK_RETRY_MS)
        return changed

    def _rebalance_later(self, delay_ms: int) -> None:
        """One rebalance after ``delay_ms``, however many times it is asked for meanwhile."""
        if self._retry_pending:
            return
        self._retry_pending = True

        def run() -> None:
            self._retry_pending = False
            self.rebalance()
        self.cluster.scheduler.call_later(delay_ms, run)

    def _compute_pull_from_where(self, b: BrokerLink, mq: MessageQueue) -> int:
        """RebalancePushImpl.computePullFromWhereWithException: the broker's offset
        (QUERY_CONSUMER_OFFSET without setZeroIfNotFound, so a young queue answers 0), else
        by consumeFromWhere (BROADCASTING: a fresh local offset file)."""
        last = (b.query_offset(self.group.name, mq.topic, mq.queue_id)
                if self.group.model == "CLUSTERING" else -1)
        if last >= 0:
            return last
        retry = mq.topic.startswith(RETRY_PREFIX)
        cfw = self.group.consume_from
        if cfw == "CONSUME_FROM_FIRST_OFFSET":
            return 0
        if cfw == "CONSUME_FROM_TIMESTAMP" and not retry:
            return b.search(mq.topic, mq.queue_id, self.start_ts - 30 * 60_000)
        if retry and cfw == "CONSUME_FROM_LAST_OFFSET":
            return 0
        return b.max_offset(mq.topic, mq.queue_id)

    # --------------------------------------------------------------- locks

    def lock_all(self) -> None:
        if not self.alive or not self.orderly:
            return
        by_broker: dict[str, list[MessageQueue]] = {}
        for mq in self.pqs:
            by_broker.setdefault(mq.broker_name, []).append(mq)
        now = self.now()
        for bn, mqs in by_broker.items():
            b = self.cluster.brokers.get(bn)
            ok: set[MessageQueue] = set()
            if b is not None and self.cluster.broker_up(bn):
                self.traffic[bn] = now
                ok = b.try_lock_batch(self.group.name, mqs, self.client_id)
            for mq in mqs:
                pq = self.pqs[mq]
                text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
                if mq in ok:
                    if not pq.locked:
                        self._log("lockall_ok", f"the message queue locked OK, Group: "
                                  f"{self.group.name} {text}")
                    pq.locked, pq.last_lock_ts = True, now
                else:
                    pq.locked = False
                    self._log("lockall_failed", f"the message queue locked Failed, Group: "
                              f"{self.group.name} {text}", "WARN")

    # --------------------------------------------------------------- consumption

    def consume_tick(self) -> None:
        if not self.alive or self.suspended:
            return
        now = self.now()
        g = self.group.name
        pqs = [(mq, pq) for mq, pq in sorted(self.pqs.items()) if not pq.dropped]
        if not pqs:
            return
        capacity = None  # None: consumes whatever is there (a healthy, fast consumer)
        behaviour = self.behaviour
        if self.spec.rate is not None or behaviour == "slow":
            capacity = (self.spec.rate or 1.0) * CONSUME_TICK_MS / 1000
        elif self.spec.consume_rt_ms:
            # every consume thread busy for consume_rt per message
            capacity = self.consume_threads * CONSUME_TICK_MS / self.spec.consume_rt_ms
        backlog: list[tuple[MessageQueue, PQ, int]] = []
        pop_room: dict[tuple[str, str], int] = {}
        for mq, pq in pqs:
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            if self.orderly and not pq.locked:
                # DefaultMQPushConsumerImpl.pullMessage (4.9.3 and 5.3.3), every second
                self._log("pull_later", "pull message later because not locked in broker, "
                          f"PullRequest [consumerGroup={g}, messageQueue="
                          f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)}, "
                          f"nextOffset={pq.position}]")
                continue
            if self.orderly and now - pq.last_lock_ts > LOCK_TRUST_MS:
                continue  # "the message queue not locked, so consume later"
            # a push consumer's pull request carries its consumed offset (commitOffset)
            self.traffic[mq.broker_name] = now
            if not b.consume_enabled(g):
                # PullMessageProcessor: NO_PERMISSION (consumeEnable=false); the client pulls
                # again later and gets nothing from this broker
                pq.last_pull_ts = now
                continue
            if self.pop and self.group.model == "CLUSTERING":
                # pop: the group's offset lives in the broker and each message goes to one
                # popper (PopMessageProcessor commits the offset it pops from): this client
                # pops from where the group is, not from where it last was
                shared = b.pop_offset(g, mq.topic, mq.queue_id)
                if shared is not None:
                    pq.position = shared
            nxt = (pq.position if pq.head is None
                   else min(pq.head, b.max_offset(mq.topic, mq.queue_id)))
            jumped = b.pull(g, mq.topic, mq.queue_id, nxt,
                            pq.position if self.group.model == "CLUSTERING" else None,
                            pop=self.pop, reader=("" if self.group.model == "CLUSTERING"
                                                  else self.client_id))
            pq.last_pull_ts = now
            if jumped != nxt and self.pop:
                # the pop took a pending server-side reset (the broker committed it): the
                # client simply gets the messages from there
                pq.position = jumped
                self._replay_now(mq, pq, b)
            elif jumped != nxt:  # PULL_OFFSET_MOVED: a server-side reset was pending
                pq.head = None
                self._offset_moved(mq, pq, jumped, b)
                continue
            if behaviour == "stuck":
                continue
            limit = b.max_offset(mq.topic, mq.queue_id)
            if pq.head is not None:
                nxt = pq.head
            if self.pop:
                # pop flow control per PopProcessQueue (one per broker: allocate4Pop's
                # queue -1): at most popThresholdForQueue + a batch popped and not acked
                key = (mq.topic, mq.broker_name)
                room = pop_room.setdefault(key, POP_THRESHOLD + POP_BATCH)
                limit = min(limit, nxt + room)
                pop_room[key] = room - max(0, limit - nxt)
            backlog.append((mq, pq, max(0, limit - nxt)))
        consumed = 0
        for mq, pq, n in self._share(backlog, capacity):
            pq.last_batch = n if self.pop else 0
            if n > 0:
                start = pq.position if pq.head is None else pq.head
                if pq.head is None:
                    pq.position += n
                else:
                    pq.head += n
                pq.last_consume_ts = now
                pq.consumed_any = True
                consumed += n
                failed = self._fail(mq, pq, start, n)
                self._stats.append((now, mq.topic, n - failed, failed))
                self._tps_window.append((now, mq.topic, n))
                b = self.cluster.brokers.get(mq.broker_name)
                if self.pop and self.group.model == "CLUSTERING" and b is not None:
                    b.commit(g, mq.topic, mq.queue_id, pq.position)  # popped: the group's
        self.consumed_total += consumed
        self._tps_window.append((now, "", 0))  # the window runs to now, consumed or not
        self._tps_window = [x for x in self._tps_window if now - x[0] <= 60_000]
        if self._stats and now - self._stats[0][0] > STATS_HOUR_MS:
            self._stats = [x for x in self._stats if now - x[0] <= STATS_HOUR_MS]

    def _fail(self, mq: MessageQueue, pq: PQ, start: int, n: int) -> int:
        """Scenario ``fail_ratio``: that share of the ``n`` messages consumed from ``start``
        fails (RECONSUME_LATER). A concurrent CLUSTERING consumer sends them back
        (ConsumeMessageConcurrentlyService.processConsumeResult -> sendMessageBack; the retry
        queue's messages keep their reconsumeTimes), a pop consumer leaves them unacked, to be
        revived into its pop retry topic after the invisible time. Orderly and BROADCASTING
        consumers are not simulated failing (they retry in place or drop)."""
        ratio = self.spec.fail_ratio
        if ratio <= 0 or self.orderly or self.group.model != "CLUSTERING":
            return 0
        pq.fail_budget += n * ratio
        failed = min(n, int(pq.fail_budget + 1e-9))
        pq.fail_budget -= failed
        b = self.cluster.brokers.get(mq.broker_name)
        if failed <= 0 or b is None:
            return failed
        max_times = 16 if self.spec.max_reconsume_times < 0 else self.spec.max_reconsume_times
        g = self.group.name
        if self.pop:
            b.send_back(g, failed, 0, max_times, retry_topic=f"{RETRY_PREFIX}{g}_{mq.topic}",
                        delay_ms=POP_INVISIBLE_MS)
        elif mq.topic.startswith(RETRY_PREFIX):
            left = failed
            for count, times in b.reconsume_times(mq.topic, mq.queue_id, start, n):
                k = min(left, count)
                b.send_back(g, k, times, max_times)
                left -= k
                if left <= 0:
                    break
        else:
            b.send_back(g, failed, 0, max_times)
        return failed

    def stick(self) -> None:
        """Scenario ``stuck_message_at``: from now the listener hangs on the next message of
        each queue; the consumer goes on with the later ones (a concurrent ProcessQueue
        consumes out of order) while the committed offset stays at the hung one; once the
        cache spans more than consumeConcurrentlyMaxSpan offsets each pull waits until the
        batch before it is consumed (DefaultMQPushConsumerImpl.pullMessage: a consumed
        message leaves the cache, so the span falls back to 0 and the next pull goes).
        ProcessQueue.cleanExpiredMsg, run every consumeTimeout (15 min) from the consumer's
        start, sends a message consumed for longer than that back and removes it: then the
        offset moves on."""
        if not self.alive or self.orderly:
            return
        now = self.now()
        for mq, pq in self.pqs.items():
            if not pq.dropped and pq.head is None and not mq.topic.startswith(RETRY_PREFIX):
                pq.head = pq.position + 1
        period = CONSUME_TIMEOUT_MS
        k = max(1, -(-(now + period - self.start_ts) // period))
        self.cluster.scheduler.call_later(self.start_ts + k * period - now, self._clean_expired)

    def _clean_expired(self) -> None:
        if not self.alive:
            return
        max_times = 16 if self.spec.max_reconsume_times < 0 else self.spec.max_reconsume_times
        for mq, pq in self.pqs.items():
            if pq.head is None:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is not None and b.max_offset(mq.topic, mq.queue_id) > pq.position:
                b.send_back(self.group.name, 1, 0, max_times)  # sendMessageBack(msg, 3)
                pq.position = pq.head  # removeMessage: the hung one was the smallest
            pq.head = None

    @staticmethod
    def _share(backlog: list[tuple[MessageQueue, PQ, int]], capacity: float | None
               ) -> list[tuple[MessageQueue, PQ, int]]:
        """How many messages each queue gets this tick. ``rate`` is processing capacity (the
        consume threads take whatever the ProcessQueues hold): it is shared among the queues
        with a backlog only, a queue needing less than its share leaves the rest to the others
        (water-filling), and capacity left idle is not saved up. A queue keeps the fraction
        of a message it was given (``pq.budget``) while it still has a backlog."""
        if capacity is None:
            return backlog
        busy = sorted((x for x in backlog if x[2] > 0), key=lambda x: x[2])
        out = [(mq, pq, 0) for mq, pq, n in backlog if n <= 0]
        for _mq, pq, _n in out:
            pq.budget = 0.0
        left = capacity
        for i, (mq, pq, need) in enumerate(busy):
            give = min(float(need), left / (len(busy) - i))
            left -= give
            pq.budget += give
            n = min(need, int(pq.budget + 1e-9))
            pq.budget = 0.0 if n >= need else pq.budget - n
            out.append((mq, pq, n))
        return out

    def wake_pulls(self, mqs: list[MessageQueue]) -> None:
        """The broker assigned a server-side reset on queues that are being written: a fast
        consumer's pull of each queue it holds returns with the next message and the pull
        after it takes the reset, well before a 1 s poll (PullMessageProcessor: the pull that
        finds a pending reset answers PULL_OFFSET_MOVED; a pop takes it itself). Simulated as
        one pull of each such queue right after the reset, within the same instant as the
        next step of the clock."""
        if not self.fast:
            return
        wanted = set(mqs)

        def pull_now() -> None:
            if not self.fast:
                return
            for mq, pq in sorted(self.pqs.items()):
                b = self.cluster.brokers.get(mq.broker_name)
                if (mq not in wanted or pq.dropped or b is None
                        or not self.cluster.broker_up(mq.broker_name)
                        or (self.orderly and not pq.locked)):
                    continue
                self.traffic[mq.broker_name] = self.now()
                jumped = b.pull(self.group.name, mq.topic, mq.queue_id, pq.position,
                                pq.position if self.group.model == "CLUSTERING" else None,
                                pop=self.pop)
                pq.last_pull_ts = self.now()
                if jumped != pq.position and self.pop:
                    pq.position = jumped
                    self._replay_now(mq, pq, b)
                elif jumped != pq.position:
                    self._offset_moved(mq, pq, jumped, b)

        self.cluster.scheduler.call_later(0, pull_now)

    @property
    def fast(self) -> bool:
        """Healthy and without a ``rate``: consumes whatever its queues hold at once."""
        return (self.alive and not self.suspended and self.spec.rate is None
                and self.behaviour == "healthy")

    def _replay_now(self, mq: MessageQueue, pq: PQ, b: BrokerLink) -> None:
        """A fast consumer re-consumes a reset's rewind at once, and the broker has the new
        position at once: the pull requests that follow each batch carry the consumed offset
        (commitOffset; a pop client's acks). Real clients do this within a second (issue 25:
        a 4.9.3 client replayed 150 messages per queue and committed 290 well under verify's
        1 s poll; 5.3.3 push and pop clients re-consumed 75-138 per queue within ~1 s); the
        simulation does it in the same instant as the reset is taken, so no read ever sees the
        target: the worst case for a verify that polls. A ``rate``-limited, slow or stuck
        consumer, or a 4.x orderly queue not yet locked, consumes at its pace instead."""
        if not self.fast or pq.dropped or (self.orderly and not pq.locked):
            return
        g, now = self.group.name, self.now()
        n = max(0, b.max_offset(mq.topic, mq.queue_id) - pq.position)
        if n <= 0:
            return
        commit = self.group.model == "CLUSTERING"
        b.pull(g, mq.topic, mq.queue_id, pq.position, pq.position if commit else None,
               pop=self.pop)
        pq.position += n
        pq.last_pull_ts = pq.last_consume_ts = now
        pq.consumed_any = True
        pq.last_batch = 0  # processed and acked
        self.consumed_total += n
        self._tps_window.append((now, mq.topic, n))
        b.pull(g, mq.topic, mq.queue_id, pq.position, pq.position if commit else None,
               pop=self.pop)
        self.traffic[mq.broker_name] = now

    def _offset_moved(self, mq: MessageQueue, pq: PQ, new: int, b: BrokerLink) -> None:
        """DefaultMQPushConsumerImpl's OFFSET_ILLEGAL case: drop the process queue, then write
        the new offset to the offset store, persist it to the broker and remove the queue
        (RebalanceImpl.removeProcessQueue), which a rebalance adds again from the broker's
        offset. Clients before 5.2.0 do the second half 10 s later (executeTaskLater) and wait
        for the next periodic rebalance, so meanwhile the broker keeps the old offset the pull
        committed; 5.2.0+ clients do it at once and rebalance immediately (#7635, #7644)."""
        g = self.group.name
        text = mq_text(mq.topic, mq.broker_name, mq.queue_id)
        self._log("offset_illegal", f"the pull request offset illegal, PullRequest "
                  f"[consumerGroup={g}, messageQueue={text}, nextOffset={pq.position}] "
                  f"PullResult [pullStatus=OFFSET_ILLEGAL, nextBeginOffset={new}, minOffset="
                  f"{b.min_offset(mq.topic, mq.queue_id)}, maxOffset="
                  f"{b.max_offset(mq.topic, mq.queue_id)}, msgFoundList=0]", "WARN")
        pq.dropped = True
        current = self.spec.version >= V5_2_0

        def fix() -> None:
            if not self.alive or self.pqs.get(mq) is not pq:
                return
            broker = self.cluster.brokers.get(mq.broker_name)
            if broker is not None and self.cluster.broker_up(mq.broker_name):
                if self.group.model == "CLUSTERING":
                    # offsetStore.updateOffset + persist, then removeProcessQueue ->
                    # removeUnnecessaryMessageQueue: persist again, removeOffset (real 5.3.3:
                    # reset/client_log_after_reset.log, two [persist] lines per queue)
                    broker.commit(g, mq.topic, mq.queue_id, new)
                    for _ in range(2):
                        self._log("persist_one", f"[persist] Group: {g} ClientId: "
                                  f"{self.client_id} updateConsumeOffsetToBroker {text} {new}")
                    self._log_offset_removed(mq, len(self.pqs) - 1)
                if self.orderly:  # RebalancePushImpl.removeUnnecessaryMessageQueue
                    self._log("unlock", f"unlock messageQueue. group:{g}, clientId:"
                              f"{self.client_id}, mq:{text}", "WARN")
                    broker.unlock_batch(g, [mq], self.client_id)
            del self.pqs[mq]
            self._replay_on_add.add(mq)
            self._log("fix_offset", f"Fix Offset, {g}, remove unnecessary mq, {text} Droped: "
                      "true")
            self._log("offset_fixed", f"fix the pull request offset, PullRequest [consumerGroup="
                      f"{g}, messageQueue={text}, nextOffset={new}]", "WARN")
            if current:  # rebalanceImmediately: wakes RebalanceService after the fixes
                self._rebalance_later(0)

        self.cluster.scheduler.call_later(CURRENT_CLIENT_FIX_MS if current else RESET_PAUSE_MS,
                                          fix)

    def consume_tps(self, topic: str | None = None) -> float:
        """Messages consumed per second over the last minute: of ``topic`` (the running
        info's statusTable consumeOKTPS, ConsumerStatsManager keyed topic@group), or of every
        topic."""
        if not self._tps_window:
            return 0.0
        span = max(1.0, (self._tps_window[-1][0] - self._tps_window[0][0]) / 1000 + 1)
        return sum(c for _, t, c in self._tps_window if topic is None or t == topic) / span

    def commit(self) -> None:
        # BROADCASTING consumers keep offsets in a local file (LocalFileOffsetStore)
        if self.state not in ("running",) or self.group.model == "BROADCASTING":
            return
        now = self.now()
        for mq, pq in self.pqs.items():
            if pq.dropped:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            b.commit(self.group.name, mq.topic, mq.queue_id, pq.position)
            self.traffic[mq.broker_name] = now
            if now - pq.last_persist_log >= PERSIST_LOG_MS:
                pq.last_persist_log = now
                self._log("persist", f"[persistAll] Group: {self.group.name} ClientId: "
                          f"{self.client_id} updateConsumeOffsetToBroker "
                          f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)} {pq.position}")

    # --------------------------------------------------------------- resets

    def reset_offset(self, broker_addr: str, topic: str, timestamp: int,
                     table: dict[MessageQueue, int]) -> None:
        """MQClientInstance.resetOffset (legacy path): suspend, drop the topic's queues,
        sleep 10 s, write the offsets, remove the queues, rebalance, resume.

        The lines are the real 4.9.3 client's (reset/client_log_after_reset.log): every push is
        logged at once (``invoke reset offset operation from broker``), the pushes are then
        applied one after another (resetOffset is synchronized), each with ``suspend this
        consumer``, 10 s later ``[persist]`` + ``remove unnecessary messageQueue offset`` per
        queue (removeUnnecessaryMessageQueue, no ``doRebalance ... remove unnecessary mq``),
        the rebalance that adds them again (``add a new mq`` and a ``rebalanced result
        changed`` line with the unchanged set) and ``resume this consumer``."""
        if not self.alive or self.spec.ignore_reset_push:
            return
        g = self.group.name
        self._log("reset", f"invoke reset offset operation from broker. brokerAddr={broker_addr},"
                  f" topic={topic}, group={g}, timestamp={timestamp}")

        def begin() -> None:
            if not self.alive:
                return
            self._log("suspend", f"suspend this consumer, {g}")
            self.suspended = True
            for mq, pq in self.pqs.items():
                if mq.topic == topic and mq in table:
                    pq.dropped = True

        def apply() -> None:
            if not self.alive:
                return
            for mq in [m for m in self.pqs if m.topic == topic and m in table]:
                b = self.cluster.brokers.get(mq.broker_name)
                if b is not None and self.cluster.broker_up(mq.broker_name):
                    b.commit(g, mq.topic, mq.queue_id, table[mq])
                    self._log("persist_one", f"[persist] Group: {g} ClientId: {self.client_id} "
                              "updateConsumeOffsetToBroker "
                              f"{mq_text(mq.topic, mq.broker_name, mq.queue_id)} {table[mq]}")
                    if self.orderly:
                        b.unlock_batch(g, [mq], self.client_id)
                del self.pqs[mq]
                self._log_offset_removed(mq)
            self.suspended = False
            more = self._reset_busy_until > self.now()  # another push waits
            if not more:  # resumed for good: the re-added queues are replayed at once
                self._replay_on_add.update(m for m in table if m.topic == topic)
            self.rebalance()
            self._replay_on_add.difference_update(table)
            if more:  # paused again at once
                self._first_pull(topic, table)
            self._log("resume", f"resume this consumer, {g}")

        # MQClientInstance.resetOffset is synchronized: pushes from several brokers are
        # applied one after another, each after its own 10 s pause
        start = max(self.now(), self._reset_busy_until)
        self._reset_busy_until = start + RESET_PAUSE_MS
        self._push_ends = [(run, end) for run, end in self._push_ends if end > self.now()]
        self._push_ends.append((self.runs, self._reset_busy_until))
        if start <= self.now():
            begin()  # before a second push of the same instant is logged (as the corpus)
        else:
            self.cluster.scheduler.call_later(start - self.now(), begin)
        self.cluster.scheduler.call_later(self._reset_busy_until - self.now(), apply)

    @property
    def callbacks_busy(self) -> bool:
        """Every callback thread is held by a pushed reset (NettyRemotingClient.publicExecutor,
        clientCallbackExecutorThreads threads, serves RESET_CONSUMER_CLIENT_OFFSET and
        GET_CONSUMER_RUNNING_INFO alike): a request for its running info waits until the
        current push is applied."""
        now = self.now()
        busy = sum(1 for run, end in self._push_ends if run == self.runs and end > now)
        return self.alive and busy >= self.spec.callback_threads

    def _first_pull(self, topic: str, table: dict[MessageQueue, int]) -> None:
        """The rebalance in resume() adds the queues again and dispatches their first pull
        request at once (RebalancePushImpl.dispatchPullRequest), before a reset push waiting on
        the synchronized MQClientInstance.resetOffset suspends the consumer again: each re-added
        queue gets one pull of up to pullBatchSize (32) messages, and the consume threads process
        them while the consumer is paused (pause only holds back pull requests). Real 4.9.3:
        reset/client_log_after_reset.log re-adds broker-b's queues at 20:59:38.707, suspends at
        38.717, and persists broker-b at 32 at 43.2 while paused (208_after_25s: 32-33)."""
        if not self.alive or self.behaviour == "stuck":
            return
        for mq, pq in self.pqs.items():
            if mq.topic != topic or mq not in table or pq.dropped:
                continue
            b = self.cluster.brokers.get(mq.broker_name)
            if b is None or not self.cluster.broker_up(mq.broker_name):
                continue
            if self.orderly and not pq.locked:
                continue
            n = min(PULL_BATCH, max(0, b.max_offset(mq.topic, mq.queue_id) - pq.position))
            if n > 0:
                pq.position += n
                pq.last_consume_ts = self.now()
                pq.consumed_any = True
                self.consumed_total += n

    def _log_offset_removed(self, mq: MessageQueue, size: int | None = None) -> None:
        """RemoteBrokerOffsetStore.removeOffset: logged when a queue is removed and before one is
        added (RebalancePushImpl.removeDirtyOffset); the size counts the queues it still has."""
        self._log("remove_offset", f"remove unnecessary messageQueue offset. group="
                  f"{self.group.name}, mq={mq_text(mq.topic, mq.broker_name, mq.queue_id)}, "
                  f"offsetTableSize={len(self.pqs) if size is None else size}")

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
