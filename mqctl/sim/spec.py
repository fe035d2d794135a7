"""What a scenario of the simulated cluster describes, once loaded (:mod:`mqctl.sim.scenario`
reads and checks the files, ``docs/scenario.md`` documents them): its brokers, topics with
their production, consumer groups with their consumers and behaviours, faults, ACL and TLS,
and the values each may take."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mqctl.errors import UsageError
from mqctl.versions import V5_1_0, V5_2_0

CONSUME_FROM = ("CONSUME_FROM_LAST_OFFSET", "CONSUME_FROM_FIRST_OFFSET",
                "CONSUME_FROM_TIMESTAMP")
BEHAVIOURS = ("healthy", "slow", "stuck", "crash", "hang")
CLOCKS = ("real", "accelerated", "manual")
MODELS = ("CLUSTERING", "BROADCASTING")
FAULT_ACTIONS = ("down", "latency", "drop", "error")


class ScenarioError(UsageError):
    def __init__(self, path: str, problem: str, source: str | None = None):
        where = f"{source}: " if source else ""
        super().__init__(f"scenario {where}{path}: {problem}" if path else
                         f"scenario {where}{problem}",
                         hint="see docs/scenario.md for the scenario format")


@dataclass(frozen=True)
class BrokerSpec:
    name: str
    slave: bool = False
    config: dict[str, Any] = field(default_factory=dict)
    version: int = 479  # MQVersion ordinal (V5_3_3)
    # GET_BROKER_RUNTIME_INFO entries the master / its slave report on top of the simulated
    # ones (reported only: e.g. pullThreadPoolQueueHeadWaitTimeMills, commitLogMaxOffset)
    runtime: dict[str, str] = field(default_factory=dict)
    slave_runtime: dict[str, str] = field(default_factory=dict)

    @property
    def server_side_reset(self) -> bool:
        """RIP-48 came in 5.1.0 (default false), the default turned true in 5.2.0."""
        if self.version < V5_1_0:
            return False
        v = self.config.get("useServerSideResetOffset", self.version >= V5_2_0)
        return v if isinstance(v, bool) else str(v).lower() == "true"


@dataclass(frozen=True)
class RateChange:
    at_s: float
    rate: float


@dataclass(frozen=True)
class QueueSpec:
    """Production of one queue that differs from its topic's (``topics[i].per_queue``)."""

    queue: int
    broker: str | None = None  # None: this queue id on every broker of the topic
    rate: float | None = None
    start_s: float | None = None  # production starts this long after the cluster start
    history_s: float | None = None
    min_offset: int | None = None
    initial_max: int | None = None
    store_times_ms: tuple[int, ...] | None = None  # relative to the clock start (ms)


@dataclass(frozen=True)
class TopicSpec:
    name: str
    read_queues: int
    write_queues: int
    perm: int
    brokers: tuple[str, ...]
    rate: float  # messages per second per queue
    history_s: float  # the queue already holds messages covering this much time
    min_offset: int = 0
    initial_max: int | None = None  # explicit max offset at start (overrides rate*history)
    rate_changes: tuple[RateChange, ...] = ()
    order: bool = False
    start_s: float | None = None  # production (rate) starts this long after the cluster start
    per_queue: tuple[QueueSpec, ...] = ()
    perm_by_broker: dict[str, int] = field(default_factory=dict)  # a broker's own topic perm

    def queue_spec(self, broker: str, queue: int) -> QueueSpec | None:
        """The per-queue override for this queue (a broker-specific one wins)."""
        found = None
        for q in self.per_queue:
            if q.queue == queue and q.broker == broker:
                return q
            if q.queue == queue and q.broker is None:
                found = q
        return found


@dataclass(frozen=True)
class ConsumerSpec:
    client_id: str
    subscriptions: dict[str, str]
    language: str = "JAVA"
    version: int = 479
    behaviour: str = "healthy"
    behaviour_at_s: float = 0.0  # healthy until then (slow, stuck)
    rate: float | None = None  # slow: messages per second this consumer processes
    crash_at_s: float | None = None
    hang_at_s: float | None = None
    resume_at_s: float | None = None
    join_at_s: float | None = None
    leave_at_s: float | None = None
    heartbeat_brokers: tuple[str, ...] | None = None  # None = every broker
    addr: str | None = None
    strategy: str | None = None  # overrides the group's (mixed-strategy groups)
    threads: int = 20  # consumeThreadMin/Max (DefaultMQPushConsumer's default: 20)
    restart_at_s: float | None = None  # a crashed consumer starts again, same client id
    # its GET_CONSUMER_RUNNING_INFO goes unanswered (the broker's forward times out) from
    # silent_at for silent_for (None: to the end), while it stays a member and consumes
    silent_at_s: float | None = None
    silent_for_s: float | None = None
    # diagnose: the time one message takes to consume (its capacity is threads /
    # consume_rt when no rate is given); the share of consumptions that fail (sent back to the
    # retry topic, to the DLQ after max_reconsume_times); one message per queue that hangs
    consume_rt_ms: float | None = None
    fail_ratio: float = 0.0
    max_reconsume_times: int = -1  # DefaultMQPushConsumer.maxReconsumeTimes (-1: 16)
    stuck_message_at_s: float | None = None
    # the client's callback threads (ClientConfig.clientCallbackExecutorThreads, by default
    # the host's processor count): a pushed reset holds one for its wait and 10 s pause, and
    # GET_CONSUMER_RUNNING_INFO waits for a free one (NettyRemotingClient.publicExecutor)
    callback_threads: int = 4
    # a pushed reset never takes effect at this client (the oneway RESET_CONSUMER_CLIENT_OFFSET
    # lost on its way): it keeps its process queues and goes on from where it was
    ignore_reset_push: bool = False


@dataclass(frozen=True)
class GroupSpec:
    name: str
    model: str = "CLUSTERING"
    orderly: bool = False
    consume_from: str = "CONSUME_FROM_LAST_OFFSET"
    strategy: str = "AVG"
    topics: tuple[str, ...] = ()
    consumers: tuple[ConsumerSpec, ...] = ()
    initial_lag: int = 0  # committed offsets start this many messages behind max
    consume_type: str = "CONSUME_PASSIVELY"
    # SubscriptionGroupConfig fields (RocketMQ names) on every broker, and per broker (brokers
    # that disagree); see GROUP_CONFIG_FIELDS
    config: dict[str, Any] = field(default_factory=dict)
    config_by_broker: dict[str, dict[str, Any]] = field(default_factory=dict)
    # where the group has committed offsets at the start: None = every queue
    # of its topics; else {broker: queue ids, None = all of that broker's} (empty: none at all,
    # a group that exists only as a subscription group, like mqadmin updateSubGroup's)
    offsets_on: dict[str, frozenset[int] | None] | None = None


# SubscriptionGroupConfig fields a scenario may set, and their type: consumeEnable is honoured
# (the brokers refuse the group's pulls); the others the sim only reports (its consumers take
# their retry limit from their own maxReconsumeTimes, as clients from 3.4.9 on send it, and do
# not time out, read from slaves or start anew), so a value cannot contradict what they do
GROUP_CONFIG_FIELDS: dict[str, type] = {
    "consumeEnable": bool,  # honoured: the brokers refuse the group's pulls (NO_PERMISSION)
    "retryMaxTimes": int, "consumeTimeoutMinute": int, "brokerId": int,
    "whichBrokerWhenConsumeSlowly": int, "consumeFromMinEnable": bool,
    "consumeBroadcastEnable": bool}


@dataclass(frozen=True)
class FaultSpec:
    action: str
    broker: str
    at_s: float = 0.0
    for_s: float | None = None
    latency_ms: float = 0.0
    request: int | None = None
    response: int = 1
    remark: str | None = None
    times: int | None = None


@dataclass(frozen=True)
class AclSpec:
    enabled: bool = False
    accounts: dict[str, str] = field(default_factory=dict)  # access key -> secret key


@dataclass(frozen=True)
class TlsSpec:
    enabled: bool = False
    cert_file: str | None = None
    key_file: str | None = None


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    cluster: str
    brokers: tuple[BrokerSpec, ...]
    topics: tuple[TopicSpec, ...]
    groups: tuple[GroupSpec, ...]
    clock: str = "real"
    speed: float = 1.0
    start_ms: int | None = None  # the simulated clock's start (epoch ms); None: now
    faults: tuple[FaultSpec, ...] = ()
    acl: AclSpec = AclSpec()
    tls: TlsSpec = TlsSpec()
    log_dir: str | None = None
    running_info_timeout_s: float = 10.0
    seed: int = 7
    # the name server's release (MQVersion ordinal); None: the brokers' lowest version
    namesrv_version: int | None = None

    @property
    def namesrv_ordinal(self) -> int:
        """The release the name server answers as: ``namesrv.version``, else the lowest broker
        version (a cluster is upgraded name server first, so its oldest broker is the safe
        guess for a name server nobody named)."""
        if self.namesrv_version is not None:
            return self.namesrv_version
        return min(b.version for b in self.brokers)

    def topic(self, name: str) -> TopicSpec:
        for t in self.topics:
            if t.name == name:
                return t
        raise KeyError(name)
