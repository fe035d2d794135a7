"""``mqctl cluster``: the clusters and brokers the name server knows (read-only)."""

from __future__ import annotations

from typing import Any

import typer

from mqctl.cli.common import emit, make_admin, state, with_client
from mqctl.cli.options import NamesrvOpt, OutputOpt


def cluster(
    ctx: typer.Context,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """Show clusters, brokers and their addresses as the name server knows them.

    Example: mqctl cluster
    """
    from mqctl.views.route import cluster_result

    st = state(ctx)
    settings = st.settings(namesrv=namesrv)

    async def go(client: Any) -> Any:
        return await make_admin(client, settings).cluster_info()

    info = with_client(st, settings, go)
    emit(cluster_result(info), st.output(output))


def register(app: typer.Typer) -> None:
    app.command("cluster")(cluster)
