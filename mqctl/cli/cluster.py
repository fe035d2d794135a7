"""``mqctl cluster``: the clusters and brokers the name server knows (read-only)."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, read, state
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
    info = read(st, namesrv, None, lambda c: c.cluster_info())
    emit(cluster_result(info), st.output(output))


def register(app: typer.Typer) -> None:
    app.command("cluster")(cluster)
