"""Live inputs for a preview: the route and the member list as every broker sees it.

Read-only: GET_ROUTEINFO_BY_TOPIC (name server), GET_CONSUMER_LIST_BY_GROUP and
GET_CONSUMER_CONNECTION_LIST (every broker of the topic, resp. the first that knows the group)
and, for ``--against-live``, GET_CONSUMER_RUNNING_INFO (forwarded by a broker to each client).
Never a heartbeat, lock or offset update.

A Java client asks one random broker of the topic for ``cidAll`` (``findConsumerIdList``);
mqctl asks every broker, predicts with the union (an id with the highest multiplicity any
broker reports), and reports brokers that disagree: clients that asked such a broker compute
a different allocation until the next heartbeat settles it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.allocate.base import Allocation, AllocationStrategy, java_key, sort_queues
from mqctl.allocate.engine import compute_allocation
from mqctl.allocate.registry import registry
from mqctl.errors import MqctlError, UsageError
from mqctl.models import (
    STRATEGY_CLASS_NAMES,
    ConsumerConnection,
    ConsumerRunningInfo,
    MessageQueue,
    TopicRoute,
)

if TYPE_CHECKING:
    from mqctl.admin import Admin, BrokerFailure

POP = "CONSUME_POP"
BROADCASTING = "BROADCASTING"


@dataclass(frozen=True, slots=True)
class LiveGroup:
    group: str
    topic: str
    route: TopicRoute
    queues: tuple[MessageQueue, ...]
    by_broker: dict[str, tuple[str, ...]]        # brokers that answered -> ids (dups kept)
    failures: tuple[BrokerFailure, ...] = ()
    connection: ConsumerConnection | None = None

    @property
    def consumers(self) -> tuple[str, ...]:
        """The union over brokers, each id as often as the broker that lists it most."""
        most: Counter[str] = Counter()
        for ids in self.by_broker.values():
            for cid, n in Counter(ids).items():
                most[cid] = max(most[cid], n)
        return tuple(sorted(most.elements(), key=java_key))

    @property
    def agree(self) -> bool:
        views = {tuple(sorted(ids, key=java_key)) for ids in self.by_broker.values()}
        return len(views) <= 1

    @property
    def message_model(self) -> str | None:
        return self.connection.message_model if self.connection else None

    @property
    def consume_type(self) -> str | None:
        return self.connection.consume_type if self.connection else None

    @property
    def broadcasting(self) -> bool:
        return self.message_model == BROADCASTING

    @property
    def pop(self) -> bool:
        return self.consume_type == POP

    def disagreements(self) -> dict[str, dict[str, list[str]]]:
        """Per broker: ids it lacks and ids only it (or some brokers) lists."""
        union = Counter(self.consumers)
        out = {}
        for broker, ids in self.by_broker.items():
            mine = Counter(ids)
            missing = sorted((union - mine).elements(), key=java_key)
            if missing:
                out[broker] = {"missing": missing}
        return out

    def notes(self) -> list[str]:
        notes = []
        if not self.agree:
            for broker, d in sorted(self.disagreements().items()):
                notes.append(f"broker {broker} does not list {', '.join(d['missing'])}: "
                             "clients that ask it for the member list compute another "
                             "allocation (brokers disagree until the next heartbeat)")
            notes.append("the preview uses the union of the brokers' member lists")
        for f in self.failures:
            notes.append(f"broker {f.broker} ({f.addr or 'no address'}) did not answer: "
                         f"{f.message}")
        # BROADCASTING: the allocation itself says so, once (engine.broadcast_allocation);
        # pop: the pop result says so (preview.pop_result)
        return notes

    def to_dict(self) -> dict[str, Any]:
        return {"topic": self.topic,
                "brokers": {b: list(ids) for b, ids in sorted(self.by_broker.items())},
                "failedBrokers": {f.broker: f.message for f in self.failures},
                "agree": self.agree, "messageModel": self.message_model,
                "consumeType": self.consume_type}


async def read_live_group(admin: Admin, group: str, topic: str) -> LiveGroup:
    from mqctl.admin import BrokerFailure

    route = await admin.topic_route(topic)
    queues = tuple(route.subscribe_queues())  # readable queues only
    members = await admin.members_by_broker(group, route)
    by_broker: dict[str, tuple[str, ...]] = {}
    failures: list[BrokerFailure] = []
    for broker, got in members.items():
        if isinstance(got, BrokerFailure):
            failures.append(got)
        else:
            by_broker[broker] = tuple(got)
    if members and not by_broker:  # no broker answered: nothing to preview
        from mqctl.admin import NothingRead

        raise NothingRead(f"the member list of group {group} (GET_CONSUMER_LIST_BY_GROUP)",
                          failures)
    connection = None
    if any(by_broker.values()):
        try:
            connection = await admin.consumer_connection(group, route)
        except MqctlError:
            connection = None  # the membership answer is enough for a preview
    return LiveGroup(group=group, topic=topic, route=route, queues=queues, by_broker=by_broker,
                     failures=tuple(failures), connection=connection)


@dataclass(frozen=True, slots=True)
class LiveReports:
    """What each client says it owns (``mqTable`` keys) and which strategy it runs."""

    owned: dict[str, tuple[MessageQueue, ...]]
    strategies: dict[str, str] = field(default_factory=dict)   # cid -> strategy name
    failures: dict[str, str] = field(default_factory=dict)     # cid -> error message
    dropped: dict[str, tuple[MessageQueue, ...]] = field(default_factory=dict)
    subscribed: dict[str, tuple[str, ...]] = field(default_factory=dict)  # cid -> its topics
    # clients that pop the topic (ConsumerRunningInfo: its mqPopTable has queues of it, or it
    # reports CONSUME_POP) -> the queues the broker assigned them to pop from (queue id -1:
    # every queue of that broker, QueryAssignmentProcessor.allocate4Pop)
    pop_queues: dict[str, tuple[MessageQueue, ...]] = field(default_factory=dict)

    @property
    def pops(self) -> bool:
        """A client that answered pops the topic: the broker, not a client strategy, decides
        what it reads."""
        return bool(self.pop_queues)

    def notes(self, predicted: Allocation) -> list[str]:
        """Failures and drops; the strategy the clients run is :func:`choose_strategy`'s."""
        notes = []
        for cid, msg in sorted(self.failures.items()):
            notes.append(f"client {cid} did not report its queues: {msg}")
        if self.failures:
            notes.append("queues of clients that did not answer show as not owned")
        for cid, qs in sorted(self.dropped.items()):
            notes.append(f"client {cid} is dropping {len(qs)} queue(s) (a rebalance in "
                         "progress)")
        return notes

    def to_dict(self) -> dict[str, Any]:
        return {"owned": {c: [q.to_dict() for q in qs] for c, qs in self.owned.items()},
                "strategies": self.strategies, "failures": self.failures}


def strategy_name(class_or_name: str | None) -> str | None:
    """``org...AllocateMessageQueueAveragely@1a2b`` -> ``avg``."""
    if not class_or_name:
        return None
    cls = class_or_name.split("@", 1)[0]
    java = STRATEGY_CLASS_NAMES.get(cls)
    if java:
        return java.lower().replace("_", "-")
    return cls.rsplit(".", 1)[-1]


async def read_reports(admin: Admin, group: str, client_ids: Iterable[str],
                       route: TopicRoute) -> LiveReports:
    infos = await admin.running_infos(group, client_ids, route)
    return reports_from_infos(infos, route.topic)


def reports_from_infos(infos: Mapping[str, Any], topic: str) -> LiveReports:

    owned: dict[str, tuple[MessageQueue, ...]] = {}
    dropped: dict[str, tuple[MessageQueue, ...]] = {}
    strategies: dict[str, str] = {}
    failures: dict[str, str] = {}
    subscribed: dict[str, tuple[str, ...]] = {}
    pop_queues: dict[str, tuple[MessageQueue, ...]] = {}
    for cid in sorted(infos, key=java_key):
        info = infos[cid]
        if not isinstance(info, ConsumerRunningInfo):
            failures[cid] = getattr(info, "message", str(info))
            continue
        subscribed[cid] = tuple(sorted({s.topic for s in info.subscriptions}))
        if info.pop_queues(topic) or info.consume_type == POP:
            pop_queues[cid] = tuple(info.pop_queues(topic))
        mine = [mq for mq, pq in info.mq_table.items() if mq.topic == topic and not pq.dropped]
        gone = [mq for mq, pq in info.mq_table.items() if mq.topic == topic and pq.dropped]
        owned[cid] = tuple(sort_queues(mine))
        if gone:
            dropped[cid] = tuple(sort_queues(gone))
        name = strategy_name(info.strategy_class)
        if name:
            strategies[cid] = name
    return LiveReports(owned=owned, strategies=strategies, failures=failures, dropped=dropped,
                       subscribed=subscribed, pop_queues=pop_queues)


def pops(live: LiveGroup, reports: LiveReports | None) -> bool:
    """Whether the group pops the topic: the brokers list it as CONSUME_POP, or a client that
    answered pops it. A 5.x remoting push consumer in pop mode (``clientRebalance=false``,
    the group's request mode POP: ``mqadmin setConsumeMode -m POP``) heartbeats and reports
    CONSUME_PASSIVELY; its mqPopTable says that it pops (real 5.3.3: each of 2 such clients
    got queue -1 of both brokers and consumed from all 8 queues)."""
    return live.pop or (reports is not None and reports.pops)


def check_subscribed(live: LiveGroup, reports: LiveReports | None) -> list[str]:
    """Whether the group's clients allocate the topic at all: a client rebalances only the
    topics it subscribes to (RebalanceImpl.doRebalance iterates its subscription table), while
    the member list of every topic is the whole group (GET_CONSUMER_LIST_BY_GROUP). So:

    * no client subscribes to the topic (every client that reported its running info, or the
      broker's subscription table when none reported): nobody owns its queues and there is
      nothing to predict: a usage error (exit 2), as for a group no broker knows;
    * some clients do not: the prediction stands (they are in cidAll and get queues) and a
      warning names them: the queues allocated to them are not consumed.

    An offline group (no member), or one of which nothing names a topic (no subscription table,
    no running info), cannot be told: nothing is said.
    Returns the warnings."""
    table = set(live.connection.subscriptions) if live.connection is not None else set()
    reported = dict(reports.subscribed) if reports is not None else {}
    theirs = sorted({t for ts in reported.values() for t in ts} | table)
    if not theirs:  # nothing names a topic of the group: cannot be told
        return []
    topic = live.topic
    yes = [c for c, ts in reported.items() if topic in ts]
    everyone = set(live.consumers) <= set(reported)
    if not yes and (topic not in table or (reported and everyone)):
        shown = [t for t in theirs if not t.startswith("%RETRY%")] or theirs
        raise UsageError(
            f"group {live.group} does not subscribe to {topic} (it subscribes to "
            f"{', '.join(shown)})"
            + f": none of its clients allocates the queues of {topic}, so no queue has an "
            "owner to predict",
            hint=f"pick a topic it subscribes to (`mqctl consumers {live.group}`); for a "
                 "what-if, give the queues and consumers offline (--queues broker-a:4 "
                 "--consumers ID,ID)")
    no = sorted((c for c, ts in reported.items() if topic not in ts), key=java_key)
    if yes and no:
        return [f"{len(no)} client(s) of {live.group} do not subscribe to {topic} "
                f"({', '.join(no)}): they are in the member list and are allocated queues of "
                "it, which nobody consumes (each client rebalances only the topics it "
                "subscribes to); make the clients' subscriptions agree"]
    return []


# ------------------------------------------------------------------------- the strategy

# AllocateMessageQueueConsistentHash(): this(10) (4.9.3 and 5.3.3); running info reports the
# class only (ConsumerRunningInfo properties: allocateMessageQueueStrategy=<class>@<hash>)
DEFAULT_VIRTUAL_NODES = 10


@dataclass(frozen=True, slots=True)
class StrategyChoice:
    """Which strategy a live prediction uses, and why.

    ``strategy`` is one registry name for every client, or ``None`` when the clients disagree:
    then ``per_client`` maps each client to the strategy it runs (clients that did not report
    get the most common one).
    """

    strategy: str | None
    per_client: dict[str, str]
    source: str  # "clients" | "option" | "default"
    notes: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()

    @property
    def names(self) -> list[str]:
        return sorted(set(self.per_client.values())) if self.strategy is None \
            else [self.strategy]


def _by_strategy(strategies: Mapping[str, str]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for cid in sorted(strategies, key=java_key):
        out.setdefault(strategies[cid], []).append(cid)
    return out


def _known(name: str) -> bool:

    try:
        registry.info(name)
    except MqctlError:
        return False
    return True


def choose_strategy(explicit: str | None, reports: LiveReports | None, *,
                    consumers: Iterable[str] = (), virtual_nodes_given: bool = False
                    ) -> StrategyChoice:
    """The live default: the strategy the clients report (``allocateMessageQueueStrategy`` in
    their running info). All agree: use it and say so. They disagree: every client computes
    its own share with its own strategy (RebalanceImpl.rebalanceByTopic), so predict per
    client and warn. ``--strategy`` overrides with a note. Nothing reported: avg, said."""
    reported = dict(reports.strategies) if reports else {}
    unknown = {c: n for c, n in reported.items() if not _known(n)}
    usable = {c: n for c, n in reported.items() if c not in unknown}
    members = list(dict.fromkeys(consumers)) or sorted(reported, key=java_key)
    total = len(members) or len(reported)
    groups = _by_strategy(usable)
    notes: list[str] = []
    warnings: list[str] = []
    for cid, unk in sorted(unknown.items()):
        notes.append(f"client {cid} runs strategy {unk}, which mqctl does not know (install "
                     "it as a plugin, see docs/allocate.md)")
    desc = "; ".join(f"{n}: {', '.join(c)}" for n, c in sorted(groups.items()))
    if explicit:

        want = registry.canonical(explicit)[0]
        if groups and set(groups) != {want}:
            notes.append(f"--strategy {explicit} overrides the strategy the clients report "
                         f"({desc})")
        elif groups:
            notes.append(f"--strategy {explicit}: the clients report the same")
        choice = StrategyChoice(explicit, {}, "option", tuple(notes))
    elif not groups:
        why = (f" ({len(reports.failures)} did not answer GET_CONSUMER_RUNNING_INFO)"
               if reports and reports.failures else "")
        notes.append(f"no client reported a strategy mqctl knows{why}: predicted with avg "
                     "(AllocateMessageQueueAveragely, the client's default); pass --strategy")
        choice = StrategyChoice("avg", {}, "default", tuple(notes))
    elif len(groups) == 1:
        name = next(iter(groups))
        n = len(groups[name])
        rest = (f"; the other {total - n} did not report theirs and are assumed to run it"
                if total > n else "")
        notes.append(f"clients report {name} ({n} of {total}): predicted with it{rest} "
                     "(--strategy overrides)")
        choice = StrategyChoice(name, {}, "clients", tuple(notes))
    else:
        most = max(groups, key=lambda k: (len(groups[k]), k))
        per = {c: usable.get(c, most) for c in members} if members else dict(usable)
        warnings.append(f"clients run different strategies ({desc}): each computes its own "
                        "share with its own strategy, so some queues go to two clients and "
                        "some to none; the prediction is per client (make them agree)")
        missing = [c for c in members if c not in usable]
        if missing:
            notes.append(f"{len(missing)} client(s) did not report a strategy and are assumed "
                         f"to run {most}: {', '.join(missing)}")
        choice = StrategyChoice(None, per, "clients", tuple(notes), tuple(warnings))
    if "consistent-hash" in {_canon(n) for n in choice.names} and not virtual_nodes_given:
        choice = StrategyChoice(choice.strategy, choice.per_client, choice.source,
                                (*choice.notes, "consistent-hash: the clients' virtual nodes "
                                 "cannot be read from running info; the default "
                                 f"{DEFAULT_VIRTUAL_NODES} is assumed (--virtual-nodes N)"),
                                choice.warnings)
    return choice


def _canon(name: str) -> str:

    try:
        return registry.canonical(name)[0]
    except MqctlError:
        return name


class PerClientStrategy(AllocationStrategy):
    """Each client's share computed with the strategy that client runs."""

    def __init__(self, strategies: Mapping[str, AllocationStrategy], **params: Any) -> None:
        super().__init__(**params)
        self.strategies = dict(strategies)

    @property
    def display_name(self) -> str:
        names = _by_strategy({c: s.display_name for c, s in self.strategies.items()})
        return "per-client (" + "; ".join(f"{n}: {len(c)}" for n, c in sorted(names.items())) \
            + ")"

    def allocate(self, group: str, current_cid: str, mq_all: Sequence[MessageQueue],
                 cid_all: Sequence[str]) -> list[MessageQueue]:
        strat = self.strategies.get(current_cid)
        if strat is None or current_cid not in cid_all:
            return []
        return list(strat.allocate(group, current_cid, mq_all, cid_all))


def per_client_allocation(queues: Iterable[MessageQueue], consumers: Iterable[str], group: str,
                          per_client: Mapping[str, str], params: Mapping[str, Any]
                          ) -> Allocation:
    """The allocation the group really gets when its clients run different strategies."""

    made: dict[str, AllocationStrategy] = {}
    by_name: dict[str, AllocationStrategy] = {}
    for cid, name in per_client.items():
        if name not in by_name:
            by_name[name] = registry.create(name, group=group, **params)
        made[cid] = by_name[name]
    return compute_allocation(PerClientStrategy(made), queues, consumers, group=group)
