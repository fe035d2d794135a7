"""``mqctl groups``: every consumer group of the cluster, one summary each.

The capture asks each master for ALL its groups at once instead of one request per group per
broker:

* GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): the broker's subscription group table, the groups
  that exist even without offsets (created by ``updateSubGroup`` or a first heartbeat);
* GET_BROKER_CONSUME_STATS (317), as mqadmin ``brokerConsumeStats``: every group's offsets
  and consume TPS on that broker (AdminBrokerProcessor.fetchAllConsumeStatsInBroker);
* the name server's topic list: ``%RETRY%<group>`` names (mqadmin ``consumerProgress``
  without ``-g`` finds groups this way) and the ``%DLQ%<group>`` topics that exist;
* GET_ALL_TOPIC_CONFIG (21): the topics the broker hosts and their readable queues, to find
  the queues 317 leaves out (:func:`_cover`).

Per group it then sends only what has no all-groups form: GET_CONSUMER_CONNECTION_LIST
(members, consume type, model; brokers in turn until one knows the group online),
GET_CONSUMER_RUNNING_INFO of each member (strategy, orderly, pop inflight; skipped with
``clients=False``), QUERY_CONSUME_TIME_SPAN for the (broker, topic) pairs that lag (the exact
time lag) and GET_TOPIC_STATS_INFO for the group's DLQ topic. All of it is read-only.

What 317 does not say, and how it is handled: it names a group only on the brokers that hold
offsets of it and iterates the WRITE queues of a topic (the missing queues are asked with
GET_CONSUME_STATS per topic), it never sets ``pullOffset`` (5.x sends 0: inflight is
not read from it), and a broker that did not answer makes the lag of every group whose topics
it hosts unknown (``None``; the sum over the brokers that answered is kept as
``lag_at_least``).
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from mqctl.admin import (
    Admin,
    BrokerFailure,
    NotFoundError,
    NothingRead,
    broker_addr,
    dedupe,
    require_addr,
)
from mqctl.errors import BrokerError, ConnectError, MqctlError
from mqctl.models import (
    DLQ_PREFIX,
    PERM_READ,
    RETRY_PREFIX,
    BrokerData,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    MessageQueue,
    OffsetWrapper,
    is_system_group,
    wait_ack_count,
)
from mqctl.remoting.client import fan_out
from mqctl.timeparse import now_ms
from mqctl.views.dlq import DlqQueue, read_dlq_queues
from mqctl.views.members import not_online
from mqctl.views.offsets import OffsetTableCache, committed_offsets
from mqctl.views.paused import paused_by
from mqctl.views.progress import BROADCASTING_LAG, classify_span
from mqctl.views.topics import int_or_zero, match_name

STATES = ("OK", "LAGGING", "STOPPED", "OFFLINE", "EMPTY", "PAUSED", "UNKNOWN")

# The state rule, in the order it is applied (docs/groups.md and `mqctl groups --help` print it)
STATE_RULE = (
    "UNKNOWN: the membership could not be read; "
    "PAUSED: consumeEnable=false in its subscription group on a master (`mqctl group pause`: "
    "the broker refuses its pulls; who paused it and when, if mqctl did it from here); "
    "EMPTY: no online member and no committed offset on any broker (the group exists only in "
    "the subscription group table; its lag is unknown, nothing was read); "
    "UNKNOWN: the lag is unknown (a broker that hosts the group's topics did not answer; a "
    "BROADCASTING group keeps its offsets in the clients: reason 'broadcasting'); "
    "OFFLINE: no online member, committed offsets exist; "
    "STOPPED: online, lag > 0 and the brokers handed the group no message in the last minute "
    "(consume TPS 0); "
    "LAGGING: online, and lag >= --lag-threshold or max time lag >= --time-lag-threshold; "
    "OK: online and none of the above."
)

DEFAULT_LAG_THRESHOLD = 1000
DEFAULT_TIME_LAG_THRESHOLD_MS = 60_000

CONSUME_TYPES = {"CONSUME_PASSIVELY": "push", "CONSUME_ACTIVELY": "pull", "CONSUME_POP": "pop"}


@dataclass
class GroupSummary:
    group: str
    brokers: list[str] = field(default_factory=list)  # brokers whose tables name the group
    topics: list[str] = field(default_factory=list)  # topics with offsets (retry topics apart)
    queues: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    retry: dict[MessageQueue, OffsetWrapper] = field(default_factory=dict)
    consume_tps: float = 0.0
    lag: int | None = None
    lag_at_least: int = 0
    retry_lag: int | None = None
    dlq_topic: str | None = None
    dlq: list[DlqQueue] = field(default_factory=list)
    dlq_messages: int | None = 0
    members: int | None = None
    client_ids: list[str] = field(default_factory=list)
    consume_type: str | None = None  # push | pull | pop
    message_model: str | None = None
    orderly: bool | None = None
    strategies: list[str] = field(default_factory=list)  # reported by the members that answered
    running_info: str = "not asked"  # ok | not asked | "<n> of <m> failed"
    # masters whose subscription group config has consumeEnable=false (`group pause`), and who
    # paused it when mqctl did it from this machine (its audit record)
    paused_on: list[str] = field(default_factory=list)
    paused_by: str | None = None
    # members whose GET_CONSUMER_RUNNING_INFO was asked and not answered (still members: a
    # client that left meanwhile is not counted): what they run is unknown, so every column
    # derived from the members' running info (TYPE, ORDERLY, STRATEGY, INFLIGHT) is partial
    unread_members: dict[str, str] = field(default_factory=dict)  # client id -> the error
    # the member list could not be read: the brokers' failures (MEMBERS and every column
    # derived from members unknown; the capture is partial)
    member_failures: list[BrokerFailure] = field(default_factory=list)
    inflight: int | None = None  # pop: the clients' waitAckCount (invisible messages)
    max_time_lag_ms: int | None = None
    time_lag_unknown: int = 0
    time_lag_asked: bool = False
    time_lag_pairs_asked: int = 0  # QUERY_CONSUME_TIME_SPAN answers used
    time_lag_pairs_skipped: int = 0  # (broker, topic) pairs whose bound was below the max
    state: str = "UNKNOWN"
    reason: str = ""
    not_included: list[str] = field(default_factory=list)
    # the online members' subscribed topics; topics whose route could not be read
    # (their coverage unknown); queues without a committed offset (``none``, the reset plans'
    # rule: mqctl.views.offsets.committed_offsets) and their lag (mqadmin's Diff)
    subscribed: list[str] = field(default_factory=list)
    uncovered: dict[str, str] = field(default_factory=dict)
    no_offset: list[MessageQueue] = field(default_factory=list)

    @property
    def no_offset_lag(self) -> int:
        return sum(max(0, self.queues[mq].diff) for mq in self.no_offset if mq in self.queues)

    @property
    def lag_unknown(self) -> str | None:
        """Why the lag is unknown whatever was read: ``broadcasting`` (an online BROADCASTING
        group: mqctl.views.progress.BROADCASTING_LAG, the one name every view gives it), else
        None."""
        return BROADCASTING_LAG if self.message_model == "BROADCASTING" else None

    @property
    def pop(self) -> bool:
        """The group pops (5.x): the broker hands any queue's messages to whoever pops."""
        return self.consume_type == "pop"

    @property
    def strategy_seen(self) -> str | None:
        """The strategy the members that answered report (``mixed: A, B`` when they differ);
        ``pop`` for a pop group, whose queues no client strategy allocates (the broker
        assigns each pop client queues: QueryAssignmentProcessor.allocate4Pop)."""
        if self.pop and self.strategies:
            return "pop"
        if not self.strategies:
            return None
        return self.strategies[0] if len(self.strategies) == 1 else (
            "mixed: " + ", ".join(self.strategies))

    @property
    def strategy(self) -> str | None:
        """The group's strategy: None (unknown) when a member did not answer."""
        return None if self.unread_members else self.strategy_seen

    @property
    def lagging(self) -> bool:
        """Lag > 0, known or at least (the filter of ``--only-lagging``)."""
        return (self.lag or 0) > 0 or self.lag_at_least > 0


@dataclass
class GroupsCapture:
    capture_ts: int
    groups: list[GroupSummary]
    brokers: list[str]  # the masters asked
    failures: list[BrokerFailure]
    stats_failed: list[str]  # brokers whose GET_BROKER_CONSUME_STATS failed
    clients: bool = True
    time_lag: bool = True
    hidden_system: int = 0

    @property
    def unread_members(self) -> list[tuple[str, str]]:
        """("group client id", the error) of every member whose running info did not answer: the
        columns derived from members are partial there, so is the capture (exit 8)."""
        return [(f"{s.group} {c}", why) for s in self.groups
                for c, why in s.unread_members.items()]


match_group = match_name  # ``--match`` (mqctl.views.topics.match_name: groups and topics)


def group_state(s: GroupSummary, *, lag_threshold: int = DEFAULT_LAG_THRESHOLD,
                time_lag_threshold_ms: int = DEFAULT_TIME_LAG_THRESHOLD_MS) -> tuple[str, str]:
    """The state of one group and why (STATE_RULE, applied in that order). Pure."""
    if s.members is None:
        return "UNKNOWN", "the member list could not be read"
    if s.paused_on:
        return "PAUSED", (f"consumeEnable=false on {', '.join(s.paused_on)}"
                          + (f" (the others of {len(s.brokers)} serve its pulls)"
                             if len(s.paused_on) < len(s.brokers) else "")
                          + (f"; {s.paused_by}" if s.paused_by else ""))
    if s.lag_unknown:
        return "UNKNOWN", (f"{s.lag_unknown}: each client keeps its own offsets in a local "
                           "file (LocalFileOffsetStore), the brokers have none: lag unknown")
    if not s.members and not s.queues and not s.retry and not s.not_included \
            and not s.uncovered:
        return "EMPTY", "no online member and no committed offset"
    if s.lag is None:
        why = [", ".join(s.not_included) + " did not answer"] if s.not_included else []
        why += [f"topic {t}: {r}" for t, r in sorted(s.uncovered.items())]
        return "UNKNOWN", "lag unknown" + (": " + "; ".join(why) if why else "")
    if not s.members:
        return "OFFLINE", "no online member"
    if s.lag > 0 and s.consume_tps == 0:
        return "STOPPED", f"lag {s.lag} and no message consumed in the last minute"
    if s.lag >= lag_threshold:
        return "LAGGING", f"lag {s.lag} >= {lag_threshold}"
    if s.max_time_lag_ms is not None and s.max_time_lag_ms >= time_lag_threshold_ms:
        return "LAGGING", (f"max time lag {s.max_time_lag_ms / 1000:g} s >= "
                           f"{time_lag_threshold_ms / 1000:g} s")
    return "OK", ""


def _pop_retry_owner(name: str, groups: set[str], topics: set[str]) -> bool:
    """A 5.x pop retry topic (``%RETRY%<group>_<topic>`` v1, ``%RETRY%<group>+<topic>`` v2,
    KeyBuilder.buildPopRetryTopic), not the retry topic of a group of that name."""
    if "+" in name:
        return True
    return any(name == f"{g}_{t}" for g in groups for t in topics if name.startswith(g + "_"))


# capture_groups is a sequence of steps: the masters' tables (one read of each per master), the
# groups they name, each group's members, the brokers hosting its topics and the queues the
# tables left out, its lag (a pure rule, returning a new frozen result), the queues without a
# committed offset, the time lags, the dead letters and the state.


@dataclass(frozen=True, slots=True)
class _Tables:
    """The cluster's groups as the masters' tables name them (GET_ALL_SUBSCRIPTIONGROUP_CONFIG
    and GET_BROKER_CONSUME_STATS, one of each per master), and its topics."""

    masters: Mapping[str, BrokerData]
    topics: tuple[str, ...]
    known: Mapping[str, frozenset[str]]  # group -> the brokers naming it
    stats: Mapping[str, GroupSummary]    # group -> what the consume stats say of it
    failures: tuple[BrokerFailure, ...]
    stats_failed: tuple[str, ...]        # brokers whose GET_BROKER_CONSUME_STATS failed
    paused: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # consumeEnable=false

    @property
    def retry_topics(self) -> set[str]:
        return {t for t in self.topics if t.startswith(RETRY_PREFIX)}

    @property
    def dlq_topics(self) -> dict[str, str]:
        return {t[len(DLQ_PREFIX):]: t for t in self.topics if t.startswith(DLQ_PREFIX)}


async def _read_tables(admin: Admin) -> _Tables:
    info = await admin.cluster_info()
    masters: dict[str, BrokerData] = {n: b for n, b in sorted(info.brokers.items())}
    topic_names = await admin.topic_list()

    def addr_of(b: BrokerData) -> str:
        return require_addr(b, " in the cluster info")

    blist = list(masters.values())
    sub_out, stats_out = await asyncio.gather(
        fan_out(blist, lambda b: admin.subscription_group_table(addr_of(b)),
                concurrency=admin.concurrency),
        fan_out(blist, lambda b: admin.broker_consume_stats(addr_of(b)),
                concurrency=admin.concurrency))
    answered = {o.item.broker_name for o in [*sub_out, *stats_out] if o.ok}
    failures: list[BrokerFailure] = []
    for o in [*sub_out, *stats_out]:
        if not o.ok:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.broker_name, o.item.master_addr, o.error))
    if blist and not answered:
        raise NothingRead("the group tables (GET_ALL_SUBSCRIPTIONGROUP_CONFIG / "
                          "GET_BROKER_CONSUME_STATS)", dedupe(failures))
    known: dict[str, set[str]] = defaultdict(set)
    paused: dict[str, list[str]] = defaultdict(list)
    for o in sub_out:
        if o.ok:
            for g, conf in (o.value or {}).items():
                known[g].add(o.item.broker_name)
                if conf.get("consumeEnable") is False:
                    paused[g].append(o.item.broker_name)
    stats = _stats_summaries([(o.item.broker_name, o.value) for o in stats_out if o.ok], known)
    all_topics = {t for t in topic_names if not t.startswith((RETRY_PREFIX, DLQ_PREFIX))}
    for g in sorted({t[len(RETRY_PREFIX):] for t in topic_names if t.startswith(RETRY_PREFIX)}):
        if g not in known and not _pop_retry_owner(g, set(known), all_topics):
            known[g] = set()
    return _Tables(masters, tuple(topic_names), {g: frozenset(bs) for g, bs in known.items()},
                   stats, tuple(failures),
                   tuple(sorted({o.item.broker_name for o in stats_out if not o.ok})),
                   {g: tuple(sorted(bs)) for g, bs in paused.items()})


def _stats_summaries(answers: list[tuple[str, object]], known: dict[str, set[str]]
                     ) -> dict[str, GroupSummary]:
    """Each group's queues, retry queues and consume TPS from the brokers' consume stats (a
    group they name is added to ``known``)."""
    out: dict[str, GroupSummary] = {}
    for broker, value in answers:
        body = value if isinstance(value, dict) else {}
        for entry in body.get("consumeStatsList") or []:
            if not isinstance(entry, dict):
                continue
            for g, stats in entry.items():
                g = str(g)
                known[g].add(broker)
                s = out.setdefault(g, GroupSummary(g))
                for raw in stats or []:
                    cs = ConsumeStats.from_body(raw)
                    s.consume_tps += cs.consume_tps
                    for mq, w in cs.offsets.items():
                        if mq.broker_name != broker:
                            continue
                        # 317 never sets pullOffset (5.x sends 0): not an inflight figure
                        w = OffsetWrapper(w.broker_offset, w.consumer_offset, None,
                                          w.last_timestamp)
                        (s.retry if mq.topic.startswith(RETRY_PREFIX) else s.queues)[mq] = w
    return out


def _select(t: _Tables, include_system: bool, match: str | None
            ) -> tuple[list[GroupSummary], int]:
    """The groups shown, by name, each with the brokers naming it; and how many system groups
    were left out."""
    hidden = 0
    out: dict[str, GroupSummary] = {}
    for g in sorted(t.known):
        if not include_system and is_system_group(g):
            hidden += 1
            continue
        if match_group(g, match):
            out[g] = replace(t.stats.get(g) or GroupSummary(g), brokers=sorted(t.known[g]),
                             paused_on=list(t.paused.get(g, ())))
    return [out[g] for g in sorted(out)], hidden


@dataclass(frozen=True, slots=True)
class _Lag:
    """A group's lag, as far as what was read tells it."""

    topics: list[str]
    lag_at_least: int
    lag: int | None
    retry_lag: int | None
    not_included: list[str]  # brokers whose consume stats failed and may hold its offsets
    dlq_topic: str | None


def _lag(s: GroupSummary, t: _Tables, topic_brokers: Mapping[str, set[str] | None]) -> _Lag:
    """The lag of a group whose queues were read (pure): unknown where a broker that may hold
    its offsets did not answer or a topic's queues could not be covered, and over nothing read."""
    failed = set(t.stats_failed)
    topics = sorted({mq.topic for mq in s.queues})
    at_least = sum(max(0, w.diff) for w in s.queues.values())
    hidden_by: set[str] = set()
    if failed:
        if not topics:
            hidden_by = set(failed)
        for tp in topics:
            tb = topic_brokers.get(tp)
            hidden_by |= set(failed) if tb is None else (tb & failed)
    unknown = bool(hidden_by or s.uncovered)
    # nothing read (no offset anywhere, no subscription): no lag, not 0
    lag = None if unknown or not (s.queues or s.retry) else at_least
    # the retry backlog over no %RETRY% queue read is unknown where that topic exists
    # (nothing waits in a topic that does not exist: 0, as a missing %DLQ% topic)
    retry_lag = (None if unknown or (not s.retry and RETRY_PREFIX + s.group in t.retry_topics)
                 else sum(max(0, w.diff) for w in s.retry.values()))
    if s.lag_unknown:
        # LocalFileOffsetStore: the clients keep the offsets; what a broker holds for the
        # group (left from a CLUSTERING past) is not its progress
        lag, at_least = None, 0
    return _Lag(topics, at_least, lag, retry_lag, sorted(hidden_by), t.dlq_topics.get(s.group))


def _with_lag(s: GroupSummary, lag: _Lag) -> GroupSummary:
    return replace(s, topics=lag.topics, lag_at_least=lag.lag_at_least, lag=lag.lag,
                   retry_lag=lag.retry_lag, not_included=lag.not_included,
                   dlq_topic=lag.dlq_topic)


async def capture_groups(admin: Admin, *, include_system: bool = False,
                         match: str | None = None, clients: bool = True,
                         time_lag: bool = True, lag_threshold: int = DEFAULT_LAG_THRESHOLD,
                         time_lag_threshold_ms: int = DEFAULT_TIME_LAG_THRESHOLD_MS
                         ) -> GroupsCapture:
    ts = now_ms()
    t = await _read_tables(admin)
    failures = list(t.failures)
    groups, hidden = _select(t, include_system, match)
    for s in groups:
        if s.paused_on:
            s.paused_by = paused_by(admin.namesrv, s.group)
    masters = dict(t.masters)
    all_masters = list(masters.values())
    await fan_out(groups, lambda s: _members(admin, s, masters, all_masters, clients),
                  concurrency=admin.concurrency)
    for s in groups:
        failures.extend(s.member_failures)
    # every readable queue of every topic each group consumes or has offsets for, on every
    # broker of its route, then the lag, and which groups a failed broker
    # may hide offsets of
    hosts, unknown_hosts, bdata = await _hosts(admin, groups, masters)
    await _cover(admin, groups, hosts, unknown_hosts, bdata, set(t.stats_failed), failures)
    topic_brokers: dict[str, set[str] | None] = {
        tp: None if tp in unknown_hosts else set(bs) for tp, bs in hosts.items()}
    groups = [_with_lag(s, _lag(s, t, topic_brokers)) for s in groups]
    await _no_offsets(admin, groups, bdata, failures)
    if time_lag:
        await _time_lags(admin, groups, masters, failures)
    await _dlqs(admin, [s for s in groups if s.dlq_topic], failures)
    groups = [replace(s, state=state, reason=reason) for s in groups
              for state, reason in [group_state(s, lag_threshold=lag_threshold,
                                                time_lag_threshold_ms=time_lag_threshold_ms)]]
    return GroupsCapture(ts, groups, sorted(masters), dedupe(failures), list(t.stats_failed),
                         clients, time_lag, hidden)


async def _members(admin: Admin, s: GroupSummary, masters: dict[str, BrokerData],
                   all_masters: list[BrokerData], clients: bool) -> None:
    """GET_CONSUMER_CONNECTION_LIST on the brokers that name the group, in turn, until one
    knows it online (each member heartbeats to every broker of its topics); every broker
    answering CONSUMER_NOT_ONLINE = offline; no answer at all = unknown."""
    order = [masters[b] for b in s.brokers if b in masters] or all_masters
    conn: ConsumerConnection | None = None
    said_offline = 0
    via: BrokerData | None = None
    failed: list[BrokerFailure] = []
    for b in order:
        addr = broker_addr(b)
        if addr is None:
            continue
        try:
            c = await admin.consumer_connection(s.group, addr)
        except (ConnectError, BrokerError) as exc:
            failed.append(BrokerFailure(b.broker_name, addr, exc))
            continue
        if c is None:
            said_offline += 1
            continue
        conn, via = c, b
        break
    if conn is None:
        s.members = 0 if said_offline and said_offline == len(order) else None
        if s.members is None:  # unknown, not offline: the capture is partial (exit 8)
            s.member_failures = failed
        return
    s.members = len(conn.connections)
    s.client_ids = sorted({c.client_id for c in conn.connections})
    s.consume_type = CONSUME_TYPES.get(conn.consume_type or "", conn.consume_type)
    s.message_model = conn.message_model
    s.subscribed = sorted(conn.subscriptions)
    if not clients or not s.client_ids:
        return
    assert via is not None
    rest = [b for b in order if b is not via]
    infos = await admin.running_infos(s.group, s.client_ids, [via, *rest])
    ok = [i for i in infos.values() if isinstance(i, ConsumerRunningInfo)]
    # a client that left between the member list and its request ("not online") is no
    # member that did not answer (mqctl.views.members.not_online)
    s.unread_members = {c: i.message for c, i in sorted(infos.items())
                        if not isinstance(i, ConsumerRunningInfo) and not not_online(i)}
    n_failed = len(infos) - len(ok)
    s.running_info = "ok" if not n_failed else f"{n_failed} of {len(infos)} failed"
    if ok:
        # what the members that answered say; the rows mark it partial where a member did
        # not answer (unread_members)
        s.orderly = any(i.orderly for i in ok)
        s.strategies = sorted({i.strategy_name for i in ok if i.strategy_name})
        if any(i.pops for i in ok):
            s.consume_type = "pop"
        if s.pop and not n_failed:
            s.inflight = sum(wait_ack_count(v) for i in ok for v in i.mq_pop_table.values())


async def _hosts(admin: Admin, groups: list[GroupSummary], masters: dict[str, BrokerData]
                 ) -> tuple[dict[str, dict[str, int]], dict[str, str], dict[str, BrokerData]]:
    """Which brokers host each topic a group has offsets for or subscribes to (BROADCASTING
    groups apart: their offsets are in the clients), with its readable queue count: one
    GET_ALL_TOPIC_CONFIG per master (the table mqctl topics reads) instead of a route per
    topic; where a master's table did not answer, the topics' routes say what it hosts.
    Returns (topic -> {broker: read queues}, topics whose hosts are unknown -> why, the
    brokers by name)."""
    topics = sorted({mq.topic for s in groups for mq in [*s.queues, *s.retry]}
                    | {t for s in groups if s.message_model != "BROADCASTING"
                       for t in s.subscribed})
    hosts: dict[str, dict[str, int]] = {t: {} for t in topics}
    unknown: dict[str, str] = {}
    bdata = dict(masters)
    if not topics:
        return hosts, unknown, bdata
    configs = await admin._per_broker(list(masters.values()), admin.topic_config_table)
    failed = {b for b, v in configs.items() if isinstance(v, BrokerFailure)}
    for b, table in configs.items():
        if isinstance(table, BrokerFailure):
            continue
        for t in set(topics) & set(table):
            conf = table[t]
            if int_or_zero(conf.get("perm")) & PERM_READ:
                hosts[t][b] = int_or_zero(conf.get("readQueueNums"))
    if failed:
        for o in await fan_out(topics, admin.topic_route, concurrency=admin.concurrency):
            if o.ok and o.value is not None:
                for qd in o.value.queues:
                    rb = o.value.broker(qd.broker_name)
                    if qd.broker_name in failed and qd.readable and rb is not None:
                        hosts[o.item][qd.broker_name] = qd.read_queue_nums
                        bdata.setdefault(qd.broker_name, rb)
            elif not isinstance(o.error, NotFoundError):
                assert o.error is not None
                unknown[o.item] = (f"{', '.join(sorted(failed))} did not answer its topic table "
                                   f"and the route could not be read: {o.error.message}")
    return hosts, unknown, bdata


async def _cover(admin: Admin, groups: list[GroupSummary], hosts: dict[str, dict[str, int]],
                 unknown: dict[str, str], bdata: dict[str, BrokerData], stats_failed: set[str],
                 failures: list[BrokerFailure]) -> None:
    """GET_BROKER_CONSUME_STATS (AdminBrokerProcessor.
    fetchAllConsumeStatsInBroker) names a group only on the brokers that hold offsets of it
    (ConsumerOffsetManager.whichTopicByConsumer) and iterates a topic's WRITE queues; so a
    broker hosting the topic without the group's offsets (4.9.3: a group offline with offsets
    on broker-a only) and the read-only queues are missing. Each such (group, broker, topic)
    is asked GET_CONSUME_STATS with the topic, which lists every read queue (never-committed
    ones as consumerOffset 0). Only where something is missing."""
    todo: list[tuple[GroupSummary, BrokerData, str]] = []
    for s in groups:
        if s.message_model == "BROADCASTING":
            continue
        for t in sorted({mq.topic for mq in [*s.queues, *s.retry]} | set(s.subscribed)):
            if t in unknown:
                s.uncovered[t] = unknown[t]
            have = s.retry if t.startswith(RETRY_PREFIX) else s.queues
            for name, n in sorted(hosts.get(t, {}).items()):
                if name in stats_failed or name not in bdata:
                    continue
                if any(MessageQueue(t, name, q) not in have for q in range(n)):
                    todo.append((s, bdata[name], t))

    async def one(item: tuple[GroupSummary, BrokerData, str]) -> ConsumeStats:
        s, b, t = item
        return await admin.consume_stats(s.group, require_addr(b), t)

    for o in await fan_out(todo, one, concurrency=admin.concurrency):
        s, b, t = o.item
        if not o.ok:
            assert o.error is not None
            failures.append(BrokerFailure(b.broker_name, b.master_addr, o.error))
            s.uncovered[t] = f"GET_CONSUME_STATS on {b.broker_name} failed: {o.error.message}"
            continue
        assert o.value is not None
        have = s.retry if t.startswith(RETRY_PREFIX) else s.queues
        for mq, w in o.value.offsets.items():
            if mq.topic == t and mq.broker_name == b.broker_name and mq not in have:
                # as from 317: pullOffset is not an inflight figure here
                have[mq] = OffsetWrapper(w.broker_offset, w.consumer_offset, None,
                                         w.last_timestamp)


async def _no_offsets(admin: Admin, groups: list[GroupSummary],
                      brokers: dict[str, BrokerData], failures: list[BrokerFailure]) -> None:
    """Which queues that read consumerOffset 0 have no committed offset (``none``): the reset
    plans' rule (mqctl.views.offsets.committed_offsets), the brokers' versions and offset tables
    read once for all groups."""
    cache = OffsetTableCache()
    addrs = {n: broker_addr(b) for n, b in brokers.items()}

    async def one(s: GroupSummary) -> None:
        zeros = [mq for mq, w in s.queues.items() if w.consumer_offset == 0]
        if not zeros or s.message_model == "BROADCASTING":
            return
        got = await committed_offsets(admin, s.group, zeros, {mq: 0 for mq in zeros}, addrs,
                                      cache=cache)
        for name, exc in sorted(got.failed.items()):
            failures.append(BrokerFailure(name, addrs.get(name), exc))
        for name, (exc, _zs) in sorted(got.unchecked.items()):
            failures.append(BrokerFailure(name, addrs.get(name), exc))
        s.no_offset = sorted(mq for mq, v in got.offsets.items() if v is None)

    await fan_out(groups, one, concurrency=admin.concurrency)


# Broker clocks may be ahead of this machine's by this much before a bound below could be off
CLOCK_MARGIN_MS = 5_000


async def _time_lags(admin: Admin, groups: list[GroupSummary], masters: dict[str, BrokerData],
                     failures: list[BrokerFailure]) -> None:
    """The exact max time lag of each lagging group, with as few QUERY_CONSUME_TIME_SPAN as
    possible (one answers for one group's queues of one topic on one broker).

    A lagging queue's time lag is ``now - storeTime(consumerOffset)``; the consume stats give
    ``lastTimestamp = storeTime(consumerOffset - 1)``, which is not later, so ``now -
    lastTimestamp`` bounds it from above. The (broker, topic) pairs are asked in the order of
    their bound, largest first, and the asking stops once the largest exact time lag found is
    at least the next pair's bound (plus CLOCK_MARGIN_MS for broker clocks ahead of this
    machine): the maximum is then exact without asking the rest. A queue without
    lastTimestamp (nothing committed) has no bound and is always asked. A caught-up queue's
    time lag is 0 without asking."""
    now = now_ms()
    inf = float("inf")

    def bound(items: list[tuple[MessageQueue, OffsetWrapper]]) -> float:
        return max((now - w.last_timestamp if w.last_timestamp > 0 else inf) for _, w in items)

    async def one(s: GroupSummary) -> None:
        s.time_lag_asked = True
        if s.lag_unknown:  # a broker's time span of a BROADCASTING group is not its own
            return
        pairs: dict[tuple[str, str], list[tuple[MessageQueue, OffsetWrapper]]] = defaultdict(list)
        for mq, w in sorted(s.queues.items()):
            if w.diff > 0:
                pairs[(mq.broker_name, mq.topic)].append((mq, w))
        if s.lag is not None or s.lag_at_least:
            s.max_time_lag_ms = 0
        if not pairs:
            return
        best: int | None = None
        order = sorted(pairs, key=lambda p: (-bound(pairs[p]), p))
        for i, (broker, topic) in enumerate(order):
            if best is not None and best >= bound(pairs[(broker, topic)]) + CLOCK_MARGIN_MS:
                s.time_lag_pairs_skipped = len(order) - i
                break
            b = masters.get(broker)
            addr = broker_addr(b) if b else None
            try:
                if addr is None:
                    raise ConnectError(f"broker {broker} has no address")
                spans = {sp.mq: sp for sp in await admin.time_spans(topic, s.group, addr)}
            except MqctlError as exc:
                failures.append(BrokerFailure(broker, addr, exc))
                s.time_lag_unknown += len(pairs[(broker, topic)])
                continue
            s.time_lag_pairs_asked += 1
            for mq, w in pairs[(broker, topic)]:
                delay, _reason, _committed = classify_span(w, spans.get(mq), now)
                if delay is None:
                    s.time_lag_unknown += 1
                else:
                    best = delay if best is None else max(best, delay)
        s.max_time_lag_ms = best  # None: every lagging queue asked was unknown

    await fan_out(groups, one, concurrency=admin.concurrency)


async def _dlqs(admin: Admin, groups: list[GroupSummary],
                failures: list[BrokerFailure]) -> None:
    """The ``%DLQ%<group>`` messages each broker holds (GET_TOPIC_STATS_INFO: max - min), by
    the one rule of :func:`~mqctl.views.dlq.read_dlq_queues`; a group's brokers one by one."""
    async def one(s: GroupSummary) -> None:
        parts = await read_dlq_queues(admin, s.group, failures, concurrency=1)
        s.dlq = parts or []
        s.dlq_messages = None if parts is None else sum(p.messages for p in parts)

    for o in await fan_out(groups, one, concurrency=admin.concurrency):
        if not o.ok:
            assert o.error is not None
            o.item.dlq_messages = None
            failures.append(BrokerFailure("namesrv", None, o.error))


# ------------------------------------------------------------------- serial baseline (bench)


async def capture_groups_serial(admin: Admin, groups: list[str]) -> dict[str, int]:
    """What a per-group tool does for the same view, one request after another (the bench's
    baseline, as mqadmin consumerProgress per group): per group, the retry topic's route,
    GET_CONSUME_STATS on each of its brokers, the connection list and the time spans of its
    topics. Returns each group's total lag (to check both answers agree)."""
    out: dict[str, int] = {}
    info = await admin.cluster_info()
    for g in groups:
        try:
            route = await admin.topic_route(RETRY_PREFIX + g, cached=False)
            brokers = list(route.brokers)
        except NotFoundError:
            brokers = list(info.brokers.values())
        lag = 0
        topics: set[tuple[str, str]] = set()
        for b in brokers:
            addr = b.master_addr or ""
            cs = await admin.consume_stats(g, addr)
            for mq, w in cs.offsets.items():
                if not mq.topic.startswith(RETRY_PREFIX) and mq.broker_name == b.broker_name:
                    lag += max(0, w.diff)
                    topics.add((addr, mq.topic))
        if brokers:
            await admin.consumer_connection(g, brokers[0].master_addr or "")
        for addr, t in sorted(topics):
            await admin.time_spans(t, g, addr)
        out[g] = lag
    return out


__all__ = ["CONSUME_TYPES", "DEFAULT_LAG_THRESHOLD", "DEFAULT_TIME_LAG_THRESHOLD_MS",
           "GroupSummary", "GroupsCapture", "STATES", "STATE_RULE",
           "capture_groups", "capture_groups_serial", "group_state",
           "match_group"]
