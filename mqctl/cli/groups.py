"""``mqctl groups``: every consumer group at a glance (issue 18 items 1, 2, 9)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from mqctl.cli.common import (
    MAX_THRESHOLD_S,
    ConcurrencyOpt,
    CountOpt,
    NamesrvOpt,
    OptionalWatchCommand,
    OutputOpt,
    WatchOpt,
    emit,
    state,
    with_client,
)
from mqctl.cli.common import watch as watch_loop
from mqctl.views.sort import GroupSort

if TYPE_CHECKING:
    from mqctl.render import Result
    from mqctl.views.groups import GroupsCapture

# mqctl.views.groups.STATE_RULE, kept here too so that `mqctl --help` imports nothing heavy (a test
# checks both say the same)
STATE_HELP = (
    "UNKNOWN: the membership could not be read; EMPTY: no online member and no committed "
    "offset (lag unknown: nothing was read); UNKNOWN: the lag is unknown (a broker that hosts "
    "the group's topics did not answer; a BROADCASTING group keeps its offsets in the "
    "clients: reason 'broadcasting'); OFFLINE: no online member, "
    "committed offsets exist; STOPPED: online, lag > 0 and no message consumed in the last "
    "minute; LAGGING: online, lag >= --lag-threshold or max time lag >= "
    "--time-lag-threshold; OK: online and none of the above."
)


def groups(
    ctx: typer.Context,
    only_lagging: Annotated[bool, typer.Option(
        "--only-lagging", help="Only groups with lag > 0.")] = False,
    match: Annotated[str | None, typer.Option(
        "--match", help="Only groups whose name contains this (case-insensitive; a glob with "
        "* ? [).", show_default=False)] = None,
    include_system: Annotated[bool, typer.Option(
        "--include-system", help="Also list RocketMQ's own groups (TOOLS_CONSUMER, "
        "SELF_TEST_C_GROUP, CID_ONSAPI_*, CID_RMQ_SYS_*, ...).")] = False,
    sort: Annotated[GroupSort, typer.Option("--sort", help="Row order (numbers: largest "
                                            "first, unknown last).")] = GroupSort.name,
    no_clients: Annotated[bool, typer.Option(
        "--no-clients", help="Do not ask the clients for their running info "
        "(GET_CONSUMER_RUNNING_INFO): faster; STRATEGY, ORDERLY and pop INFLIGHT unknown.")
    ] = False,
    no_time_lag: Annotated[bool, typer.Option(
        "--no-time-lag", help="Do not ask the time spans of lagging queues "
        "(QUERY_CONSUME_TIME_SPAN, one per lagging group, broker and topic): faster on big "
        "clusters; MAX TIME LAG unknown, LAGGING judged on the lag alone.")] = False,
    lag_threshold: Annotated[int, typer.Option(
        "--lag-threshold", min=1, help="LAGGING from this many messages behind.")] = 1000,
    time_lag_threshold: Annotated[float, typer.Option(
        "--time-lag-threshold", min=0.001, max=MAX_THRESHOLD_S, metavar="SECONDS",
        help="LAGGING from this time lag.")] = 60.0,
    watch: WatchOpt = None,
    count: CountOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """Every consumer group of the cluster, one row each: state, online members, consume
    type (push/pull/pop), message model, orderly, the strategy the clients report, total lag,
    max time lag, consume TPS, pop inflight, retry backlog and DLQ messages.

    Fast on big clusters: three requests per broker answer for all groups
    (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_BROKER_CONSUME_STATS as mqadmin brokerConsumeStats,
    GET_ALL_TOPIC_CONFIG); per group only the connection list, the clients' running info, the
    time spans of lagging queues, the DLQ topic's stats, GET_CONSUME_STATS where a broker's
    stats leave its queues out and QUERY_CONSUMER_OFFSET where a queue reads 0 (`none` or
    committed 0). LAG `(N none)`: N queues have no committed offset. A lag mqctl cannot know
    is `-` (or `>=N`, the lag on the brokers that answered), never 0.

    STATE: {state_help}

    Example: mqctl groups --only-lagging --sort lag
    """
    from mqctl.cli.common import make_admin, raise_partial
    from mqctl.remoting.client import RemotingClient
    from mqctl.views.groups import capture_groups
    from mqctl.views.groups_rows import groups_result

    st = state(ctx)
    settings = st.settings(namesrv=namesrv)
    fmt = st.output(output)

    async def once(client: RemotingClient) -> GroupsCapture:
        admin = make_admin(client, settings, concurrency)
        return await capture_groups(admin, include_system=include_system, match=match,
                                    clients=not no_clients, time_lag=not no_time_lag,
                                    lag_threshold=lag_threshold,
                                    time_lag_threshold_ms=int(time_lag_threshold * 1000))

    def render(c: GroupsCapture) -> Result:
        return groups_result(c, only_lagging=only_lagging, sort=sort)

    if watch is None:
        c = with_client(st, settings, once)
        emit(render(c), fmt)
        raise_partial(c.failures, "groups", c.unread_members)
        return
    watch_loop(settings, once, render, fmt, watch, count)


groups.__doc__ = (groups.__doc__ or "").replace("{state_help}", STATE_HELP)


def register(app: typer.Typer) -> None:
    app.command("groups", cls=OptionalWatchCommand)(groups)


__all__ = ["STATE_HELP", "groups", "register"]
