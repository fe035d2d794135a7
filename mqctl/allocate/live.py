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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from mqctl.allocate.base import Allocation, java_key, sort_queues
from mqctl.errors import MqctlError
from mqctl.models import STRATEGY_CLASS_NAMES, ConsumerConnection, MessageQueue, TopicRoute

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
        if self.broadcasting:
            notes.append(f"group {self.group} is BROADCASTING: every consumer consumes every "
                         "queue; no allocation strategy applies")
        if self.pop:
            notes.append(f"group {self.group} consumes in POP mode (5.x gRPC/proxy or pop "
                         "consumers): the broker hands out messages, not queues, so queue "
                         "allocation does not apply")
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
        raise failures[0].error
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

    def notes(self, predicted: Allocation) -> list[str]:
        notes = []
        for cid, msg in sorted(self.failures.items()):
            notes.append(f"client {cid} did not report its queues: {msg}")
        if self.failures:
            notes.append("queues of clients that did not answer show as not owned")
        names = set(self.strategies.values())
        if names and predicted.strategy not in names:
            used = ", ".join(sorted(names))
            notes.append(f"clients report strategy {used}; the prediction used "
                         f"{predicted.strategy} (pass --strategy to match)")
        elif len(names) > 1:
            notes.append(f"clients run different strategies: {', '.join(sorted(names))}")
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
    from mqctl.models import ConsumerRunningInfo

    owned: dict[str, tuple[MessageQueue, ...]] = {}
    dropped: dict[str, tuple[MessageQueue, ...]] = {}
    strategies: dict[str, str] = {}
    failures: dict[str, str] = {}
    for cid in sorted(infos, key=java_key):
        info = infos[cid]
        if not isinstance(info, ConsumerRunningInfo):
            failures[cid] = getattr(info, "message", str(info))
            continue
        mine = [mq for mq, pq in info.mq_table.items() if mq.topic == topic and not pq.dropped]
        gone = [mq for mq, pq in info.mq_table.items() if mq.topic == topic and pq.dropped]
        owned[cid] = tuple(sort_queues(mine))
        if gone:
            dropped[cid] = tuple(sort_queues(gone))
        name = strategy_name(info.strategy_class)
        if name:
            strategies[cid] = name
    return LiveReports(owned=owned, strategies=strategies, failures=failures, dropped=dropped)
