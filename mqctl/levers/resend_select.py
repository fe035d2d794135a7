"""What ``mqctl group dlq resend G`` sends (read-only): the dead letters selected from
``%DLQ%G`` and, per message, where it goes and with which properties.

**Selection.** Every queue of ``%DLQ%G`` (:func:`mqctl.views.dlq.read_dlq_queues`), read from
its min offset with pulls that commit nothing (group TOOLS_CONSUMER, as ``group dlq``), oldest
first per queue; kept: the ``--msg-id`` ids (a dead letter's offset message id or its unique
key), or those stored within ``--since``/``--until``, or ``--all``; at most ``--limit``
(the output then says "stopped at N of M"). At most :data:`MAX_SCAN` records are read. A
unique key selected twice (the same message dead-lettered twice) is sent once: the second is
``duplicate``.

**Destination** (``--to``). ``retry`` (the default): ``%RETRY%G``. The group's consumers
subscribe it (every RocketMQ push client does), the ``RETRY_TOPIC`` property (kept) names the
original topic, and the client gives the message back under it
(``DefaultMQPushConsumerImpl.resetRetryAndNamespace``), so the listener sees the original
topic while only G receives it again, with G's retry policy from the start (reconsumeTimes 0).
``original``: the original topic (``DLQ_ORIGIN_TOPIC`` on 5.x, else ``RETRY_TOPIC``): every
group subscribing it receives it again, not only G. The dashboard's resend
(``DlqMessageServiceImpl.batchResendDlqMessage``) uses CONSUME_MESSAGE_DIRECTLY instead: it
hands the message to one online client of G, outside the broker, with no record and no retry
if the client fails; mqctl stores a message (which the group then consumes as any other).

**Properties.** The body, flag, tags, keys, ``UNIQ_KEY`` (so the resent message is traceable
as the same message) and the producer's own properties are kept; the broker's and the retry
path's markers are dropped (:data:`DROPPED`: ``REAL_TOPIC``/``REAL_QID`` and ``DELAY`` of the
delay levels, ``CLUSTER``, which the broker adds, ``MAX_RECONSUME_TIMES``,
``CONSUME_START_TIME``, ``RECONSUME_TIME``, the 5.x ``DLQ_ORIGIN_*``, the transaction
markers); ``RETRY_TOPIC`` is set to the original topic for ``retry`` and dropped for
``original``; ``ORIGIN_MESSAGE_ID`` is kept; :data:`RESENT_FROM` is added (the dead letter's
offset message id), by which a resent copy is told from the original and its retry copies,
which carry the same unique key (names of ``MessageConst``, 4.9.3 and 5.3.3).

**Queue.** Round robin over the writable queues of the destination's route, in the route's
order (brokers by name), as ``TopicPublishInfo.selectOneMessageQueue`` does (it starts at a
random index; mqctl at 0). ``%RETRY%G`` without a route yet: queue 0 on the broker that holds
the dead letter (the broker creates it, ``AbstractSendMessageProcessor.msgCheck``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqctl.admin import BrokerFailure, NotFoundError, require_addr
from mqctl.errors import MqctlError, UsageError
from mqctl.models import DLQ_PREFIX, RETRY_PREFIX
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.message import StoredMessage, decode_messages
from mqctl.views.dlq import read_dlq_queues

if TYPE_CHECKING:
    from mqctl.admin import Admin

MAX_SCAN = 20000  # dead letters read at most while selecting
PULL_BATCH = 32
DEFAULT_LIMIT = 100
DESTINATIONS = ("retry", "original")
RESENT_FROM = "RESENT_FROM_DLQ"
DROPPED = ("REAL_TOPIC", "REAL_QID", "DELAY", "CLUSTER", "MAX_RECONSUME_TIMES",
           "CONSUME_START_TIME", "RECONSUME_TIME", "DLQ_ORIGIN_TOPIC", "DLQ_ORIGIN_MESSAGE_ID",
           "TRAN_MSG", "PGROUP", "TRANSACTION_CHECK_TIMES", "MIN_OFFSET", "MAX_OFFSET")


@dataclass(frozen=True, slots=True)
class ResendRequest:
    """``group``; one way to select (``msg_ids``, ``since_ms``/``until_ms``, ``all``) unless
    ``resume`` (a journal: the selection is its header's); ``to`` retry | original."""

    group: str
    msg_ids: tuple[str, ...] = ()
    since_ms: int | None = None
    until_ms: int | None = None
    all: bool = False
    to: str = "retry"
    limit: int = DEFAULT_LIMIT
    rate: float | None = None
    execute: bool = False
    journal: str | None = None
    resume: str | None = None

    def check(self) -> None:
        ways = sum([bool(self.msg_ids), self.since_ms is not None or self.until_ms is not None,
                    self.all])
        if self.resume is not None:
            if ways or self.journal:
                raise UsageError("--resume takes the selection and the journal from the "
                                 "journal it names", hint="give --resume JOURNAL alone (with "
                                 "--execute to send what is left)")
            return
        if ways != 1:
            raise UsageError("give one of --msg-id ID..., --since/--until, --all"
                             + (f" (got {ways})" if ways else ""),
                             hint="e.g. mqctl group dlq resend GID_PAY --all --limit 10")
        if self.to not in DESTINATIONS:
            raise UsageError(f"--to {self.to!r} is not retry or original",
                             hint="--to retry (the default) sends to %RETRY%GROUP")
        if self.limit < 1 or (self.rate is not None and self.rate <= 0):
            raise UsageError("--limit and --rate must be positive")
        if (self.since_ms is not None and self.until_ms is not None
                and self.until_ms < self.since_ms):
            raise UsageError("--until is before --since", hint="give --since before --until")

    def selection(self) -> dict[str, Any]:
        return {"msg_ids": list(self.msg_ids), "since_ts": self.since_ms,
                "until_ts": self.until_ms, "all": self.all, "limit": self.limit}


@dataclass(frozen=True, slots=True)
class Letter:
    """One dead letter selected: where it is, what it is, where it goes."""

    broker: str
    addr: str
    queue_id: int
    queue_offset: int
    msg_id: str  # the dead letter's offset message id (the journal's key)
    unique_key: str | None
    original_topic: str | None
    store_ts: int
    reconsume_times: int
    destination: str | None  # None: not known (no original topic)
    message: StoredMessage | None = None
    duplicate_of: str | None = None
    original_id: str | None = None  # the first message's offset id (ORIGIN_MESSAGE_ID)

    def to_record(self) -> dict[str, Any]:
        return {"dlq_msg_id": self.msg_id, "unique_key": self.unique_key,
                "broker": self.broker, "addr": self.addr, "queue_id": self.queue_id,
                "queue_offset": self.queue_offset, "original_topic": self.original_topic,
                "store_ts": self.store_ts, "reconsume_times": self.reconsume_times,
                "destination": self.destination, "duplicate_of": self.duplicate_of,
                "original_id": self.original_id}

    @classmethod
    def from_record(cls, d: dict[str, Any]) -> Letter:
        try:
            return cls(str(d["broker"]), str(d["addr"]), int(d["queue_id"]),
                       int(d["queue_offset"]), str(d["dlq_msg_id"]), d.get("unique_key"),
                       d.get("original_topic"), int(d["store_ts"]), int(d["reconsume_times"]),
                       d.get("destination"), None, d.get("duplicate_of"),
                       d.get("original_id"))
        except (KeyError, TypeError, ValueError):
            raise UsageError("the journal's header lists a message that is not one",
                             hint="pass a journal written by `mqctl group dlq resend "
                                  "--execute`") from None


def original_topic(m: StoredMessage) -> str | None:
    p = m.properties
    return p.get("DLQ_ORIGIN_TOPIC") or p.get("RETRY_TOPIC")


def original_id(m: StoredMessage) -> str | None:
    p = m.properties
    return p.get("DLQ_ORIGIN_MESSAGE_ID") or p.get("ORIGIN_MESSAGE_ID")


def destination_of(group: str, to: str, m: StoredMessage) -> str | None:
    return RETRY_PREFIX + group if to == "retry" else original_topic(m)


def resent_properties(m: StoredMessage, to: str) -> dict[str, str]:
    """The properties sent: the dead letter's, markers dropped, RETRY_TOPIC and
    :data:`RESENT_FROM` as the module says."""
    props = {k: v for k, v in m.properties.items() if k not in DROPPED}
    topic = original_topic(m)
    if to == "retry" and topic:
        props["RETRY_TOPIC"] = topic
    else:
        props.pop("RETRY_TOPIC", None)
    props[RESENT_FROM] = m.msg_id
    return props


@dataclass
class Selection:
    letters: list[Letter]
    held: int | None  # dead letters %DLQ%G holds (None: unknown)
    scanned: int
    stopped: bool  # --limit (or MAX_SCAN) stopped the reading with records left
    failures: list[BrokerFailure]

    @property
    def scan_capped(self) -> bool:
        """The reading stopped at MAX_SCAN records, not at --limit."""
        return self.stopped and self.scanned >= MAX_SCAN


def _wanted(r: ResendRequest, m: StoredMessage) -> bool:
    if r.msg_ids:
        ids = {i.strip().upper() for i in r.msg_ids}
        return m.msg_id.upper() in ids or (m.properties.get("UNIQ_KEY") or "").upper() in ids
    if r.since_ms is not None and m.store_timestamp < r.since_ms:
        return False
    return r.until_ms is None or m.store_timestamp <= r.until_ms


async def select(admin: Admin, r: ResendRequest) -> Selection:
    """The dead letters the request names, oldest first per queue, at most ``r.limit``."""
    failures: list[BrokerFailure] = []
    queues = await read_dlq_queues(admin, r.group, failures)
    if queues is None:
        raise failures[0].error if failures else UsageError(f"{DLQ_PREFIX}{r.group} unknown")
    route = await admin.topic_route(DLQ_PREFIX + r.group) if queues else None
    addrs = {b.broker_name: require_addr(b) for b in (route.brokers if route else ())}
    out: list[Letter] = []
    seen: dict[str, str] = {}
    scanned, stopped = 0, False
    for q in queues:
        offset, addr = q.min_offset, addrs.get(q.mq.broker_name)
        while addr and offset < q.max_offset and not stopped:
            if len(out) >= r.limit or scanned >= MAX_SCAN:
                stopped = True
                break
            resp = await admin.pull_message(q.mq, offset, addr,
                                            max_nums=min(PULL_BATCH, q.max_offset - offset))
            got = decode_messages(resp.body)[0] if resp.code == ResponseCode.SUCCESS else []
            if not got:
                break
            for m in got:
                scanned += 1
                if len(out) >= r.limit:
                    stopped = True
                    break
                if _wanted(r, m):
                    u = m.properties.get("UNIQ_KEY")
                    out.append(Letter(q.mq.broker_name, addr, m.queue_id, m.queue_offset,
                                      m.msg_id, u, original_topic(m), m.store_timestamp,
                                      m.reconsume_times, destination_of(r.group, r.to, m), m,
                                      seen.get(u) if u else None, original_id(m)))
                    if u:
                        seen.setdefault(u, m.msg_id)
            offset = got[-1].queue_offset + 1
    return Selection(out, sum(q.messages for q in queues), scanned, stopped, failures)


class QueuePicker:
    """Round robin over a destination's writable queues (TopicPublishInfo order)."""

    def __init__(self, admin: Admin) -> None:
        self.admin = admin
        self.queues: dict[str, list[tuple[str, str, int]]] = {}
        self.next: dict[str, int] = {}

    async def pick(self, topic: str, letter: Letter) -> tuple[str, str, int]:
        """(broker, address, queue id) of the next send to ``topic``."""
        if topic not in self.queues:
            self.queues[topic] = await self._writable(topic)
        qs = self.queues[topic]
        if not qs:
            if topic.startswith(RETRY_PREFIX):
                return letter.broker, letter.addr, 0
            raise MqctlError(f"topic {topic} has no writable queue in its route",
                             hint=f"`mqctl route {topic}` shows its queues and permissions")
        i = self.next.get(topic, 0)
        self.next[topic] = i + 1
        return qs[i % len(qs)]

    async def _writable(self, topic: str) -> list[tuple[str, str, int]]:
        try:
            route = await self.admin.topic_route(topic, cached=False)
        except NotFoundError:
            return []
        masters = {b.broker_name: b.master_addr for b in route.brokers if b.master_addr}
        return [(qd.broker_name, masters[qd.broker_name], i)
                for qd in sorted(route.queues, key=lambda x: x.broker_name)
                if qd.writeable and qd.broker_name in masters
                for i in range(qd.write_queue_nums)]


__all__ = ["DEFAULT_LIMIT", "DESTINATIONS", "DROPPED", "MAX_SCAN", "RESENT_FROM", "Letter",
           "QueuePicker", "ResendRequest", "Selection", "destination_of", "original_id",
           "original_topic",
           "resent_properties", "select"]
