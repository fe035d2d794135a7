"""The simulated cluster: a name server, brokers (masters and optional slaves) and simulated
consumers, all driven by one simulated clock, on 127.0.0.1 ports.

Use :class:`SimCluster` inside an event loop, or :class:`SimThread` to run one in a background
thread (tests, the demo, benchmarks).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import ssl
import subprocess
import tempfile
import threading
from collections.abc import Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

from mqctl.errors import UsageError
from mqctl.models import RETRY_PREFIX, SCHEDULE_TOPIC, SCHEDULE_TOPIC_QUEUES, MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.remoting.frame import RemotingCommand
from mqctl.sim.broker import GroupConf, SimBroker, TopicConf
from mqctl.sim.clock import MAX_SPEED, MIN_SPEED, STEP_EVENTS, Scheduler, SimClock
from mqctl.sim.consumer import SimConsumer
from mqctl.sim.logs import LockLog
from mqctl.sim.ports import WatchedClient
from mqctl.sim.scenario import load_scenario
from mqctl.sim.server import ErrorRule, RequestRecord, ServerConn, SimServer
from mqctl.sim.spec import Scenario, TopicSpec
from mqctl.sim.store import QueueLog
from mqctl.versions import V4_9_4, V5_0_0, version_name

T = TypeVar("T")
C = RequestCode
R = ResponseCode
# FAQUrl.suggestTodo(FAQUrl.APPLY_TOPIC_URL) in the TOPIC_NOT_EXIST remark: 4.9.3's URL
# (4.9.3/other-requests/105_*NO_SUCH_TOPIC*) and 5.x's (5.3.3's 105_*); the corpus pins 4.9.3
# and 5.3.3, the switch is taken at 5.0.0 (the 4.x line keeps the old site's URL)
FAQ = "\nSee https://rocketmq.apache.org/docs/bestPractice/06FAQ for further details."
FAQ_4X = "\nSee http://rocketmq.apache.org/docs/faq/ for further details."
NAMESRV_BROKER_EXPIRED_MS = 120_000
# NettyServerConfig.serverChannelMaxIdleTimeSeconds: a broker closes a client connection with
# no traffic for 120 s (IdleStateHandler ALL_IDLE -> ClientHousekeepingService.onChannelIdle ->
# ConsumerManager.doChannelCloseEvent, which notifies the group: CHANGE)
CHANNEL_IDLE_MS = 120_000


class FaultController:
    """Faults on demand (also scheduled from the scenario's ``faults:``)."""

    def __init__(self, cluster: SimCluster):
        self.cluster = cluster

    def _server(self, broker: str) -> SimServer:
        try:
            return self.cluster.servers[broker]
        except KeyError:
            raise UsageError(f"unknown broker {broker!r}") from None

    def latency(self, broker: str, ms: float) -> None:
        self._server(broker).faults.latency_ms = ms

    def drop_connections(self, broker: str) -> int:
        return self._server(broker).drop_connections()

    def drop_next(self, broker: str, n: int = 1) -> None:
        self._server(broker).faults.drop_next = n

    def error(self, broker: str, request_code: int | None, response_code: int,
              remark: str | None = None, times: int | None = None) -> None:
        self._server(broker).faults.errors.append(
            ErrorRule(None if request_code is None else int(request_code), int(response_code),
                      remark, times))

    def broker_down(self, broker: str) -> None:
        self.cluster.down.add(broker)
        if "#" not in broker:
            self.cluster.down_since.setdefault(broker, self.cluster.clock.now_ms())
        srv = self._server(broker)
        self.cluster.loop_task(srv.stop())

    def broker_up(self, broker: str) -> None:
        if broker not in self.cluster.down:
            return
        self.cluster.down.discard(broker)
        self.cluster.down_since.pop(broker, None)  # registers with the name server at start
        b = self.cluster.brokers.get(broker.split("#")[0])
        if b is not None and "#" not in broker:
            # a restarted broker keeps flushed offsets; locks, members and resets are memory
            b.locks.clear()
            b.channels.clear()
            b.group_info.clear()
            b.resets.clear()
            b.pulls.clear()
        self.cluster.loop_task(self._server(broker).start())

    def clear(self) -> None:
        for srv in self.cluster.servers.values():
            srv.faults.latency_ms = 0
            srv.faults.drop_next = 0
            srv.faults.errors.clear()



# scenario name (RocketMQ's SubscriptionGroupConfig field) -> GroupConf attribute
_GROUP_CONFIG_ATTRS = {"consumeEnable": "consume_enable",
                       "retryMaxTimes": "retry_max_times",
                       "consumeTimeoutMinute": "consume_timeout_minute",
                       "brokerId": "broker_id",
                       "whichBrokerWhenConsumeSlowly": "which_broker_when_slowly",
                       "consumeFromMinEnable": "consume_from_min",
                       "consumeBroadcastEnable": "consume_broadcast"}


def _set_group_config(conf: GroupConf, values: dict[str, Any]) -> None:
    for k, v in values.items():
        setattr(conf, _GROUP_CONFIG_ATTRS[k], v)


class SimCluster:
    def __init__(self, scenario: Any = "demo", *, host: str = "127.0.0.1",
                 namesrv_port: int = 0, clock: str | None = None, speed: float | None = None,
                 log_dir: str | None = None, consecutive_ports: bool | None = None):
        self.scenario: Scenario = load_scenario(scenario)
        mode = clock or self.scenario.clock
        if speed is not None and not MIN_SPEED <= speed <= MAX_SPEED:  # (also nan, inf)
            raise UsageError(f"--speed {speed:g} is out of range ({MIN_SPEED:g} to "
                             f"{MAX_SPEED:g})",
                             hint=f"the accelerated clock runs at most {MAX_SPEED:g} times "
                                  "wall time; for faster runs use --clock manual (tests, "
                                  "mqctl demo)")
        self.clock = SimClock(mode, speed if speed is not None else self.scenario.speed,
                              start_ms=self.scenario.start_ms)
        self.scheduler = Scheduler(self.clock)
        self.host = host
        self.namesrv_port = namesrv_port
        self.consecutive = namesrv_port != 0 if consecutive_ports is None else consecutive_ports
        self.log_dir = log_dir or self.scenario.log_dir
        self.request_log: list[RequestRecord] = []
        self.brokers: dict[str, SimBroker] = {}
        self.servers: dict[str, SimServer] = {}
        self.consumers_list: list[SimConsumer] = []
        self.down: set[str] = set()
        self.down_since: dict[str, int] = {}  # master broker name -> when it went down
        self.faults = FaultController(self)
        self.topic_hosts: dict[str, list[str]] = {}
        # the name server's queue data of a topic a broker deleted (delete_topic_in_broker)
        self.namesrv_queue_data: dict[tuple[str, str], TopicConf] = {}
        self._mq_cache: dict[str, tuple[MessageQueue, ...]] = {}
        self._driver: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        self.tls_cert_file: str | None = None
        self.started = False

    # ------------------------------------------------------------------ queries

    @property
    def namesrv_addr(self) -> str:
        return self.servers["namesrv"].addr

    def broker_addr(self, name: str, *, slave: bool = False) -> str:
        return self.servers[f"{name}#1" if slave else name].addr

    def broker_up(self, name: str) -> bool:
        return name not in self.down

    def summary(self) -> dict[str, Any]:
        """What a started cluster runs (``mqctl sim up``'s output, docs/scenario.md "What sim
        up prints"): the scenario, the clock, the name server and every broker server with its
        address, in start order (the name server first, each master before its slave)."""
        brokers = []
        for bs in self.scenario.brokers:
            for key, role in [(bs.name, "master")] + ([(f"{bs.name}#1", "slave")]
                                                      if bs.slave else []):
                srv = self.servers[key]
                brokers.append({"name": bs.name, "role": role, "address": srv.addr,
                                "port": srv.port, "version": version_name(bs.version)})
        ns = self.servers["namesrv"]
        sc = self.scenario
        return {"scenario": sc.name, "cluster": sc.cluster,
                "clock": {"mode": self.clock.mode,
                          "speed": self.clock.speed if self.clock.mode == "accelerated"
                          else None},
                "namesrv": {"address": ns.addr, "port": ns.port,
                            "version": version_name(sc.namesrv_ordinal)},
                "brokers": brokers, "topics": len(sc.topics), "groups": len(sc.groups),
                "tls_certificate": self.tls_cert_file, "log_dir": self.log_dir}

    def expired_brokers(self) -> set[str]:
        """Masters the name server has dropped: down for more than 120 s
        (``RouteInfoManager.scanNotActiveBroker``, brokerChannelExpiredTime). Until then a
        down broker stays in the routes (unreachable), as after a crash or partition."""
        if not self.down_since:
            return set()
        now = self.clock.now_ms()
        return {b for b, t in self.down_since.items() if now - t > NAMESRV_BROKER_EXPIRED_MS}

    def topic_brokers(self, topic: str) -> list[str]:
        hosts = self.topic_hosts.get(topic, [])
        gone = self.expired_brokers()
        return [b for b in hosts if b not in gone] if gone else list(hosts)

    def subscribe_queues(self, topic: str) -> list[MessageQueue]:
        """Readable queues of the topic's route, sorted (what a client's mqAll is)."""
        gone = self.expired_brokers()
        if gone:
            return [mq for mq in self.subscribe_queues_all(topic) if mq.broker_name not in gone]
        return self.subscribe_queues_all(topic)

    def subscribe_queues_all(self, topic: str) -> list[MessageQueue]:
        cached = self._mq_cache.get(topic)
        if cached is not None:
            return list(cached)
        out: list[MessageQueue] = []
        for bn in self.topic_brokers(topic):
            conf = self.brokers[bn].topics.get(topic)
            if conf is not None and conf.perm & 4:
                out.extend(MessageQueue(topic, bn, q) for q in range(conf.read))
        out.sort()
        self._mq_cache[topic] = tuple(out)
        return out

    def consumer(self, client_id: str) -> SimConsumer:
        for c in self.consumers_list:
            if c.client_id == client_id:
                return c
        raise KeyError(client_id)

    def consumers(self, group: str) -> list[SimConsumer]:
        return [c for c in self.consumers_list if c.group.name == group]

    def committed_offset(self, group: str, mq: MessageQueue) -> int | None:
        return self.brokers[mq.broker_name].committed(group, mq.topic, mq.queue_id)

    def max_offset(self, mq: MessageQueue) -> int:
        return self.brokers[mq.broker_name].max_offset(mq.topic, mq.queue_id)

    def clear_request_log(self) -> None:
        self.request_log.clear()

    def loop_task(self, coro: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------------ build

    def _build(self) -> None:
        sc = self.scenario
        start = self.clock.now_ms()
        for bs in sc.brokers:
            b = SimBroker(self, bs.name, server_side_reset=bs.server_side_reset,
                          version=bs.version,
                          notify_ids_changed=bool(bs.config.get(
                              "notifyConsumerIdsChangedEnable", True)),
                          auto_create_group=bool(bs.config.get("autoCreateSubscriptionGroup",
                                                                True)),
                          runtime=dict(bs.runtime), slave_runtime=dict(bs.slave_runtime))
            if self.log_dir:
                b.lock_log = LockLog(self.log_dir, bs.name)
            self.brokers[bs.name] = b
            for gname in system_groups(bs.version):
                b.groups[gname] = GroupConf(gname)
        for t in sc.topics:
            self.topic_hosts[t.name] = list(t.brokers)
            for bn in t.brokers:
                self.brokers[bn].add_topic(TopicConf(t.name, t.read_queues, t.write_queues,
                                                     t.perm_by_broker.get(bn, t.perm), t.order),
                                           partial(_queue_log, t, bn, start))
            for rc in t.rate_changes:
                self.scheduler.call_at(start + int(rc.at_s * 1000),
                                       partial(self._set_rate, t.name, rc.rate))
        for i, g in enumerate(sc.groups):
            for b in self.brokers.values():
                b.groups[g.name] = GroupConf(g.name, g.orderly, g.model == "BROADCASTING")
                _set_group_config(b.groups[g.name], {**g.config,
                                                     **g.config_by_broker.get(b.name, {})})
            topics = set(g.topics)
            for cs in g.consumers:
                topics |= set(cs.subscriptions)
            if g.model == "CLUSTERING":
                for tname in sorted(topics):
                    for bn in self.topic_hosts.get(tname, []):
                        # offsets_on: only these brokers / queues (None: all of them)
                        on = None if g.offsets_on is None else g.offsets_on.get(bn, frozenset())
                        b = self.brokers[bn]
                        conf = b.topics[tname]
                        qids = [q for q in range(conf.read) if on is None or q in on]
                        if not qids:
                            continue
                        table = b.offsets.setdefault((tname, g.name), {})
                        for q in qids:
                            mx = b.max_offset(tname, q)
                            table[q] = max(b.min_offset(tname, q), mx - g.initial_lag)
            for j, cs in enumerate(g.consumers):
                self.consumers_list.append(SimConsumer(self, g, cs, i * 100 + j))
        for b in self.brokers.values():
            self.scheduler.call_every(10_000, b.scan_expired)

    def watch_idle(self, consumer: WatchedClient) -> None:
        """A consumer stopped sending anything (hung): each broker closes its connection 120 s
        after the last request on it and notifies the group at once, as the real broker's
        idle check does. Real 4.9.3 and 5.3.3 (lock-crash/pause_*): broker-a, to which the
        SIGSTOPped o2 sent only heartbeats, logged ``NETTY EVENT: remove not active channel``
        exactly 120 s after o2's last heartbeat (lastUpdateTimestamp), about 111 s after the
        SIGSTOP, and o1 took and locked o2's queues at once (``receive broker's
        notification``, ``lock OK``). A broker that the client also pulled from sees later
        traffic, so its heartbeat scan (``SimBroker.scan_expired``, no notification on 4.x)
        usually drops the client first; the others then notice at their next rebalance (o1
        took the %RETRY% queue of broker-b 20 s later)."""
        group = consumer.group.name
        for name, b in self.brokers.items():
            last = consumer.traffic.get(name)
            if last is None or not any(ch.consumer is consumer for ch in b.members(group)):
                continue
            self.scheduler.call_at(last + CHANNEL_IDLE_MS,
                                   partial(self._idle_close, b, consumer, last))

    def _idle_close(self, b: SimBroker, consumer: WatchedClient, since: int) -> None:
        if not consumer.hung or consumer.traffic.get(b.name) != since:
            return  # it woke up (and sent something) meanwhile
        b.unregister(consumer.group.name, consumer=consumer)

    def ensure_retry_topic(self, group: str, broker: str | None = None) -> None:
        """``%RETRY%<group>`` (1 queue, perm 6), created on a broker when a consumer of the
        group first registers there (ClientManageProcessor.heartBeat -> TopicConfigManager.
        createTopicInSendMessageBackMethod, on the broker that got the heartbeat: a group's
        retry topic is on the brokers its clients heartbeat to, the brokers of their topics).
        ``broker`` None: on every broker. No offset is committed here: the client that is
        assigned the retry queue commits it (0) with its other offsets; a group that never had
        a consumer has neither (never-committed/, other-requests/43_*)."""
        topic = RETRY_PREFIX + group
        names = sorted(self.brokers) if broker is None else [broker]
        hosts = self.topic_hosts.setdefault(topic, [])
        new = [n for n in names if n not in hosts]
        if not new:
            return
        self._mq_cache.pop(topic, None)
        hosts.extend(new)
        hosts.sort()
        for n in new:
            self.brokers[n].add_topic(TopicConf(topic, 1, 1, 6))

    def ensure_topic(self, topic: str, broker: str) -> None:
        """A one-queue topic a broker creates when a message is sent back
        (TopicConfigManager.createTopicInSendMessageBackMethod): ``%DLQ%<group>`` on the broker
        of the dead letter (perm 6, DLQ_NUMS_PER_GROUP 1: AbstractSendMessageProcessor) and a
        pop retry topic ``%RETRY%<group>_<topic>`` (KeyBuilder.buildPopRetryTopicV1). The
        broker's SCHEDULE_TOPIC_XXXX (18 queues: TopicConfigManager makes it at start) is
        routed here once a copy first waits in it: a simplification, its queues are empty
        until then."""
        hosts = self.topic_hosts.setdefault(topic, [])
        if broker in hosts:
            return
        hosts.append(broker)
        hosts.sort()
        self._mq_cache.pop(topic, None)
        queues = SCHEDULE_TOPIC_QUEUES if topic == SCHEDULE_TOPIC else 1
        self.brokers[broker].add_topic(TopicConf(topic, queues, queues, 6))

    def delete_topic_in_broker(self, topic: str, broker: str) -> None:
        """DELETE_TOPIC_IN_BROKER alone (AdminBrokerProcessor.deleteTopic: the topic config and
        its queues go): the name server keeps the broker in the topic's route until
        DELETE_TOPIC_IN_NAMESRV, which mqadmin deleteTopic sends only afterwards
        (DeleteTopicSubCommand), and a broker's registration does not drop it
        (RouteInfoManager.registerBroker; 5.x only with deleteTopicWithBrokerRegistration)."""
        b = self.brokers[broker]
        conf = b.topics.pop(topic)
        self.namesrv_queue_data[(topic, broker)] = conf
        for key in [k for k in b.logs if k[0] == topic]:
            del b.logs[key]
        b.data_version += 1
        self._mq_cache.pop(topic, None)

    def _set_rate(self, topic: str, rate: float) -> None:
        """A ``rate_changes`` step: the topic's write queues only (see ``_queue_log``)."""
        now = self.clock.now_ms()
        for bn in self.topic_hosts.get(topic, []):
            b = self.brokers[bn]
            for (t, q), lg in b.logs.items():
                if t == topic and q < b.topics[topic].write:
                    lg.set_rate(now, rate)

    def _schedule_behaviours(self) -> None:
        start = self.clock.start_ms
        for c in self.consumers_list:
            s = c.spec
            at = start + int((s.join_at_s or 0) * 1000)
            self.scheduler.call_at(at, c.start)
            # restart_at: a new process under the same client id (client-logs/ step 4)
            for when, fn in ((s.crash_at_s, c.crash), (s.hang_at_s, c.hang),
                             (s.resume_at_s, c.resume), (s.leave_at_s, c.leave),
                             (s.restart_at_s, c.join), (s.stuck_message_at_s, c.stick)):
                if when is not None:
                    self.scheduler.call_at(start + int(when * 1000), fn)
        for f in self.scenario.faults:
            at = start + int(f.at_s * 1000)
            end = None if f.for_s is None else at + int(f.for_s * 1000)
            fc = self.faults
            if f.action == "down":
                self.scheduler.call_at(at, partial(fc.broker_down, f.broker))
                if end is not None:
                    self.scheduler.call_at(end, partial(fc.broker_up, f.broker))
            elif f.action == "latency":
                self.scheduler.call_at(at, partial(fc.latency, f.broker, f.latency_ms))
                if end is not None:
                    self.scheduler.call_at(end, partial(fc.latency, f.broker, 0))
            elif f.action == "drop":
                self.scheduler.call_at(at, partial(fc.drop_next, f.broker, f.times or 1))
            else:
                self.scheduler.call_at(at, partial(fc.error, f.broker, f.request, f.response,
                                                   f.remark, f.times))

    # ------------------------------------------------------------------ lifecycle

    def _tls_context(self) -> ssl.SSLContext | None:
        t = self.scenario.tls
        if not t.enabled:
            return None
        cert, key = t.cert_file, t.key_file
        if not cert or not key:
            if not shutil.which("openssl"):
                raise UsageError("TLS needs cert_file/key_file or the openssl command")
            self._tmp = tempfile.TemporaryDirectory(prefix="mqctl-sim-tls-")
            cert = str(Path(self._tmp.name) / "cert.pem")
            key = str(Path(self._tmp.name) / "key.pem")
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                            "-days", "7", "-subj", "/CN=mqctl-sim", "-keyout", key,
                            "-out", cert], check=True, capture_output=True, timeout=120)
        self.tls_cert_file = cert
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(cert, key)
        return ctx

    async def start(self) -> None:
        if self.started:
            return
        ssl_ctx = self._tls_context()
        acl = dict(self.scenario.acl.accounts) if self.scenario.acl.enabled else None
        ns = SimServer("namesrv", self._namesrv_handle, host=self.host, port=self.namesrv_port,
                       now=self.clock.now_ms, request_log=self.request_log, ssl_ctx=ssl_ctx)
        await ns.start()
        self.servers["namesrv"] = ns
        self._build()
        port = ns.port
        for bs in self.scenario.brokers:
            b = self.brokers[bs.name]
            roles = [(bs.name, False)] + ([(f"{bs.name}#1", True)] if bs.slave else [])
            for key, is_slave in roles:
                port = port + 1 if self.consecutive else 0
                srv = SimServer(key, self._broker_handler(b, is_slave), host=self.host,
                                port=port, now=self.clock.now_ms, request_log=self.request_log,
                                ssl_ctx=ssl_ctx, acl_accounts=acl)
                await srv.start()
                self.servers[key] = srv
                if self.consecutive:
                    port = srv.port
        self._schedule_behaviours()
        self.scheduler.run_due(self.clock.now_ms())
        if self.clock.mode != "manual":
            self._driver = asyncio.get_running_loop().create_task(self._drive())
        self.started = True

    def _broker_handler(self, b: SimBroker, slave: bool) -> Any:
        def handle(cmd: RemotingCommand, conn: ServerConn) -> Any:
            return b.handle(cmd, conn, slave=slave)
        return handle

    async def _drive(self) -> None:
        while True:
            now = self.clock.now_ms()
            if self.scheduler.run_due(now, STEP_EVENTS) >= STEP_EVENTS:
                await asyncio.sleep(0)  # behind the clock: let signals and requests in
                continue
            nxt = self.scheduler.next_due()
            delay = 0.05 if nxt is None else min(0.05, self.clock.real_delay_s(nxt - now))
            await asyncio.sleep(max(delay, 0.002))

    async def advance(self, seconds: float) -> None:
        """Manual clock: run every simulated event up to now + seconds."""
        target = self.clock.now_ms() + int(seconds * 1000)
        self.scheduler.run_due(target)
        self.clock.set_manual(target)
        await asyncio.sleep(0)

    async def stop(self) -> None:
        if self._driver is not None:
            self._driver.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._driver
            self._driver = None
        for srv in self.servers.values():
            await srv.stop()
        for t in list(self._tasks):
            t.cancel()
        for c in self.consumers_list:
            if c.log is not None:
                c.log.close()
        for b in self.brokers.values():
            if b.lock_log is not None:
                b.lock_log.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        self.started = False

    async def __aenter__(self) -> SimCluster:
        await self.start()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.stop()

    # ------------------------------------------------------------------ name server

    def live_brokers(self) -> list[str]:
        """Brokers registered with the name server (not expired)."""
        gone = self.expired_brokers()
        return sorted(b for b in self.brokers if b not in gone)

    def route_body(self, topic: str) -> dict[str, Any] | None:
        names = self.topic_brokers(topic) if topic in self.topic_hosts else None
        queue_datas = []
        if not names:
            if topic == self.scenario.cluster:  # cluster and broker names are routes too
                names = self.live_brokers()
            elif topic in self.live_brokers():
                names = [topic]
            else:
                return None
            queue_datas = [{"brokerName": n, "perm": 7, "readQueueNums": 16,
                            "topicSysFlag": 0, "writeQueueNums": 16} for n in names]
        else:
            for n in names:
                c = (self.brokers[n].topics.get(topic)
                     or self.namesrv_queue_data[(topic, n)])
                queue_datas.append({"brokerName": n, "perm": c.perm, "readQueueNums": c.read,
                                    "topicSysFlag": 0, "writeQueueNums": c.write})
        return {"brokerDatas": [self._broker_data(n) for n in names], "filterServerTable": {},
                "queueDatas": queue_datas}

    @property
    def namesrv_version(self) -> int:
        """The release the name server answers as (``Scenario.namesrv_ordinal``)."""
        return self.scenario.namesrv_ordinal

    def _broker_data(self, name: str) -> dict[str, Any]:
        addrs = {0: self.servers[name].addr}
        if f"{name}#1" in self.servers:
            addrs[1] = self.servers[f"{name}#1"].addr
        data: dict[str, Any] = {"brokerAddrs": addrs, "brokerName": name,
                                "cluster": self.scenario.cluster}
        if self.namesrv_version >= V5_0_0:  # BrokerData.enableActingMaster (RIP-44, 5.0.0)
            data["enableActingMaster"] = False
        return data

    def topic_list(self) -> list[str]:
        """GET_ALL_TOPIC_LIST_FROM_NAMESERVER: every topic a broker registered, its system
        topics included (``system_topics``)."""
        names = set(self.topic_hosts) | {self.scenario.cluster} | set(self.brokers)
        for b in self.brokers.values():
            names |= system_topics(self.scenario.cluster, b.name, b.version)
        return sorted(names)

    def _namesrv_handle(self, cmd: RemotingCommand, conn: ServerConn) -> RemotingCommand | None:
        """The name server's answers, in the header version of its release (a 4.9.3 name
        server answers 399: 4.9.3/other-requests/*.namesrv.json)."""
        resp = self._namesrv_answer(cmd)
        return resp.with_(version=self.namesrv_version)

    def _namesrv_answer(self, cmd: RemotingCommand) -> RemotingCommand:
        if cmd.code == C.GET_ROUTEINFO_BY_TOPIC:
            topic = (cmd.ext_fields or {}).get("topic", "")
            body = self.route_body(topic)
            if body is None:
                return cmd.response(R.TOPIC_NOT_EXIST,
                                    f"No topic route info in name server for the topic: {topic}"
                                    + (FAQ if self.namesrv_version >= V5_0_0 else FAQ_4X))
            # ClientRequestProcessor / DefaultRequestProcessor.getRouteInfoByTopic from 4.9.4:
            # standard JSON for a >= 4.9.4 client or acceptStandardJsonOnly; 4.9.3 always
            # answers fastjson's non-standard maps (4.9.3/other-requests/105_*: {0:"..."})
            standard = self.namesrv_version >= V4_9_4 and (
                cmd.version >= V4_9_4 or (cmd.ext_fields or {}).get(
                    "acceptStandardJsonOnly", "").lower() == "true")
            if standard:  # BrowserCompatible + MapSortField
                text = _standard_json(body)
            else:
                text = fastjson.dumps_fastjson(body)
            return cmd.response(R.SUCCESS, None, None, text.encode("utf-8"))
        if cmd.code == C.GET_BROKER_CLUSTER_INFO:
            live = self.live_brokers()
            body = {"brokerAddrTable": {n: self._broker_data(n) for n in live},
                    "clusterAddrTable": {self.scenario.cluster: live}}
            return cmd.response(R.SUCCESS, None, None,
                                fastjson.dumps_fastjson(body).encode("utf-8"))
        if cmd.code == C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER:
            return cmd.response(R.SUCCESS, None, None, fastjson.dumps_fastjson(
                {"topicList": self.topic_list()}).encode("utf-8"))
        if cmd.code == C.GET_TOPICS_BY_CLUSTER:
            return cmd.response(R.SUCCESS, None, None, fastjson.dumps_fastjson(
                {"topicList": sorted(self.topic_hosts)}).encode("utf-8"))
        return cmd.response(R.REQUEST_CODE_NOT_SUPPORTED,
                            f" request type {cmd.code} not supported")


# The topics a broker creates for itself, as the real lists show them (both versions'
# other-requests/206_getAllTopicListFromNameserver): TopicConfigManager's constructor (4.9.3) /
# init() (5.x) adds SELF_TEST_TOPIC, TBW102 (autoCreateTopicEnable, on by default),
# BenchmarkTest, the cluster- and broker-name topics, OFFSET_MOVED_EVENT, SCHEDULE_TOPIC_XXXX and
# <cluster>_REPLY_TOPIC; RMQ_SYS_TRANS_HALF_TOPIC comes from the transaction check service
# (TransactionalMessageBridge) on 4.9.3 and TopicConfigManager on 5.x. RMQ_SYS_TRACE_TOPIC only
# with traceTopicEnable (off: in neither list).
SYSTEM_TOPICS_4X = ("SELF_TEST_TOPIC", "TBW102", "BenchmarkTest", "OFFSET_MOVED_EVENT",
                    "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC")


def system_groups(version: int) -> tuple[str, ...]:
    """The groups SubscriptionGroupManager puts in every broker's table at start (MixAll's
    TOOLS_CONSUMER, FILTERSRV_CONSUMER, SELF_TEST_C_GROUP, CID_ONS-HTTP-PROXY, CID_ONSAPI_*;
    5.x adds CID_RMQ_SYS_TRANS): the real 201 answers list them on both versions
    (other-requests/201_getAllSubscriptionGroupConfig)."""
    base = ("TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY",
            "CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER")
    return (*base, "CID_RMQ_SYS_TRANS") if version >= V5_0_0 else base


def system_topics(cluster: str, broker: str, version: int) -> set[str]:
    """A broker's own system topics. From 5.0.0 also RMQ_SYS_TRANS_OP_HALF_TOPIC,
    TimerMessageStore.TIMER_TOPIC (``rmq_sys_wheel_timer``), the pop revive topic
    (PopAckConstants.buildClusterReviveTopic: ``rmq_sys_REVIVE_LOG_<cluster>``) and
    TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX + broker name (5.3.3's 206_*)."""
    out = {*SYSTEM_TOPICS_4X, f"{cluster}_REPLY_TOPIC"}
    if version >= V5_0_0:
        out |= {"RMQ_SYS_TRANS_OP_HALF_TOPIC", "rmq_sys_wheel_timer",
                f"rmq_sys_REVIVE_LOG_{cluster}", f"rmq_sys_SYNC_BROKER_MEMBER_{broker}"}
    return out


def _queue_log(t: TopicSpec, broker: str, start: int, q: int) -> QueueLog:
    """A queue's production: the topic's, unless ``per_queue`` says otherwise."""
    qs = t.queue_spec(broker, q)
    rate, start_s, history_s = t.rate, t.start_s, t.history_s
    min_offset, initial_max, times = t.min_offset, t.initial_max, None
    if qs is not None:
        rate = qs.rate if qs.rate is not None else rate
        start_s = qs.start_s if qs.start_s is not None else start_s
        history_s = qs.history_s if qs.history_s is not None else history_s
        min_offset = qs.min_offset if qs.min_offset is not None else min_offset
        if qs.initial_max is not None or qs.min_offset is not None:
            initial_max = qs.initial_max
        if qs.store_times_ms is not None:
            times = [start + x for x in qs.store_times_ms]
    if initial_max is not None:
        initial_max = max(initial_max, min_offset)
    if q >= t.write_queues:
        # a read-only queue keeps its history but gets no new production: producers send to
        # TopicPublishInfo's queues, built from writeQueueNums (MQClientInstance.
        # topicRouteData2TopicPublishInfo); real RW_T (read-gt-write/, both versions) kept 25
        # in queues 2-3 while 0-1 grew to 50 after ``updateTopic -r 4 -w 2``
        if initial_max is None and times is None:
            initial_max = min_offset + int(rate * history_s)
        rate = 0.0
    return QueueLog.from_rate(min_offset, start, int(history_s * 1000), rate, initial_max,
                              rate_start_ms=None if start_s is None else start + int(
                                  start_s * 1000),
                              store_times=times or ())


def _standard_json(body: dict[str, Any]) -> str:
    def conv(v: Any) -> Any:
        if isinstance(v, dict):
            return {str(k): conv(x) for k, x in sorted(v.items(), key=lambda kv: str(kv[0]))}
        if isinstance(v, list):
            return [conv(x) for x in v]
        return v
    return json.dumps(conv(body), separators=(",", ":"), ensure_ascii=True)


class SimThread:
    """Run a :class:`SimCluster` in a background thread with its own event loop."""

    def __init__(self, scenario: Any = "demo", **kwargs: Any):
        self.cluster = SimCluster(scenario, **kwargs)
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="mqctl-sim", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
        try:
            fut = asyncio.run_coroutine_threadsafe(coro, self.loop)
        except BaseException:
            coro.close()  # never scheduled (the loop is closed): not "never awaited"
            raise
        return fut.result(timeout)

    def call(self, fn: Callable[[SimCluster], T], timeout: float = 60) -> T:
        async def go() -> T:
            return fn(self.cluster)
        return self.run(go(), timeout)

    def __enter__(self) -> SimThread:
        self._thread.start()
        try:
            self.run(self.cluster.start())
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                self.run(self.cluster.stop(), timeout=30)
            self.loop.call_soon_threadsafe(self.loop.stop)
            self._thread.join(timeout=30)
        self.loop.close()

    # conveniences mirroring the cluster
    @property
    def namesrv_addr(self) -> str:
        return self.cluster.namesrv_addr

    @property
    def request_log(self) -> list[RequestRecord]:
        return self.cluster.request_log

    @property
    def clock(self) -> SimClock:
        return self.cluster.clock

    def advance(self, seconds: float) -> None:
        self.run(self.cluster.advance(seconds), timeout=max(60, seconds))

    def clear_request_log(self) -> None:
        self.call(lambda c: c.clear_request_log())
