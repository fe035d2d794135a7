"""The requests RocketMQ's ``AdminBrokerProcessor`` answers: consume and topic stats, offsets
by time and the earliest store time, connections and who consumes a topic, a client's running
info (forwarded to the client, ``callConsumer``), the broker's tables, runtime info and config,
queue locks (``lockBatchMQ``, ``unlockBatchMQ``: ``RebalanceLockManager``) and offset resets
(``resetOffset``: server side from 5.0.0 with ``useServerSideResetOffset``, else pushed to the
clients by ``Broker2Client.resetOffset``)."""

from __future__ import annotations

import asyncio
import datetime
import json
from typing import TYPE_CHECKING, Any

from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker.headers import C, R, failure, hdr, hdr_bool, hdr_int, success
from mqctl.sim.broker.state import BrokerState, GroupConf, TopicConf
from mqctl.sim.ports import Channel
from mqctl.sim.server import ServerConn
from mqctl.versions import (
    V3_0_7_SNAPSHOT,
    V3_1_8_SNAPSHOT,
    V5_0_0,
    V5_1_0,
    V5_1_3,
    V5_3_0,
    V5_3_2,
    V5_3_3,
    version_name,
)

if TYPE_CHECKING:
    from mqctl.sim.ports import SimClient


def _wrapper(b: BrokerState, group: str, topic: str, qid: int) -> dict[str, Any]:
    """``OffsetWrapper`` (AdminBrokerProcessor.getConsumeStats): no committed offset reads 0,
    lastTimestamp stays 0 without one; ``pullOffset`` exists from 5.1.0 on (RIP-48), a 4.9.3
    broker has no such field (corpus 4.9.3/never-committed/208_*)."""
    mx = b.max_offset(topic, qid)
    co = b.committed(group, topic, qid)
    co = max(0, co if co is not None else 0)
    last = b.store_ts(topic, qid, co - 1) if co > 0 else 0
    w = {"brokerOffset": max(0, mx), "consumerOffset": co, "lastTimestamp": last}
    if b.version >= V5_1_0:
        w["pullOffset"] = max(co, b.pulls.get((group, topic, qid), 0))
    return w


def h_consume_stats(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                          slave: bool) -> RemotingCommand:
    group = hdr(cmd, "consumerGroup") or ""
    # the header has a topicList from 5.3.2 on (apache/rocketmq#9153); older brokers ignore it
    topic_list = hdr(cmd, "topicList") if b.version >= V5_3_2 else None
    # AdminBrokerProcessor.getTopicsForCollectingConsumeStats: a topicList is taken as is;
    # otherwise the topic (or every topic with offsets) is kept only if the online group
    # subscribes to it (no check while the group has no subscriptions: offline)
    if topic_list:
        topics = sorted({t for t in topic_list.split(";") if t})
    else:
        topics = [hdr(cmd, "topic") or ""] if hdr(cmd, "topic") else b.group_topics(group)
        info = b.group_info.get(group)
        if info is not None and info.subs:
            topics = [t for t in topics if t in info.subs]
    table: dict[MessageQueue, Any] = {}
    tps = 0.0
    for t in topics:
        conf = b.topics.get(t)
        if conf is None:
            continue
        for q in range(conf.read):  # readQueueNums on 4.9.3 and 5.3.3 (read-gt-write/208_*)
            table[b.mq(t, q)] = _wrapper(b, group, t, q)
        tps += b.group_get_tps(group, t)  # this broker's share only
    return success(cmd, {"consumeTps": tps, "offsetTable": table})


def h_broker_consume_stats(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                           slave: bool) -> RemotingCommand:
    """GET_BROKER_CONSUME_STATS (317), AdminBrokerProcessor.fetchAllConsumeStatsInBroker
    (4.9.3 and 5.3.3; mqadmin brokerConsumeStats): every group of the subscription group table
    x every topic it has offsets for (ConsumerOffsetManager.whichTopicByConsumer), an online
    group's unsubscribed topics left out, queues ``0..writeQueueNums-1`` (not the read queues
    GET_CONSUME_STATS iterates), lastTimestamp only when the store has it, consumeTps =
    tpsGroupGetNums(group, topic). ``isOrder`` keeps the topics with order=true. The 5.x
    OffsetWrapper has a pullOffset field this handler never sets (0), so 5.x's
    totalInflightDiff (sum of pullOffset - consumerOffset) comes out negative."""
    is_order = hdr_bool(cmd, "isOrder")
    stats_list: list[dict[str, Any]] = []
    total = inflight = 0
    by_group: dict[str, set[str]] = {}  # whichTopicByConsumer, for every group at once
    for (t, g) in b.offsets:
        by_group.setdefault(g, set()).add(t)
    for gname in b.groups:
        per_topic = []
        info = b.group_info.get(gname)
        for t in sorted(by_group.get(gname, ())):
            conf = b.topics.get(t)
            if conf is None or (is_order and not conf.order):
                continue
            if info is not None and info.subs and t not in info.subs:
                continue
            table: dict[MessageQueue, Any] = {}
            for q in range(conf.write):
                mx = max(0, b.max_offset(t, q))
                co = b.committed(gname, t, q)
                co = 0 if co is None or co < 0 else co
                w: dict[str, Any] = {"brokerOffset": mx, "consumerOffset": co, "lastTimestamp": 0}
                if co > 0:
                    ts = b.msg_store_ts(t, q, co - 1)
                    if ts > 0:
                        w["lastTimestamp"] = ts
                if b.version >= V5_1_0:
                    w["pullOffset"] = 0
                    inflight += 0 - co
                table[b.mq(t, q)] = w
                total += mx - co
            per_topic.append({"consumeTps": b.group_get_tps(gname, t), "offsetTable": table})
        stats_list.append({gname: per_topic})
    addr = b.cluster.servers[b.name].addr if b.name in b.cluster.servers else ""
    body: dict[str, Any] = {"brokerAddr": addr, "consumeStatsList": stats_list, "totalDiff": total}
    if b.version >= V5_1_0:
        body["totalInflightDiff"] = inflight
    return success(cmd, body)


def h_view_stats(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                 slave: bool) -> RemotingCommand:
    """VIEW_BROKER_STATS_DATA (315), AdminBrokerProcessor.ViewBrokerStatsData (4.9.3 and
    5.3.3; mqadmin statsAll): the BrokerStatsManager item ``statsName``/``statsKey`` as
    BrokerStatsData {statsMinute, statsHour, statsDay: {sum, tps, avgpt}}, SYSTEM_ERROR ``The
    stats <name> <key> not exist`` when there is none. The sim keeps TOPIC_PUT_NUMS only:
    the producers' current rate over the topic's write queues on this broker (sum = rate x
    the window)."""
    name, key = hdr(cmd, "statsName") or "", hdr(cmd, "statsKey") or ""
    conf = b.topics.get(key)
    if name != "TOPIC_PUT_NUMS" or conf is None:
        return failure(cmd, R.SYSTEM_ERROR, f"The stats <{name}> <{key}> not exist")
    tps = float(sum(lg.segments[-1].rate for (t, q), lg in b.logs.items()
                    if t == key and q < conf.write))

    def item(window_s: int) -> dict[str, Any]:
        return {"avgpt": 0.0, "sum": int(tps * window_s), "tps": tps}

    return success(cmd, {"statsDay": item(86_400), "statsHour": item(3_600),
                         "statsMinute": item(60)})


def h_topic_stats(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                        slave: bool) -> RemotingCommand:
    topic = hdr(cmd, "topic") or ""
    conf = b.topics.get(topic)
    if conf is None:
        return failure(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
    table = {}
    # AdminBrokerProcessor.getTopicStatsInfo: the write queues only before 5.3.0
    # (4.9.3/read-gt-write/202_*), max(read, write) since apache/rocketmq#7951
    n = max(conf.read, conf.write) if b.version >= V5_3_0 else conf.write
    for q in range(n):
        mx = b.max_offset(topic, q)
        last = b.msg_store_ts(topic, q, mx - 1) if mx > 0 else 0
        table[b.mq(topic, q)] = {"lastUpdateTimestamp": last, "maxOffset": mx,
                                 "minOffset": b.min_offset(topic, q)}
    out: dict[str, Any] = {"offsetTable": table}
    if b.version >= V5_3_3:  # BrokerStatsManager.tpsTopicPutNums (apache/rocketmq#9297)
        out["topicPutTps"] = float(sum(lg.segments[-1].rate for (t, _), lg in b.logs.items()
                                       if t == topic))
    return success(cmd, out)


def h_time_span(b: BrokerState, cmd: RemotingCommand, conn: ServerConn,
                slave: bool) -> RemotingCommand:
    """AdminBrokerProcessor.queryConsumeTimeSpan, with the store's -1 for offsets it does not
    hold (so a queue without a committed offset gets delayTime = now + 1, as in RocketMQ)."""
    topic, group = hdr(cmd, "topic") or "", hdr(cmd, "group") or ""
    conf = b.topics.get(topic)
    if conf is None:
        return failure(cmd, R.TOPIC_NOT_EXIST, f"topic[{topic}] not exist")
    now = b.now()
    spans = []
    for q in range(conf.write):
        lg = b.qlog(topic, q)
        min_ts = lg.earliest_ts(now) if lg else -1
        mx = b.max_offset(topic, q)
        co = b.committed(group, topic, q)
        co = -1 if co is None else co
        consume_ts = b.msg_store_ts(topic, q, co - 1) if co > 0 else min_ts
        max_ts = b.msg_store_ts(topic, q, mx - 1)
        # QueueTimeSpan's getters add the *Str fields (never-committed/303_*)
        span = {"consumeTimeStamp": consume_ts, "consumeTimeStampStr": _human(consume_ts),
                "delayTime": 0, "maxTimeStamp": max_ts, "maxTimeStampStr": _human(max_ts),
                "messageQueue": b.mq(topic, q), "minTimeStamp": min_ts,
                "minTimeStampStr": _human(min_ts)}
        if co < mx:
            span["delayTime"] = now - b.msg_store_ts(topic, q, co)
        spans.append(span)
    return success(cmd, {"consumeTimeSpanSet": spans})


def _human(ms: int) -> str:
    """``UtilAll.timeMillisToHumanString3``-like ``yyyy-MM-dd#HH:mm:ss:SSS`` in the broker's
    time zone (UTC here, as on the machine that recorded the corpus)."""
    t = datetime.datetime.fromtimestamp(ms // 1000, datetime.UTC)
    return t.strftime("%Y-%m-%d#%H:%M:%S:") + f"{ms % 1000:03d}"


def h_max(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                ) -> RemotingCommand:
    return success(cmd, ext={"offset": b.max_offset(hdr(cmd, "topic") or "",
                                                    hdr_int(cmd, "queueId"))})


def h_min(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                ) -> RemotingCommand:
    # 5.x answers through RpcClientUtils.createCommandForRpcResponse: remark "" (31_*)
    return success(cmd, ext={"offset": b.min_offset(hdr(cmd, "topic") or "",
                                                    hdr_int(cmd, "queueId"))},
                   remark="" if b.version >= V5_0_0 else None)


def h_earliest(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                     ) -> RemotingCommand:
    topic, qid = hdr(cmd, "topic") or "", hdr_int(cmd, "queueId")
    lg = b.qlog(topic, qid)  # getEarliestMessageTime: -1 when the queue holds nothing
    return success(cmd, ext={"timestamp": lg.earliest_ts(b.now()) if lg else -1})


def h_search(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    boundary = (hdr(cmd, "boundaryType") or "LOWER").upper()
    off = b.search(hdr(cmd, "topic") or "", hdr_int(cmd, "queueId"), hdr_int(cmd, "timestamp"),
                   "UPPER" if boundary == "UPPER" else "LOWER")
    return success(cmd, ext={"offset": off})


def h_connection_list(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                            ) -> RemotingCommand:
    group = hdr(cmd, "consumerGroup") or ""
    members = b.members(group)
    if not members:
        return failure(cmd, R.CONSUMER_NOT_ONLINE, f"the consumer group[{group}] not online")
    info = b.group_info[group]  # ConsumerGroupInfo: the last heartbeat's group-level values
    return success(cmd, {
        "connectionSet": [{"clientAddr": m.addr, "clientId": m.client_id,
                           "language": m.language, "version": m.version} for m in members],
        "consumeFromWhere": info.consume_from_where, "consumeType": info.consume_type,
        "messageModel": info.message_model, "subscriptionTable": dict(info.subs)})


def h_consume_by_who(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                           ) -> RemotingCommand:
    topic = hdr(cmd, "topic") or ""
    # ConsumerManager.queryTopicConsumeByWho + ConsumerOffsetManager.whichGroupByTopic. 5.3.3
    # answers from ConsumerManager.topicGroupTable, where registerConsumer (and the heartbeat
    # v2 path, registerConsumerWithoutSub) add subscriptionData.getTopic(), the topic's own
    # name, instead of the group (apache/rocketmq#9352, first in 5.3.3; fixed after it by #9424
    # and #9444), and unregisterConsumer removes the group's name, which is not there: the
    # topic's name stays listed once a consumer subscribed it, and an online group shows up
    # only through its committed offsets (real 5.3.3: {"groupList":["G","T"]})
    if b.version >= V5_3_3:
        groups = set(b.topic_groups.get(topic, ()))
    else:
        groups = {g for g, info in b.group_info.items() if topic in info.subs}
    groups |= {g for (t, g) in b.offsets if t == topic}
    return success(cmd, {"groupList": sorted(groups)})


CLIENT_DEFAULT_REMARK = "not set any response code"  # RemotingCommand.createResponseCommand


def h_running_info(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool) -> Any:
    """AdminBrokerProcessor.callConsumer: find the client's channel in the group, check its
    version, forward the request (same extFields and body) and return the client's answer
    verbatim. A simulated client answers from its real state; a hung one never answers, so the
    forward times out (``RemotingTimeoutException``) after the scenario's
    ``running_info_timeout`` (RocketMQ: 10 s), and so does a ``silent`` one, which stays a
    member meanwhile."""
    group, cid = hdr(cmd, "consumerGroup") or "", hdr(cmd, "clientId") or ""
    ch = next((c for c in b.members(group) if c.client_id == cid), None)
    if ch is None:
        # other-requests/307_*_offline_client: code 1, the broker's own header
        return failure(cmd, R.SYSTEM_ERROR, f"The Consumer <{group}> <{cid}> not online").with_(
            version=b.version)
    if ch.version < V3_1_8_SNAPSHOT:
        return failure(cmd, R.SYSTEM_ERROR, f"The Consumer <{cid}> Version "
                       f"<{version_name(ch.version)}> too low to finish, please upgrade it to "
                       "V3_1_8_SNAPSHOT")
    timeout = b.cluster.scenario.running_info_timeout_s
    if ch.consumer is not None and not ch.consumer.hung and not ch.consumer.silent:
        sim = ch.consumer
        if sim.callbacks_busy:
            return _running_info_when_free(b, cmd, ch, group, cid, timeout)
        return _client_running_info(cmd, sim)
    return _forward_running_info(cmd, ch, group, cid, timeout)


def _client_running_info(cmd: RemotingCommand, sim: SimClient) -> RemotingCommand:
    """The client's answer, forwarded verbatim: ClientRemotingProcessor.
    getConsumerRunningInfo builds it with RemotingCommand.createResponseCommand(null), whose
    remark "not set any response code" stays when only the code is set to SUCCESS
    (running-info/307_*: code 0 with that remark on 4.9.3 and 5.3.3)."""
    return cmd.response(R.SUCCESS, CLIENT_DEFAULT_REMARK, None,
                        fastjson.dumps_fastjson(sim.running_info()).encode("utf-8"),
                        language=sim.spec.language, version=sim.spec.version)


def _timed_out(ch: Channel, group: str, cid: str, timeout: float) -> str:
    return (f"consumer <{group}> <{cid}> Timeout: org.apache.rocketmq.remoting.exception."
            f"RemotingTimeoutException: wait response on the channel <{ch.addr}> timeout, "
            f"{int(timeout * 1000)}(ms), org.apache.rocketmq.remoting.netty."
            "NettyRemotingAbstract.invokeSyncImpl(NettyRemotingAbstract.java:567)")


async def _running_info_when_free(b: BrokerState, cmd: RemotingCommand, ch: Channel, group: str,
                                  cid: str, timeout: float) -> RemotingCommand:
    """A client whose callback threads all hold a pushed reset answers when one is free (its
    current push applied), or the broker's forward times out first (Broker2Client.callClient:
    10 s): on the simulated clock, and never longer than ``timeout`` of real time."""
    loop = asyncio.get_running_loop()
    real_end = loop.time() + timeout
    sim_end = b.now() + int(timeout * 1000)
    sim = ch.consumer
    while sim is not None and sim.callbacks_busy:
        if loop.time() >= real_end or b.now() >= sim_end:
            return failure(cmd, R.CONSUME_MSG_TIMEOUT, _timed_out(ch, group, cid, timeout))
        await asyncio.sleep(0.01)
    if sim is None or sim.hung or sim.silent:
        return failure(cmd, R.CONSUME_MSG_TIMEOUT, _timed_out(ch, group, cid, timeout))
    return _client_running_info(cmd, sim)


async def _forward_running_info(cmd: RemotingCommand, ch: Channel, group: str, cid: str,
                                timeout: float) -> RemotingCommand:
    timed_out = _timed_out(ch, group, cid, timeout)
    if ch.conn is None:  # a hung simulated client: the request is sent, nothing comes back
        await asyncio.sleep(timeout)
        return failure(cmd, R.CONSUME_MSG_TIMEOUT, timed_out)
    fwd = RemotingCommand.request(C.GET_CONSUMER_RUNNING_INFO, dict(cmd.ext_fields or {}),
                                  cmd.body, language="JAVA")
    try:
        resp = await ch.conn.request(fwd, timeout)
    except TimeoutError:
        return failure(cmd, R.CONSUME_MSG_TIMEOUT, timed_out)
    except ConnectionError:
        return failure(cmd, R.SYSTEM_ERROR, f"invoke consumer <{group}> <{cid}> Exception: "
                       "org.apache.rocketmq.remoting.exception.RemotingSendRequestException: "
                       f"send request to <{ch.addr}> failed")
    return cmd.response(resp.code, resp.remark, resp.ext_fields, resp.body,
                        language=resp.language, version=resp.version)


def h_all_offsets(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                        ) -> RemotingCommand:
    table = {f"{t}@{g}": dict(sorted(v.items())) for (t, g), v in sorted(b.offsets.items())}
    if b.version < V5_0_0:  # ConsumerOffsetManager.encode: 4.9.3 has only the table (43_*)
        return success(cmd, {"offsetTable": table})
    gtm: dict[str, list[str]] = {}
    for (t, g) in b.offsets:
        gtm.setdefault(g, []).append(t)
    return success(cmd, {"dataVersion": _dv(b), "groupTopicMap": {g: sorted(ts) for g, ts in
                                                                gtm.items()},
                         "offsetTable": table})


def _dv(b: BrokerState) -> dict[str, Any]:
    """``DataVersion``: stateVersion came with 5.0.0 (RIP-29); 4.9.3 has counter+timestamp."""
    if b.version < V5_0_0:
        return {"counter": b.data_version, "timestamp": b.now()}
    return {"counter": b.data_version, "stateVersion": 0, "timestamp": b.now()}


def h_all_groups(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                       ) -> RemotingCommand:
    table = {}
    for g in sorted(b.groups.values(), key=lambda x: x.name):
        # SubscriptionGroupConfig: 4.9.3 has these 9 fields (other-requests/201_*)
        e: dict[str, Any] = {"brokerId": g.broker_id,
                             "consumeBroadcastEnable": g.consume_broadcast,
                             "consumeEnable": g.consume_enable,
                             "consumeFromMinEnable": g.consume_from_min,
                             "groupName": g.name,
                             "notifyConsumerIdsChangedEnable": g.notify_ids_changed,
                             "retryMaxTimes": g.retry_max_times,
                             "retryQueueNums": g.retry_queue_nums,
                             "whichBrokerWhenConsumeSlowly": g.which_broker_when_slowly}
        if b.version >= V5_0_0:
            e.update({"consumeMessageOrderly": g.orderly,
                      "consumeTimeoutMinute": g.consume_timeout_minute,
                      "groupRetryPolicy": dict(g.retry_policy), "groupSysFlag": 0})
        if b.version >= V5_1_3:
            e["attributes"] = {}
        table[g.name] = dict(sorted(e.items()))
    if b.version < V5_0_0:  # SubscriptionGroupManager has no forbiddenTable before 5.0.0
        return success(cmd, {"dataVersion": _dv(b), "subscriptionGroupTable": table})
    return success(cmd, {"dataVersion": _dv(b), "forbiddenTable": {},
                         "subscriptionGroupTable": table})


def h_all_topics(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                       ) -> RemotingCommand:
    def body(c: TopicConf) -> dict[str, Any]:
        d = c.to_body()
        if b.version < V5_0_0:  # 4.9.3's TopicConfig has no attributes (store-files/*_topics)
            d.pop("attributes", None)
        return d

    return success(cmd, {"dataVersion": _dv(b),
                         "topicConfigTable": {t: body(c) for t, c in sorted(b.topics.items())}})


def h_runtime(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                    ) -> RemotingCommand:
    table = {"brokerVersionDesc": version_name(b.version), "brokerVersion": str(b.version),
             "bootTimestamp": str(b.cluster.clock.start_ms), "msgPutTotalTodayNow": "0",
             # an idle broker's pull thread pool and page cache (both versions' 28_*)
             "pullThreadPoolQueueSize": "0", "pullThreadPoolQueueCapacity": "100000",
             "pullThreadPoolQueueHeadWaitTimeMills": "0", "pageCacheLockTimeMills": "0"}
    if b.version >= V5_0_0:  # not in 4.9.3's table (other-requests/28_*)
        table["brokerActive"] = "true"
    table.update(b.slave_runtime if slave else b.runtime)  # the scenario's reported entries
    return success(cmd, {"table": table})


def h_broker_config(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                          ) -> RemotingCommand:
    props = {"brokerClusterName": b.cluster.scenario.cluster, "brokerName": b.name,
             "brokerId": "1" if slave else "0",
             "notifyConsumerIdsChangedEnable": str(b.notify_ids_changed).lower(),
             "autoCreateSubscriptionGroup": str(b.auto_create_group).lower()}
    if b.version >= V5_1_0:  # BrokerConfig has no such field before RIP-48
        props["useServerSideResetOffset"] = str(b.server_side_reset).lower()
    text = "".join(f"{k}={v}\n" for k, v in sorted(props.items()))
    return cmd.response(R.SUCCESS, None, {"version": json.dumps(_dv(b))}, text.encode())


def _mq_set(body: Any) -> list[MessageQueue]:
    return [MessageQueue.from_dict(m) for m in (body.get("mqSet") or [])]


def h_lock(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                 ) -> RemotingCommand:
    body = fastjson.loads(cmd.body)
    ok = b.try_lock_batch(str(body.get("consumerGroup")), _mq_set(body),
                          str(body.get("clientId")))
    return success(cmd, {"lockOKMQSet": sorted(ok)})


def h_unlock(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    body = fastjson.loads(cmd.body)
    b.unlock_batch(str(body.get("consumerGroup")), _mq_set(body), str(body.get("clientId")))
    return success(cmd)


def h_reset(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
            ) -> RemotingCommand:
    """INVOKE_BROKER_TO_RESET_OFFSET: AdminBrokerProcessor.resetOffset (5.x): the server-side
    path (``resetOffsetInner``) when ``useServerSideResetOffset``, else Broker2Client's."""
    topic, group = hdr(cmd, "topic") or "", hdr(cmd, "group") or ""
    ts = hdr_int(cmd, "timestamp", -1)
    if b.server_side_reset:
        if slave:
            return failure(cmd, R.SYSTEM_ERROR, "Can not reset offset in slave broker")
        return _reset_server_side(b, cmd, topic, group, ts)
    return _reset_legacy(b, cmd, topic, group, ts, hdr_bool(cmd, "isForce"),
                         cmd.language == "CPP")


def _reset_server_side(b: BrokerState, cmd: RemotingCommand, topic: str, group: str,
                       ts: int) -> RemotingCommand:
    conf = b.topics.get(topic)
    if conf is None:
        return failure(cmd, R.TOPIC_NOT_EXIST, f"Topic {topic} does not exist")
    if group not in b.groups:
        return failure(cmd, R.SUBSCRIPTION_GROUP_NOT_EXIST, f"Group {group} does not exist")
    qid = hdr_int(cmd, "queueId", -1)
    explicit = hdr(cmd, "offset")
    targets: dict[int, int] = {}
    if qid >= 0:
        off = int(explicit) if explicit not in (None, "", "-1") else None
        if off is not None:
            mn, mx = b.min_offset(topic, qid), b.max_offset(topic, qid)
            if not mn <= off <= mx + 1:
                return failure(cmd, R.SYSTEM_ERROR, f"Target offset {off} not in consume queue "
                               f"range [{mn}-{mx}]")
            targets[qid] = off
        else:
            targets[qid] = b.max_offset(topic, qid) if ts < 0 else b.search(topic, qid, ts)
    else:
        for q in range(conf.read):
            targets[q] = b.max_offset(topic, q) if ts < 0 else b.search(topic, q, ts)
    for q, off in targets.items():
        # ConsumerOffsetManager.assignResetOffset: the reset table and the offset table; the
        # pull offset table is left alone (cleared only with popConsumerKVServiceEnable), so
        # 208's pullOffset still reads the old position (5.3.3/reset/208_after_*: 0 and 50)
        b.resets.setdefault((topic, group), {})[q] = off
        b.offsets.setdefault((topic, group), {})[q] = off
    # the members' pulls held by long polling return as soon as a message arrives
    # (PullRequestHoldService.notifyMessageArriving; pops likewise), and the next pull of the
    # queue takes the reset: on a queue that is being written that is within moments
    live = [b.mq(topic, q) for q in targets
            if (lg := b.qlog(topic, q)) is not None and lg.segments
            and lg.segments[-1].rate > 0]
    for m in b.members(group) if live else []:
        if m.consumer is not None:
            m.consumer.wake_pulls(live)
    return success(cmd, {"offsetTable": {b.mq(topic, q): off
                                         for q, off in sorted(targets.items())}})


def _reset_legacy(b: BrokerState, cmd: RemotingCommand, topic: str, group: str, ts: int,
                  force: bool, for_c: bool) -> RemotingCommand:
    """Broker2Client.resetOffset: computes the target per queue (``isForce || target <
    current``), pushes RESET_CONSUMER_CLIENT_OFFSET to every member and writes nothing itself
    (the clients commit after their 10 s pause). Needs online members."""
    conf = b.topics.get(topic)
    if conf is None:
        return failure(cmd, R.SYSTEM_ERROR, "[reset-offset] reset offset failed, no topic in this "
                       f"broker. topic={topic}")
    table: dict[MessageQueue, int] = {}
    for q in range(conf.write):
        current = b.committed(group, topic, q)
        if current is None or current == -1:
            return failure(cmd, R.SYSTEM_ERROR, f"THe consumer group <{group}> not exist")
        target = b.max_offset(topic, q) if ts == -1 else b.search(topic, q, ts)
        target = max(0, target)  # "reset offset is invalid" -> 0
        table[b.mq(topic, q)] = target if (force or target < current) else current
    members = b.members(group)
    if not members:
        return failure(cmd, R.CONSUMER_NOT_ONLINE, f"Consumer not online, so can not reset offset, "
                       f"Group: {group} Topic: {topic} Timestamp: {ts}")
    body = ({"offsetTable": [{**mq.to_dict(), "offset": off} for mq, off in table.items()]}
            if for_c else {"offsetTable": table})
    for m in members:
        if m.version < V3_0_7_SNAPSHOT:
            return failure(cmd, R.SYSTEM_ERROR, "the client does not support this feature. "
                           f"version={version_name(m.version)}")
        if m.consumer is not None:
            m.consumer.reset_offset(b.cluster.servers[b.name].addr, topic, ts, dict(table))
        elif m.conn is not None:
            m.conn.oneway(RemotingCommand.request(
                C.RESET_CONSUMER_CLIENT_OFFSET, {"topic": topic, "group": group,
                                                 "timestamp": ts},
                fastjson.dumps_fastjson(body).encode("utf-8"), language="JAVA"))
    return success(cmd, {"offsetTable": table})


# SubscriptionGroupConfig's JSON fields -> GroupConf's attributes (the sim keeps `orderly` as
# the 5.x consumeMessageOrderly); a field the body leaves out takes the Java default
_GROUP_FIELDS = {"consumeEnable": ("consume_enable", True),
                 "consumeFromMinEnable": ("consume_from_min", True),
                 "consumeBroadcastEnable": ("consume_broadcast", True),
                 "retryQueueNums": ("retry_queue_nums", 1),
                 "retryMaxTimes": ("retry_max_times", 16),
                 "brokerId": ("broker_id", 0),
                 "whichBrokerWhenConsumeSlowly": ("which_broker_when_slowly", 1),
                 "notifyConsumerIdsChangedEnable": ("notify_ids_changed", True)}
_GROUP_FIELDS_5 = {"consumeMessageOrderly": ("orderly", False),
                   "consumeTimeoutMinute": ("consume_timeout_minute", 15)}


def h_update_group(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    """UPDATE_AND_CREATE_SUBSCRIPTIONGROUP as AdminBrokerProcessor.updateAndCreateSubscription
    Group answers it (4.9.3, 5.3.3): the body is decoded into a whole SubscriptionGroupConfig
    (a field it leaves out takes the Java default) that replaces the group's
    (SubscriptionGroupManager.updateSubscriptionGroupConfig: created if new, persisted, the
    dataVersion moves); SUCCESS with no remark. An undecodable body is the processor's
    exception (SYSTEM_ERROR)."""
    if slave:
        return failure(cmd, R.SYSTEM_ERROR, "the slave does not take config changes")
    body = fastjson.loads(cmd.body or b"{}")
    if not isinstance(body, dict) or not isinstance(body.get("groupName"), str):
        raise ValueError("SubscriptionGroupConfig without a groupName")
    name = body["groupName"]
    old = b.groups.get(name)
    conf = GroupConf(name) if old is None else old
    fields = dict(_GROUP_FIELDS, **(_GROUP_FIELDS_5 if b.version >= V5_0_0 else {}))
    for key, (attr, default) in fields.items():
        setattr(conf, attr, body.get(key, default))
    if b.version >= V5_0_0:
        conf.retry_policy = dict(body.get("groupRetryPolicy") or {"type": "CUSTOMIZED"})
    b.groups[name] = conf
    b.data_version += 1
    return success(cmd)


def h_clone_offset(b: BrokerState, cmd: RemotingCommand, conn: ServerConn, slave: bool
                   ) -> RemotingCommand:
    """CLONE_GROUP_OFFSET as AdminBrokerProcessor.cloneGroupOffset answers it (4.9.3, 5.3.3):
    the topics are the request's, or (none given) every topic the source group has offsets
    of; a topic the broker does not have is skipped; unless ``offline``, a source group that is
    online and does not subscribe the topic is skipped; then ConsumerOffsetManager.cloneOffset
    (src, dest, <the request's topic>) replaces dest's offset table of the topic with a copy of
    src's (dest's queues src has no offset for are dropped; src without any: nothing).
    SUCCESS in every case."""
    src, dest = hdr(cmd, "srcGroup") or "", hdr(cmd, "destGroup") or ""
    topic, offline = hdr(cmd, "topic") or "", hdr_bool(cmd, "offline")
    topics = [topic] if topic else [t for (t, g) in b.offsets if g == src]
    for t in topics:
        if t not in b.topics:
            continue
        if not offline and b.consumer_ids(src) and b.subscription(src, t) is None:
            continue
        offs = b.offsets.get((topic, src))  # (the request's topic, as the Java code has it)
        if offs is not None:
            b.offsets[(topic, dest)] = dict(offs)
    return success(cmd)
