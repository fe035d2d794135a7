"""RocketMQ's stored message format: the body of a PULL_MESSAGE response (pure, no I/O).

A found pull answers with the commit-log records of the messages, back to back; the client
splits them with ``MessageDecoder.decodes``. Layout of one record, big-endian
(apache/rocketmq ``common/message/MessageDecoder.decode``, 4.9.3 and 5.3.3)::

     1 TOTALSIZE int32        9 BORNTIMESTAMP int64      15 BODY int32 length + bytes
     2 MAGICCODE int32       10 BORNHOST 4|16 + int32     16 TOPIC int8 length (v1) or
     3 BODYCRC int32         11 STORETIMESTAMP int64         int16 length (v2) + bytes
     4 QUEUEID int32         12 STOREHOST 4|16 + int32    17 PROPERTIES int16 length + bytes
     5 FLAG int32            13 RECONSUMETIMES int32
     6 QUEUEOFFSET int64     14 PREPARED TRANSACTION OFFSET int64
     7 PHYSICALOFFSET int64
     8 SYSFLAG int32

- Magic codes: ``MESSAGE_MAGIC_CODE`` -626843481 (v1, 1-byte topic length) and, since 5.0,
  ``MESSAGE_MAGIC_CODE_V2`` -626843477 (v2, 2-byte topic length; ``MessageVersion``).
- SYSFLAG (``sysflag/MessageSysFlag``): 0x1 compressed body, 0x10 born host IPv6 (16-byte
  address), 0x20 store host IPv6; 5.x compression type in bits 8-10 (1 LZ4, 2 ZSTD, 0/3 ZLIB);
  4.9.3 always uses zlib (``UtilAll.uncompress``).
- Properties: ``name \\x01 value \\x02`` repeated (``NAME_VALUE_SEPARATOR``,
  ``PROPERTY_SEPARATOR``);
  ``KEYS`` holds the keys separated by a space (``MessageConst.KEY_SEPARATOR``), ``TAGS`` the tag.
- The offset message id is store host + port + commit-log offset in hex
  (``MessageDecoder.createMessageId``).
"""

from __future__ import annotations

import ipaddress
import struct
import zlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from mqctl.errors import BodyError

MAGIC_V1 = -626843481
MAGIC_V2 = -626843477
COMPRESSED_FLAG = 0x1
BORNHOST_V6_FLAG = 0x1 << 4
STOREHOSTADDRESS_V6_FLAG = 0x1 << 5
NAME_VALUE_SEPARATOR = "\x01"
PROPERTY_SEPARATOR = "\x02"
_COMPRESSION = {0: "ZLIB", 1: "LZ4", 2: "ZSTD", 3: "ZLIB"}
_FIXED = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8  # up to BORNTIMESTAMP


@dataclass(frozen=True, slots=True)
class StoredMessage:
    version: int  # 1 or 2 (the magic code)
    store_size: int
    body_crc: int
    queue_id: int
    flag: int
    queue_offset: int
    commit_log_offset: int
    sys_flag: int
    born_timestamp: int
    born_host: str
    store_timestamp: int
    store_host: str
    reconsume_times: int
    prepared_transaction_offset: int
    body: bytes  # as stored (compressed when the sys flag says so)
    topic: str
    properties: dict[str, str] = field(default_factory=dict)
    msg_id: str = ""

    @property
    def compressed(self) -> bool:
        return bool(self.sys_flag & COMPRESSED_FLAG)

    @property
    def compression(self) -> str | None:
        return _COMPRESSION.get((self.sys_flag >> 8) & 0x7) if self.compressed else None

    @property
    def keys(self) -> list[str]:
        return [k for k in self.properties.get("KEYS", "").split(" ") if k]

    @property
    def tags(self) -> str | None:
        return self.properties.get("TAGS")

    def plain_body(self) -> bytes | None:
        """The body as the producer sent it; None when its compression is not zlib."""
        if not self.compressed:
            return self.body
        if self.compression != "ZLIB":
            return None
        try:
            return zlib.decompress(self.body)
        except zlib.error:
            return None


def parse_offset_msg_id(text: str) -> tuple[str, int] | None:
    """``MessageDecoder.decodeMessageId``: ("ip:port" of the store host, commit-log offset),
    None for a text that is not an offset message id (32 hex digits IPv4, 56 IPv6)."""
    text = text.strip()
    if len(text) not in (32, 56):
        return None
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        return None
    ip_len = 4 if len(raw) == 16 else 16
    ip = ipaddress.ip_address(raw[:ip_len])
    port, offset = struct.unpack(">iq", raw[ip_len:])
    return (f"[{ip}]" if ip.version == 6 else str(ip)) + f":{port}", offset


def looks_like_messages(body: bytes) -> bool:
    """A stored-message batch: the first record's magic code and a size that fits."""
    if len(body) < _FIXED + 4:
        return False
    size, magic = struct.unpack_from(">ii", body, 0)
    return magic in (MAGIC_V1, MAGIC_V2) and _FIXED < size <= len(body)


def decode_messages(body: bytes) -> tuple[list[StoredMessage], str | None]:
    """The messages of a batch, and why decoding stopped early (None when all bytes decoded).

    Like ``MessageDecoder.decodes`` a broken record ends the batch; unlike it, the reason and
    the byte position are kept so that ``wire decode`` can say what was wrong.
    """
    out: list[StoredMessage] = []
    pos = 0
    while pos < len(body):
        try:
            msg = _decode_one(body, pos)
        except (BodyError, struct.error, ValueError) as exc:
            text = exc.message if isinstance(exc, BodyError) else "truncated"
            return out, f"message {len(out) + 1} at byte {pos}: {text}"
        out.append(msg)
        pos += msg.store_size
    return out, None


def _decode_one(b: bytes, pos: int) -> StoredMessage:
    start = pos
    if len(b) - pos < _FIXED:
        raise BodyError(f"{len(b) - pos} bytes left, shorter than a message header")
    (size, magic, crc, queue_id, flag, queue_offset, phys, sys_flag,
     born_ts) = struct.unpack_from(">iiiiiqqiq", b, pos)
    if magic not in (MAGIC_V1, MAGIC_V2):
        raise BodyError(f"magic code {magic} is neither v1 ({MAGIC_V1}) nor v2 ({MAGIC_V2})")
    if size <= _FIXED or start + size > len(b):
        raise BodyError(f"total size {size} does not fit the {len(b) - start} bytes left")
    end = start + size
    pos += _FIXED

    def take(n: int) -> bytes:
        nonlocal pos
        if n < 0 or pos + n > end:
            raise BodyError(f"a field of {n} bytes runs past the message end")
        out = b[pos:pos + n]
        pos += n
        return out

    def host(v6: bool) -> str:
        ip = ipaddress.ip_address(take(16 if v6 else 4))
        (port,) = struct.unpack(">i", take(4))
        return f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"

    born_host = host(bool(sys_flag & BORNHOST_V6_FLAG))
    (store_ts,) = struct.unpack(">q", take(8))
    store_raw = take(16 if sys_flag & STOREHOSTADDRESS_V6_FLAG else 4)
    (store_port,) = struct.unpack(">i", take(4))
    reconsume, prepared = struct.unpack(">iq", take(12))
    (body_len,) = struct.unpack(">i", take(4))
    msg_body = take(body_len) if body_len > 0 else b""
    if magic == MAGIC_V2:
        (topic_len,) = struct.unpack(">h", take(2))
    else:
        (topic_len,) = struct.unpack(">b", take(1))
    topic = _text(take(topic_len), "topic")
    (props_len,) = struct.unpack(">h", take(2))
    props = parse_properties(_text(take(props_len), "properties")) if props_len > 0 else {}
    if pos != end:
        raise BodyError(f"{end - pos} bytes follow the properties inside the total size {size}")
    ip = ipaddress.ip_address(store_raw)
    store_host = f"[{ip}]:{store_port}" if ip.version == 6 else f"{ip}:{store_port}"
    msg_id = (store_raw + struct.pack(">iq", store_port, phys)).hex().upper()
    return StoredMessage(2 if magic == MAGIC_V2 else 1, size, crc, queue_id, flag, queue_offset,
                         phys, sys_flag, born_ts, born_host, store_ts, store_host, reconsume,
                         prepared, msg_body, topic, props, msg_id)


def _text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BodyError(f"{what} is not UTF-8 (byte {exc.start})") from None


def parse_properties(text: str) -> dict[str, str]:
    """``MessageDecoder.string2messageProperties``: a pair needs a non-empty name and value."""
    out: dict[str, str] = {}
    for item in text.split(PROPERTY_SEPARATOR):
        name, sep, value = item.partition(NAME_VALUE_SEPARATOR)
        if sep and name and value:
            out[name] = value
    return out


def to_record(m: StoredMessage) -> dict[str, Any]:
    """JSON shape of one message: what an operator looks for first, then the rest."""
    def iso(ms: int) -> str | None:
        try:
            return datetime.fromtimestamp(ms / 1000, tz=UTC).strftime(
                "%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        except (OverflowError, OSError, ValueError):
            return None

    plain = m.plain_body()
    return {
        "topic": m.topic,
        "queueId": m.queue_id,
        "queueOffset": m.queue_offset,
        "storeTimestamp": m.store_timestamp,
        "storeTime": iso(m.store_timestamp),
        "keys": m.keys,
        "tags": m.tags,
        "properties": dict(m.properties),
        "bodySize": len(m.body),  # as stored and sent
        "uncompressedBodySize": len(plain) if plain is not None else None,  # None: LZ4/ZSTD
        "compression": m.compression,
        "msgId": m.msg_id,
        "bornTimestamp": m.born_timestamp,
        "bornTime": iso(m.born_timestamp),
        "bornHost": m.born_host,
        "storeHost": m.store_host,
        "commitLogOffset": m.commit_log_offset,
        "reconsumeTimes": m.reconsume_times,
        "sysFlag": m.sys_flag,
        "flag": m.flag,
        "bodyCRC": m.body_crc,
        "magicVersion": m.version,
        "storeSize": m.store_size,
    }


__all__ = ["MAGIC_V1", "MAGIC_V2", "StoredMessage", "decode_messages", "looks_like_messages",
           "parse_offset_msg_id", "parse_properties", "to_record"]
