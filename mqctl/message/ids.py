"""The ids a message is known by (pure).

* The **offset message id** (``MessageDecoder.createMessageId`` / ``decodeMessageId``, 4.9.3
  and 5.3.3): the store host's address, its port and the commit-log offset, in hex: 16 bytes
  (32 hex digits) for an IPv4 store host, 28 bytes (56) for IPv6. It names one stored record:
  VIEW_MESSAGE_BY_ID to that address with that offset reads it.
* The **unique key** (``UNIQ_KEY`` property, ``MessageClientIDSetter.createUniqID``): 16 bytes
  in hex (32 digits) the producer sets: its IP, pid, class-loader hash, the time since the
  start of the month and a counter. It is what ``SendResult.getMsgId()`` returns and what
  producers log; the broker indexes it (IndexService) under ``topic#<unique key>``. A producer
  that sends again after a timeout sends the same unique key, so it can name two records.

Both are 32 hex digits for IPv4, so the shape alone does not tell them apart: mqctl takes what
the user says it is (``--msg-id`` / ``--unique-key``).
"""

from __future__ import annotations

from dataclasses import dataclass

from mqctl.errors import UsageError
from mqctl.remoting.message import parse_offset_msg_id
from mqctl.render import printable

_HEX = set("0123456789abcdefABCDEF")


@dataclass(frozen=True, slots=True)
class OffsetMsgId:
    addr: str  # "ip:port" of the store host (the broker that wrote it)
    commit_log_offset: int


def decode_offset_msg_id(msg_id: str) -> OffsetMsgId:
    """``MessageDecoder.decodeMessageId``; a UsageError for anything that is not one."""
    text = msg_id.strip()
    parsed = parse_offset_msg_id(text) if set(text) <= _HEX else None
    if parsed is None:
        raise UsageError(
            f"{_shown(text)} is not an offset message id (32 hex digits for an IPv4 store "
            "host, 56 for IPv6)",
            hint="a producer's id (SendResult msgId, the UNIQ_KEY property) is a unique key: "
                 "use --unique-key ID with -t TOPIC")
    return OffsetMsgId(*parsed)


def check_unique_key(key: str) -> str:
    text = key.strip()
    if not text:
        raise UsageError("the unique key is empty", hint="give the producer's message id")
    return text


def _shown(text: str) -> str:
    return repr(printable(text[:80]))


__all__ = ["OffsetMsgId", "check_unique_key", "decode_offset_msg_id"]
