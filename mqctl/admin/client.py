"""The :class:`Admin` client: high-level, read-only admin operations over the remoting client.

Each method sends the same requests ``mqadmin`` (``DefaultMQAdminExtImpl``) would, with the
header fields of apache/rocketmq ``remoting/.../protocol/header/*RequestHeader.java``:

* name server calls try every configured address in turn until one answers;
* broker calls go to the master (brokerId 0) of each ``BrokerData`` (``selectBrokerAddr``);
* group-scoped fan-out is concurrent and bounded (:mod:`mqctl.admin.fanout`), and per-broker
  failures are returned next to the successes (``BrokerFailure``, :mod:`mqctl.admin.failures`)
  so commands can print what they got and exit with the partial-failure code.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any, TypeVar

from mqctl.admin.decode import ext_offset, json_body
from mqctl.admin.failures import BrokerFailure, NotFoundError
from mqctl.admin.fanout import per_broker
from mqctl.admin.pull import read_pull_fields
from mqctl.errors import (
    BodyError,
    BrokerError,
    ConnectError,
    MqctlError,
    ProtocolError,
    RequestTimeout,
    UsageError,
)
from mqctl.models import (
    RETRY_PREFIX,
    BrokerData,
    ClusterInfo,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    MessageQueue,
    QueueTimeSpan,
    TopicRoute,
    TopicStats,
)
from mqctl.remoting import fastjson
from mqctl.remoting.client import RemotingClient, fan_out
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.remoting.frame import RemotingCommand
from mqctl.timeparse import now_ms

T = TypeVar("T")

# GET_ALL_CONSUMER_OFFSET's table grows with groups x topics: give it the time a big
# subscription table gets
ALL_OFFSETS_MIN_TIMEOUT_S = 10.0

UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"  # MixAll.UNIQUE_MSG_QUERY_FLAG

# GET_CONSUMER_RUNNING_INFO is forwarded by the broker to the client with its own timeout
# (Broker2Client: 10 s in 5.x); give it room beyond the per-request default.
RUNNING_INFO_MIN_TIMEOUT = 5.0


class Admin:
    def __init__(self, client: RemotingClient, namesrv: Sequence[str] | str, *,
                 concurrency: int = 16):
        if isinstance(namesrv, str):
            namesrv = [p.strip() for p in namesrv.split(";") if p.strip()]
        if not namesrv:
            raise UsageError("no name server address", hint="pass --namesrv or set NAMESRV_ADDR")
        self.client = client
        self.namesrv = list(namesrv)
        self.concurrency = concurrency
        self._routes: dict[str, TopicRoute] = {}

    # ----------------------------------------------------------------------------- name server

    async def namesrv_invoke(self, code: int, ext: dict[str, Any] | None = None,
                             **kw: Any) -> RemotingCommand:
        """Ask each name server in turn (as the Java client rotates on failure)."""
        last: ConnectError | None = None
        for addr in self.namesrv:
            try:
                return await self.client.invoke(addr, code, ext, idempotent=True, **kw)
            except RequestTimeout as exc:  # the transport's hint speaks of a broker
                exc.hint = (f"the name server {addr} did not answer in time: check that it is "
                            "up and is a RocketMQ name server (-n / NAMESRV_ADDR; port 9876 by "
                            "default), or raise --timeout if it is slow")
                last = exc
            except ConnectError as exc:
                last = exc
        assert last is not None
        if len(self.namesrv) > 1:
            raise ConnectError(f"no name server answered ({'; '.join(self.namesrv)}): "
                               f"{last.message}", addr=last.addr,
                               hint="check --namesrv / NAMESRV_ADDR") from last
        raise last

    async def topic_route(self, topic: str, *, cached: bool = True) -> TopicRoute:
        if cached and topic in self._routes:
            return self._routes[topic]
        try:
            resp = await self.namesrv_invoke(RequestCode.GET_ROUTEINFO_BY_TOPIC, {"topic": topic})
        except BrokerError as exc:
            if exc.code == ResponseCode.TOPIC_NOT_EXIST:
                raise NotFoundError(f"topic {topic!r} has no route on the name server",
                                    hint="check the name with `mqctl topics`") from None
            raise
        route = TopicRoute.from_body(topic, json_body(resp, f"route of {topic}"))
        self._routes[topic] = route
        return route

    def cached_route(self, topic: str) -> TopicRoute | None:
        """The route of ``topic`` if this Admin already read it (no request)."""
        return self._routes.get(topic)

    async def cluster_info(self) -> ClusterInfo:
        resp = await self.namesrv_invoke(RequestCode.GET_BROKER_CLUSTER_INFO)
        return ClusterInfo.from_body(json_body(resp, "cluster info"))

    async def topic_list(self) -> list[str]:
        resp = await self.namesrv_invoke(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)
        body = json_body(resp, "topic list")
        topics = body.get("topicList") if isinstance(body, dict) else None
        return sorted(str(t) for t in (topics or []))

    # ------------------------------------------------------------------------- broker choice

    async def group_route(self, group: str) -> TopicRoute | None:
        """Route of ``%RETRY%<group>``: the brokers the group's consumers heartbeat to.

        ``None`` when the retry topic has no route (the group never ran a push consumer).
        """
        try:
            return await self.topic_route(RETRY_PREFIX + group)
        except NotFoundError:
            return None

    async def group_brokers(self, group: str, topics: Iterable[str] = ()) -> list[BrokerData]:
        """Every broker that may know the group: its topics' brokers and its retry topic's."""
        brokers: dict[str, BrokerData] = {}
        for t in topics:
            for b in (await self.topic_route(t)).brokers:
                brokers.setdefault(b.broker_name, b)
        gr = await self.group_route(group)
        if gr is not None:
            for b in gr.brokers:
                brokers.setdefault(b.broker_name, b)
        if not brokers:
            info = await self.cluster_info()
            brokers = dict(info.brokers)
        return [brokers[k] for k in sorted(brokers)]

    @staticmethod
    def master(b: BrokerData) -> str | None:
        return b.master_addr

    # --------------------------------------------------------------------------- membership

    async def consumer_ids(self, group: str, addr: str) -> list[str]:
        """GET_CONSUMER_LIST_BY_GROUP; an empty list when the broker knows no member."""
        try:
            resp = await self.client.invoke(addr, RequestCode.GET_CONSUMER_LIST_BY_GROUP,
                                            {"consumerGroup": group}, idempotent=True)
        except BrokerError as exc:
            # ConsumerManageProcessor: SYSTEM_ERROR "no consumer for this group, <g>"
            if exc.code == ResponseCode.SYSTEM_ERROR and "no consumer" in (exc.remark or ""):
                return []
            raise
        body = json_body(resp, "consumer id list")
        ids = body.get("consumerIdList") if isinstance(body, dict) else None
        return [str(x) for x in (ids or [])]

    async def members_by_broker(self, group: str, brokers: Sequence[BrokerData] | TopicRoute
                                ) -> dict[str, list[str] | BrokerFailure]:
        """Ask EVERY broker for the member list (a real client asks one at random)."""
        return await self._per_broker(brokers, lambda addr: self.consumer_ids(group, addr))

    async def _per_broker(self, brokers: Sequence[BrokerData] | TopicRoute,
                          fn: Callable[[str], Awaitable[T]]) -> dict[str, T | BrokerFailure]:
        """``fn(master address)`` on every broker, concurrently and bounded; a broker that
        fails (or has no address) maps to a :class:`BrokerFailure` instead of a value."""
        return await per_broker(brokers, fn, concurrency=self.concurrency)

    async def consumer_connection(self, group: str,
                                  target: str | TopicRoute | Sequence[BrokerData]
                                  ) -> ConsumerConnection | None:
        """GET_CONSUMER_CONNECTION_LIST; ``None`` when the group is not online.

        ``target`` is a broker address, or a route / broker list: then the brokers are asked in
        turn and the first that knows the group online answers.
        """
        if not isinstance(target, str):
            blist = list(target.brokers) if isinstance(target, TopicRoute) else list(target)
            last: MqctlError | None = None
            answered = False
            for b in blist:
                addr = b.master_addr or b.select_addr()
                if not addr:
                    continue
                try:
                    conn = await self.consumer_connection(group, addr)
                except (ConnectError, BrokerError) as exc:
                    last = exc
                    continue
                answered = True
                if conn is not None:
                    return conn
            if not answered and last is not None:
                raise last
            return None
        addr = target
        try:
            resp = await self.client.invoke(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST,
                                            {"consumerGroup": group}, idempotent=True)
        except BrokerError as exc:
            if exc.code == ResponseCode.CONSUMER_NOT_ONLINE:
                return None
            raise
        return ConsumerConnection.from_body(json_body(resp, "consumer connection"))

    async def connections_by_broker(self, group: str, brokers: Sequence[BrokerData]
                                    ) -> dict[str, ConsumerConnection | BrokerFailure | None]:
        return await self._per_broker(brokers,
                                      lambda addr: self.consumer_connection(group, addr))

    async def running_info(self, group: str, client_id: str, addr: str, *,
                           jstack: bool = False) -> ConsumerRunningInfo:
        timeout = max(self.client.options.timeout, RUNNING_INFO_MIN_TIMEOUT)
        resp = await self.client.invoke(
            addr, RequestCode.GET_CONSUMER_RUNNING_INFO,
            {"consumerGroup": group, "clientId": client_id, "jstackEnable": jstack},
            timeout=timeout, idempotent=True)
        received = now_ms()  # this client's own moment, not the end of a longer fan-out
        info = ConsumerRunningInfo.from_body(json_body(resp, f"running info of {client_id}"))
        return replace(info, received_ts=received)

    async def running_infos(self, group: str, client_ids: Iterable[str],
                            brokers: Sequence[BrokerData] | TopicRoute
                            ) -> dict[str, ConsumerRunningInfo | MqctlError]:
        """GET_CONSUMER_RUNNING_INFO of each client, through a broker that knows it.

        The broker forwards the request over the client's own connection; any broker the client
        heartbeats to can do it, so a failing broker is retried on the next one.
        """
        blist = list(brokers.brokers) if isinstance(brokers, TopicRoute) else list(brokers)
        addrs = [a for a in (b.master_addr or b.select_addr() for b in blist) if a]
        if not addrs:
            raise ConnectError("no broker address to ask for running info")

        async def one(cid: str) -> ConsumerRunningInfo:
            last: MqctlError | None = None
            for addr in addrs:
                try:
                    return await self.running_info(group, cid, addr)
                except ConnectError as exc:
                    last = exc
                except BrokerError as exc:
                    last = exc
                    # "not online" on this broker: try the next; others are final
                    if exc.code != ResponseCode.SYSTEM_ERROR or "not online" not in (
                            exc.remark or ""):
                        raise
            assert last is not None
            raise last

        out: dict[str, ConsumerRunningInfo | MqctlError] = {}
        for o in await fan_out(sorted(set(client_ids)), one, concurrency=self.concurrency):
            out[o.item] = o.value if o.ok else o.error  # type: ignore[assignment]
        return out

    # ------------------------------------------------------------------------------- offsets

    async def consume_stats(self, group: str, addr: str, topic: str | None = None
                            ) -> ConsumeStats:
        ext: dict[str, Any] = {"consumerGroup": group}
        if topic:
            ext["topic"] = topic
        resp = await self.client.invoke(addr, RequestCode.GET_CONSUME_STATS, ext,
                                        idempotent=True)
        return ConsumeStats.from_body(json_body(resp, "consume stats"))

    async def topic_stats(self, topic: str, addr: str) -> TopicStats:
        resp = await self.client.invoke(addr, RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic},
                                        idempotent=True)
        return TopicStats.from_body(json_body(resp, "topic stats"))

    async def topic_stats_tps(self, topic: str, addr: str) -> tuple[TopicStats, float | None]:
        """GET_TOPIC_STATS_INFO and the broker's ``topicPutTps`` (the topic's produce TPS on
        this broker, BrokerStatsManager.tpsTopicPutNums; 5.3.3 sends it, 4.9.3 does not:
        corpus */read-gt-write/202_*): ``None`` when absent, never 0."""
        resp = await self.client.invoke(addr, RequestCode.GET_TOPIC_STATS_INFO, {"topic": topic},
                                        idempotent=True)
        body = json_body(resp, "topic stats")
        tps = body.get("topicPutTps") if isinstance(body, dict) else None
        put = float(tps) if isinstance(tps, (int, float)) and not isinstance(tps, bool) else None
        return TopicStats.from_body(body), put

    async def topic_put_tps(self, topic: str, addr: str) -> float:
        """VIEW_BROKER_STATS_DATA (315) TOPIC_PUT_NUMS ``topic``, as mqadmin statsAll: the
        topic's produce TPS on this broker over the last minute (statsMinute.tps), on every
        version (4.x sends no topicPutTps in GET_TOPIC_STATS_INFO). A broker that has no such
        stats item (``The stats <TOPIC_PUT_NUMS> <t> not exist``: no message put since it
        started) answers SYSTEM_ERROR: that is 0."""
        try:
            resp = await self.client.invoke(addr, RequestCode.VIEW_BROKER_STATS_DATA,
                                            {"statsName": "TOPIC_PUT_NUMS", "statsKey": topic},
                                            idempotent=True)
        except BrokerError as exc:
            if exc.code == ResponseCode.SYSTEM_ERROR and "not exist" in (exc.remark or ""):
                return 0.0
            raise
        body = json_body(resp, "broker stats")
        minute = body.get("statsMinute") if isinstance(body, dict) else None
        tps = minute.get("tps") if isinstance(minute, dict) else None
        if not isinstance(tps, (int, float)) or isinstance(tps, bool):
            raise ProtocolError(f"broker stats of {topic}: no statsMinute.tps")
        return float(tps)

    async def time_spans(self, topic: str, group: str, addr: str) -> list[QueueTimeSpan]:
        resp = await self.client.invoke(addr, RequestCode.QUERY_CONSUME_TIME_SPAN,
                                        {"topic": topic, "group": group}, idempotent=True)
        body = json_body(resp, "consume time span")
        spans = body.get("consumeTimeSpanSet") if isinstance(body, dict) else None
        return [QueueTimeSpan.from_body(s) for s in (spans or [])]

    async def query_offset(self, group: str, mq: MessageQueue, addr: str) -> int | None:
        """Committed offset, or ``None`` when the broker has none (pure read:
        ``setZeroIfNotFound=false``)."""
        try:
            resp = await self.client.invoke(
                addr, RequestCode.QUERY_CONSUMER_OFFSET,
                {"consumerGroup": group, "topic": mq.topic, "queueId": mq.queue_id,
                 "setZeroIfNotFound": False, "bname": mq.broker_name}, idempotent=True)
        except BrokerError as exc:
            if exc.code == ResponseCode.QUERY_NOT_FOUND:
                return None
            raise
        return ext_offset(resp)

    async def max_offset(self, mq: MessageQueue, addr: str) -> int:
        resp = await self.client.invoke(
            addr, RequestCode.GET_MAX_OFFSET,
            {"topic": mq.topic, "queueId": mq.queue_id, "committed": True,
             "bname": mq.broker_name}, idempotent=True)
        return ext_offset(resp)

    async def min_offset(self, mq: MessageQueue, addr: str) -> int:
        resp = await self.client.invoke(
            addr, RequestCode.GET_MIN_OFFSET,
            {"topic": mq.topic, "queueId": mq.queue_id, "bname": mq.broker_name},
            idempotent=True)
        return ext_offset(resp)

    async def search_offset(self, mq: MessageQueue, timestamp_ms: int, addr: str, *,
                            boundary: str = "LOWER") -> int:
        """SEARCH_OFFSET_BY_TIMESTAMP: LOWER = first message stored at or after the time."""
        resp = await self.client.invoke(
            addr, RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
            {"topic": mq.topic, "queueId": mq.queue_id, "timestamp": timestamp_ms,
             "boundaryType": boundary, "bname": mq.broker_name}, idempotent=True)
        return ext_offset(resp)

    async def all_consumer_offsets(self, addr: str) -> Any:
        """GET_ALL_CONSUMER_OFFSET (43): the broker's whole offset table, decoded
        (``ConsumerOffsetSerializeWrapper``: ``offsetTable`` maps ``topic@group`` to
        ``{queueId: offset}``, committed queues only; 5.x adds ``dataVersion`` and
        ``groupTopicMap``). It grows with groups x topics: at least
        ALL_OFFSETS_MIN_TIMEOUT_S. An empty body is a BodyError. Read-only
        (AdminBrokerProcessor.getAllConsumerOffset; the rule that reads it is
        :func:`mqctl.views.offsets.committed_offsets`)."""
        resp = await self.client.invoke(
            addr, RequestCode.GET_ALL_CONSUMER_OFFSET, idempotent=True,
            timeout=max(self.client.options.timeout, ALL_OFFSETS_MIN_TIMEOUT_S))
        if not resp.body:
            raise BodyError("GET_ALL_CONSUMER_OFFSET: empty body")
        return fastjson.loads(resp.body)

    async def broker_config(self, addr: str) -> dict[str, str]:
        """GET_BROKER_CONFIG: the broker's properties (body is ``key=value`` lines)."""
        resp = await self.client.invoke(addr, RequestCode.GET_BROKER_CONFIG, idempotent=True)
        props: dict[str, str] = {}
        for line in resp.body.decode("utf-8", "replace").splitlines():
            line = line.strip()
            if not line or line.startswith(("#", "!")):
                continue
            k, sep, v = line.partition("=")
            if sep:
                props[k.strip()] = v.strip()
        return props

    async def broker_version(self, addr: str) -> int | None:
        """GET_BROKER_RUNTIME_INFO ``brokerVersion``: the broker's MQVersion ordinal, None when
        the KVTable does not carry a number."""
        resp = await self.client.invoke(addr, RequestCode.GET_BROKER_RUNTIME_INFO,
                                        idempotent=True)
        body = json_body(resp, "broker runtime info")
        table = body.get("table") if isinstance(body, dict) else None
        v = table.get("brokerVersion") if isinstance(table, dict) else None
        try:
            return int(v) if v is not None else None
        except (TypeError, ValueError):
            return None

    async def broker_runtime_info(self, addr: str) -> dict[str, str]:
        """GET_BROKER_RUNTIME_INFO: the broker's whole KVTable (AdminBrokerProcessor.
        prepareRuntimeInfo: thread-pool queues and their head wait, page-cache lock time,
        commit log offsets, ...; 46 entries on 4.9.3, 60 on 5.3.3: corpus
        other-requests/28_*), as strings. Read-only."""
        resp = await self.client.invoke(addr, RequestCode.GET_BROKER_RUNTIME_INFO,
                                        idempotent=True)
        body = json_body(resp, "broker runtime info")
        table = body.get("table") if isinstance(body, dict) else None
        if not isinstance(table, dict):
            raise ProtocolError("broker runtime info: no table")
        return {str(k): str(v) for k, v in table.items()}

    async def topic_config_table(self, addr: str) -> dict[str, dict[str, Any]]:
        """GET_ALL_TOPIC_CONFIG (21): every TopicConfig of the broker by topic name
        (TopicConfigSerializeWrapper ``{topicConfigTable, dataVersion}``; 5.x configs carry
        ``attributes``, 4.9.3 ones do not: real store-files/broker-a_topics.json). Read-only."""
        return await self._config_table(addr, RequestCode.GET_ALL_TOPIC_CONFIG, "topic configs",
                                        "topicConfigTable")

    async def subscription_groups(self, addr: str) -> list[str]:
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG without paging fields: the whole table (every
        version answers that way; sending dataVersion without groupSeq breaks 5.3 brokers)."""
        resp = await self.client.invoke(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
                                        idempotent=True,
                                        timeout=max(self.client.options.timeout, 10.0))
        body = json_body(resp, "subscription groups")
        table = body.get("subscriptionGroupTable") if isinstance(body, dict) else None
        return sorted(str(g) for g in (table or {}))

    async def broker_consume_stats(self, addr: str, *, is_order: bool = False) -> Any:
        """GET_BROKER_CONSUME_STATS (317), as mqadmin brokerConsumeStats: the consume stats of
        every group of one broker in one answer (AdminBrokerProcessor.
        fetchAllConsumeStatsInBroker; body ConsumeStatsList ``{brokerAddr, consumeStatsList:
        [{group: [ConsumeStats per topic]}], totalDiff}``). Heavy on big brokers: mqadmin waits
        up to 50 s, so at least 10 s here. Returns the decoded body."""
        resp = await self.client.invoke(addr, RequestCode.GET_BROKER_CONSUME_STATS,
                                        {"isOrder": is_order}, idempotent=True,
                                        timeout=max(self.client.options.timeout, 10.0))
        return json_body(resp, "broker consume stats")

    async def topics_consumed_by(self, topic: str, addr: str) -> list[str]:
        resp = await self.client.invoke(addr, RequestCode.QUERY_TOPIC_CONSUME_BY_WHO,
                                        {"topic": topic}, idempotent=True)
        body = json_body(resp, "group list")
        groups = body.get("groupList") if isinstance(body, dict) else None
        return sorted(str(g) for g in (groups or []))

    async def subscription_group_table(self, addr: str) -> dict[str, dict[str, Any]]:
        """GET_ALL_SUBSCRIPTIONGROUP_CONFIG: every SubscriptionGroupConfig of the broker, by
        group name. This, not GET_SUBSCRIPTIONGROUP_CONFIG (352, 5.x), is how to read one
        group: 352 goes through SubscriptionGroupManager.findSubscriptionGroupConfig, which
        CREATES a group it does not know when autoCreateSubscriptionGroup is on (the default),
        so a misspelt name would leave a new group behind (mqadmin's
        DefaultMQAdminExtImpl.examineSubscriptionGroupConfig reads the whole table too)."""
        return await self._config_table(addr, RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
                                        "subscription groups", "subscriptionGroupTable")

    async def _config_table(self, addr: str, code: int, what: str, key: str
                            ) -> dict[str, dict[str, Any]]:
        """One of the broker's config tables (``key`` of the answer), by name; an entry that is
        not an object reads as ``{}``. At least 10 s: the tables of big brokers are large."""
        resp = await self.client.invoke(addr, code, idempotent=True,
                                        timeout=max(self.client.options.timeout, 10.0))
        body = json_body(resp, what)
        table = body.get(key) if isinstance(body, dict) else None
        if table is not None and not isinstance(table, dict):
            raise ProtocolError(f"{what}: {key} is not an object")
        return {str(n): (c if isinstance(c, dict) else {}) for n, c in (table or {}).items()}

    async def pull_message(self, mq: MessageQueue, offset: int, addr: str, *,
                           max_nums: int = 1) -> RemotingCommand:
        """One PULL_MESSAGE that moves no group's offset (:func:`mqctl.admin.pull.read_pull_fields`:
        group TOOLS_CONSUMER, no commit flag, no suspend flag). SUCCESS (FOUND),
        PULL_NOT_FOUND, PULL_RETRY_IMMEDIATELY and PULL_OFFSET_MOVED are answers about the
        offset and come back as they are; any other code raises BrokerError."""
        return await self.client.invoke(
            addr, RequestCode.PULL_MESSAGE, read_pull_fields(mq, offset, max_nums),
            idempotent=True,
            ok_codes=(ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND,
                      ResponseCode.PULL_RETRY_IMMEDIATELY, ResponseCode.PULL_OFFSET_MOVED))

    async def query_message(self, addr: str, topic: str, key: str, *, max_num: int,
                            begin_ms: int, end_ms: int, unique: bool) -> RemotingCommand:
        """QUERY_MESSAGE (12): the broker's index by ``topic#key``, as MQAdminImpl.queryMessage
        asks it (QueryMessageRequestHeader topic, key, maxNum, beginTimestamp, endTimestamp,
        and ``_UNIQUE_KEY_QUERY`` = true/false: with true the broker takes its
        defaultQueryMaxNum instead of maxNum). SUCCESS carries the records back to back;
        QUERY_NOT_FOUND (nothing in the window) comes back as it is. Read-only
        (QueryMessageProcessor)."""
        return await self.client.invoke(
            addr, RequestCode.QUERY_MESSAGE,
            {"topic": topic, "key": key, "maxNum": max_num, "beginTimestamp": begin_ms,
             "endTimestamp": end_ms, UNIQUE_MSG_QUERY_FLAG: "true" if unique else "false"},
            idempotent=True, ok_codes=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))

    async def view_message(self, addr: str, commit_log_offset: int) -> RemotingCommand | None:
        """VIEW_MESSAGE_BY_ID (33): the record at a commit-log offset (the second half of an
        offset message id, MessageDecoder.decodeMessageId), ``None`` when the broker holds
        none there (SYSTEM_ERROR "can not find message by the offset"). Read-only."""
        try:
            return await self.client.invoke(addr, RequestCode.VIEW_MESSAGE_BY_ID,
                                            {"offset": commit_log_offset}, idempotent=True)
        except BrokerError as exc:
            if exc.code == ResponseCode.SYSTEM_ERROR and "can not find message" in (
                    exc.remark or ""):
                return None
            raise

    async def send_message(self, addr: str, header: dict[str, Any], body: bytes
                           ) -> RemotingCommand:
        """SEND_MESSAGE_V2 (310, :func:`mqctl.remoting.send.send_header`), never sent twice
        (not idempotent: an answer that did not come is unknown). SUCCESS and the stored-but-
        not-flushed codes come back as they are (``MQClientAPIImpl.processSendResponse``);
        another code raises BrokerError with the broker's remark."""
        return await self.client.invoke(
            addr, RequestCode.SEND_MESSAGE_V2, header, body,
            ok_codes=(ResponseCode.SUCCESS, ResponseCode.FLUSH_DISK_TIMEOUT,
                      ResponseCode.FLUSH_SLAVE_TIMEOUT, ResponseCode.SLAVE_NOT_AVAILABLE))

    async def paused_pull(self, group: str, addr: str) -> RemotingCommand:
        """One PULL_MESSAGE with ``group``'s name, to see a pause's effect: only for a broker
        where the group's consumeEnable was just read back as false. 4.9.3 and 5.x
        PullMessageProcessor then answer NO_PERMISSION "subscription group no permission"
        (raised as BrokerError) before the topic, queue or offset are looked at, so nothing is
        read, committed or recorded (no commit flag, no suspend flag)."""
        return await self.client.invoke(addr, RequestCode.PULL_MESSAGE, {
            "consumerGroup": group, "topic": RETRY_PREFIX + group, "queueId": 0,
            "queueOffset": 0, "maxMsgNums": 1, "sysFlag": 0, "commitOffset": 0,
            "suspendTimeoutMillis": 0, "subVersion": 0, "expressionType": "TAG",
            "subscription": "*"})


__all__ = ["ALL_OFFSETS_MIN_TIMEOUT_S", "RUNNING_INFO_MIN_TIMEOUT", "Admin"]
