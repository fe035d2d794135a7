"""``mqctl groups``: every consumer group at a glance."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import OptionalWatchCommand, cluster, emit, state
from mqctl.cli.common import watch as watch_loop
from mqctl.cli.options import (
    ConcurrencyOpt,
    CountOpt,
    GroupSortOpt,
    IncludeSystemOpt,
    LagThresholdOpt,
    MatchOpt,
    NamesrvOpt,
    NoClientsOpt,
    NoTimeLagOpt,
    OnlyLaggingOpt,
    OutputOpt,
    TimeLagThresholdOpt,
    WatchOpt,
)
from mqctl.views.sort import GroupSort

if TYPE_CHECKING:
    from mqctl.api import Cluster
    from mqctl.render import Result
    from mqctl.views.groups import GroupsCapture

# mqctl.views.groups.STATE_RULE, kept here too so that `mqctl --help` imports nothing heavy (a test
# checks both say the same)
STATE_HELP = (
    "UNKNOWN: the membership could not be read; PAUSED: consumeEnable=false on a master "
    "(`group pause`; who and when if mqctl paused it from here); EMPTY: no online member and "
    "no committed "
    "offset (lag unknown: nothing was read); UNKNOWN: the lag is unknown (a broker that hosts "
    "the group's topics did not answer; a BROADCASTING group keeps its offsets in the "
    "clients: reason 'broadcasting'); OFFLINE: no online member, "
    "committed offsets exist; STOPPED: online, lag > 0 and no message consumed in the last "
    "minute; LAGGING: online, lag >= --lag-threshold or max time lag >= "
    "--time-lag-threshold; OK: online and none of the above."
)


def groups(
    ctx: typer.Context,
    only_lagging: OnlyLaggingOpt = False,
    match: MatchOpt = None,
    include_system: IncludeSystemOpt = False,
    sort: GroupSortOpt = GroupSort.name,
    no_clients: NoClientsOpt = False,
    no_time_lag: NoTimeLagOpt = False,
    lag_threshold: LagThresholdOpt = 1000,
    time_lag_threshold: TimeLagThresholdOpt = 60.0,
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
    from mqctl.cli.common import raise_partial
    from mqctl.views.groups_rows import groups_result

    st = state(ctx)
    fmt = st.output(output)

    def once(c: Cluster) -> GroupsCapture:
        return c.groups(include_system=include_system, match=match, clients=not no_clients,
                        time_lag=not no_time_lag, lag_threshold=lag_threshold,
                        time_lag_threshold_s=time_lag_threshold)

    def render(g: GroupsCapture) -> Result:
        return groups_result(g, only_lagging=only_lagging, sort=sort)

    with cluster(st, namesrv, concurrency) as c:
        if watch is not None:
            return watch_loop(c, once, render, fmt, watch, count, "groups", output)
        g = once(c)
    emit(render(g), fmt)
    raise_partial(g.failures, "groups", g.unread_members)


groups.__doc__ = (groups.__doc__ or "").replace("{state_help}", STATE_HELP)


def register(app: typer.Typer) -> None:
    app.command("groups", cls=OptionalWatchCommand)(groups)


__all__ = ["STATE_HELP", "groups", "register"]
