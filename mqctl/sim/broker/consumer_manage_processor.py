"""The requests RocketMQ's ``ConsumerManageProcessor`` answers: a group's client ids
(GET_CONSUMER_LIST_BY_GROUP) and its committed offsets (QUERY_CONSUMER_OFFSET,
UPDATE_CONSUMER_OFFSET)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker.headers import R, failure, hdr, hdr_int, hdr_opt_int, success
from mqctl.sim.broker.state import BrokerState
from mqctl.sim.server import ServerConn
from mqctl.versions import (
    V5_0_0,
)

if TYPE_CHECKING:
    pass


def h_query_offset(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                         slave: bool) -> RemotingCommand:
    group, topic, qid = hdr(cmd, "consumerGroup") or "", hdr(cmd, "topic") or "", hdr_int(
        cmd, "queueId")
    off = b.committed(group, topic, qid)
    if off is not None and off >= 0:
        return success(cmd, ext={"offset": off})
    # setZeroIfNotFound came in 5.0.0: a 4.x broker ignores it and may answer 0
    zero = hdr(cmd, "setZeroIfNotFound") if b.version >= V5_0_0 else None
    if zero is None or zero.lower() != "false":
        if b.zero_if_not_found(topic, qid):
            return success(cmd, ext={"offset": 0})
        return cmd.response(R.QUERY_NOT_FOUND,
                            "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first", {})
    # the response was created with its header class: extFields {} (never-committed/14_*)
    return cmd.response(R.QUERY_NOT_FOUND, "Not found, do not set to zero, maybe this group "
                        "boot first", {})


def h_update_offset(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                          slave: bool) -> RemotingCommand:
    group, topic = hdr(cmd, "consumerGroup") or "", hdr(cmd, "topic") or ""
    if group not in b.groups:
        return failure(cmd, R.SUBSCRIPTION_GROUP_NOT_EXIST, f"Group {group} not exist!")
    if topic not in b.topics:
        return failure(cmd, R.TOPIC_NOT_EXIST, f"Topic {topic} not exist!")
    qid, off = hdr_opt_int(cmd, "queueId"), hdr_opt_int(cmd, "commitOffset")
    if qid is None:
        return failure(cmd, R.INVALID_PARAMETER, f"QueueId is null, topic is {topic}")
    if off is None:
        return failure(cmd, R.INVALID_PARAMETER, f"Offset is null, topic is {topic}")
    if not b.commit(group, topic, qid, off):
        return success(cmd, remark="Offset has been previously reset")
    return success(cmd)


def h_consumer_list(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                          ) -> RemotingCommand:
    group = hdr(cmd, "consumerGroup") or ""
    ids = b.consumer_ids(group)
    if not ids:
        return failure(cmd, R.SYSTEM_ERROR, f"no consumer for this group, {group}")
    # created with GetConsumerListByGroupResponseHeader: extFields {} (other-requests/38_*)
    return success(cmd, {"consumerIdList": ids}, ext={})
