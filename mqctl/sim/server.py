"""The simulated servers' network side: framing, request log, faults, ACL and TLS.

Each name server and broker is a :class:`SimServer` on its own port. A request goes through:
record in the request log -> fault injection (down, dropped connection, latency, chosen error
code) -> ACL check -> the role's handler. A frame that cannot be decoded closes the connection
without an answer, as a real broker's Netty decoder does.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import itertools
import logging
import ssl
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from mqctl.errors import ProtocolError
from mqctl.remoting.acl import ACCESS_KEY, SIGNATURE, verify
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.frame import RemotingCommand, encode
from mqctl.remoting.protocol import FrameReader

log = logging.getLogger("mqctl.sim")


@dataclass(frozen=True)
class RequestRecord:
    ts_ms: int
    server: str  # "namesrv" or the broker name (slaves: "<broker>#1")
    addr: str
    code: int
    ext_fields: dict[str, str] | None
    body: bytes
    remote: str
    language: str
    version: int


@dataclass
class ErrorRule:
    request: int | None  # None = every request
    response: int
    remark: str | None
    times: int | None  # None = until cleared


@dataclass
class ServerFaults:
    latency_ms: float = 0.0
    drop_next: int = 0
    errors: list[ErrorRule] = field(default_factory=list)


class ServerConn(asyncio.Protocol):
    """One accepted connection (an asyncio protocol: bytes in, frames out, no per-read task);
    it can also send requests to the peer (server -> client)."""

    _ids = itertools.count(1)

    def __init__(self, server: SimServer):
        self.id = next(self._ids)
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.remote = "?:0"
        self.frames = FrameReader()
        self.pending: dict[int, asyncio.Future[RemotingCommand]] = {}
        self.opaque = itertools.count(1_000_000)
        self.closed = False
        self.on_close: list[Callable[[ServerConn], None]] = []
        self.watched_by: set[str] = set()

    # ------------------------------------------------------------ asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        peer = transport.get_extra_info("peername") or ("?", 0)
        self.remote = f"{peer[0]}:{peer[1]}"
        self.server.conns.add(self)

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        try:
            cmds = self.frames.feed(data)
        except ProtocolError:
            self.close()  # NettyDecoder: an undecodable frame closes the channel, no answer
            return
        for cmd in cmds:
            if cmd.is_response:
                fut = self.pending.get(cmd.opaque)
                if fut is not None and not fut.done():
                    fut.set_result(cmd)
                continue
            self.server._dispatch(cmd, self)
            if self.closed:
                return

    def connection_lost(self, exc: Exception | None) -> None:
        self.close()

    # ------------------------------------------------------------ sending

    def send(self, cmd: RemotingCommand) -> None:
        if self.closed or self.transport is None:
            return
        try:
            self.transport.write(encode(cmd))
        except (ConnectionError, RuntimeError, ProtocolError):
            self.close()

    async def request(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        op = next(self.opaque)
        fut: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self.pending[op] = fut
        self.send(cmd.with_(opaque=op))
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            self.pending.pop(op, None)

    def oneway(self, cmd: RemotingCommand) -> None:
        self.send(cmd.with_(opaque=next(self.opaque), flag=cmd.flag | 2))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.server.conns.discard(self)
        for fut in self.pending.values():
            if not fut.done():
                fut.set_exception(ConnectionError("closed"))
        if self.transport is not None:
            with contextlib.suppress(Exception):
                self.transport.close()
        for cb in self.on_close:
            with contextlib.suppress(Exception):
                cb(self)


# a handler answers at once (a command, or None for no answer) or returns an awaitable
Handler = Callable[[RemotingCommand, ServerConn],
                   "RemotingCommand | Awaitable[RemotingCommand | None] | None"]


class SimServer:
    def __init__(self, name: str, handler: Handler, *, host: str, port: int,
                 now: Callable[[], int], request_log: list[RequestRecord],
                 ssl_ctx: ssl.SSLContext | None = None,
                 acl_accounts: dict[str, str] | None = None):
        self.name = name
        self.handler = handler
        self.host = host
        self.port = port
        self.now = now
        self.request_log = request_log
        self.ssl_ctx = ssl_ctx
        self.acl_accounts = acl_accounts
        self.faults = ServerFaults()
        self.conns: set[ServerConn] = set()
        self._server: asyncio.AbstractServer | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self.down = False

    @property
    def addr(self) -> str:
        return f"{self.host}:{self.port}"  # the port is known once started

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: ServerConn(self), self.host, self.port,
                                                ssl=self.ssl_ctx)
        self.port = self._server.sockets[0].getsockname()[1]
        self.down = False

    async def stop(self) -> None:
        """Stop listening and drop every connection (a broker going down)."""
        self.down = True
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        for c in list(self.conns):
            c.close()
        for t in list(self._tasks):
            t.cancel()

    def drop_connections(self) -> int:
        n = len(self.conns)
        for c in list(self.conns):
            c.close()
        return n

    def _dispatch(self, cmd: RemotingCommand, conn: ServerConn) -> None:
        """Record, apply faults, check ACL and run the handler. Handlers that answer at once
        (almost all) are run inline; a handler that has to wait (a forward to a client) or a
        latency fault continues in a task, so one connection can have many requests in
        flight, as Netty's processor executors allow."""
        self.request_log.append(RequestRecord(
            self.now(), self.name, self.addr, cmd.code, cmd.ext_fields or None,
            cmd.body, conn.remote, cmd.language, cmd.version))
        f = self.faults
        if f.drop_next > 0:
            f.drop_next -= 1
            conn.close()
            return
        if f.latency_ms > 0:
            self._spawn(self._delayed(cmd, conn, f.latency_ms / 1000))
            return
        self._process(cmd, conn)

    async def _delayed(self, cmd: RemotingCommand, conn: ServerConn, delay_s: float) -> None:
        await asyncio.sleep(delay_s)
        if not conn.closed:
            self._process(cmd, conn)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _process(self, cmd: RemotingCommand, conn: ServerConn) -> None:
        for rule in self.faults.errors:
            if rule.request is None or rule.request == cmd.code:
                if rule.times is not None:
                    rule.times -= 1
                    if rule.times <= 0:
                        self.faults.errors.remove(rule)
                self._reply(conn, cmd, cmd.response(rule.response, rule.remark or
                                                    f"simulated fault on {self.name}"))
                return
        denied = self._check_acl(cmd)
        if denied is not None:
            self._reply(conn, cmd, cmd.response(ResponseCode.NO_PERMISSION, denied))
            return
        try:
            resp = self.handler(cmd, conn)
        except Exception as exc:
            resp = self._processor_error(cmd, exc)
        if type(resp) is RemotingCommand:
            self._reply(conn, cmd, resp)
        elif inspect.isawaitable(resp):
            self._spawn(self._finish(cmd, conn, resp))

    async def _finish(self, cmd: RemotingCommand, conn: ServerConn,
                      pending: Awaitable[RemotingCommand | None]) -> None:
        try:
            resp = await pending
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            resp = self._processor_error(cmd, exc)
        if resp is not None:
            self._reply(conn, cmd, resp)

    def _processor_error(self, cmd: RemotingCommand, exc: Exception) -> RemotingCommand:
        """A processor exception: SYSTEM_ERROR with ``UtilAll.exceptionSimpleDesc``-like text."""
        log.exception("handler failed on %s", self.name)
        return cmd.response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}")

    def _reply(self, conn: ServerConn, req: RemotingCommand, resp: RemotingCommand) -> None:
        if req.is_oneway:
            return
        # 4.9.4+ brokers answer in the request's serialize type
        if resp.opaque != req.opaque or resp.serialize_type != req.serialize_type:
            resp = resp.with_(opaque=req.opaque, serialize_type=req.serialize_type)
        conn.send(resp)

    def _check_acl(self, cmd: RemotingCommand) -> str | None:
        """ACL 2.0 authentication as ``DefaultAuthenticationContextBuilder`` and
        ``DefaultAuthenticationHandler`` (auth module, 5.3) do it; the broker's
        ``AuthenticationPipeline`` answers NO_PERMISSION with the exception message. The
        secret never appears in a remark."""
        if self.acl_accounts is None:
            return None
        ext = cmd.ext_fields or {}
        ak = ext.get(ACCESS_KEY)
        if not ak:  # no AccessKey field: the context has no username
            return "username cannot be null."
        secret = self.acl_accounts.get(ak)
        if secret is None:
            return f"User:{ak} is not found."
        if SIGNATURE not in ext or not verify(ext, cmd.body, secret):
            return "check signature failed."
        return None
