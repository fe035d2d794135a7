"""The remoting client: one reused connection per address, timeouts, signing, bounded fan-out."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from mqctl.errors import BrokerError, ConnectError, MqctlError, WrongServerError
from mqctl.remoting.acl import Credentials, sign
from mqctl.remoting.codes import NAMESRV_ONLY_REQUESTS, ResponseCode
from mqctl.remoting.frame import DEFAULT_VERSION, RPC_ONEWAY, RemotingCommand, SerializeType
from mqctl.remoting.tls import TlsSettings, client_context
from mqctl.remoting.transport import Connection, RequestHandler

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class ClientOptions:
    timeout: float = 3.0
    connect_timeout: float | None = None
    version: int = DEFAULT_VERSION
    language: str = "PYTHON"
    credentials: Credentials | None = None
    tls: TlsSettings = TlsSettings()
    serialize_type: SerializeType = SerializeType.JSON
    max_in_flight: int | None = None  # global bound on requests in flight from this client


class RemotingClient:
    """``invoke(addr, code, ext, body)``: one pooled connection per address.

    A connection that dropped is replaced on the next call. ``idempotent=True`` requests are
    re-sent once on a fresh connection if the pooled one turns out to be dead (e.g. closed by
    the server's 120 s idle timer); state-changing requests are never re-sent.
    """

    def __init__(self, options: ClientOptions | None = None, *,
                 on_request: RequestHandler | None = None,
                 observer: Callable[[str, RemotingCommand, RemotingCommand | None, float], None]
                 | None = None):
        self.options = options or ClientOptions()
        self._ssl = client_context(self.options.tls)
        self._conns: dict[str, Connection] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._on_request = on_request
        self._observer = observer
        self._sem = (asyncio.Semaphore(self.options.max_in_flight)
                     if self.options.max_in_flight else None)
        self.requests_sent = 0
        self.in_flight = 0
        self.max_seen_in_flight = 0

    async def __aenter__(self) -> RemotingClient:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.close()

    async def close(self) -> None:
        conns, self._conns = list(self._conns.values()), {}
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)

    async def _connection(self, addr: str) -> Connection:
        conn = self._conns.get(addr)
        if conn is not None and not conn.closed:
            return conn
        lock = self._locks.setdefault(addr, asyncio.Lock())
        async with lock:
            conn = self._conns.get(addr)
            if conn is None or conn.closed:
                conn = await Connection.open(
                    addr, connect_timeout=self.options.connect_timeout or self.options.timeout,
                    ssl_ctx=self._ssl, on_request=self._on_request)
                self._conns[addr] = conn
            return conn

    def build(self, code: int, ext: dict[str, Any] | None = None, body: bytes = b"",
              *, oneway: bool = False) -> RemotingCommand:
        cmd = RemotingCommand.request(code, ext, body, oneway=oneway,
                                      version=self.options.version,
                                      language=self.options.language)
        if self.options.serialize_type != SerializeType.JSON:
            cmd = cmd.with_(serialize_type=self.options.serialize_type)
        if self.options.credentials is not None:
            cmd = cmd.with_(ext_fields=sign(cmd.ext_fields, body, self.options.credentials))
        return cmd

    async def invoke(self, addr: str, code: int, ext: dict[str, Any] | None = None,
                     body: bytes = b"", *, timeout: float | None = None, check: bool = True,
                     idempotent: bool = False,
                     ok_codes: Iterable[int] = (ResponseCode.SUCCESS,)) -> RemotingCommand:
        """Send a request and wait for its response.

        With ``check`` a response code outside ``ok_codes`` raises :class:`BrokerError`
        (keeping code and remark).
        """
        if self._sem is not None:
            async with self._sem:
                return await self._invoke(addr, code, ext, body, timeout, check, idempotent,
                                          ok_codes)
        return await self._invoke(addr, code, ext, body, timeout, check, idempotent, ok_codes)

    async def _invoke(self, addr: str, code: int, ext: dict[str, Any] | None, body: bytes,
                      timeout: float | None, check: bool, idempotent: bool,
                      ok_codes: Iterable[int]) -> RemotingCommand:
        cmd = self.build(code, ext, body)
        t = self.options.timeout if timeout is None else timeout
        attempts = 2 if idempotent else 1
        started = time.monotonic()
        for attempt in range(attempts):
            conn = await self._connection(addr)
            self.in_flight += 1
            self.max_seen_in_flight = max(self.max_seen_in_flight, self.in_flight)
            try:
                self.requests_sent += 1
                resp = await conn.request(cmd, t)
                break
            except ConnectError as exc:
                if attempt + 1 < attempts and type(exc) is ConnectError:
                    continue
                if self._observer:
                    self._observer(addr, cmd, None, time.monotonic() - started)
                raise
            finally:
                self.in_flight -= 1
        if self._observer:
            self._observer(addr, cmd, resp, time.monotonic() - started)
        if check and resp.code not in set(int(c) for c in ok_codes):
            if (resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
                    and code in NAMESRV_ONLY_REQUESTS):
                raise WrongServerError(
                    resp.code, resp.remark, addr=addr, request_code=code,
                    hint="--namesrv / -n / NAMESRV_ADDR takes the name server's address "
                         "(default port 9876), not a broker's (10911); `mqctl sim up` prints "
                         "both")
            raise BrokerError(resp.code, resp.remark, addr=addr, request_code=code)
        return resp

    async def invoke_oneway(self, addr: str, code: int, ext: dict[str, Any] | None = None,
                            body: bytes = b"") -> None:
        cmd = self.build(code, ext, body, oneway=True)
        conn = await self._connection(addr)
        self.requests_sent += 1
        await conn.send_oneway(cmd.with_(flag=cmd.flag | RPC_ONEWAY))


@dataclass(slots=True)
class Outcome(Generic[T, R]):
    """Result of one item of a fan-out: either ``value`` or ``error``."""

    item: T
    value: R | None = None
    error: MqctlError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


async def fan_out(items: Iterable[T], fn: Callable[[T], Awaitable[R]], *, concurrency: int = 16,
                  on_done: Callable[[Outcome[T, R]], None] | None = None) -> list[Outcome[T, R]]:
    """Run ``fn`` over ``items`` with at most ``concurrency`` in flight, keeping input order.

    Errors of the mqctl tree are captured per item (so one dead broker does not hide the rest);
    anything else is a bug and propagates.
    """
    items = list(items)
    if concurrency < 1:
        raise ValueError("concurrency must be >= 1")
    sem = asyncio.Semaphore(concurrency)
    results: list[Outcome[T, R]] = [Outcome(item) for item in items]

    async def run(i: int) -> None:
        async with sem:
            try:
                results[i].value = await fn(items[i])
            except MqctlError as exc:
                results[i].error = exc
        if on_done is not None:
            on_done(results[i])

    await asyncio.gather(*(run(i) for i in range(len(items))))
    return results
