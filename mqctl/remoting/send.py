"""SEND_MESSAGE as the Java producer sends it (pure: the request's header and the answer's
fields, no I/O).

``MQClientAPIImpl.sendMessage`` (4.9.3 and 5.3.3) sends SEND_MESSAGE_V2 (310) with
``SendMessageRequestHeaderV2``, the same fields as ``SendMessageRequestHeader`` under one-letter
names (a producerGroup, b topic, c defaultTopic, d defaultTopicQueueNums, e queueId, f sysFlag,
g bornTimestamp, h flag, i properties, j reconsumeTimes, k unitMode, l maxReconsumeTimes,
m batch; 5.x adds n brokerName), the message body as the request body. The properties are one
string, ``MessageDecoder.messageProperties2String``: ``name \\u0001 value \\u0002`` per pair.

The broker (``SendMessageProcessor.sendMessage``) answers SUCCESS with
``SendMessageResponseHeader`` {msgId: the stored record's offset message id, queueId,
queueOffset}, or FLUSH_DISK_TIMEOUT / FLUSH_SLAVE_TIMEOUT / SLAVE_NOT_AVAILABLE (stored, not
yet flushed or replicated: ``MQClientAPIImpl.processSendResponse`` maps them to a SendStatus),
or an error with a remark.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.message import NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR

DEFAULT_TOPIC = "TBW102"  # TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC
DEFAULT_TOPIC_QUEUE_NUMS = 4  # DefaultMQProducer.defaultTopicQueueNums
V2_NAMES = {"producerGroup": "a", "topic": "b", "defaultTopic": "c",
            "defaultTopicQueueNums": "d", "queueId": "e", "sysFlag": "f", "bornTimestamp": "g",
            "flag": "h", "properties": "i", "reconsumeTimes": "j", "unitMode": "k",
            "maxReconsumeTimes": "l", "batch": "m", "brokerName": "n"}
# SendStatus by response code (MQClientAPIImpl.processSendResponse)
SEND_STATUS: dict[int, str] = {ResponseCode.SUCCESS: "SEND_OK",
               ResponseCode.FLUSH_DISK_TIMEOUT: "FLUSH_DISK_TIMEOUT",
               ResponseCode.SLAVE_NOT_AVAILABLE: "SLAVE_NOT_AVAILABLE",
               ResponseCode.FLUSH_SLAVE_TIMEOUT: "FLUSH_SLAVE_TIMEOUT"}


def properties_to_string(props: Mapping[str, str]) -> str:
    """``MessageDecoder.messageProperties2String``: every pair with a value, in order."""
    return "".join(f"{k}{NAME_VALUE_SEPARATOR}{v}{PROPERTY_SEPARATOR}"
                   for k, v in props.items() if v is not None)


def send_header(*, group: str, topic: str, queue_id: int, properties: Mapping[str, str],
                born_ms: int, flag: int = 0, sys_flag: int = 0, reconsume_times: int = 0,
                v2: bool = True) -> dict[str, Any]:
    """The ext fields of a SEND_MESSAGE (``v2``: SEND_MESSAGE_V2's one-letter names)."""
    fields: dict[str, Any] = {"producerGroup": group, "topic": topic,
                              "defaultTopic": DEFAULT_TOPIC,
                              "defaultTopicQueueNums": DEFAULT_TOPIC_QUEUE_NUMS,
                              "queueId": queue_id, "sysFlag": sys_flag, "bornTimestamp": born_ms,
                              "flag": flag, "properties": properties_to_string(properties),
                              "reconsumeTimes": reconsume_times, "unitMode": "false",
                              "batch": "false"}
    return {V2_NAMES[k]: v for k, v in fields.items()} if v2 else fields


def read_send_header(ext: Mapping[str, str]) -> dict[str, str]:
    """A SEND_MESSAGE(_V2) header by its long names, whichever was sent."""
    if "b" in ext and "topic" not in ext:
        return {long: ext[short] for long, short in V2_NAMES.items() if short in ext}
    return dict(ext)


@dataclass(frozen=True, slots=True)
class SendResult:
    """What the broker answered: the stored record's offset message id, queue and offset,
    and the send status."""

    status: str
    msg_id: str | None
    queue_id: int | None
    queue_offset: int | None


def parse_send_response(code: int, ext: Mapping[str, str] | None) -> SendResult:
    e = ext or {}

    def num(k: str) -> int | None:
        v = e.get(k)
        try:
            return int(v) if v is not None else None
        except ValueError:
            return None

    return SendResult(SEND_STATUS.get(code, f"code {code}"), e.get("msgId"), num("queueId"),
                      num("queueOffset"))


__all__ = ["DEFAULT_TOPIC", "SEND_STATUS", "SendResult", "parse_send_response",
           "properties_to_string", "read_send_header", "send_header"]
