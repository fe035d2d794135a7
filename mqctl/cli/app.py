"""The root Typer app: global options and the command groups.

Each command group lives in its own module under ``mqctl/cli/`` and is registered here.
"""

from __future__ import annotations

from typing import Annotated

import typer

from mqctl import __version__
from mqctl.cli import (
    allocate,
    config_cmd,
    demo,
    inspect,
    lag,
    locks,
    offsets,
    sim,
    snapshot,
    timecmd,
    wire,
)
from mqctl.cli.common import AppState, OutputFormat

HELP = """\
mqctl: operations toolkit for Apache RocketMQ consumer groups.

Which consumer owns which queue and why, what changes when a consumer joins or leaves, why an
orderly queue is stuck, how far behind a group is (messages and seconds), and how to replay
from a point in time safely. Talks RocketMQ's remoting protocol directly; no Java needed.
"""

app = typer.Typer(name="mqctl", help=HELP, no_args_is_help=True, add_completion=True,
                  pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]})


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mqctl {__version__}")
        raise typer.Exit(0)


@app.callback()
def root(
    ctx: typer.Context,
    namesrv: Annotated[str | None, typer.Option(
        "--namesrv", "-n", help="Name server address(es), 'host:port;host:port', no "
        "http:// (env NAMESRV_ADDR; default 127.0.0.1:9876).", show_default=False)] = None,
    profile: Annotated[str | None, typer.Option(
        "--profile", help="Profile from the config file (env MQCTL_PROFILE).",
        show_default=False)] = None,
    config: Annotated[str | None, typer.Option(
        "--config", help="Config file (env MQCTL_CONFIG; default "
        "~/.config/mqctl/config.yaml).", show_default=False)] = None,
    output: Annotated[OutputFormat | None, typer.Option(
        "--output", "-o", help="Output format: table, plain, json, yaml or csv.",
        show_default=False)] = None,
    timeout: Annotated[float | None, typer.Option(
        "--timeout", help="Per-request timeout in seconds, 0.1 to 3600 (env MQCTL_TIMEOUT; "
        "default 3).", show_default=False)
    ] = None,
    tls: Annotated[bool, typer.Option("--tls", help="Connect with TLS.")] = False,
    tls_ca: Annotated[str | None, typer.Option(
        "--tls-ca", help="CA file to verify the server certificate (implies --tls).",
        show_default=False)] = None,
    tls_insecure: Annotated[bool, typer.Option(
        "--tls-insecure", help="Accept any server certificate, as the Java client does "
        "(implies --tls).")] = False,
    access_key: Annotated[str | None, typer.Option(
        "--access-key", help="ACL access key; the secret comes from the profile, a "
        "credentials file or MQCTL_SECRET_KEY, never from a flag.", show_default=False)] = None,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks.")] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress or notes on "
                                        "stderr.")] = False,
    version: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                          help="Show the version and exit.")] = False,
) -> None:
    ctx.obj = AppState(
        flags={"namesrv": namesrv, "output": output.value if output else None,
               "timeout": timeout, "tls": tls or None, "tls_ca": tls_ca,
               "tls_insecure": tls_insecure or None, "access_key": access_key},
        config_file=config, profile=profile, debug=debug, quiet=quiet)
    if debug:
        import logging

        logging.basicConfig(level=logging.DEBUG, format="%(name)s: %(message)s")


app.add_typer(config_cmd.app, name="config")
app.add_typer(wire.app, name="wire")
app.command("time", cls=timecmd.TimeCommand)(timecmd.time_cmd)
inspect.register(app)
app.command("snapshot")(snapshot.snapshot)
allocate.register(app)
app.add_typer(locks.app, name="locks")
app.add_typer(lag.app, name="lag")
app.add_typer(sim.app, name="sim")
app.command("demo")(demo.demo)
app.add_typer(offsets.app, name="offsets")
