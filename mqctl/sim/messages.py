"""The messages a simulated queue holds, made up on demand for PULL_MESSAGE.

The sim keeps no message contents (``store.QueueLog`` knows only how many messages a queue
holds and when each was stored), so a pull answer builds each message from its position:
the store time is the queue log's, everything else is a deterministic function of (topic,
broker, queue, offset), so two pulls of one offset answer the same bytes. The record layout is
the commit log's, as ``MessageDecoder.decode`` reads it (apache/rocketmq
``common/message/MessageDecoder``, v1 magic code as 4.9.3 and 5.3.3 write for topics shorter
than 128 bytes); the properties are those a Java producer sets (``KEYS``, ``TAGS``,
``UNIQ_KEY``, ``WAIT``) plus ``CLUSTER``, which ``SendMessageProcessor`` adds when it stores.
"""

from __future__ import annotations

import ipaddress
import json
import struct
import zlib
from dataclasses import dataclass

MAGIC_V1 = -626843481  # MessageDecoder.MESSAGE_MAGIC_CODE
TAGS = ("TagA", "TagB", "TagC")
PRODUCER_HOSTS = ("10.0.3.11", "10.0.3.12", "10.0.3.13")
COMMIT_LOG_RECORD_SPACING = 512  # a made-up physical offset step between messages


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


def make_message(topic: str, broker: str, queue_id: int, offset: int, store_ts: int,
                 cluster: str, store_host: tuple[str, int]) -> SimMessage:
    """The message at ``offset`` of a simulated queue (deterministic)."""
    seed = zlib.crc32(f"{topic}/{broker}/{queue_id}".encode())
    n = (seed + offset) & 0x7FFFFFFF
    key = f"{topic}-{broker}-{queue_id}-{offset}"
    body = json.dumps({"topic": topic, "broker": broker, "queue": queue_id, "offset": offset,
                       "order": f"ORD-{n % 100000:05d}", "amount": (n % 9973) / 100},
                      separators=(",", ":")).encode()
    uniq = f"{seed:08X}{offset:016X}"
    props = {"CLUSTER": cluster, "KEYS": f"{key} ORD-{n % 100000:05d}",
             "TAGS": TAGS[n % len(TAGS)], "UNIQ_KEY": uniq, "WAIT": "true"}
    born = (PRODUCER_HOSTS[n % len(PRODUCER_HOSTS)], 40000 + n % 1000)
    phys = (seed % 1000) * 1_000_000 + offset * COMMIT_LOG_RECORD_SPACING
    return SimMessage(topic, queue_id, offset, store_ts, store_ts - 1 - n % 5, born,
                      store_host, phys, body, props)


def _host(h: tuple[str, int]) -> bytes:
    return ipaddress.ip_address(h[0]).packed + struct.pack(">i", h[1])


def encode(m: SimMessage) -> bytes:
    """One commit-log record (``MessageDecoder.decode`` reads it back)."""
    topic = m.topic.encode()
    props = "".join(f"{k}\x01{v}\x02" for k, v in m.properties.items()).encode()
    born, store = _host(m.born_host), _host(m.store_host)
    sys_flag = (0x10 if len(born) == 20 else 0) | (0x20 if len(store) == 20 else 0)
    rest = (struct.pack(">iiiqqiq", zlib.crc32(m.body) & 0x7FFFFFFF, m.queue_id, 0,
                        m.queue_offset, m.commit_log_offset, sys_flag, m.born_ts)
            + born + struct.pack(">q", m.store_ts) + store
            + struct.pack(">iq", 0, 0)
            + struct.pack(">i", len(m.body)) + m.body
            + struct.pack(">b", len(topic)) + topic
            + struct.pack(">h", len(props)) + props)
    return struct.pack(">ii", 8 + len(rest), MAGIC_V1) + rest


__all__ = ["SimMessage", "encode", "make_message"]
