"""The messages a simulated queue holds, made up on demand for PULL_MESSAGE.

The sim keeps no message contents (``store.QueueLog`` knows only how many messages a queue
holds and when each was stored), so a pull answer builds each message from its position:
the store time is the queue log's, everything else is a deterministic function of (topic,
broker, queue, offset), so two pulls of one offset answer the same bytes. The record layout is
the commit log's, as ``MessageDecoder.decode`` reads it (apache/rocketmq
``common/message/MessageDecoder``, v1 magic code as 4.9.3 and 5.3.3 write for topics shorter
than 128 bytes); the properties are those a Java producer sets (``KEYS``, ``TAGS``,
``UNIQ_KEY``, ``WAIT``) plus ``CLUSTER``, which ``SendMessageProcessor`` adds when it stores.

Two ids are made so that the sim can read them back (its index, :mod:`mqctl.sim.index`):

* ``UNIQ_KEY`` has the layout of ``MessageClientIDSetter.createUniqID``: 16 bytes in hex, the
  producer's IPv4 address (4), its pid (2), the class loader's hash (4), the milliseconds since
  the start of the month the message was born in (4) and a counter (2). The sim puts the queue's
  seed in the class-loader hash and the queue offset in pid and counter;
* the commit-log offset (the second half of the offset message id,
  ``MessageDecoder.createMessageId``) is ``(seed & 0xFFFFFF) << 38 | offset << 8``: unique per
  queue of a broker, as a real commit-log position is, though not in store-time order.

A message sent back to a retry or dead-letter topic is a copy of the one that failed
(:func:`make_copy`), as ``consumerSendMsgBack`` builds it.
"""

from __future__ import annotations

import calendar
import ipaddress
import json
import struct
import time
import zlib
from dataclasses import dataclass, replace

MAGIC_V1 = -626843481  # MessageDecoder.MESSAGE_MAGIC_CODE
TAGS = ("TagA", "TagB", "TagC")
PRODUCER_HOSTS = ("10.0.3.11", "10.0.3.12", "10.0.3.13")
COMMIT_LOG_RECORD_SPACING = 256  # a made-up physical offset step between messages
PHYS_SEED_SHIFT = 38  # commit-log offset: the queue's seed above, the record's position below


@dataclass(frozen=True, slots=True)
class SimMessage:
    topic: str
    queue_id: int
    queue_offset: int
    store_ts: int
    born_ts: int
    born_host: tuple[str, int]
    store_host: tuple[str, int]
    commit_log_offset: int
    body: bytes
    properties: dict[str, str]
    reconsume_times: int = 0
    flag: int = 0  # the producer's Message.flag (kept as sent: SEND_MESSAGE's header)


def queue_seed(topic: str, broker: str, queue_id: int) -> int:
    return zlib.crc32(f"{topic}/{broker}/{queue_id}".encode())


def _mix(seed: int, offset: int) -> int:
    return (seed + offset) & 0x7FFFFFFF


def tag_of(topic: str, broker: str, queue_id: int, offset: int) -> str:
    """The tag of the message at ``offset`` (what :func:`make_message` gives it), cheaply."""
    return TAGS[_mix(queue_seed(topic, broker, queue_id), offset) % len(TAGS)]


def order_key(n: int) -> str:
    return f"ORD-{n % 100000:05d}"


def month_start_ms(ts_ms: int) -> int:
    """The start of the month ``ts_ms`` falls in (UTC): MessageClientIDSetter's time base."""
    t = time.gmtime(ts_ms / 1000)
    return calendar.timegm((t.tm_year, t.tm_mon, 1, 0, 0, 0)) * 1000


def uniq_key(born_ip: str, seed: int, offset: int, born_ts: int) -> str:
    """``MessageClientIDSetter.createUniqID``'s layout (see the module's text)."""
    ip = ipaddress.ip_address(born_ip).packed[-4:]
    diff = (born_ts - month_start_ms(born_ts)) & 0xFFFFFFFF
    raw = ip + struct.pack(">HIIH", (offset >> 16) & 0xFFFF, seed & 0xFFFFFFFF, diff,
                           offset & 0xFFFF)
    return raw.hex().upper()


def parse_uniq_key(key: str) -> tuple[int, int] | None:
    """(seed, offset) of a sim unique key, None when ``key`` is not one."""
    if len(key) != 32:
        return None
    try:
        raw = bytes.fromhex(key)
    except ValueError:
        return None
    hi, seed, _diff, lo = struct.unpack(">HIIH", raw[4:])
    return seed, (hi << 16) | lo


def phys_offset(seed: int, offset: int) -> int:
    return ((seed & 0xFFFFFF) << PHYS_SEED_SHIFT) | (offset * COMMIT_LOG_RECORD_SPACING)


def parse_phys(phys: int) -> tuple[int, int] | None:
    """(seed & 0xFFFFFF, queue offset) of a sim commit-log offset, None when not one."""
    low = phys & ((1 << PHYS_SEED_SHIFT) - 1)
    if phys < 0 or low % COMMIT_LOG_RECORD_SPACING:
        return None
    return phys >> PHYS_SEED_SHIFT, low // COMMIT_LOG_RECORD_SPACING


def offset_msg_id(store_host: tuple[str, int], phys: int) -> str:
    """``MessageDecoder.createMessageId``: store address, port and commit-log offset in hex."""
    return (_host(store_host) + struct.pack(">q", phys)).hex().upper()


def make_message(topic: str, broker: str, queue_id: int, offset: int, store_ts: int,
                 cluster: str, store_host: tuple[str, int]) -> SimMessage:
    """The message at ``offset`` of a simulated queue (deterministic)."""
    seed = queue_seed(topic, broker, queue_id)
    n = _mix(seed, offset)
    key = f"{topic}-{broker}-{queue_id}-{offset}"
    body = json.dumps({"topic": topic, "broker": broker, "queue": queue_id, "offset": offset,
                       "order": order_key(n), "amount": (n % 9973) / 100},
                      separators=(",", ":")).encode()
    born = (PRODUCER_HOSTS[n % len(PRODUCER_HOSTS)], 40000 + n % 1000)
    born_ts = store_ts - 1 - n % 5
    props = {"CLUSTER": cluster, "KEYS": f"{key} {order_key(n)}",
             "TAGS": TAGS[n % len(TAGS)], "UNIQ_KEY": uniq_key(born[0], seed, offset, born_ts),
             "WAIT": "true"}
    return SimMessage(topic, queue_id, offset, store_ts, born_ts, born,
                      store_host, phys_offset(seed, offset), body, props)


def make_copy(orig: SimMessage, topic: str, broker: str, offset: int, store_ts: int,
              reconsume_times: int, *, real_topic: str | None, queue_id: int = 0,
              delay_level: int | None = None) -> SimMessage:
    """A message sent back (AbstractSendMessageProcessor.consumerSendMsgBack, 4.9.3 and 5.3.3):
    body, flag, properties, born time and host of the message that failed; ``RETRY_TOPIC`` set
    to its topic when it has none; ``ORIGIN_MESSAGE_ID`` the offset message id of the first
    message (kept along the chain); reconsumeTimes one more. A retry copy went through the
    delay levels (SCHEDULE_TOPIC_XXXX), which leaves ``REAL_TOPIC`` / ``REAL_QID`` behind
    (CommitLog.putMessage sets them; ScheduleMessageService.messageTimeup clears only
    ``DELAY``): ``real_topic`` is the retry topic it went to (a dead letter is stored at once,
    queue 0, DLQ_NUMS_PER_GROUP 1, and keeps the ``REAL_TOPIC`` of the retry copy it came from).
    A copy still waiting in SCHEDULE_TOPIC_XXXX (queue ``queue_id`` = level - 1) keeps
    ``DELAY`` = ``delay_level``.
    """
    props = dict(orig.properties)
    props.setdefault("RETRY_TOPIC", orig.topic)
    props.setdefault("ORIGIN_MESSAGE_ID", offset_msg_id(orig.store_host,
                                                        orig.commit_log_offset))
    if real_topic is not None:
        props["REAL_TOPIC"], props["REAL_QID"] = real_topic, "0"
    props.pop("DELAY", None)
    if delay_level is not None:
        props["DELAY"] = str(delay_level)
    seed = queue_seed(topic, broker, queue_id)
    return replace(orig, topic=topic, queue_id=queue_id, queue_offset=offset, store_ts=store_ts,
                   commit_log_offset=phys_offset(seed, offset), properties=props,
                   reconsume_times=reconsume_times)


def _host(h: tuple[str, int]) -> bytes:
    return ipaddress.ip_address(h[0]).packed + struct.pack(">i", h[1])


def encode(m: SimMessage) -> bytes:
    """One commit-log record (``MessageDecoder.decode`` reads it back)."""
    topic = m.topic.encode()
    props = "".join(f"{k}\x01{v}\x02" for k, v in m.properties.items()).encode()
    born, store = _host(m.born_host), _host(m.store_host)
    sys_flag = (0x10 if len(born) == 20 else 0) | (0x20 if len(store) == 20 else 0)
    rest = (struct.pack(">iiiqqiq", zlib.crc32(m.body) & 0x7FFFFFFF, m.queue_id, m.flag,
                        m.queue_offset, m.commit_log_offset, sys_flag, m.born_ts)
            + born + struct.pack(">q", m.store_ts) + store
            + struct.pack(">iq", m.reconsume_times, 0)
            + struct.pack(">i", len(m.body)) + m.body
            + struct.pack(">b", len(topic)) + topic
            + struct.pack(">h", len(props)) + props)
    return struct.pack(">ii", 8 + len(rest), MAGIC_V1) + rest


__all__ = ["SimMessage", "encode", "make_copy", "make_message", "offset_msg_id", "order_key",
           "parse_phys", "parse_uniq_key", "phys_offset", "queue_seed", "tag_of", "uniq_key"]
