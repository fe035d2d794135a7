"""asyncio transport: the only module of mqctl's client side that touches sockets.

A :class:`Connection` owns one TCP (or TLS) stream, writes encoded commands, and runs one
reader task that demultiplexes responses by ``opaque``. Requests that a server sends to the
client on the same connection (``flag`` bit 0 clear) go to ``on_request``; by default they are
answered with ``REQUEST_CODE_NOT_SUPPORTED`` (oneway ones are dropped), as a Java client with
no processor for that code would.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
import ssl
from collections.abc import Awaitable, Callable

from mqctl.errors import (
    ConnectError,
    MqctlError,
    PeerProtocolError,
    ProtocolError,
    RequestTimeout,
)
from mqctl.remoting.codes import ResponseCode, request_name
from mqctl.remoting.frame import MAX_FRAME, RemotingCommand, encode
from mqctl.remoting.protocol import FrameReader, OpaqueCounter

log = logging.getLogger("mqctl.remoting")

_DROPPED_HINT = ("the name server or broker dropped the connection (a restart, overload or an "
                 "idle close); re-run, and check its log if it keeps happening")

RequestHandler = Callable[["Connection", RemotingCommand], Awaitable[RemotingCommand | None]]


def split_addr(addr: str) -> tuple[str, int]:
    host, sep, port = addr.strip().rpartition(":")
    if not sep or not host or not (port.isascii() and port.isdigit()) or \
            not 0 < int(port) < 65536:
        raise ConnectError(f"bad address {addr!r}: expected host:port", addr=addr,
                           hint="addresses look like 127.0.0.1:9876; separate several with ';'")
    return host.strip("[]"), int(port)


async def default_request_handler(conn: Connection, cmd: RemotingCommand) -> RemotingCommand:
    return cmd.response(ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
                        f" request type {cmd.code} not supported", language="PYTHON")


def os_reason(exc: BaseException) -> str:
    """Why a socket call failed, never empty (a ConnectionResetError raised during a TLS
    handshake carries no text)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    text = str(exc).strip()
    if text:
        return text
    if isinstance(exc, ConnectionResetError):
        return "connection reset by peer"
    if isinstance(exc, ConnectionAbortedError):
        return "connection aborted"
    if isinstance(exc, BrokenPipeError):
        return "the peer closed the connection (broken pipe)"
    if isinstance(exc, asyncio.IncompleteReadError | ssl.SSLEOFError):
        return "the peer closed the connection"
    return type(exc).__name__


def _raise_if_cancelled() -> None:
    """Python 3.11's ``asyncio.wait_for`` returns the inner future's outcome when it is done by
    the time a cancellation arrives, and the cancellation is lost: on SIGTERM or Ctrl-C the
    connection's shutdown fails the pending request with a ConnectError, a caller that retries
    on the next broker sends a new request, and mqctl waits for it (up to --timeout) instead of
    stopping (CPython gh-86296, fixed by 3.12's rewrite). A task being cancelled stops here."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class Connection:
    def __init__(self, addr: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
                 *, on_request: RequestHandler | None = None, max_frame: int = MAX_FRAME,
                 tls: bool = False):
        self.addr = addr
        self.tls = tls
        self.received = 0  # bytes read from the peer
        self._close_error: ProtocolError | None = None  # what the peer sent that is not remoting
        self._reader = reader
        self._writer = writer
        self._frames = FrameReader(max_frame)
        self._pending: dict[int, asyncio.Future[RemotingCommand]] = {}
        self._sent: dict[int, RemotingCommand] = {}  # the pending requests, to spot an echo
        self._opaque = OpaqueCounter()
        self._on_request = on_request or default_request_handler
        self._closed = False
        self._close_reason: str = "closed"
        self._task = asyncio.get_running_loop().create_task(self._read_loop())

    @classmethod
    async def open(cls, addr: str, *, connect_timeout: float, ssl_ctx: ssl.SSLContext | None = None,
                   on_request: RequestHandler | None = None) -> Connection:
        host, port = split_addr(addr)
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_connection(host, port, ssl=ssl_ctx,
                                        server_hostname=(host if ssl_ctx and ssl_ctx.check_hostname
                                                         else ("" if ssl_ctx else None)),
                                        limit=1 << 20),
                timeout=connect_timeout)
        except TimeoutError:
            raise ConnectError(f"cannot connect to {addr}: no answer within {connect_timeout:g}s",
                               addr=addr, hint="check the address and that the port is reachable"
                               ) from None
        except ConnectionRefusedError:
            raise ConnectError(f"cannot connect to {addr}: connection refused", addr=addr,
                               hint="is the name server / broker running on that address? "
                                    "(try `mqctl sim up` for a local cluster)") from None
        except (ssl.SSLEOFError, ConnectionResetError, asyncio.IncompleteReadError) as exc:
            if ssl_ctx is None:
                raise ConnectError(f"cannot connect to {addr}: {os_reason(exc)}", addr=addr,
                                   hint="check the address, and that the port is reachable "
                                        "from here (firewall, routing)") from None
            # a plain RocketMQ server reads the ClientHello's first bytes as a frame length of
            # ~370 MB: remoting's NettyDecoder (a LengthFieldBasedFrameDecoder, frameMaxLength
            # 16 MB) fails and its decode() closes the channel, mid-handshake
            raise ConnectError(f"TLS handshake with {addr} failed: the server closed the "
                               "connection instead of answering it (it does not speak TLS)",
                               addr=addr, hint="drop --tls / --tls-ca / --tls-insecure (and "
                               "MQCTL_TLS*, the profile's tls) for a server without TLS, or "
                               "check the port") from None
        except ssl.SSLError as exc:
            raise ConnectError(f"TLS handshake with {addr} failed: {exc.reason or exc}",
                               addr=addr, hint="check --tls-ca, or whether the server speaks TLS"
                               ) from None
        except socket.gaierror as exc:
            raise ConnectError(f"cannot resolve host {host!r} of {addr}: {exc.strerror or exc}",
                               addr=addr,
                               hint="check the host name in --namesrv / NAMESRV_ADDR (for a "
                                    "broker: the address the name server publishes, brokerIP1) "
                                    "and this machine's DNS") from None
        except OSError as exc:
            raise ConnectError(f"cannot connect to {addr}: {os_reason(exc)}", addr=addr,
                               hint="check the address, and that the port is reachable from "
                                    "here (firewall, routing)") from None
        return cls(addr, reader, writer, on_request=on_request, tls=ssl_ctx is not None)

    @property
    def closed(self) -> bool:
        return self._closed

    async def _read_loop(self) -> None:
        try:
            while True:
                data = await self._reader.read(65536)
                if not data:
                    self._close_reason = ("closed by peer" if self.received
                                          else "closed by peer before sending anything")
                    break
                self.received += len(data)
                for cmd in self._frames.feed(data):
                    if cmd.is_response:
                        fut = self._pending.pop(cmd.opaque, None)
                        if fut is not None and not fut.done():
                            fut.set_result(cmd)
                        else:
                            log.debug("%s: response for unknown opaque %d dropped", self.addr,
                                      cmd.opaque)
                    elif self._is_echo(cmd):
                        # a TCP echo server (or a proxy looping back): answering it as a
                        # request would be echoed too and read as the reply
                        raise ProtocolError(
                            f"the peer sent mqctl's own {request_name(cmd.code)} request back "
                            "instead of answering it: it is not a RocketMQ name server or "
                            "broker (an echo service?)",
                            hint="check the address and port: a RocketMQ name server listens "
                                 "on 9876 by default, a broker on 10911")
                    else:
                        asyncio.get_running_loop().create_task(self._serve(cmd))
        except ProtocolError as exc:  # a bad frame or an undecodable header: exit 4, not 3
            self._close_reason = f"protocol error: {exc.message}"
            self._close_error = exc
        except (ConnectionError, OSError, ssl.SSLError) as exc:
            self._close_reason = f"connection lost: {os_reason(exc)}"
        except asyncio.CancelledError:
            self._close_reason = "closed"
        finally:
            self._shutdown()

    def _is_echo(self, cmd: RemotingCommand) -> bool:
        """A request from the peer that is one of ours, opaque, code and fields alike."""
        sent = self._sent.get(cmd.opaque)
        return (sent is not None and sent.code == cmd.code
                and sent.ext_fields == cmd.ext_fields and sent.body == cmd.body)

    async def _serve(self, cmd: RemotingCommand) -> None:
        try:
            resp = await self._on_request(self, cmd)
        except Exception as exc:  # a handler bug must not kill the connection
            log.debug("request handler failed for %s: %r", request_name(cmd.code), exc)
            resp = cmd.response(ResponseCode.SYSTEM_ERROR, f"{type(exc).__name__}: {exc}",
                                language="PYTHON")
        if resp is not None and not cmd.is_oneway and not self._closed:
            with contextlib.suppress(Exception):
                self._writer.write(encode(resp))

    def _shutdown(self) -> None:
        if self._closed:
            return
        self._closed = True
        for _opaque, fut in list(self._pending.items()):
            if not fut.done():
                fut.set_exception(self._failure())
        self._pending.clear()
        self._sent.clear()
        with contextlib.suppress(Exception):
            self._writer.close()

    def _failure(self) -> MqctlError:
        """The error a request waiting on this closed connection fails with."""
        bad = self._close_error
        if bad is not None:
            return PeerProtocolError(
                f"protocol error from {self.addr}: {bad.message}", addr=self.addr,
                hint=bad.hint or "check that the address is a RocketMQ name server or broker "
                                 "(and whether it needs --tls)")
        hint = _DROPPED_HINT
        if not self.received and not self.tls:
            # a TLS-only server drops a plain client without a byte: NettyRemotingServer's
            # HandshakeHandler (4.9.3) closes the channel when tls.server.mode is ENFORCING and
            # the first byte is not 0x16; so does a server that is not RocketMQ
            hint = ("the server closed the connection without answering: if it accepts only "
                    "TLS, add --tls with --tls-ca FILE (or --tls-insecure); otherwise check "
                    f"that {self.addr} is a RocketMQ name server or broker")
        return ConnectError(
            f"connection to {self.addr} {self._close_reason} while waiting for a response",
            addr=self.addr, hint=hint)

    async def request(self, cmd: RemotingCommand, timeout: float) -> RemotingCommand:
        if self._closed:
            raise ConnectError(f"connection to {self.addr} is {self._close_reason}", addr=self.addr,
                               hint=_DROPPED_HINT)
        opaque = self._opaque.next()
        cmd = cmd.with_(opaque=opaque)
        fut: asyncio.Future[RemotingCommand] = asyncio.get_running_loop().create_future()
        self._pending[opaque] = fut
        self._sent[opaque] = cmd
        try:
            return await self._request(cmd, opaque, fut, timeout)
        finally:
            self._sent.pop(opaque, None)

    async def _request(self, cmd: RemotingCommand, opaque: int,
                       fut: asyncio.Future[RemotingCommand], timeout: float) -> RemotingCommand:
        try:
            self._writer.write(encode(cmd))
            await self._writer.drain()
        except (ConnectionError, OSError) as exc:
            self._pending.pop(opaque, None)
            self._close_reason = f"connection lost: {os_reason(exc)}"
            self._shutdown()
            raise ConnectError(f"cannot send to {self.addr}: {os_reason(exc)}", addr=self.addr,
                               hint=_DROPPED_HINT) from None
        try:
            resp = await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            self._pending.pop(opaque, None)
            raise RequestTimeout(
                f"timed out after {timeout:g}s waiting for {request_name(cmd.code)} ({cmd.code}) "
                f"from {self.addr}", addr=self.addr, code=cmd.code,
                hint="the broker may be overloaded or unreachable; raise --timeout if it is slow"
            ) from None
        except Exception:
            _raise_if_cancelled()
            raise
        _raise_if_cancelled()
        return resp

    async def send_oneway(self, cmd: RemotingCommand) -> None:
        if self._closed:
            raise ConnectError(f"connection to {self.addr} is {self._close_reason}", addr=self.addr,
                               hint=_DROPPED_HINT)
        cmd = cmd.with_(opaque=self._opaque.next(), flag=cmd.flag | 2)
        try:
            self._writer.write(encode(cmd))
            await self._writer.drain()
        except (ConnectionError, OSError) as exc:
            self._shutdown()
            raise ConnectError(f"cannot send to {self.addr}: {os_reason(exc)}", addr=self.addr,
                               hint=_DROPPED_HINT) from None

    async def close(self) -> None:
        if not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        self._shutdown()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._writer.wait_closed(), 1.0)
