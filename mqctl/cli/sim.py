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
    import sys

    from mqctl.sim.serve import serve
    from mqctl.sim.started import started_result

    st = state(ctx)
    fmt = st.output(output)

    def stopped() -> None:
        if not st.quiet:
            sys.stderr.write("mqctl sim: stopped\n")

    # through the one output path: -q prints nothing, -o json one document, flushed once
    # every server listens; the command then runs until signalled (docs/scenario.md)
    asyncio.run(serve(scenario, host=host, port=port, clock=clock, speed=speed, log_dir=log_dir,
                      on_started=lambda summary: emit(started_result(summary), fmt),
                      on_stopped=stopped))




@app.command("scenarios")
def scenarios(ctx: typer.Context, output: OutputOpt = None) -> None:
    """List the bundled scenarios."""
    from mqctl.render import Result, Table, cols
    from mqctl.sim import bundled

    st = state(ctx)
    rows = [{"scenario": k, "description": v} for k, v in bundled().items()]
    emit(Result([Table(cols("scenario", "description"), rows, name="scenarios")]),
         st.output(output))


def scenario_names() -> list[str]:
    """The bundled scenarios' names (what ``sim up --scenario`` completes to)."""
    from mqctl.sim.scenario import bundled

    return list(bundled())
