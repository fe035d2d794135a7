"""``mqctl exporter`` as a long-running service: rounds on their own schedule in the event
loop (one at a time: a round that takes longer than the interval delays the next, which
starts at once and is counted as an overrun), and an HTTP server (the standard library's
``ThreadingHTTPServer``, in its own thread) answering ``/metrics`` from the last finished
round, ``/healthz`` and ``/-/ready``. A stop (SIGTERM, SIGINT) ends the round in flight and the
server at once; a reload (SIGHUP) re-reads the configuration and reconnects before the next
round. Nothing here prints: ``log`` receives one line per event."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any, Protocol

from mqctl.config import load_settings
from mqctl.errors import ExitCode, MqctlError, UsageError
from mqctl.exporter.rounds import Exporter, ExporterOptions
from mqctl.interrupt import serving
from mqctl.render import printable
from mqctl.timeparse import format_local, is_digits, now_ms

if TYPE_CHECKING:
    from mqctl.admin import Admin
    from mqctl.config import Settings


class AsyncCluster(Protocol):
    """What a round reads through (``mqctl.api.AsyncCluster`` is one)."""

    async def admin(self) -> Admin: ...

    async def aclose(self) -> None: ...

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"  # Prometheus' text format 0.0.4
# /healthz fails once no round has finished for this many intervals (plus the timeout)
HEALTH_INTERVALS = 3


def parse_listen(text: str) -> tuple[str, int]:
    """``HOST:PORT`` (``127.0.0.1:9877``, ``[::1]:9877``, ``:9877`` = every address)."""
    host, sep, port = text.rpartition(":")
    if not sep or not is_digits(port) or not 0 <= int(port) <= 65535:
        raise UsageError(f"--listen {text!r} is not HOST:PORT",
                         hint="e.g. --listen 127.0.0.1:9877 (:9877 listens on every address)")
    return host.strip("[]") or "0.0.0.0", int(port)


def log_line(text: str) -> str:
    """One line of the service's log: the time in the display zone, the event (escaped)."""
    return f"{format_local(now_ms())} mqctl exporter: {printable(text)}\n"


@dataclass
class Config:
    """What a reload re-reads: the options and how to connect (the settings: profile,
    name servers, ACL, TLS)."""

    options: ExporterOptions
    connect: Callable[[], AsyncCluster]
    namesrv: str


class Service:
    """The exporter's run: ``load()`` gives the :class:`Config` (called again on reload)."""

    def __init__(self, load: Callable[[], Config], listen: tuple[str, int],
                 log: Callable[[str], None] = lambda _line: None) -> None:
        self.load = load
        self.config = load()
        self.exporter = Exporter(self.config.options)
        self.listen = listen
        self.log = log
        self.started = time.monotonic()
        self.last_round_end: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._reload: asyncio.Event | None = None
        self.server: ThreadingHTTPServer | None = None
        self.stop_reason: str | None = None

    # ------------------------------------------------------------ signals (any thread)

    def signal(self, name: str) -> None:
        """SIGHUP: reload; any other: stop (called from the signal handler)."""
        loop = self._loop
        if loop is None:
            return
        event = self._reload if name == "SIGHUP" else self._stop
        if name != "SIGHUP":
            self.stop_reason = name
        if event is not None:
            try:
                loop.call_soon_threadsafe(event.set)
            except RuntimeError:  # the loop has closed: the run is over
                pass

    # ------------------------------------------------------------ HTTP

    def bind(self) -> ThreadingHTTPServer:
        service = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "mqctl-exporter"

            def do_GET(self) -> None:  # (http.server's name)
                status, body = service.answer(self.path)
                data = body if isinstance(body, bytes) else body.encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", CONTENT_TYPE if self.path.startswith(
                    "/metrics") else "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # quiet: scrapes
                return

        try:
            server = ThreadingHTTPServer(self.listen, Handler)
        except OSError as exc:
            raise MqctlError(f"cannot listen on {self.listen[0]}:{self.listen[1]}: "
                             f"{exc.strerror or exc}",
                             hint="another process holds the port, or the address is not "
                                  "this machine's: pick another with --listen",
                             exit_code=ExitCode.REFUSED) from exc
        server.daemon_threads = True
        self.server = server
        return server

    def answer(self, path: str) -> tuple[int, str | bytes]:
        """(HTTP status, body) of a GET."""
        route = path.split("?", 1)[0]
        if route == "/metrics":
            body = self.exporter.metrics_bytes()
            if body is None:
                return 503, "no round has finished yet\n"
            return 200, body
        if route == "/-/ready":
            return (200, "ready\n") if self.exporter.last is not None else (
                503, "no round has finished yet\n")
        if route == "/healthz":
            limit = HEALTH_INTERVALS * self.config.options.interval_s + 60.0
            since = self.last_round_end if self.last_round_end is not None else self.started
            if time.monotonic() - since > limit:
                return 503, f"no round finished in the last {limit:.0f} s\n"
            return 200, "ok\n"
        if route == "/":
            return 200, "mqctl exporter: /metrics /healthz /-/ready\n"
        return 404, "not found\n"

    # ------------------------------------------------------------ the rounds

    async def run(self, rounds: int | None = None) -> None:
        """Serve until a stop (or ``rounds`` rounds, for tests and the bench)."""
        self._loop = asyncio.get_running_loop()
        self._stop, self._reload = asyncio.Event(), asyncio.Event()
        server = self.server or self.bind()
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                                  name="mqctl-exporter-http", daemon=True)
        thread.start()
        host, port = (str(v) for v in server.server_address[:2])
        self.log(f"listening on {host}:{port}, a round every {self.config.options.interval_s:g}s")
        cluster = self.config.connect()
        done = 0
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                if not await self._until_stop(self._round(cluster, started)):
                    break
                done += 1
                if rounds is not None and done >= rounds:
                    break
                if self._reload.is_set():
                    cluster = await self._apply_reload(cluster)
                wait = self.config.options.interval_s - (time.monotonic() - started)
                if wait <= 0:
                    self.log(f"a round took {time.monotonic() - started:.1f}s, longer than "
                             f"the interval ({self.config.options.interval_s:g}s): the next "
                             "starts now")
                    continue
                await self._sleep(wait)
                if self._reload.is_set():
                    cluster = await self._apply_reload(cluster)
        finally:
            server.shutdown()
            server.server_close()
            await _close(cluster)
        self.log(f"stopped ({self.stop_reason or 'done'})")

    async def _round(self, cluster: AsyncCluster, started: float) -> None:
        try:
            admin = await cluster.admin()
            rnd = await self.exporter.run_round(admin, self.config.namesrv)
        except MqctlError as exc:
            rnd = self.exporter.fail_round(f"round: {exc.message}", started)
        self.last_round_end = time.monotonic()
        if rnd.errors:
            self.log(f"round with {len(rnd.errors)} error(s): {rnd.errors[0]}")

    async def _until_stop(self, work: Any) -> bool:
        """Run ``work`` unless a stop comes first (then it is cancelled): False on a stop."""
        assert self._stop is not None
        task = asyncio.ensure_future(work)
        stopper = asyncio.ensure_future(self._stop.wait())
        await asyncio.wait({task, stopper}, return_when=asyncio.FIRST_COMPLETED)
        if task.done():
            stopper.cancel()
            task.result()
            return not self._stop.is_set()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        return False

    async def _sleep(self, seconds: float) -> None:
        """Until the next round, a stop or a reload."""
        assert self._stop is not None and self._reload is not None
        waits = [asyncio.ensure_future(self._stop.wait()),
                 asyncio.ensure_future(self._reload.wait())]
        await asyncio.wait(waits, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        for w in waits:
            w.cancel()

    async def _apply_reload(self, cluster: AsyncCluster) -> AsyncCluster:
        assert self._reload is not None
        self._reload.clear()
        try:
            config = self.load()
        except MqctlError as exc:
            self.log(f"reload refused, the configuration in use is kept: {exc.message}")
            return cluster
        await _close(cluster)
        self.config = config
        self.exporter.reconfigure(config.options)
        self.log(f"reloaded: {config.namesrv}, a round every {config.options.interval_s:g}s")
        return config.connect()


async def _close(cluster: AsyncCluster) -> None:
    try:
        await asyncio.wait_for(cluster.aclose(), timeout=0.5)
    except (TimeoutError, OSError, MqctlError):
        pass


def loader(options: ExporterOptions, cluster_of: Callable[[Settings], AsyncCluster], *,
           config_file: str | None, profile: str | None, flags: dict[str, Any]
           ) -> Callable[[], Config]:
    """What :class:`Service` calls at start and on every reload: the config file read again
    (profile, name servers, credentials, TLS), the flags on top, as every command does."""
    def load() -> Config:
        settings = load_settings(config_file=config_file, profile=profile, flags=flags)
        return Config(options, lambda: cluster_of(settings), ";".join(settings.namesrv))

    return load


def serve(load: Callable[[], Config], listen: str, write: Callable[[str], None]) -> None:
    """Run the exporter until SIGTERM or SIGINT (SIGHUP reloads): the port bound first (taken:
    exit 6 before anything runs), then the rounds and the server; ``write`` takes each log
    line (:func:`log_line`)."""
    service = Service(load, parse_listen(listen), log=lambda text: write(log_line(text)))
    service.bind()
    with serving(service.signal):
        asyncio.run(service.run())
