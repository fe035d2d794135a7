"""The asyncio remoting client against a scripted loopback server."""

from __future__ import annotations

import asyncio
import shutil
import ssl
import struct
import subprocess
from collections.abc import Awaitable, Callable

import pytest

from mqctl.errors import BrokerError, ConnectError, ExitCode, RequestTimeout
from mqctl.remoting.acl import Credentials, verify
from mqctl.remoting.client import ClientOptions, RemotingClient, fan_out
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.frame import RemotingCommand, SerializeType, encode
from mqctl.remoting.protocol import FrameReader
from mqctl.remoting.tls import TlsSettings

Handler = Callable[[RemotingCommand, asyncio.StreamWriter], Awaitable[None]]


class ScriptedServer:
    """A loopback server whose behaviour per request is a coroutine."""

    def __init__(self, handler: Handler, ssl_ctx: ssl.SSLContext | None = None):
        self.handler = handler
        self.ssl_ctx = ssl_ctx
        self.received: list[RemotingCommand] = []
        self.connections = 0
        self.in_flight = 0
        self.max_in_flight = 0

    async def __aenter__(self) -> ScriptedServer:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.ssl_ctx)
        self.addr = f"127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc) -> None:
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        frames = FrameReader()
        tasks = []
        try:
            while data := await reader.read(65536):
                for cmd in frames.feed(data):
                    self.received.append(cmd)
                    tasks.append(asyncio.create_task(self._one(cmd, writer)))
        except (ConnectionError, ssl.SSLError):
            pass
        finally:
            for t in tasks:
                t.cancel()
            writer.close()

    async def _one(self, cmd: RemotingCommand, writer: asyncio.StreamWriter) -> None:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await self.handler(cmd, writer)
        finally:
            self.in_flight -= 1


def reply(writer: asyncio.StreamWriter, cmd: RemotingCommand, code: int = 0, **kw) -> None:
    writer.write(encode(cmd.response(code, **kw)))


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 20))


async def echo(cmd, writer):
    if cmd.is_response:
        return
    reply(writer, cmd, ext_fields={"code": cmd.code, "lang": cmd.language,
                                   "version": cmd.version, **(cmd.ext_fields or {})})


def test_round_trip_language_version_and_reuse():
    async def go():
        async with ScriptedServer(echo) as srv, RemotingClient() as c:
            r1 = await c.invoke(srv.addr, 30, {"topic": "T"})
            r2 = await c.invoke(srv.addr, 31, {"topic": "U"})
            assert r1.ext("topic") == "T" and r2.ext("code") == "31"
            assert r1.ext("lang") == "PYTHON" and r1.ext("version") == "479"
            assert srv.connections == 1  # one connection per address, reused
        async with ScriptedServer(echo) as srv, RemotingClient(ClientOptions(version=401)) as c:
            assert (await c.invoke(srv.addr, 30)).ext("version") == "401"
    run(go())


def test_binary_header_requests_are_answered():
    async def go():
        async with ScriptedServer(echo) as srv, RemotingClient(
                ClientOptions(serialize_type=SerializeType.ROCKETMQ)) as c:
            r = await c.invoke(srv.addr, 30, {"topic": "T"})
            assert srv.received[0].serialize_type == SerializeType.ROCKETMQ
            assert r.ext("topic") == "T"
    run(go())


def test_responses_matched_by_opaque_out_of_order():
    async def slow_first(cmd, writer):
        if cmd.ext("n") == "0":
            await asyncio.sleep(0.3)
        reply(writer, cmd, ext_fields={"n": cmd.ext("n")})

    async def go():
        async with ScriptedServer(slow_first) as srv, RemotingClient() as c:
            rs = await asyncio.gather(*(c.invoke(srv.addr, 30, {"n": i}) for i in range(5)))
            assert [r.ext("n") for r in rs] == [str(i) for i in range(5)]
            assert len({cmd.opaque for cmd in srv.received}) == 5
    run(go())


def test_timeout_names_request_and_address():
    async def never(cmd, writer):
        await asyncio.sleep(10)

    async def go():
        async with ScriptedServer(never) as srv, RemotingClient(ClientOptions(timeout=0.2)) as c:
            with pytest.raises(RequestTimeout) as ei:
                await c.invoke(srv.addr, 208, {"consumerGroup": "g"})
            assert "GET_CONSUME_STATS (208)" in ei.value.message
            assert srv.addr in ei.value.message and ei.value.exit_code == ExitCode.CONNECTION
    run(go())


def test_connection_refused_names_address():
    async def go():
        srv = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
        port = srv.sockets[0].getsockname()[1]
        srv.close()
        await srv.wait_closed()
        async with RemotingClient(ClientOptions(timeout=1)) as c:
            with pytest.raises(ConnectError) as ei:
                await c.invoke(f"127.0.0.1:{port}", 105, {"topic": "T"})
        assert f"127.0.0.1:{port}" in ei.value.message and "refused" in ei.value.message
        assert ei.value.hint
    run(go())


def test_reconnect_after_the_server_drops_the_connection():
    async def answer_then_close(cmd, writer):
        reply(writer, cmd, ext_fields={"ok": "1"})
        await writer.drain()
        writer.close()

    async def go():
        async with ScriptedServer(answer_then_close) as srv, RemotingClient() as c:
            assert (await c.invoke(srv.addr, 30)).ext("ok") == "1"
            await asyncio.sleep(0.05)
            assert (await c.invoke(srv.addr, 30)).ext("ok") == "1"
            assert srv.connections == 2
    run(go())


def test_drop_while_waiting_fails_that_request():
    async def close_without_answer(cmd, writer):
        writer.close()

    async def go():
        async with ScriptedServer(close_without_answer) as srv, RemotingClient() as c:
            with pytest.raises(ConnectError, match="closed by peer"):
                await c.invoke(srv.addr, 30)
    run(go())


def test_oversize_frame_is_refused():
    async def huge(cmd, writer):
        writer.write(struct.pack(">i", 64 * 1024 * 1024))
        await writer.drain()

    async def go():
        async with ScriptedServer(huge) as srv, RemotingClient() as c:
            with pytest.raises(ConnectError, match="exceeds the 16777216-byte limit"):
                await c.invoke(srv.addr, 30)
    run(go())


def test_a_peer_that_is_not_rocketmq_is_named_as_such():
    async def http(cmd, writer):
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await writer.drain()

    async def go():
        async with ScriptedServer(http) as srv, RemotingClient() as c:
            with pytest.raises(ConnectError) as ei:
                await c.invoke(srv.addr, 30)
        assert "the peer does not speak RocketMQ remoting: it sent 'HTTP'" in ei.value.message
        assert ei.value.hint and "name server or broker" in ei.value.hint
    run(go())


def test_server_to_client_request_gets_not_supported():
    seen: list[RemotingCommand] = []

    async def ask_back(cmd, writer):
        if cmd.is_response:
            seen.append(cmd)
            return
        writer.write(encode(RemotingCommand(code=307, opaque=900, language="JAVA")))
        writer.write(encode(RemotingCommand(code=40, opaque=901, flag=2)))  # oneway: no answer
        await writer.drain()
        await asyncio.sleep(0.2)
        reply(writer, cmd)

    async def go():
        async with ScriptedServer(ask_back) as srv, RemotingClient() as c:
            await c.invoke(srv.addr, 30)
            await asyncio.sleep(0.05)
        assert len(seen) == 1
        assert seen[0].opaque == 900
        assert seen[0].code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED
        assert seen[0].remark == " request type 307 not supported"
    run(go())


def test_broker_error_keeps_code_and_remark():
    async def fail(cmd, writer):
        reply(writer, cmd, 17, remark="No topic route info in name server for the topic: X\nSee")

    async def go():
        async with ScriptedServer(fail) as srv, RemotingClient() as c:
            with pytest.raises(BrokerError) as ei:
                await c.invoke(srv.addr, 105, {"topic": "X"})
            e = ei.value
            assert e.code == 17 and e.remark.endswith("\nSee") and e.exit_code == ExitCode.BROKER
            assert "TOPIC_NOT_EXIST (17)" in e.message and "GET_ROUTEINFO_BY_TOPIC" in e.message
            ok = await c.invoke(srv.addr, 105, {"topic": "X"}, check=False)
            assert ok.code == 17
            with pytest.raises(BrokerError, match="UNKNOWN_RESPONSE_777"):
                raise BrokerError(777, "weird", addr=srv.addr)
    run(go())


def test_fan_out_is_bounded_and_keeps_order_and_errors():
    async def slow(cmd, writer):
        await asyncio.sleep(0.05)
        if cmd.ext("n") == "3":
            reply(writer, cmd, 1, remark="boom")
        else:
            reply(writer, cmd, ext_fields={"n": cmd.ext("n")})

    async def go():
        async with ScriptedServer(slow) as srv, RemotingClient() as c:
            outs = await fan_out(range(12), lambda i: c.invoke(srv.addr, 30, {"n": i}),
                                 concurrency=3)
            assert srv.max_in_flight <= 3
            assert [o.item for o in outs] == list(range(12))
            assert [o.ok for o in outs].count(False) == 1 and not outs[3].ok
            assert isinstance(outs[3].error, BrokerError)
            assert outs[5].value.ext("n") == "5"
    run(go())


def test_requests_are_signed_with_acl_credentials():
    async def check(cmd, writer):
        ok = verify(cmd.ext_fields, cmd.body, "sk-123")
        reply(writer, cmd, 0 if ok else 16, remark=None if ok else "check signature failed.")

    async def go():
        creds = Credentials("ak", "sk-123")
        async with ScriptedServer(check) as srv, RemotingClient(
                ClientOptions(credentials=creds)) as c:
            await c.invoke(srv.addr, 41, {"x": "1"}, b'{"a":1}')
            assert srv.received[0].ext("AccessKey") == "ak"
            assert "sk-123" not in repr(srv.received[0])
        async with ScriptedServer(check) as srv, RemotingClient(
                ClientOptions(credentials=Credentials("ak", "wrong"))) as c:
            with pytest.raises(BrokerError, match="NO_PERMISSION"):
                await c.invoke(srv.addr, 41, {"x": "1"})
    run(go())


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.fail("openssl is required for the TLS tests")
    d = tmp_path_factory.mktemp("tls")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
                    "-subj", "/CN=mqctl-test", "-keyout", str(d / "key.pem"),
                    "-out", str(d / "cert.pem")], check=True, capture_output=True, timeout=60)
    return d / "cert.pem", d / "key.pem"


def test_tls_round_trip(tls_files):
    cert, key = tls_files
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(cert, key)

    async def go():
        async with ScriptedServer(echo, ssl_ctx=sctx) as srv:
            for tls in (TlsSettings(enabled=True, ca_file=str(cert)),
                        TlsSettings(enabled=True, insecure=True)):
                async with RemotingClient(ClientOptions(tls=tls)) as c:
                    assert (await c.invoke(srv.addr, 30, {"t": "x"})).ext("t") == "x"
            # a CA that did not sign the server certificate fails the handshake, clearly
            other = tls_files[0].parent / "other.pem"
            subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                            "-days", "2", "-subj", "/CN=other", "-keyout",
                            str(other.parent / "okey.pem"), "-out", str(other)],
                           check=True, capture_output=True, timeout=60)
            async with RemotingClient(ClientOptions(
                    timeout=2, tls=TlsSettings(enabled=True, ca_file=str(other)))) as c:
                with pytest.raises(ConnectError, match="TLS handshake"):
                    await c.invoke(srv.addr, 30)
    run(go())


def test_tls_needs_an_explicit_choice():
    from mqctl.errors import ConfigError

    with pytest.raises(ConfigError, match="--tls-insecure"):
        RemotingClient(ClientOptions(tls=TlsSettings(enabled=True)))
