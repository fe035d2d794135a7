"""``mqctl sim``: run the simulated cluster (the embedded default) and list its scenarios."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, state
from mqctl.cli.options import (
    ClockOpt,
    HostOpt,
    LogDirOpt,
    OutputOpt,
    PortOpt,
    ScenarioOpt,
    SpeedOpt,
    scenario_is_name,
)

__all__ = ["app", "scenario_is_name"]


app = typer.Typer(help="The simulated RocketMQ cluster (for trying mqctl, demos and tests).",
                  no_args_is_help=True)


@app.command("up")
def up(
    ctx: typer.Context,
    scenario: ScenarioOpt = "demo",
    port: PortOpt = 9876,
    host: HostOpt = "127.0.0.1",
    clock: ClockOpt = None,
    speed: SpeedOpt = None,
    log_dir: LogDirOpt = None,
    output: OutputOpt = None,
) -> None:
    """Run a simulated cluster in the foreground until Ctrl-C or SIGTERM.

    The name server listens on --port and the brokers on the ports after it (the demo needs
    4: 9876-9879). A port in use, a privileged port (< 1024 without root) or a range past
    65535 is refused with exit 2 and names the port.

    Example: mqctl sim up            (the bundled demo on 127.0.0.1:9876)
    """
    import asyncio
    import contextlib
    import signal
    import sys

    from mqctl.errors import UsageError
    from mqctl.sim import SimCluster
    from mqctl.sim.started import started_result

    if clock not in (None, "real", "accelerated", "manual"):
        raise UsageError(f"unknown clock {clock!r}", hint="use real, accelerated or manual")
    st = state(ctx)
    fmt = st.output(output)

    async def run() -> None:
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
            from mqctl.fsutil import local_path_error, output_location_error

            what = "log directory " + ("(--log-dir)" if log_dir else "(the scenario's log_dir)")
            bad = output_location_error(cluster.log_dir, what, directory=True)
            if bad is not None:
                raise bad
        try:
            await cluster.start()
        except (OSError, OverflowError) as exc:
            with contextlib.suppress(Exception):  # close the servers that did start
                await cluster.stop()
            if isinstance(exc, OSError) and exc.filename is not None:  # a file, not a port
                raise local_path_error(exc, exc.filename, "the simulated cluster's file"
                                       ) from None
            raise _listen_error(host, port, last, exc) from None
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        # through the one output path: -q prints nothing, -o json one document, flushed once
        # every server listens; the command then runs until signalled (docs/scenario.md)
        emit(started_result(cluster.summary()), fmt)
        try:
            await stop.wait()
        finally:
            await cluster.stop()
            if not st.quiet:
                sys.stderr.write("mqctl sim: stopped\n")

    asyncio.run(run())


def _listen_error(host: str, port: int, last: int, exc: BaseException) -> Exception:
    """Why the simulated cluster could not listen, with the fix for each cause."""
    import errno

    from mqctl.errors import UsageError

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


@app.command("scenarios")
def scenarios(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List the bundled scenarios."""
    from mqctl.render import Result, Table, cols
    from mqctl.sim import bundled

    st = state(ctx)
    rows = [{"scenario": k, "description": v} for k, v in bundled().items()]
    emit(Result([Table(cols("scenario", "description"), rows)]), st.output(output))


def scenario_names() -> list[str]:
    """The bundled scenarios' names (what ``sim up --scenario`` completes to)."""
    from mqctl.sim.scenario import bundled

    return list(bundled())
