"""The requests RocketMQ's ``QueryMessageProcessor`` answers: QUERY_MESSAGE (messages by key
or unique key, from the broker's index) and VIEW_MESSAGE_BY_ID (the message at a commit-log
offset, the second half of an offset message id).

QUERY_MESSAGE (``QueryMessageProcessor.queryMessage``, 4.9.3 and 5.3.3): the header
``QueryMessageRequestHeader`` {topic, key, maxNum, beginTimestamp, endTimestamp}; with the
extra field ``_UNIQUE_KEY_QUERY`` = ``true`` (``MixAll.UNIQUE_MSG_QUERY_FLAG``) maxNum becomes
``defaultQueryMaxNum`` (32); the store's answer (:func:`mqctl.sim.index.query`) is the records
back to back in the body, SUCCESS with no remark, and the response header always carries
``indexLastUpdateTimestamp`` and ``indexLastUpdatePhyoffset``; nothing found is
QUERY_NOT_FOUND "can not find message, maybe time range not correct".

VIEW_MESSAGE_BY_ID (``viewMessageById``): header {offset}; the record at that commit-log
offset, or SYSTEM_ERROR "can not find message by the offset, <offset>".
"""

from __future__ import annotations

from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker.headers import R, hdr, hdr_int
from mqctl.sim.broker.state import BrokerState
from mqctl.sim.index import (
    DEFAULT_QUERY_MAX_NUM,
    by_commit_log_offset,
    index_last_update,
    query,
)
from mqctl.sim.messages import encode
from mqctl.sim.server import ServerConn

UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"  # MixAll.UNIQUE_MSG_QUERY_FLAG
LONG_MAX = (1 << 63) - 1


def h_query_message(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                    ) -> RemotingCommand:
    topic, key = hdr(cmd, "topic") or "", hdr(cmd, "key") or ""
    max_num = hdr_int(cmd, "maxNum", 0)
    if (hdr(cmd, UNIQUE_MSG_QUERY_FLAG) or "") == "true":
        max_num = DEFAULT_QUERY_MAX_NUM
    begin = hdr_int(cmd, "beginTimestamp", 0)
    end = hdr_int(cmd, "endTimestamp", LONG_MAX)
    ts, phys = index_last_update(b)
    ext = {"indexLastUpdateTimestamp": ts, "indexLastUpdatePhyoffset": phys}
    found = query(b, topic, key, max_num, begin, end)
    if not found:
        return cmd.response(R.QUERY_NOT_FOUND,
                            "can not find message, maybe time range not correct", ext)
    return cmd.response(R.SUCCESS, None, ext, b"".join(encode(m) for m in found))


def h_view_message(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    offset = hdr_int(cmd, "offset", -1)
    m = by_commit_log_offset(b, offset)
    if m is None:
        return cmd.response(R.SYSTEM_ERROR, f"can not find message by the offset, {offset}")
    return cmd.response(R.SUCCESS, None, None, encode(m))
