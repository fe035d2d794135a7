"""The requests RocketMQ's ``SendMessageProcessor`` answers for a producer: SEND_MESSAGE (10)
and SEND_MESSAGE_V2 (310, the one-letter header ``SendMessageRequestHeaderV2``).

As ``SendMessageProcessor.sendMessage`` (4.9.3 and 5.3.3): a slave answers
SERVICE_NOT_AVAILABLE (its store takes no writes); a topic the broker has no config for is
TOPIC_NOT_EXIST "topic[T] not exist, apply first please!", except a ``%RETRY%`` topic, which
``AbstractSendMessageProcessor.msgCheck`` creates (createTopicInSendMessageBackMethod, one
queue); a queue id beyond the write queues is SYSTEM_ERROR. The message is stored as sent
(body, flag, properties, born time; ``CLUSTER`` added), its keys and ``UNIQ_KEY`` indexed
at once (``IndexService.buildIndex``), and the answer is SUCCESS with
``SendMessageResponseHeader`` {msgId (the offset message id), queueId, queueOffset} plus
``MSG_REGION`` and ``TRACE_ON``. The sim's consumers of a group then pull
it like any other message of ``%RETRY%<group>`` or the topic they subscribe.
"""

from __future__ import annotations

from mqctl.models import RETRY_PREFIX
from mqctl.remoting.frame import RemotingCommand
from mqctl.remoting.message import parse_properties
from mqctl.remoting.send import read_send_header
from mqctl.sim.broker.headers import R, failure
from mqctl.sim.broker.state import BrokerState
from mqctl.sim.index import store_host
from mqctl.sim.messages import SimMessage, offset_msg_id, phys_offset, queue_seed
from mqctl.sim.server import ServerConn
from mqctl.timeparse import is_digits


def _int(fields: dict[str, str], key: str, default: int = 0) -> int:
    try:
        return int(fields.get(key, default))
    except ValueError:
        return default


def _peer(conn: ServerConn) -> tuple[str, int]:
    host, _, port = conn.remote.rpartition(":")
    return (host if host and host != "?" else "127.0.0.1"), int(port) if is_digits(port) else 0


def h_send(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
           ) -> RemotingCommand:
    if slave:
        # DefaultMessageStore.putMessage on a slave: PutMessageStatus.SERVICE_NOT_AVAILABLE
        return failure(cmd, R.SERVICE_NOT_AVAILABLE, "service not available now. It may be "
                       "caused by one of the following reasons: the broker's disk is full, "
                       "messages are put to the slave, message store has been shut down, etc.")
    h = read_send_header(cmd.ext_fields or {})
    topic = h.get("topic") or ""
    if topic not in b.topics and topic.startswith(RETRY_PREFIX):
        b.cluster.ensure_topic(topic, b.name)
    conf = b.topics.get(topic)
    if conf is None:
        return failure(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please!")
    qid = _int(h, "queueId", -1)
    if not 0 <= qid < conf.write:
        return failure(cmd, R.SYSTEM_ERROR, f"request queueId[{qid}] is illegal, {conf.name} "
                       f"topicSysFlag: 0 producer: {conn.remote}")
    lg = b.qlog(topic, qid)
    assert lg is not None
    now = b.now()
    offset = lg.max_offset(now)
    lg.append(now, 1)
    props = parse_properties(h.get("properties", ""))
    props["CLUSTER"] = b.cluster.scenario.cluster
    host = store_host(b)
    msg = SimMessage(topic, qid, offset, now, _int(h, "bornTimestamp", now), _peer(conn), host,
                     phys_offset(queue_seed(topic, b.name, qid), offset), cmd.body, props,
                     _int(h, "reconsumeTimes"), _int(h, "flag"))
    b.sent.setdefault((topic, qid), {})[offset] = msg
    keys = [k for k in props.get("KEYS", "").split(" ") if k]
    for k in dict.fromkeys([*keys, *([props["UNIQ_KEY"]] if props.get("UNIQ_KEY") else [])]):
        b.copy_index.setdefault((topic, k), []).append((qid, offset))
    ext = {"msgId": offset_msg_id(host, msg.commit_log_offset), "queueId": qid,
           "queueOffset": offset, "MSG_REGION": "DefaultRegion", "TRACE_ON": "true"}
    return cmd.response(R.SUCCESS, None, ext)


__all__ = ["h_send"]
