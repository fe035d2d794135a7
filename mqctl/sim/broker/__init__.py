"""A simulated broker: its state (:mod:`.state`: topics, offsets, resets, locks, group
membership) and the requests it answers, one module per RocketMQ processor.

Behaviour follows apache/rocketmq (``broker/.../processor/AdminBrokerProcessor``,
``ConsumerManageProcessor``, ``ClientManageProcessor``, ``PullMessageProcessor``,
``SendMessageProcessor``,
``QueryMessageProcessor``, ``store/index/IndexService``,
``client/ConsumerManager``, ``client/rebalance/RebalanceLockManager``,
``offset/ConsumerOffsetManager``, ``client/net/Broker2Client``) as summarised in
rocketmq-protocol.md sections 3-6, per the broker's ``version`` (the release each answer changed
in is named in ``mqctl.versions``); the answers are checked against the real 4.9.3 and 5.3.3
corpus by tests/replay.
"""

from __future__ import annotations

from typing import Any

from mqctl.models import RETRY_PREFIX
from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker import admin_broker_processor as admin
from mqctl.sim.broker import client_manage_processor as client
from mqctl.sim.broker import consumer_manage_processor as consumer
from mqctl.sim.broker import pull_message_processor as pull
from mqctl.sim.broker import query_message_processor as query
from mqctl.sim.broker import send_message_processor as send
from mqctl.sim.broker.headers import C, R
from mqctl.sim.broker.state import (
    BUILTIN_GROUPS,
    CHANNEL_EXPIRED_MS,
    LOCK_LEASE_MS,
    BrokerState,
    GroupConf,
    LockEntry,
    TopicConf,
)
from mqctl.sim.ports import Channel
from mqctl.sim.server import ServerConn

# request code -> its handler, by the processor RocketMQ's BrokerController registers for it
HANDLERS: dict[int, Any] = {
    # SendMessageProcessor
    C.SEND_MESSAGE: send.h_send,
    C.SEND_MESSAGE_V2: send.h_send,
    # PullMessageProcessor
    C.PULL_MESSAGE: pull.h_pull,
    # QueryMessageProcessor
    C.QUERY_MESSAGE: query.h_query_message,
    C.VIEW_MESSAGE_BY_ID: query.h_view_message,
    # ConsumerManageProcessor
    C.GET_CONSUMER_LIST_BY_GROUP: consumer.h_consumer_list,
    C.QUERY_CONSUMER_OFFSET: consumer.h_query_offset,
    C.UPDATE_CONSUMER_OFFSET: consumer.h_update_offset,
    # ClientManageProcessor
    C.HEART_BEAT: client.h_heartbeat,
    C.UNREGISTER_CLIENT: client.h_unregister,
    # AdminBrokerProcessor
    C.GET_CONSUME_STATS: admin.h_consume_stats,
    C.GET_TOPIC_STATS_INFO: admin.h_topic_stats,
    C.GET_BROKER_CONSUME_STATS: admin.h_broker_consume_stats,
    C.VIEW_BROKER_STATS_DATA: admin.h_view_stats,
    C.QUERY_CONSUME_TIME_SPAN: admin.h_time_span,
    C.GET_MAX_OFFSET: admin.h_max,
    C.GET_MIN_OFFSET: admin.h_min,
    C.GET_EARLIEST_MSG_STORETIME: admin.h_earliest,
    C.SEARCH_OFFSET_BY_TIMESTAMP: admin.h_search,
    C.GET_CONSUMER_CONNECTION_LIST: admin.h_connection_list,
    C.QUERY_TOPIC_CONSUME_BY_WHO: admin.h_consume_by_who,
    C.GET_CONSUMER_RUNNING_INFO: admin.h_running_info,
    C.GET_ALL_CONSUMER_OFFSET: admin.h_all_offsets,
    C.GET_ALL_SUBSCRIPTIONGROUP_CONFIG: admin.h_all_groups,
    C.GET_ALL_TOPIC_CONFIG: admin.h_all_topics,
    C.GET_BROKER_RUNTIME_INFO: admin.h_runtime,
    C.GET_BROKER_CONFIG: admin.h_broker_config,
    C.LOCK_BATCH_MQ: admin.h_lock,
    C.UNLOCK_BATCH_MQ: admin.h_unlock,
    C.INVOKE_BROKER_TO_RESET_OFFSET: admin.h_reset,
    C.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: admin.h_update_group,
    C.CLONE_GROUP_OFFSET: admin.h_clone_offset,
}


class SimBroker(BrokerState):
    """A simulated broker: its state, answering requests through :data:`HANDLERS`."""

    def handle(self, cmd: RemotingCommand, conn: ServerConn, *, slave: bool = False) -> Any:
        """Answer a request: a RemotingCommand (or None) at once, or an awaitable for the
        requests the broker forwards to a client (GET_CONSUMER_RUNNING_INFO)."""
        h = HANDLERS.get(cmd.code)
        if h is None:
            resp: Any = cmd.response(R.REQUEST_CODE_NOT_SUPPORTED,
                                     f" request type {cmd.code} not supported")
        else:
            resp = h(self, cmd, conn, slave)
        if type(resp) is RemotingCommand and cmd.code != C.GET_CONSUMER_RUNNING_INFO:
            # the response header carries the broker's own MQVersion (every corpus exchange);
            # a forwarded GET_CONSUMER_RUNNING_INFO answer keeps the client's
            resp = resp.with_(version=self.version)
        return resp



__all__ = ["BUILTIN_GROUPS", "CHANNEL_EXPIRED_MS", "HANDLERS", "LOCK_LEASE_MS", "RETRY_PREFIX",
           "BrokerState", "Channel", "GroupConf", "LockEntry", "SimBroker", "TopicConf"]
