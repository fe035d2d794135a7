"""The requests RocketMQ's ``ClientManageProcessor`` answers: a client's heartbeat (it joins its
groups, ``ConsumerManager.registerConsumer``) and its unregistering."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mqctl.remoting import fastjson
from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker.headers import hdr, success
from mqctl.sim.broker.state import BrokerState
from mqctl.sim.ports import Channel
from mqctl.sim.server import ServerConn

if TYPE_CHECKING:
    pass


def h_heartbeat(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                      ) -> RemotingCommand:
    body = fastjson.loads(cmd.body) if cmd.body else {}
    cid = str(body.get("clientID") or "")
    for cd in body.get("consumerDataSet") or []:
        group = str(cd.get("groupName"))
        subs = {str(s.get("topic")): s for s in (cd.get("subscriptionDataSet") or [])}
        ch = Channel(0, cid, conn.remote, cmd.language, cmd.version,
                     str(cd.get("consumeType") or "CONSUME_PASSIVELY"),
                     str(cd.get("messageModel") or "CLUSTERING"),
                     str(cd.get("consumeFromWhere") or "CONSUME_FROM_LAST_OFFSET"), subs,
                     b.now(), conn=conn)
        b.register(group, ch)
        if b.name not in conn.watched_by:  # NETTY EVENT on close: drop its channels
            conn.watched_by.add(b.name)
            conn.on_close.append(b.drop_conn)
    return success(cmd, ext={"IS_SUPPORT_HEART_BEAT_V2": "true", "IS_SUB_CHANGE": "true"})


def h_unregister(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                       ) -> RemotingCommand:
    group = hdr(cmd, "consumerGroup")
    if group:
        b.unregister(group, conn=conn)
    return success(cmd)
