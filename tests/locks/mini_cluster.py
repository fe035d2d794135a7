"""A small lock-aware cluster for the lock tests: a name server and brokers on 127.0.0.1
(ephemeral ports, own thread and loop) plus in-process orderly consumers on a manual clock.

It implements exactly what ``mqctl locks`` observes and changes, with RocketMQ's rules:

* brokers keep ``RebalanceLockManager``'s table (60 s lease from the last renewal, refresh by
  the holder, takeover after expiry, refusal while held, unlock only by the holder) and answer
  GET_ROUTEINFO_BY_TOPIC, GET_CONSUMER_LIST_BY_GROUP, GET_CONSUMER_CONNECTION_LIST,
  GET_CONSUMER_RUNNING_INFO (forwarded to the consumer), GET_BROKER_CLUSTER_INFO,
  GET_ALL_SUBSCRIPTIONGROUP_CONFIG, LOCK_BATCH_MQ and UNLOCK_BATCH_MQ;
* consumers rebalance every 20 s and at once on membership change (``allocate_group`` with
  their own strategy), lock a new queue before taking it (``RebalanceImpl`` skips it when the
  lock fails), renew with ``lockAll`` every 20 s, unlock queues they give up; a crashed
  consumer leaves the group at once but its locks stay until the lease ends; a hung one stays
  a member, stops renewing and does not answer running-info.

The full simulated cluster (``mqctl.sim``) is the project's general test bed; this one keeps
the lock tests independent of it. Every external request is recorded.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from mqctl.allocate import allocate_group
from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.remoting.frame import RemotingCommand, encode
from mqctl.remoting.protocol import FrameReader

STRATEGY_CLASSES = {
    "AVG": "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragely",
    "AVG_BY_CIRCLE":
        "org.apache.rocketmq.client.consumer.rebalance.AllocateMessageQueueAveragelyByCircle",
}
LEASE_MS = 60_000
INTERVAL_MS = 20_000
START_MS = 1_767_225_600_000  # 2026-01-01T00:00:00Z


@dataclass
class PQ:
    locked: bool
    last_lock_ts: int
    dropped: bool = False
    try_unlock_times: int = 0


@dataclass
class Consumer:
    client_id: str
    strategy: str = "AVG"
    orderly: bool = True
    topics: tuple[str, ...] = ()
    status: str = "healthy"          # healthy | hung | crashed
    table: dict[MessageQueue, PQ] = field(default_factory=dict)
    next_rebalance: int = 0
    next_lock: int = 0


@dataclass(frozen=True)
class Request:
    ts: int
    server: str
    code: int
    ext: dict[str, str]
    body: bytes


class MiniCluster:
    def __init__(self, *, group: str = "GID_ORDER", topic: str = "TopicOrder",
                 queues: dict[str, int] | None = None, consumers: list[Consumer] | None = None,
                 model: str = "CLUSTERING", consume_type: str = "CONSUME_PASSIVELY",
                 other_groups: tuple[str, ...] = ()) -> None:
        self.group, self.topic = group, topic
        self.queue_nums = queues or {"broker-a": 4, "broker-b": 4}
        self.model, self.consume_type = model, consume_type
        self.other_groups = other_groups
        self.now = START_MS
        self.consumers: dict[str, Consumer] = {}
        self.locks: dict[str, dict[MessageQueue, list[Any]]] = {b: {} for b in self.queue_nums}
        self.requests: list[Request] = []
        self.ports: dict[str, int] = {}
        self._mutex = threading.RLock()
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        for c in consumers or []:
            c.topics = c.topics or (topic, f"%RETRY%{group}")
            self.consumers[c.client_id] = c
        self._rebalance_all()

    # ------------------------------------------------------------------ model

    @property
    def queues(self) -> list[MessageQueue]:
        return [MessageQueue(self.topic, b, i) for b, n in sorted(self.queue_nums.items())
                for i in range(n)]

    def members(self) -> list[str]:
        return sorted(c.client_id for c in self.consumers.values() if c.status != "crashed")

    def holder(self, mq: MessageQueue) -> str | None:
        """The broker's view: the client whose lease on ``mq`` still runs."""
        e = self.locks[mq.broker_name].get(mq)
        if e is None or self.now - e[1] > LEASE_MS:
            return None
        return str(e[0])

    def try_lock(self, broker: str, mqs: list[MessageQueue], cid: str) -> list[MessageQueue]:
        """RebalanceLockManager.tryLockBatch."""
        table = self.locks[broker]
        ok = []
        for mq in mqs:
            e = table.get(mq)
            if e is None or e[0] == cid or self.now - e[1] > LEASE_MS:
                table[mq] = [cid, self.now]
                ok.append(mq)
        return ok

    def unlock(self, broker: str, mqs: list[MessageQueue], cid: str) -> None:
        """RebalanceLockManager.unlockBatch: only the holder's entries go."""
        table = self.locks[broker]
        for mq in mqs:
            e = table.get(mq)
            if e is not None and e[0] == cid:
                del table[mq]

    def _rebalance(self, c: Consumer) -> None:
        if c.status != "healthy":
            return
        cid_all = self.members()
        mine = set(allocate_group(c.strategy, self.queues, cid_all).get(c.client_id, []))
        for mq in [m for m in c.table if m not in mine]:
            del c.table[mq]
            if c.orderly:
                self.unlock(mq.broker_name, [mq], c.client_id)
        for mq in sorted(mine - set(c.table)):
            if not c.orderly:
                c.table[mq] = PQ(False, 0)
            elif self.try_lock(mq.broker_name, [mq], c.client_id):
                c.table[mq] = PQ(True, self.now)
            # else: RebalanceImpl skips the queue ("add a new mq failed ... lock failed")
        c.next_rebalance = self.now + INTERVAL_MS

    def _lock_all(self, c: Consumer) -> None:
        if c.status != "healthy" or not c.orderly:
            return
        by_broker: dict[str, list[MessageQueue]] = {}
        for mq in c.table:
            by_broker.setdefault(mq.broker_name, []).append(mq)
        for b, mqs in by_broker.items():
            ok = set(self.try_lock(b, mqs, c.client_id))
            for mq in mqs:
                pq = c.table[mq]
                if mq in ok:
                    pq.locked, pq.last_lock_ts = True, self.now
                else:
                    pq.locked = False
        c.next_lock = self.now + INTERVAL_MS

    def _rebalance_all(self) -> None:
        with self._mutex:
            for c in sorted(self.consumers.values(), key=lambda c: c.client_id):
                self._rebalance(c)
                c.next_lock = self.now + INTERVAL_MS

    def advance(self, seconds: float) -> None:
        """Run every consumer's periodic work up to now + seconds, one second at a time."""
        with self._mutex:
            end = self.now + int(seconds * 1000)
            while self.now < end:
                self.now = min(end, self.now + 1000)
                for c in sorted(self.consumers.values(), key=lambda c: c.client_id):
                    if self.now >= c.next_lock:
                        self._lock_all(c)
                    if self.now >= c.next_rebalance:
                        self._rebalance(c)

    def crash(self, cid: str) -> None:
        """The process dies: its connection closes (it leaves the group), its locks stay."""
        with self._mutex:
            self.consumers[cid].status = "crashed"
            self._rebalance_all()

    def hang(self, cid: str) -> None:
        with self._mutex:
            self.consumers[cid].status = "hung"

    def clear_requests(self) -> None:
        self.requests.clear()

    # ------------------------------------------------------------------ server

    def __enter__(self) -> MiniCluster:
        from mqctl import timeparse

        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("mini cluster did not start")
        timeparse.set_clock(lambda: self.now)
        return self

    def __exit__(self, *exc: Any) -> None:
        from mqctl import timeparse

        timeparse.set_clock(None)
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def namesrv(self) -> str:
        return f"127.0.0.1:{self.ports['namesrv']}"

    def addr(self, broker: str) -> str:
        return f"127.0.0.1:{self.ports[broker]}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        servers = []
        for role in ["namesrv", *sorted(self.queue_nums)]:
            srv = await asyncio.start_server(
                lambda r, w, role=role: self._serve(role, r, w), "127.0.0.1", 0)
            self.ports[role] = srv.sockets[0].getsockname()[1]
            servers.append(srv)
        self._ready.set()
        await self._stop.wait()
        for srv in servers:
            srv.close()
            await srv.wait_closed()

    async def _serve(self, role: str, reader: asyncio.StreamReader,
                     writer: asyncio.StreamWriter) -> None:
        frames = FrameReader()
        try:
            while data := await reader.read(65536):
                for cmd in frames.feed(data):
                    with self._mutex:
                        self.requests.append(Request(self.now, role, cmd.code,
                                                     dict(cmd.ext_fields or {}), cmd.body))
                        resp = self._answer(role, cmd)
                    writer.write(encode(resp))
                    await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    def _route(self, topic: str) -> dict[str, Any]:
        nums = self.queue_nums if topic == self.topic else {"broker-a": 1}
        return {"brokerDatas": [{"cluster": "DefaultCluster", "brokerName": b,
                                 "brokerAddrs": {"0": self.addr(b)}} for b in sorted(nums)],
                "queueDatas": [{"brokerName": b, "readQueueNums": n, "writeQueueNums": n,
                                "perm": 6, "topicSysFlag": 0} for b, n in sorted(nums.items())]}

    def _running_info(self, c: Consumer) -> dict[str, Any]:
        table = {mq: {"commitOffset": 0, "locked": pq.locked, "droped": pq.dropped,
                      "lastLockTimestamp": pq.last_lock_ts,
                      "tryUnlockTimes": pq.try_unlock_times}
                 for mq, pq in c.table.items()}
        return {"properties": {"allocateMessageQueueStrategy":
                               f"{STRATEGY_CLASSES[c.strategy]}@6d06d69c",
                               "PROP_CONSUMEORDERLY": "true" if c.orderly else "false",
                               "PROP_CONSUME_TYPE": self.consume_type,
                               "messageModel": self.model},
                "subscriptionSet": [{"topic": t, "subString": "*", "subVersion": 1,
                                     "tagsSet": [], "codeSet": []} for t in c.topics],
                "mqTable": table}

    def _answer(self, role: str, cmd: RemotingCommand) -> RemotingCommand:
        code, ext = cmd.code, (cmd.ext_fields or {})
        group = ext.get("consumerGroup")
        if role == "namesrv":
            if code == RequestCode.GET_ROUTEINFO_BY_TOPIC:
                topic = ext.get("topic", "")
                if topic not in (self.topic, f"%RETRY%{self.group}"):
                    return cmd.response(ResponseCode.TOPIC_NOT_EXIST,
                                        "No topic route info in name server for the topic: "
                                        f"{topic}")
                return cmd.response(body=json.dumps(self._route(topic)).encode())
            if code == RequestCode.GET_BROKER_CLUSTER_INFO:
                body = {"brokerAddrTable": {b: {"cluster": "DefaultCluster", "brokerName": b,
                                                "brokerAddrs": {"0": self.addr(b)}}
                                            for b in sorted(self.queue_nums)},
                        "clusterAddrTable": {"DefaultCluster": sorted(self.queue_nums)}}
                return cmd.response(body=json.dumps(body).encode())
            return cmd.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                                f" request type {code} not supported")
        members = self.members() if group == self.group else []
        if code == RequestCode.GET_CONSUMER_LIST_BY_GROUP:
            if not members:
                return cmd.response(ResponseCode.SYSTEM_ERROR,
                                    f"no consumer for this group, {group}")
            return cmd.response(body=json.dumps({"consumerIdList": members}).encode())
        if code == RequestCode.GET_CONSUMER_CONNECTION_LIST:
            if not members:
                return cmd.response(ResponseCode.CONSUMER_NOT_ONLINE,
                                    "the consumer group not online")
            subs = {t: {"topic": t, "subString": "*", "subVersion": 1, "tagsSet": [],
                        "codeSet": []} for t in (self.topic, f"%RETRY%{self.group}")}
            body = {"connectionSet": [{"clientId": c, "clientAddr": "127.0.0.1:50000",
                                       "language": "JAVA", "version": 479} for c in members],
                    "consumeType": self.consume_type, "messageModel": self.model,
                    "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionTable": subs}
            return cmd.response(body=json.dumps(body).encode())
        if code == RequestCode.GET_CONSUMER_RUNNING_INFO:
            cid = ext.get("clientId", "")
            c = self.consumers.get(cid)
            if c is None or cid not in members:
                return cmd.response(ResponseCode.SYSTEM_ERROR,
                                    f"The Consumer <{group}> <{cid}> not online")
            if c.status == "hung":
                return cmd.response(ResponseCode.SYSTEM_ERROR,
                                    f"invoke consumer <{group}> <{cid}> Exception: timeout")
            return cmd.response(body=fastjson.dumps_fastjson(self._running_info(c)).encode())
        if code == RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG:
            table = {g: {"groupName": g} for g in (self.group, *self.other_groups)}
            return cmd.response(body=json.dumps({"subscriptionGroupTable": table}).encode())
        if code in (RequestCode.LOCK_BATCH_MQ, RequestCode.UNLOCK_BATCH_MQ):
            body = fastjson.loads(cmd.body)
            mqs = [MessageQueue.from_dict(m) for m in body.get("mqSet") or []]
            mqs = [m for m in mqs if m.broker_name == role]
            if code == RequestCode.UNLOCK_BATCH_MQ:
                self.unlock(role, mqs, str(body.get("clientId")))
                return cmd.response()
            ok = self.try_lock(role, mqs, str(body.get("clientId")))
            return cmd.response(body=json.dumps(
                {"lockOKMQSet": [m.to_dict() for m in ok]}).encode())
        return cmd.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                            f" request type {code} not supported")
