"""``mqctl message find``: messages by key, unique key, offset message id or time range
(read-only, bounded).

* **key / unique key**: QUERY_MESSAGE on every broker of the topic's route, as
  ``MQAdminImpl.queryMessage`` asks (4.9.3 and 5.3.3: one request per broker, header topic,
  key, maxNum, beginTimestamp, endTimestamp and ``_UNIQUE_KEY_QUERY``). The broker's index
  (IndexService) answers at most ``maxMsgsNumBatch`` (64) records per key, newest first, and
  only those stored within the window; a unique-key query takes the broker's
  ``defaultQueryMaxNum`` (32) whatever maxNum says (QueryMessageProcessor). The index matches
  by hash, so, as the client does, records whose topic or key differ are dropped. Records are
  de-duplicated by their offset message id (one stored record), so two brokers or two routes
  naming one address count it once; the same unique key stored twice (a producer that sent
  again) is two records and says so.
* **msg id**: the offset message id names the store host and the commit-log offset
  (``MessageDecoder.decodeMessageId``): one VIEW_MESSAGE_BY_ID to that address.
* **time range**: on one queue, SEARCH_OFFSET_BY_TIMESTAMP for the start, then pulls that
  commit nothing (group TOOLS_CONSUMER, no commit flag: :mod:`mqctl.admin.pull`) until the
  end of the range, the queue's end or ``limit``.

Every answer says what bounded it: the broker's cap when a broker returned as many as it
may (there may be more), ``limit`` when more were found than shown ("stopped at N").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mqctl.admin import BrokerFailure, NotFoundError
from mqctl.errors import BrokerError, UsageError
from mqctl.message.ids import check_unique_key, decode_offset_msg_id
from mqctl.models import MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.message import StoredMessage, decode_messages
from mqctl.render import printable
from mqctl.timeparse import format_ms, is_digits, now_ms, parse_time

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.models import BrokerData, TopicRoute

MAX_MSGS_NUM_BATCH = 64  # MessageStoreConfig.maxMsgsNumBatch: IndexService.queryOffset's cap
DEFAULT_QUERY_MAX_NUM = 32  # MessageStoreConfig.defaultQueryMaxNum: a unique-key query's
LONG_MAX = (1 << 63) - 1
PULL_BATCH = 32  # maxTransferCountOnMessageInMemory: what one pull can return
DEFAULT_LIMIT = 20


@dataclass(frozen=True, slots=True)
class Found:
    broker: str
    addr: str
    message: StoredMessage


@dataclass
class BrokerAnswer:
    """What one broker's index said: how many records it returned, whether that was its cap,
    and the index's own freshness (indexLastUpdateTimestamp: records stored after it are not
    indexed yet)."""

    broker: str
    returned: int
    matched: int
    cap: int
    index_last_update_ts: int | None

    @property
    def capped(self) -> bool:
        return self.returned >= self.cap


@dataclass
class FindResult:
    how: str  # key | unique-key | msg-id | time
    topic: str | None
    value: str  # the key, unique key, msg id or range searched (shown escaped)
    messages: list[Found]
    limit: int
    total: int  # records found before the limit (a lower bound when ``capped_by``)
    begin_ms: int | None = None
    end_ms: int | None = None
    answers: list[BrokerAnswer] = field(default_factory=list)
    failures: list[BrokerFailure] = field(default_factory=list)
    queue: MessageQueue | None = None
    # why the time-range read stopped: "end" (past the range), "queue-end", "limit"
    stopped_by: str | None = None

    @property
    def stopped(self) -> bool:
        return self.total > len(self.messages) or self.stopped_by == "limit"

    @property
    def capped_by(self) -> list[str]:
        """Brokers that returned as many records as they may: they may hold more."""
        return [a.broker for a in self.answers if a.capped]

    @property
    def duplicates(self) -> dict[str, int]:
        """Unique keys stored more than once among the records shown."""
        seen: dict[str, int] = {}
        for f in self.messages:
            u = f.message.properties.get("UNIQ_KEY")
            if u:
                seen[u] = seen.get(u, 0) + 1
        return {k: n for k, n in seen.items() if n > 1}


def _addr(b: BrokerData) -> str | None:
    return b.master_addr or b.select_addr()


def _matches(m: StoredMessage, topic: str, key: str, unique: bool) -> bool:
    """MQAdminImpl.queryMessage's own check of what the index returned (it matches by hash)."""
    if m.topic != topic:
        return False
    if unique:
        return m.properties.get("UNIQ_KEY") == key
    return key in m.keys


async def _route(admin: Admin, topic: str) -> TopicRoute:
    try:
        return await admin.topic_route(topic)
    except NotFoundError:
        raise NotFoundError(f"topic {topic!r} has no route on the name server",
                            hint="check the name with `mqctl topics`") from None


async def find_by_key(admin: Admin, topic: str, key: str, *, unique: bool = False,
                      limit: int = DEFAULT_LIMIT, begin_ms: int | None = None,
                      end_ms: int | None = None) -> FindResult:
    """QUERY_MESSAGE on every broker of ``topic``, de-duplicated, newest ``limit`` shown."""
    key = check_unique_key(key) if unique else key
    if not key:
        raise UsageError("the key is empty", hint="give a key the producer set (KEYS)")
    route = await _route(admin, topic)
    begin, end = begin_ms if begin_ms is not None else 0, end_ms if end_ms is not None else LONG_MAX
    cap = DEFAULT_QUERY_MAX_NUM if unique else MAX_MSGS_NUM_BATCH

    async def one(b: BrokerData) -> tuple[BrokerAnswer, list[Found]]:
        addr = _addr(b)
        if addr is None:
            raise UsageError(f"broker {b.broker_name} has no address in the route")
        resp = await admin.query_message(addr, topic, key, max_num=cap, begin_ms=begin,
                                         end_ms=end, unique=unique)
        ts = resp.ext("indexLastUpdateTimestamp")
        msgs: list[StoredMessage] = []
        if resp.code == ResponseCode.SUCCESS and resp.body:
            msgs, err = decode_messages(resp.body)
            if err:
                raise BrokerError(resp.code, f"QUERY_MESSAGE answer cannot be decoded: {err}",
                                  addr=addr)
        hits = [Found(b.broker_name, addr, m) for m in msgs if _matches(m, topic, key, unique)]
        return BrokerAnswer(b.broker_name, len(msgs), len(hits), cap,
                            int(ts) if ts and is_digits(ts.lstrip("-")) else None), hits

    answers: list[BrokerAnswer] = []
    failures: list[BrokerFailure] = []
    found: dict[str, Found] = {}
    for o in await fan_out(list(route.brokers), one, concurrency=admin.concurrency):
        if not o.ok:
            assert o.error is not None
            failures.append(BrokerFailure(o.item.broker_name, _addr(o.item), o.error))
            continue
        ans, hits = o.value  # type: ignore[misc]
        answers.append(ans)
        for f in hits:
            found.setdefault(f.message.msg_id or f"{f.broker}/{f.message.commit_log_offset}", f)
    if failures and not answers:
        raise failures[0].error
    ordered = sorted(found.values(), key=lambda f: (-f.message.store_timestamp, f.broker,
                                                    f.message.queue_id, f.message.queue_offset))
    return FindResult("unique-key" if unique else "key", topic, key, ordered[:limit], limit,
                      len(ordered), begin_ms, end_ms, sorted(answers, key=lambda a: a.broker),
                      failures)


async def _broker_of_addr(admin: Admin, addr: str, topic: str | None) -> str:
    """The broker name whose address ``addr`` is (the topic's route, else the cluster)."""
    brokers = []
    if topic:
        brokers = list((await _route(admin, topic)).brokers)
    if not any(addr in b.addrs.values() for b in brokers):
        brokers = list((await admin.cluster_info()).brokers.values())
    for b in brokers:
        if addr in b.addrs.values():
            return b.broker_name
    return "-"


async def find_by_msg_id(admin: Admin, msg_id: str, topic: str | None = None) -> FindResult:
    """VIEW_MESSAGE_BY_ID at the store host the offset message id names."""
    dec = decode_offset_msg_id(msg_id)
    resp = await admin.view_message(dec.addr, dec.commit_log_offset)
    msgs: list[StoredMessage] = []
    if resp is not None and resp.body:
        msgs, err = decode_messages(resp.body)
        if err and not msgs:
            raise BrokerError(resp.code, f"VIEW_MESSAGE_BY_ID answer cannot be decoded: {err}",
                              addr=dec.addr)
    if not msgs:
        raise NotFoundError(
            f"the broker at {dec.addr} holds no message at commit-log offset "
            f"{dec.commit_log_offset} (offset message id {msg_id.strip().upper()})",
            hint="the commit log that held it may have been deleted (fileReservedTime); a "
                 "producer's id is a unique key: try --unique-key ID -t TOPIC")
    m = msgs[0]
    if topic and m.topic != topic:
        raise UsageError(f"the message with that id is in topic {m.topic!r}, not {topic!r}",
                         hint="leave out -t, or give the topic it is in")
    broker = await _broker_of_addr(admin, dec.addr, m.topic)
    return FindResult("msg-id", m.topic, msg_id.strip().upper(), [Found(broker, dec.addr, m)],
                      1, 1)


async def find_by_time(admin: Admin, topic: str, broker: str, queue_id: int, begin_ms: int,
                       end_ms: int, *, limit: int = DEFAULT_LIMIT) -> FindResult:
    """The messages of one queue stored within [begin, end]: SEARCH_OFFSET_BY_TIMESTAMP, then
    pulls that commit nothing, at most ``limit`` messages (and ``limit / 32 + 1`` pulls)."""
    if end_ms < begin_ms:
        raise UsageError("the end of the time range is before its start",
                         hint="give --time FROM..TO with FROM before TO")
    route = await _route(admin, topic)
    b = next((x for x in route.brokers if x.broker_name == broker), None)
    qd = next((q for q in route.queues if q.broker_name == broker), None)
    if b is None or qd is None or not 0 <= queue_id < qd.read_queue_nums:
        raise UsageError(f"queue {broker}/{queue_id} is not a readable queue of {topic!r}",
                         hint=f"`mqctl topic status {topic}` lists the queues")
    addr = _addr(b)
    if addr is None:
        raise UsageError(f"broker {broker} has no address in the route of {topic}")
    mq = MessageQueue(topic, broker, queue_id)
    mn, mx = await admin.min_offset(mq, addr), await admin.max_offset(mq, addr)
    start = max(mn, await admin.search_offset(mq, begin_ms, addr))
    got: list[Found] = []
    offset, stopped = start, "queue-end"
    while offset < mx:
        if len(got) >= limit:
            stopped = "limit"
            break
        resp = await admin.pull_message(mq, offset, addr, max_nums=min(PULL_BATCH,
                                                                       limit - len(got) + 1))
        msgs = decode_messages(resp.body)[0] if resp.code == ResponseCode.SUCCESS else []
        if not msgs:
            break
        for m in msgs:
            if m.store_timestamp > end_ms:
                stopped = "end"
                break
            if m.store_timestamp >= begin_ms and len(got) < limit:
                got.append(Found(broker, addr, m))
            elif m.store_timestamp >= begin_ms:
                stopped = "limit"
                break
        if stopped != "queue-end":
            break
        offset = msgs[-1].queue_offset + 1
    return FindResult("time", topic, f"{format_ms(begin_ms)}..{format_ms(end_ms)}", got, limit,
                      len(got), begin_ms,
                      end_ms, queue=mq, stopped_by=stopped)




def parse_time_range(text: str | None) -> tuple[int | None, int | None]:
    """``--time FROM..TO`` (any time mqctl reads: ISO, local, ``-2h``, epoch ms); TO left out
    is now. (None, None) without the option."""
    if text is None:
        return None, None
    frm, sep, to = text.partition("..")
    if not sep or not frm.strip():
        raise UsageError(f"--time {printable(text)!r} is not FROM..TO",
                         hint="e.g. --time 2026-12-01T10:00..2026-12-01T10:05, or --time -15m..")
    begin = parse_time(frm.strip())
    end = parse_time(to.strip()) if to.strip() else now_ms()
    if end < begin:
        raise UsageError("the end of the time range is before its start",
                         hint="give --time FROM..TO with FROM before TO")
    return begin, end


@dataclass(frozen=True, slots=True)
class FindRequest:
    """What ``message find`` / ``message track`` search by: exactly one of ``key``,
    ``unique_key``, ``msg_id``, or a time range with a queue (``broker``, ``queue_id``)."""

    topic: str | None = None
    key: str | None = None
    unique_key: str | None = None
    msg_id: str | None = None
    begin_ms: int | None = None
    end_ms: int | None = None
    broker: str | None = None
    queue_id: int | None = None
    limit: int = DEFAULT_LIMIT

    def check(self) -> str:
        """The way to search; a UsageError for a request that names none or several."""
        ways = [w for w, v in (("key", self.key), ("unique-key", self.unique_key),
                               ("msg-id", self.msg_id)) if v is not None]
        if len(ways) > 1:
            raise UsageError(f"give one of --key, --unique-key, --msg-id (got {len(ways)})",
                             hint="each searches differently: see `mqctl message find --help`")
        if not ways:
            if self.begin_ms is None or self.broker is None or self.queue_id is None:
                raise UsageError("nothing to search by",
                                 hint="give --key K, --unique-key ID or --msg-id ID, or --time "
                                      "FROM..TO with -b BROKER -q QUEUE")
            ways = ["time"]
        if ways[0] in ("key", "unique-key", "time") and not self.topic:
            raise UsageError(f"searching by {ways[0]} needs the topic",
                             hint="give -t TOPIC (the index is kept per topic)")
        if self.limit < 1:
            raise UsageError("--limit must be at least 1")
        return ways[0]


async def find(admin: Admin, req: FindRequest) -> FindResult:
    how = req.check()
    if how == "msg-id":
        assert req.msg_id is not None
        return await find_by_msg_id(admin, req.msg_id, req.topic)
    assert req.topic is not None
    if how == "time":
        assert req.broker is not None and req.queue_id is not None and req.begin_ms is not None
        return await find_by_time(admin, req.topic, req.broker, req.queue_id, req.begin_ms,
                                  req.end_ms if req.end_ms is not None else LONG_MAX,
                                  limit=req.limit)
    value = req.key if how == "key" else req.unique_key
    assert value is not None
    return await find_by_key(admin, req.topic, value, unique=how == "unique-key",
                             limit=req.limit, begin_ms=req.begin_ms, end_ms=req.end_ms)


__all__ = ["DEFAULT_LIMIT", "DEFAULT_QUERY_MAX_NUM", "MAX_MSGS_NUM_BATCH", "BrokerAnswer",
           "FindRequest", "FindResult", "Found", "find", "find_by_key", "find_by_msg_id",
           "find_by_time", "parse_time_range"]
