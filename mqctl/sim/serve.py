"""``mqctl sim up``: a simulated cluster served in the foreground until SIGINT or SIGTERM: the
port range and the log directory checked before anything listens, the start (a port that
cannot be taken names itself and the fix), the summary handed to the caller once every server
listens, the stop."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import signal
from collections.abc import Callable
from typing import Any

from mqctl.errors import UsageError
from mqctl.fsutil import local_path_error, output_location_error
from mqctl.sim import SimCluster


async def serve(scenario: Any, *, host: str, port: int, clock: str | None,
                speed: float | None, log_dir: str | None,
                on_started: Callable[[dict[str, Any]], None],
                on_stopped: Callable[[], None] | None = None) -> None:
    """Run until SIGINT or SIGTERM; ``on_started(summary)`` once every server listens
    (:meth:`mqctl.sim.SimCluster.summary`), ``on_stopped()`` once they are stopped."""

    if clock not in (None, "real", "accelerated", "manual"):
        raise UsageError(f"unknown clock {clock!r}", hint="use real, accelerated or manual")
    cluster = SimCluster(scenario, host=host, namesrv_port=port, clock=clock, speed=speed,
                         log_dir=log_dir)
    # the name server takes --port, each broker (and slave) the next one (SimCluster.start)
    needed = 1 + sum(2 if b.slave else 1 for b in cluster.scenario.brokers)
    last = port + needed - 1
    if port and last > 65535:
        raise UsageError(f"--port {port}: scenario {cluster.scenario.name} needs {needed} "
                         f"consecutive ports ({port}-{last}), beyond 65535",
                         hint=f"pick --port {65536 - needed} or lower, or --port 0 for any "
                              "free ports")
    if cluster.log_dir:  # before any port: a log directory error is not a port's

        what = "log directory " + ("(--log-dir)" if log_dir else "(the scenario's log_dir)")
        bad = output_location_error(cluster.log_dir, what, directory=True)
        if bad is not None:
            raise bad
    await _start(cluster, host, port, last)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    on_started(cluster.summary())
    try:
        await stop.wait()
    finally:
        await cluster.stop()
        if on_stopped is not None:
            on_stopped()


async def _start(cluster: Any, host: str, port: int, last: int) -> None:

    try:
        await cluster.start()
    except (OSError, OverflowError) as exc:
        with contextlib.suppress(Exception):  # close the servers that did start
            await cluster.stop()
        if isinstance(exc, OSError) and exc.filename is not None:  # a file, not a port
            raise local_path_error(exc, exc.filename, "the simulated cluster's file"
                                   ) from None
        raise listen_error(host, port, last, exc) from None


def listen_error(host: str, port: int, last: int, exc: BaseException) -> Exception:
    """Why the simulated cluster could not listen, with the fix for each cause."""

    where = f"{host}:{port}" if not port or last == port else f"{host} ports {port}-{last}"
    reason = (exc.strerror if isinstance(exc, OSError) else None) or str(exc)
    code = exc.errno if isinstance(exc, OSError) else None
    if code == errno.EADDRINUSE:
        hint = ("another process listens there (see `ss -ltnp`): stop it, pick another --port, "
                "or --port 0 for any free ports")
    elif code == errno.EACCES:
        hint = ("ports below 1024 need root (or CAP_NET_BIND_SERVICE): pick --port 1024 or "
                "higher, e.g. the default 9876, or --port 0")
    elif code == errno.EADDRNOTAVAIL:
        hint = f"{host} is not an address of this machine: use --host 127.0.0.1"
    else:
        hint = "pick another --port (0 = any free ports) or --host"
    return UsageError(f"cannot listen on {where}: {reason}", hint=hint)
