"""The request RocketMQ's ``PullMessageProcessor`` answers: PULL_MESSAGE (the messages from an
offset, the next offset to pull, and the commit a pull carries)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker.headers import R, failure, hdr, hdr_int
from mqctl.sim.broker.state import BUILTIN_GROUPS, BrokerState, GroupConf
from mqctl.sim.index import stored_message
from mqctl.sim.messages import encode
from mqctl.sim.server import ServerConn
from mqctl.versions import (
    V5_0_0,
    V5_1_0,
)

if TYPE_CHECKING:
    pass


def h_pull(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
           ) -> RemotingCommand:
    """PULL_MESSAGE as PullMessageProcessor (4.9.3; 5.3.3 with DefaultPullMessageResultHandler)
    answers it, without long polling: the group's SubscriptionGroupConfig is looked up (auto-
    created when autoCreateSubscriptionGroup, as findSubscriptionGroupConfig does; the builtin
    groups always exist), then the topic, the queue id and the subscription; the store's status
    (DefaultMessageStore.getMessage) becomes the response code with its name as the remark and
    nextBeginOffset/minOffset/maxOffset/suggestWhichBrokerId in the header. The request's
    commitOffset is stored only with the commit flag, on a master (tryCommitOffset:
    ``brokerAllowSuspend && hasCommitOffsetFlag``); 5.x also records the pull offset of the
    pulling group (ConsumerOffsetManager.commitPullOffset)."""
    group, topic = hdr(cmd, "consumerGroup") or "", hdr(cmd, "topic") or ""
    qid, offset = hdr_int(cmd, "queueId", -1), hdr_int(cmd, "queueOffset", -1)
    sys_flag, max_nums = hdr_int(cmd, "sysFlag"), hdr_int(cmd, "maxMsgNums", 1)
    conf_g = b.groups.get(group)
    if conf_g is None and group in BUILTIN_GROUPS:
        conf_g = GroupConf(group)  # held from the broker's start (not listed by the sim's 201)
    elif conf_g is None and b.auto_create_group:
        conf_g = b.groups[group] = GroupConf(group)  # "auto create a subscription group"
        b.data_version += 1
    if conf_g is None:
        return failure(cmd, R.SUBSCRIPTION_GROUP_NOT_EXIST,
                       f"subscription group [{group}] does not exist, "
                       "See http://rocketmq.apache.org/docs/faq/ for further details.")
    if not conf_g.consume_enable:
        return failure(cmd, R.NO_PERMISSION, f"subscription group no permission, {group}")
    conf = b.topics.get(topic)
    if conf is None:
        return failure(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist, apply first please! "
                       "See http://rocketmq.apache.org/docs/faq/ for further details.")
    if qid < 0 or qid >= conf.read:
        return failure(cmd, R.INVALID_PARAMETER, f"queueId[{qid}] is illegal, topic:[{topic}] "
                       f"topicConfig.readQueueNums:[{conf.read}] consumer:[{conn.remote}]")
    if not sys_flag & 0x4 and b.subscription(group, topic) is None:
        return failure(cmd, R.SUBSCRIPTION_NOT_EXIST, "the consumer's group info not exist")
    mn, mx = b.min_offset(topic, qid), b.max_offset(topic, qid)
    body = b""
    # queryThenEraseResetOffset(topic, group, queueId): only the pulling group's own pending
    # server-side reset is taken (keyed by topic@group)
    pend = b.resets.get((topic, group))
    reset_to = pend.pop(qid, None) if b.server_side_reset and pend else None
    if pend is not None and not pend:
        b.resets.pop((topic, group), None)
    if reset_to is not None:
        status, nxt, code = "OFFSET_RESET", reset_to, R.PULL_OFFSET_MOVED
    elif mx == 0:
        status, nxt = "NO_MESSAGE_IN_QUEUE", 0
        code = R.PULL_OFFSET_MOVED if offset != 0 else R.PULL_NOT_FOUND
    elif offset < mn:
        status, nxt, code = "OFFSET_TOO_SMALL", mn, R.PULL_OFFSET_MOVED
    elif offset == mx:
        status, nxt, code = "OFFSET_OVERFLOW_ONE", offset, R.PULL_NOT_FOUND
    elif offset > mx:
        # 4.9.3 corrects to the min offset when it is 0; 5.x always to the max offset
        nxt = mn if (b.version < V5_0_0 and mn == 0) else mx
        status, code = "OFFSET_OVERFLOW_BADLY", R.PULL_OFFSET_MOVED
    else:
        # maxMsgNums, capped as the store caps a batch in memory (maxTransferCountOnMessage
        # InMemory, 32); messages whose tag the subscription does not take are skipped
        # (ExpressionMessageFilter on the consume queue's tags code) and, when all are,
        # NO_MATCHED_MESSAGE -> PULL_RETRY_IMMEDIATELY with the offset moved past them
        n = max(1, min(max_nums, 32, mx - offset))
        tags = _filter_tags(b, cmd, group, topic, sys_flag)
        msgs = [stored_message(b, topic, qid, o) for o in range(offset, offset + n)]
        msgs = [m for m in msgs if tags is None or m.properties.get("TAGS") in tags]
        body = b"".join(encode(m) for m in msgs)
        status, nxt, code = ("FOUND", offset + n, R.SUCCESS) if msgs else (
            "NO_MATCHED_MESSAGE", offset + n, R.PULL_RETRY_IMMEDIATELY)
    if not slave:
        if b.version >= V5_1_0:
            b.pulls[(group, topic, qid)] = nxt
        if sys_flag & 0x1:
            b.commit(group, topic, qid, hdr_int(cmd, "commitOffset"))
    ext: dict[str, Any] = {"suggestWhichBrokerId": 0, "nextBeginOffset": nxt, "minOffset": mn,
                           "maxOffset": mx}
    if b.version >= V5_0_0:
        ext.update({"topicSysFlag": 0, "groupSysFlag": 0})
    return cmd.response(code, status, ext, body)


def _filter_tags(b: BrokerState, cmd: RemotingCommand, group: str, topic: str, sys_flag: int
                 ) -> set[str] | None:
    """The tags a pull takes (None: all): the request's subscription with FLAG_SUBSCRIPTION
    (0x4), else the group's registered one (PullMessageProcessor: SubscriptionData from the
    request or from ConsumerManager.findSubscriptionData)."""
    if sys_flag & 0x4:
        expr = hdr(cmd, "subscription") or "*"
    else:
        sub = b.subscription(group, topic)
        expr = str((sub or {}).get("subString") or "*")
    if expr.strip() in ("*", ""):
        return None
    return {t.strip() for t in expr.split("||") if t.strip()}
