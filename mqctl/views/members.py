"""Group membership as every broker sees it (``mqctl consumers``), each client's running
info, and the consistency check over it (pure).

:func:`capture_members` reads (read-only: GET_CONSUMER_LIST_BY_GROUP,
GET_CONSUMER_CONNECTION_LIST, GET_CONSUMER_RUNNING_INFO, routes); :func:`check_members` and
:func:`unanswered_members` are pure functions over what it read.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from mqctl.admin import (
    Admin,
    BrokerFailure,
    NotFoundError,
    NothingRead,
    broker_addr,
)
from mqctl.errors import BrokerError, MqctlError
from mqctl.models import (
    RETRY_PREFIX,
    BrokerData,
    ConsumerConnection,
    ConsumerRunningInfo,
    java_string_key,
    pop_queue_text,
)
from mqctl.remoting.codes import ResponseCode


@dataclass
class ClientView:
    client_id: str
    addr: str = ""
    language: str = ""
    version: int = 0
    brokers: list[str] = field(default_factory=list)  # brokers that list this client
    running: ConsumerRunningInfo | None = None
    running_error: str | None = None
    # its GET_CONSUMER_RUNNING_INFO answered "not online" on every broker asked: it left
    # between the member list and the request (not a member that did not answer)
    running_gone: bool = False
    connections: int = 1  # >1: the same client id on several channels (pid collision)

    @property
    def strategy(self) -> str | None:
        return self.running.strategy_name if self.running is not None else None

    @property
    def subscriptions(self) -> dict[str, str] | None:
        if self.running is None:
            return None
        return {s.topic: s.expression for s in self.running.subscriptions}


@dataclass
class GroupMembers:
    group: str
    brokers: list[BrokerData]
    members: dict[str, list[str] | BrokerFailure]  # broker -> consumer id list (raw, with dups)
    connection: ConsumerConnection | None
    clients: dict[str, ClientView]
    queue_counts: dict[str, int]  # subscribed topic -> readable queue count
    failures: list[BrokerFailure]

    @property
    def online(self) -> bool:
        """A client was seen (False also when the member lists could not be read: use
        :attr:`online_state` for a fact that may be unknown)."""
        return bool(self.clients)

    @property
    def unread_brokers(self) -> list[str]:
        """Brokers whose member list could not be read."""
        return sorted(b for b, v in self.members.items() if isinstance(v, BrokerFailure))

    @property
    def online_state(self) -> bool | None:
        """True: a client was seen; False: every broker asked answered and none lists a
        client; None: unknown (a broker that may list one did not answer)."""
        if self.clients:
            return True
        if not self.members or self.unread_brokers:
            return None
        return False


@dataclass(frozen=True, slots=True)
class Finding:
    check: str
    severity: str  # error | warning | info
    message: str
    clients: tuple[str, ...] = ()


# broker -> its member list / its connection list (or why it has none)
_Members = dict[str, list[str] | BrokerFailure]
_Connections = dict[str, ConsumerConnection | BrokerFailure | None]


async def capture_members(admin: Admin, group: str, *, running: bool = True,
                          every_broker: bool = True, must_read: bool = True) -> GroupMembers:
    """Members as every broker of the group sees them, plus each client's running info.

    ``every_broker=False`` (snapshots, progress) asks brokers in turn until one knows the
    group, instead of all of them: the member list without the cross-broker comparison.
    When no broker answered the member list it raises :class:`NothingRead` (exit 5 or 3),
    unless ``must_read=False``: then the result has no member list and ``online_state`` None.
    """
    brokers = await admin.group_brokers(group)
    if every_broker:
        members = await admin.members_by_broker(group, brokers)
        conns = await admin.connections_by_broker(group, brokers)
    else:
        members, conns = await _first_connection(admin, group, brokers)
    failures = [v for v in members.values() if isinstance(v, BrokerFailure)]
    failures += [v for v in conns.values() if isinstance(v, BrokerFailure)
                 and v.broker not in {f.broker for f in failures}]
    if must_read and failures and not any(not isinstance(v, BrokerFailure)
                                          for v in members.values()):
        raise NothingRead(f"the member list of group {group} (GET_CONSUMER_LIST_BY_GROUP / "
                          "GET_CONSUMER_CONNECTION_LIST)", failures)
    connection = next((c for c in conns.values() if isinstance(c, ConsumerConnection)), None)
    extra, queue_counts = await _subscription_brokers(admin, connection, brokers)
    if extra and every_broker:
        members.update(await admin.members_by_broker(group, extra))
        failures += [members[b.broker_name] for b in extra  # type: ignore[misc]
                     if isinstance(members[b.broker_name], BrokerFailure)]
        brokers = sorted([*brokers, *extra], key=lambda b: b.broker_name)
    clients = _client_views(members, conns)
    if running and clients:
        await _read_running_infos(admin, group, clients, brokers)
    ordered = dict(sorted(clients.items(), key=lambda kv: java_string_key(kv[0])))
    return GroupMembers(group, brokers, members, connection, ordered, queue_counts, failures)


async def _first_connection(admin: Admin, group: str, brokers: list[BrokerData]
                            ) -> tuple[_Members, _Connections]:
    """The member list and connections of the first broker that answers (failures of the
    ones before it kept): ``every_broker=False``."""
    conns: _Connections = {}
    members: _Members = {}
    for b in brokers:
        addr = broker_addr(b)
        if addr is None:
            continue
        try:
            conn = await admin.consumer_connection(group, addr)
        except MqctlError as exc:
            conns[b.broker_name] = BrokerFailure(b.broker_name, addr, exc)
            continue
        conns[b.broker_name] = conn
        members[b.broker_name] = [c.client_id for c in conn.connections] if conn else []
        break
    return members, conns


async def _subscription_brokers(admin: Admin, connection: ConsumerConnection | None,
                                brokers: list[BrokerData]
                                ) -> tuple[list[BrokerData], dict[str, int]]:
    """Brokers of the subscribed topics that the group's own brokers leave out (subscribed
    topics may live on brokers the retry topic does not: ask those too), and each subscribed
    topic's queue count (its retry topic apart)."""
    topics = sorted(connection.subscriptions) if connection else []
    known = {b.broker_name for b in brokers}
    extra: list[BrokerData] = []
    queue_counts: dict[str, int] = {}
    for t in topics:
        try:
            route = await admin.topic_route(t)
        except NotFoundError:
            continue
        if not t.startswith(RETRY_PREFIX):
            queue_counts[t] = len(route.subscribe_queues())
        for b in route.brokers:
            if b.broker_name not in known:
                known.add(b.broker_name)
                extra.append(b)
    return extra, queue_counts


def _client_views(members: _Members, conns: _Connections) -> dict[str, ClientView]:
    """One view per client id: the brokers that list it, its address(es), language, version
    and connection count (the most any one broker holds)."""
    clients: dict[str, ClientView] = {}
    for broker, ids in sorted(members.items()):
        if isinstance(ids, BrokerFailure):
            continue
        for cid in ids:
            cv = clients.setdefault(cid, ClientView(cid))
            if broker not in cv.brokers:
                cv.brokers.append(broker)
        for cid, n in Counter(ids).items():
            clients[cid].connections = max(clients[cid].connections, n)
    for c in conns.values():
        if not isinstance(c, ConsumerConnection):
            continue
        per_id = Counter(x.client_id for x in c.connections)
        for x in c.connections:
            cv = clients.setdefault(x.client_id, ClientView(x.client_id))
            if not cv.addr or x.client_addr not in cv.addr.split(","):
                cv.addr = x.client_addr if not cv.addr else f"{cv.addr},{x.client_addr}"
            cv.language, cv.version = x.language, x.version
            cv.connections = max(cv.connections, per_id[x.client_id])
    return clients


async def _read_running_infos(admin: Admin, group: str, clients: dict[str, ClientView],
                              brokers: list[BrokerData]) -> None:
    """Each client's running info, or why it has none (``running_gone``: not online)."""
    infos = await admin.running_infos(group, clients, brokers)
    for cid, info in infos.items():
        if isinstance(info, ConsumerRunningInfo):
            clients[cid].running = info
        else:
            clients[cid].running_error = info.message
            clients[cid].running_gone = not_online(info)


def not_online(exc: MqctlError) -> bool:
    """A GET_CONSUMER_RUNNING_INFO refused because the client is not (any more) in the group:
    AdminBrokerProcessor.callConsumer answers SYSTEM_ERROR "The Consumer <G> <C> not online"
    (corpus other-requests/307_*_offline_client); a timeout or any other error is a member that
    did not answer."""
    return (isinstance(exc, BrokerError) and exc.code == ResponseCode.SYSTEM_ERROR
            and "not online" in (exc.remark or ""))


def unanswered_members(m: GroupMembers) -> list[str]:
    """Members whose GET_CONSUMER_RUNNING_INFO was asked and did not answer (a timeout, an
    error), still members: what they own is unknown, not absent (a hung or loaded client
    stays a member until the broker drops it)."""
    return [cid for cid, cv in m.clients.items()
            if cv.running is None and cv.running_error is not None and not cv.running_gone]


def unanswered_errors(m: GroupMembers) -> list[tuple[str, str]]:
    """(client id, error) of :func:`unanswered_members`: the partial part of a capture
    (exit 8)."""
    return [(cid, m.clients[cid].running_error or "") for cid in unanswered_members(m)]


def check_members(m: GroupMembers) -> list[Finding]:
    """The consistency check of ``mqctl consumers``: membership unknown or offline, else each
    check in turn (brokers that disagree, duplicate ids, subscriptions, strategies, idle
    consumers or broadcasting, pop consumers, clients without running info)."""
    if m.online_state is None:
        return [Finding("unknown", "warning", f"membership of {m.group} unknown: "
                        f"{', '.join(m.unread_brokers) or 'no broker'} did not answer and the "
                        "others list no client")]
    if not m.online:
        return [Finding("offline", "warning", f"group {m.group} has no online consumer on "
                        "any broker")]
    return [*_membership_findings(m), *_duplicate_id_findings(m), *_subscription_findings(m),
            *_strategy_findings(m), *_queue_count_findings(m), *_pop_findings(m),
            *_running_info_findings(m)]


def _membership_findings(m: GroupMembers) -> list[Finding]:
    """Brokers that disagree on membership (a client asks ONE random broker for cidAll)."""
    out = []
    answered = {b: set(ids) for b, ids in m.members.items() if not isinstance(ids, BrokerFailure)}
    union = set().union(*answered.values()) if answered else set()
    for b, ids in sorted(answered.items()):
        missing = sorted(union - ids, key=java_string_key)
        if missing:
            out.append(Finding("membership", "error",
                               f"broker {b} does not list {', '.join(missing)}: clients that ask "
                               f"{b} for the member list compute a different allocation",
                               tuple(missing)))
    return out


def _duplicate_id_findings(m: GroupMembers) -> list[Finding]:
    """Duplicate client ids (two processes with the same ip@pid, e.g. containers)."""
    return [Finding("duplicate-id", "error",
                    f"client id {cid} is used by {cv.connections} connections "
                    f"({cv.addr}): both get the same queues and other queues get no "
                    "consumer; set a unique instanceName", (cid,))
            for cid, cv in m.clients.items() if cv.connections > 1]


def _subscription_findings(m: GroupMembers) -> list[Finding]:
    """Subscriptions that differ within the group."""
    out: list[Finding] = []
    subs = {cid: cv.subscriptions for cid, cv in m.clients.items() if cv.subscriptions is not None}
    if len({tuple(sorted(s.items())) for s in subs.values()}) <= 1:
        return out
    by_topic: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for cid, s in subs.items():
        for topic in set().union(*[set(x) for x in subs.values()]):
            by_topic[topic][s.get(topic, "(not subscribed)")].append(cid)
    for topic, variants in sorted(by_topic.items()):
        if len(variants) > 1:
            desc = "; ".join(f"{expr}: {', '.join(c)}" for expr, c in sorted(variants.items()))
            out.append(Finding("subscription", "error",
                               f"clients disagree on the subscription of {topic} ({desc}): "
                               "the broker keeps only one version and queues allocated to "
                               "non-subscribers are not consumed",
                               tuple(c for cs in variants.values() for c in cs)))
    return out


def _strategy_findings(m: GroupMembers) -> list[Finding]:
    """Different allocation strategies."""
    strategies: dict[str, list[str]] = defaultdict(list)
    for cid, cv in m.clients.items():
        if cv.strategy:
            strategies[cv.strategy].append(cid)
    if len(strategies) <= 1:
        return []
    desc = "; ".join(f"{s}: {', '.join(c)}" for s, c in sorted(strategies.items()))
    return [Finding("strategy", "error", f"clients use different allocation strategies "
                    f"({desc}): their allocations overlap and leave gaps")]


def _queue_count_findings(m: GroupMembers) -> list[Finding]:
    """More consumers than queues; a BROADCASTING group instead (no allocation)."""
    n = len(m.clients)
    model = m.connection.message_model if m.connection else None
    if model == "BROADCASTING":
        return [Finding("broadcasting", "info", "BROADCASTING group: every consumer reads "
                        "every queue; allocation and locks do not apply")]
    return [Finding("idle", "warning", f"{n} consumers for {q} queues of {topic}: "
                    f"{n - q} consumer(s) get no queue of it")
            for topic, q in sorted(m.queue_counts.items()) if q and n > q]


def pop_clients(m: GroupMembers) -> list[str]:
    """The members that pop (ConsumerRunningInfo.pops), or every member where the brokers
    list the group as CONSUME_POP."""
    listed = m.connection is not None and m.connection.consume_type == "CONSUME_POP"
    return [cid for cid, cv in m.clients.items()
            if listed or (cv.running is not None and cv.running.pops)]


def _pop_findings(m: GroupMembers) -> list[Finding]:
    """Pop consumers: the broker hands them messages of the queues it assigned them, not
    queues to own. A 5.x remoting push consumer pops where its clientRebalance is false and
    the group's message request mode is POP (its running info's mqPopTable says so; it
    reports CONSUME_PASSIVELY); nothing here tells a gRPC proxy client apart, so none is
    called one."""
    pop = pop_clients(m)
    if not pop:
        return []
    where: dict[str, list[str]] = defaultdict(list)
    for cid in pop:
        info = m.clients[cid].running
        if info is not None and info.mq_pop_table:
            per_topic = "; ".join(f"{t}: {pop_queue_text(info.pop_queues(t))}"
                                  for t in sorted({mq.topic for mq in info.mq_pop_table}))
            where[per_topic].append(cid)
    assigned = "".join(f"; {', '.join(c)} pop from {w}" for w, c in sorted(where.items()))
    return [Finding("pop", "info", f"{len(pop)} pop consumer(s) ({', '.join(pop)}): the broker "
                    "hands them messages, not queues, so queue allocation does not apply"
                    + assigned + " (QueryAssignmentProcessor.allocate4Pop)", tuple(pop))]


def _running_info_findings(m: GroupMembers) -> list[Finding]:
    """Clients that did not answer GET_CONSUMER_RUNNING_INFO: still members, what they run
    (strategy, subscriptions, orderly, pop) is unknown, and the checks over the members'
    running info cover the others only."""
    silent = unanswered_members(m)
    answered = sum(1 for cv in m.clients.values() if cv.running is not None)
    cover = (f"; the strategy, subscription and pop checks cover the {answered} of "
             f"{len(m.clients)} member(s) that answered" if silent else "")
    return [Finding("no-running-info", "warning",
                    f"{cid} did not answer GET_CONSUMER_RUNNING_INFO: {cv.running_error}"
                    + (cover if cid in silent else ""), (cid,))
            for cid, cv in m.clients.items() if cv.running_error]
