"""The message at an offset (``mqctl message show``, ``offsets reset --show-messages``).

A message is read with one PULL_MESSAGE, as mqadmin ``queryMsgByOffset``
(tools/.../command/message/QueryMsgByOffsetSubCommand: ``DefaultMQPullConsumer(
MixAll.TOOLS_CONSUMER_GROUP).pull(mq, "*", offset, 1)``, whose ``pullSyncImpl`` builds
``PullSysFlag.buildSysFlag(false, false, true, false)``), and it moves no group's offset:

* the group is ``TOOLS_CONSUMER`` (``MixAll.TOOLS_CONSUMER_GROUP``), which every broker holds
  from its start (``SubscriptionGroupManager.init``), so nothing is created, and which no
  application consumes with;
* the sysFlag has no FLAG_COMMIT_OFFSET: ``PullMessageProcessor`` stores the request's
  commitOffset only when ``hasCommitOffsetFlag && brokerAllowSuspend`` (4.9.3: inline after the
  store read, and only on a master; 5.3.3: ``tryCommitOffset``, called from
  ``DefaultPullMessageResultHandler``); 5.x also records the pull position of the pulling group
  (``ConsumerOffsetManager.commitPullOffset``), that is TOOLS_CONSUMER's, in memory;
* no FLAG_SUSPEND, so a pull that finds nothing is answered at once, not held;
* the offset is checked against the queue's min and max offsets first, so the broker is never
  asked for an offset out of range: that answer (PULL_OFFSET_MOVED) makes a 4.9.3 broker write
  an ``OffsetMovedEvent`` message into its OFFSET_MOVED_EVENT topic
  (``PullMessageProcessor.generateOffsetMovedEvent``);
* unlike mqadmin, no consumer is started, so no HEART_BEAT registers TOOLS_CONSUMER;
* a pending server-side reset of a group is erased only by a pull of that group
  (``ConsumerOffsetManager.queryThenEraseResetOffset`` is keyed by topic@group), so a pull as
  TOOLS_CONSUMER leaves it for the group's consumers.

The record is decoded by ``mqctl.remoting.message`` (MessageDecoder's layout).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from mqctl.admin import failure_hint
from mqctl.admin.pull import READ_SYS_FLAG, TOOLS_CONSUMER_GROUP, read_pull_fields
from mqctl.errors import BrokerError, ConnectError, MqctlError, ProtocolError, UsageError
from mqctl.models import MessageQueue
from mqctl.remoting.client import fan_out
from mqctl.remoting.codes import (
    RequestCode,
    ResponseCode,
    response_name,
)
from mqctl.remoting.message import StoredMessage, decode_messages, to_record
from mqctl.render import printable as escape
from mqctl.timeparse import format_local, format_ms

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.remoting.frame import RemotingCommand

DEFAULT_BODY_BYTES = 256


@dataclass(frozen=True, slots=True)
class PullAnswer:
    code: int
    status: str  # the remark: GetMessageStatus name (FOUND, OFFSET_OVERFLOW_ONE, ...)
    next_begin_offset: int | None
    min_offset: int | None
    max_offset: int | None
    messages: tuple[StoredMessage, ...]
    decode_error: str | None = None


def parse_pull(resp: RemotingCommand) -> PullAnswer:
    def num(key: str) -> int | None:
        v = resp.ext(key)
        try:
            return int(v) if v is not None else None
        except ValueError:
            raise ProtocolError(f"PULL_MESSAGE response field {key!r} is not a number: "
                                f"{v!r}") from None

    msgs: list[StoredMessage] = []
    err = None
    if resp.code == ResponseCode.SUCCESS and resp.body:
        msgs, err = decode_messages(resp.body)
    return PullAnswer(resp.code, (resp.remark or "").strip(), num("nextBeginOffset"),
                      num("minOffset"), num("maxOffset"), tuple(msgs), err)


@dataclass(frozen=True, slots=True)
class MessageAt:
    mq: MessageQueue
    offset: int
    addr: str
    min_offset: int
    max_offset: int
    message: StoredMessage | None
    # why there is no message (None when there is one): "end" (offset = max offset: the next
    # message to be written), "below-min" (removed from the store), "beyond-max", or the
    # broker's answer
    missing: str | None = None
    answer_code: int | None = None  # the PULL_MESSAGE response code when it found nothing


class OffsetOutOfRange(UsageError):
    """The offset is not one the queue holds: nothing was pulled."""


def range_text(mn: int, mx: int) -> str:
    return f"is empty (min = max = {mn})" if mx <= mn else f"holds offsets {mn} to {mx - 1}"


def _find_addr(route: Any, broker: str) -> str:
    b = next((b for b in route.brokers if b.broker_name == broker), None)
    if b is None:
        names = ", ".join(sorted(x.broker_name for x in route.brokers)) or "none"
        raise UsageError(f"broker {broker!r} does not serve topic {route.topic!r}",
                         hint=f"the topic's brokers: {names} (`mqctl route {route.topic}`)")
    addr = b.master_addr or b.select_addr()
    if addr is None:
        raise ConnectError(f"broker {broker} has no address in the route of {route.topic}")
    return addr


async def pull_one(admin: Admin, mq: MessageQueue, offset: int, addr: str, mn: int, mx: int
                   ) -> MessageAt:
    """The message at ``offset`` (which must be in [mn, mx)): one PULL_MESSAGE."""
    ans = parse_pull(await admin.pull_message(mq, offset, addr))
    if ans.code == ResponseCode.SUCCESS:
        hit = next((m for m in ans.messages if m.queue_offset == offset), None)
        if hit is not None:
            return MessageAt(mq, offset, addr, mn, mx, hit)
        if ans.decode_error:
            raise ProtocolError(f"PULL_MESSAGE answer for {mq.broker_name}/{mq.queue_id} "
                                f"offset {offset} cannot be decoded: {ans.decode_error}")
        raise ProtocolError(f"PULL_MESSAGE for {mq.broker_name}/{mq.queue_id} offset {offset} "
                            f"answered FOUND without the message at that offset "
                            f"({len(ans.messages)} message(s) decoded)")
    # the queue changed between the range check and the pull (retention, or a race)
    return MessageAt(mq, offset, addr, ans.min_offset if ans.min_offset is not None else mn,
                     ans.max_offset if ans.max_offset is not None else mx, None,
                     f"{response_name(ans.code)} ({ans.status or 'no remark'})", ans.code)


async def read_message(admin: Admin, topic: str, broker: str, queue_id: int,
                       offset: int) -> MessageAt:
    """``mqctl message show``: the range check (GET_MIN_OFFSET / GET_MAX_OFFSET), then the
    pull. An offset the queue does not hold is a usage error and nothing is pulled."""
    route = await admin.topic_route(topic)
    addr = _find_addr(route, broker)
    qd = next((q for q in route.queues if q.broker_name == broker), None)
    nq = max(qd.read_queue_nums, qd.write_queue_nums) if qd else 0
    if not 0 <= queue_id < max(nq, 1) or qd is None:
        raise UsageError(f"queue {queue_id} does not exist on {broker} for topic {topic!r} "
                         f"({nq} queue(s): 0 to {nq - 1})",
                         hint=f"`mqctl topic status {topic}` lists the queues")
    if queue_id >= qd.read_queue_nums:
        raise UsageError(f"queue {queue_id} of {topic!r} on {broker} is not readable "
                         f"(readQueueNums {qd.read_queue_nums}): brokers refuse pulls from it",
                         hint="pick a queue id below the read queue number")
    mq = MessageQueue(topic, broker, queue_id)
    try:
        mn, mx = await admin.min_offset(mq, addr), await admin.max_offset(mq, addr)
    except BrokerError as exc:
        if not exc.hint:
            exc.hint = failure_hint([exc])
        raise
    if not mn <= offset < mx:
        raise OffsetOutOfRange(
            f"offset {offset} is not in queue {broker}/{queue_id} of {topic}: it "
            f"{range_text(mn, mx)}",
            hint="give an offset from the min offset to max offset - 1 (`mqctl topic status "
                 f"{topic}`); mqctl does not pull outside that range (a broker answers "
                 "PULL_OFFSET_MOVED, and a 4.x broker records an OFFSET_MOVED_EVENT message)")
    try:
        at = await pull_one(admin, mq, offset, addr, mn, mx)
    except BrokerError as exc:
        if not exc.hint:
            exc.hint = (
                "reading needs subscribe permission on the topic and on group TOOLS_CONSUMER "
                "(ACL: the access key's account), a readable topic and a readable broker"
                if exc.code == ResponseCode.NO_PERMISSION else
                "the broker refused the read: see its remark")
        raise
    if at.message is None:
        raise BrokerError(at.answer_code if at.answer_code is not None
                          else ResponseCode.PULL_NOT_FOUND, at.missing, addr=addr,
                          request_code=RequestCode.PULL_MESSAGE,
                          hint=f"the queue now {range_text(at.min_offset, at.max_offset)}; "
                               "try again")
    return at


async def messages_at(admin: Admin, targets: Iterable[tuple[MessageQueue, int, str]],
                      ranges: dict[MessageQueue, tuple[int, int]] | None = None
                      ) -> dict[MessageQueue, MessageAt | MqctlError]:
    """For ``offsets reset --show-messages``: the message at each (queue, offset, address);
    a target at the max offset (the next message to be written) or outside the queue's
    range is not pulled (``missing`` says why). ``ranges`` are the (min, max) offsets the
    caller already read; missing ones are asked for. Concurrent, bounded by
    ``admin.concurrency``; a queue whose read failed maps to its error."""
    items = list(targets)
    known = dict(ranges or {})

    async def one(t: tuple[MessageQueue, int, str]) -> MessageAt:
        mq, offset, addr = t
        if mq in known:
            mn, mx = known[mq]
        else:
            mn, mx = await admin.min_offset(mq, addr), await admin.max_offset(mq, addr)
        if offset == mx:
            return MessageAt(mq, offset, addr, mn, mx, None, "end")
        if offset < mn:
            return MessageAt(mq, offset, addr, mn, mx, None, "below-min")
        if offset > mx:
            return MessageAt(mq, offset, addr, mn, mx, None, "beyond-max")
        return await pull_one(admin, mq, offset, addr, mn, mx)

    out: dict[MessageQueue, MessageAt | MqctlError] = {}
    for o in await fan_out(items, one, concurrency=admin.concurrency):
        out[o.item[0]] = o.value if o.ok else o.error  # type: ignore[assignment]
    return out


MISSING_TEXT = {"end": "no message yet (the max offset: the next message to be written)",
                "below-min": "below the min offset (removed from the store)",
                "beyond-max": "beyond the max offset"}


async def annotate_plan(admin: Admin, plan: Any) -> None:
    """``offsets reset --show-messages``: the message at each queue's target, in
    ``plan.messages`` (read as ``message show`` reads, one pull per queue, none for a target
    at the max offset)."""
    targets = [(q.mq, q.target, plan.brokers[q.mq.broker_name].addr) for q in plan.queues
               if plan.brokers.get(q.mq.broker_name) is not None
               and plan.brokers[q.mq.broker_name].addr]
    ranges = {q.mq: (q.min_offset, q.max_offset) for q in plan.queues}
    plan.messages.update(await messages_at(admin, targets, ranges))


def plan_message_fields(value: MessageAt | MqctlError | None) -> dict[str, Any]:
    """The cells a reset plan row gets from the message at its target."""
    if isinstance(value, MessageAt) and value.message is not None:
        m = value.message
        return {"target_stored": format_local(m.store_timestamp),
                "target_store_ts": m.store_timestamp,
                "target_store_time": format_ms(m.store_timestamp) or None,
                "target_keys": short_keys(m), "target_keys_list": m.keys,
                "target_tags": m.tags, "target_msg_id": m.msg_id, "target_message": "found"}
    if isinstance(value, MessageAt):
        why = value.missing or "unknown"
        return {"target_stored": "-", "target_store_ts": None, "target_store_time": None,
                "target_keys": MISSING_TEXT.get(why, why), "target_keys_list": [],
                "target_tags": None, "target_msg_id": None, "target_message": why}
    why = f"not read: {value.message}" if value is not None else "not read"
    return {"target_stored": "-", "target_store_ts": None, "target_store_time": None,
            "target_keys": why, "target_keys_list": [], "target_tags": None,
            "target_msg_id": None, "target_message": why}


# ---------------------------------------------------------------------------- rendering

def printable(data: bytes) -> str:
    """Bytes as safe one-line text: UTF-8 where it decodes, ``\\xNN`` for other bytes and for
    control characters (ANSI escapes included), ``\\n``/``\\r``/``\\t``, and ``\\\\`` for a
    backslash, so the text can be read back unambiguously and cannot drive a terminal
    (:func:`mqctl.render.printable`, the one escaping, with backslashes doubled)."""
    return escape(data.decode("utf-8", errors="surrogateescape"), backslash=True)


def body_head(m: StoredMessage, limit: int) -> dict[str, Any]:
    """The first ``limit`` bytes of the body as the producer sent it (zlib bodies
    uncompressed; LZ4/ZSTD bodies of 5.x are not, and their head is unknown)."""
    plain = m.plain_body()
    if plain is None:
        return {"bodyHead": None, "bodyHeadBase64": None, "bodyHeadBytes": 0,
                "bodyTruncated": None,
                "bodyNote": f"the body is compressed with {m.compression}: not shown"}
    head = plain[:max(0, limit)]
    return {"bodyHead": printable(head), "bodyHeadBase64": base64.b64encode(head).decode(),
            "bodyHeadBytes": len(head), "bodyTruncated": len(plain) > len(head),
            "bodyNote": None}


def message_record(at: MessageAt, limit: int = DEFAULT_BODY_BYTES) -> dict[str, Any]:
    """JSON of ``message show``: the decoded message, where it was read and how."""
    assert at.message is not None
    m = at.message
    rec = {"brokerName": at.mq.broker_name, **to_record(m), **body_head(m, limit),
           # a retry or dead-letter copy: where it was first sent and the original's id
           "originalTopic": m.properties.get("RETRY_TOPIC"),
           "originalMsgId": m.properties.get("ORIGIN_MESSAGE_ID"),
           "queueMinOffset": at.min_offset, "queueMaxOffset": at.max_offset,
           "readWith": {"request": "PULL_MESSAGE", "consumerGroup": TOOLS_CONSUMER_GROUP,
                        "sysFlag": READ_SYS_FLAG, "commitOffset": False, "broker": at.addr}}
    return rec


def short_keys(m: StoredMessage | None, width: int = 60) -> str:
    if m is None:
        return ""
    text = printable(" ".join(m.keys).encode())
    return text if len(text) <= width else text[:width - 1] + "…"


__all__ = ["DEFAULT_BODY_BYTES", "MISSING_TEXT", "MessageAt", "OffsetOutOfRange", "PullAnswer",
           "READ_SYS_FLAG", "TOOLS_CONSUMER_GROUP", "annotate_plan", "body_head",
           "message_record", "plan_message_fields",
           "messages_at", "parse_pull", "printable", "pull_one", "range_text",
           "read_pull_fields", "read_message", "short_keys"]
