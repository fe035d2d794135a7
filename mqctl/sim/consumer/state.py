"""A simulated push consumer's state (its process queues, timers, statistics) and what every
part of it uses: its heartbeat (``MQClientInstance.sendHeartbeatToAllBroker``), its offset
commits (``RemoteBrokerOffsetStore.persistAll``), and the client defaults of
``DefaultMQPushConsumer`` it runs with."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from mqctl.models import RETRY_PREFIX, STRATEGY_CLASS_NAMES, MessageQueue
from mqctl.sim.logs import ClientLog, mq_text
from mqctl.sim.ports import Channel
from mqctl.sim.spec import ConsumerSpec, GroupSpec

if TYPE_CHECKING:
    from mqctl.sim.clock import _Event
    from mqctl.sim.ports import BrokerLink, ConsumerSite, SimClient

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
# DefaultMQPushConsumerImpl.pullTimeDelayMillsWhenException: a failed pull is retried after 3 s
PULL_RETRY_MS = 3000
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
LOCK_RETRY_MS = 1_000
PERSIST_LOG_MS = 30_000

_CLASS_OF = {v: k for k, v in STRATEGY_CLASS_NAMES.items()}


def new_connection_addr(addr: str, run: int) -> str:
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
    # consumeEnable=false: where the cache pulled before the broker refused ends (the client
    # consumes it, then has nothing: PullMessageProcessor answers NO_PERMISSION), and when the
    # refusal was last logged (the client retries a failed pull every 3 s)
    refused_end: int | None = None
    pulled: bool = False  # a pull of this queue was answered (its cache may hold messages)
    refused_log_ts: int = -PULL_RETRY_MS


class ConsumerState:
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
                # the whole client (SimConsumer, built on this state) is what registers
                self.now(), consumer=cast("SimClient", self)))

    @property
    def fast(self) -> bool:
        """Healthy and without a ``rate``: consumes whatever its queues hold at once."""
        return (self.alive and not self.suspended and self.spec.rate is None
                and self.behaviour == "healthy")

    def _replay_now(self, mq: MessageQueue, pq: PQ, b: BrokerLink) -> None:
        """A fast consumer re-consumes a reset's rewind at once, and the broker has the new
        position at once: the pull requests that follow each batch carry the consumed offset
        (commitOffset; a pop client's acks). Real clients do this within a second (a 4.9.3 client
        replayed 150 messages per queue and committed 290 well under verify's
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

    def _log_offset_removed(self, mq: MessageQueue, size: int | None = None) -> None:
        """RemoteBrokerOffsetStore.removeOffset: logged when a queue is removed and before one is
        added (RebalancePushImpl.removeDirtyOffset); the size counts the queues it still has."""
        self._log("remove_offset", f"remove unnecessary messageQueue offset. group="
                  f"{self.group.name}, mq={mq_text(mq.topic, mq.broker_name, mq.queue_id)}, "
                  f"offsetTableSize={len(self.pqs) if size is None else size}")
