"""``mqctl route``: a topic's route (read-only)."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, read, state
from mqctl.cli.options import NamesrvOpt, OutputOpt, TopicArg


def route(
    ctx: typer.Context,
    topic: TopicArg,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """Show a topic's route: brokers, addresses, master/slave, queue numbers, permissions.

    Example: mqctl route TopicOrder
    """
    from mqctl.views.route import route_result

    st = state(ctx)
    r = read(st, namesrv, None, lambda c: c.route(topic))
    emit(route_result(topic, r), st.output(output))


def register(app: typer.Typer) -> None:
    app.command("route")(route)
