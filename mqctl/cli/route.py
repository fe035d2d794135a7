"""``mqctl route``: a topic's route (read-only)."""

from __future__ import annotations

from typing import Any

import typer

from mqctl.cli.common import emit, make_admin, state, with_client
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
    settings = st.settings(namesrv=namesrv)

    async def go(client: Any) -> Any:
        return await make_admin(client, settings).topic_route(topic, cached=False)

    r = with_client(st, settings, go)
    emit(route_result(topic, r), st.output(output))


def register(app: typer.Typer) -> None:
    app.command("route")(route)
