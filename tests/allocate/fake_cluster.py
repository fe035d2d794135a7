"""A scripted name server and brokers on 127.0.0.1 (ephemeral ports, own thread and loop).

Enough of the remoting protocol for ``mqctl allocate`` live inputs: GET_ROUTEINFO_BY_TOPIC,
GET_CONSUMER_LIST_BY_GROUP, GET_CONSUMER_CONNECTION_LIST and GET_CONSUMER_RUNNING_INFO.
Every request is recorded, so tests can assert that nothing state-changing was sent.
"""

from __future__ import annotations

import asyncio
import json
import threading
from dataclasses import dataclass, field
from typing import Any

from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.codes import RequestCode, ResponseCode
from mqctl.remoting.frame import RemotingCommand, encode
from mqctl.remoting.protocol import FrameReader

STRATEGY_PREFIX = "org.apache.rocketmq.client.consumer.rebalance."


@dataclass
class FakeCluster:
    topic: str
    group: str
    queues_per_broker: dict[str, int]
    members: dict[str, list[str]]                   # broker -> ids it reports
    owned: dict[str, list[MessageQueue]] = field(default_factory=dict)
    strategy_class: str = "AllocateMessageQueueAveragely"
    message_model: str = "CLUSTERING"
    consume_type: str = "CONSUME_PASSIVELY"
    down: set[str] = field(default_factory=set)     # brokers that refuse every request
    silent_clients: set[str] = field(default_factory=set)
    received: list[tuple[str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.ports: dict[str, int] = {}
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    # ------------------------------------------------------------------ lifecycle

    def __enter__(self) -> FakeCluster:
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("fake cluster did not start")
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(10)

    @property
    def namesrv(self) -> str:
        return f"127.0.0.1:{self.ports['namesrv']}"

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._main())
        self._loop.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        servers = []
        for role in ["namesrv", *self.queues_per_broker]:
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
                    self.received.append((role, cmd.code))
                    writer.write(encode(self._answer(role, cmd)))
                    await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()

    # ------------------------------------------------------------------ answers

    def _answer(self, role: str, cmd: RemotingCommand) -> RemotingCommand:
        if role in self.down:
            return cmd.response(ResponseCode.SYSTEM_ERROR, "broker is shutting down")
        code = cmd.code
        if role == "namesrv" and code == RequestCode.GET_ROUTEINFO_BY_TOPIC:
            if cmd.ext("topic") != self.topic:
                return cmd.response(ResponseCode.TOPIC_NOT_EXIST,
                                    f"No topic route info in name server for the topic: "
                                    f"{cmd.ext('topic')}")
            return cmd.response(body=json.dumps(self._route()).encode())
        if role == "namesrv":
            return cmd.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, "not supported")
        if code == RequestCode.GET_CONSUMER_LIST_BY_GROUP:
            ids = self.members.get(role, [])
            if not ids:
                return cmd.response(ResponseCode.SYSTEM_ERROR,
                                    f"no consumer for this group, {cmd.ext('consumerGroup')}")
            return cmd.response(body=json.dumps({"consumerIdList": ids}).encode())
        if code == RequestCode.GET_CONSUMER_CONNECTION_LIST:
            ids = self.members.get(role, [])
            if not ids:
                return cmd.response(ResponseCode.CONSUMER_NOT_ONLINE, "the consumer group not "
                                    "online")
            body = {"connectionSet": [{"clientId": c, "clientAddr": "10.0.0.1:5000",
                                       "language": "JAVA", "version": 479} for c in ids],
                    "consumeType": self.consume_type, "messageModel": self.message_model,
                    "consumeFromWhere": "CONSUME_FROM_LAST_OFFSET", "subscriptionTable": {}}
            return cmd.response(body=json.dumps(body).encode())
        if code == RequestCode.GET_CONSUMER_RUNNING_INFO:
            cid = cmd.ext("clientId") or ""
            if cid in self.silent_clients or cid not in self.members.get(role, []):
                return cmd.response(ResponseCode.SYSTEM_ERROR,
                                    f"The Consumer <{self.group}> <{cid}> not online")
            table = {mq: {"commitOffset": 0, "locked": False, "droped": False}
                     for mq in self.owned.get(cid, [])}
            body = {"properties": {"allocateMessageQueueStrategy":
                                   f"{STRATEGY_PREFIX}{self.strategy_class}@1b6d3586"},
                    "subscriptionSet": [], "mqTable": table}
            return cmd.response(body=fastjson.dumps_fastjson(body).encode())
        return cmd.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED, "not supported")

    def _route(self) -> dict[str, Any]:
        return {"brokerDatas": [{"cluster": "DefaultCluster", "brokerName": b,
                                 "brokerAddrs": {"0": f"127.0.0.1:{self.ports[b]}"}}
                                for b in self.queues_per_broker],
                "queueDatas": [{"brokerName": b, "readQueueNums": n, "writeQueueNums": n,
                                "perm": 6, "topicSysFlag": 0}
                               for b, n in self.queues_per_broker.items()]}
