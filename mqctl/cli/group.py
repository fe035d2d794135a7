"""``mqctl group``: the views of one consumer group, ``group progress`` and ``group dlq`` here
and ``group config`` (:mod:`mqctl.cli.group_config`) (read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import (
    OptionalWatchCommand,
    cluster,
    emit,
    one_group,
    raise_partial,
    read,
    state,
)
from mqctl.cli.common import watch as watch_loop
from mqctl.cli.options import (
    ConcurrencyOpt,
    CountOpt,
    GroupArg,
    GroupOption,
    LastOpt,
    NamesrvOpt,
    NoClientsOpt,
    NoRetryOpt,
    OnlyLaggingOpt,
    OutputOpt,
    QueueSortOpt,
    StateDirReadOpt,
    TopicOpt,
    WatchOpt,
)
from mqctl.cli.typer_compat import default_group
from mqctl.views.sort import SortKey

if TYPE_CHECKING:
    from mqctl.api import Cluster
    from mqctl.message.dlq import GroupDlq
    from mqctl.render import Result
    from mqctl.views.progress import GroupProgress

group_app = typer.Typer(help="Consumer group views.", no_args_is_help=True)


@group_app.command("progress", cls=OptionalWatchCommand)
def progress(
    ctx: typer.Context,
    group: GroupArg = None,
    topic: TopicOpt = None,
    only_lagging: OnlyLaggingOpt = False,
    sort: QueueSortOpt = SortKey.queue,
    no_retry: NoRetryOpt = False,
    no_clients: NoClientsOpt = False,
    state_dir: StateDirReadOpt = None,
    watch: WatchOpt = None,
    count: CountOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
    group_opt: GroupOption = None,
) -> None:
    """Per-queue progress: offsets, lag in messages, inflight, last consume time, exact time
    lag in seconds (QUERY_CONSUME_TIME_SPAN) and the owning client; totals per topic.

    `-` is unknown, never 0: TIME LAG of a queue the group never committed an offset for, or
    of a lagging read-only queue (brokers report time spans for write queues only); INFLIGHT
    before 5.x brokers (no pullOffset), unless the owner reports its cache: `50 (client)`.
    Every readable queue is listed (more read than write queues included). Two consume rates,
    named apart: pulled TPS (brokers: messages handed to the group, mqadmin's "Consume TPS")
    and consumed TPS (clients: consumeOKTPS, processed OK), per topic next to the produce TPS
    the brokers report (5.3+); a rate a broker did not answer for is unknown. The %RETRY% queues
    and the %DLQ% topic are a separate section (--no-retry leaves it out). Pop (5.x) groups
    have no queue owners: their inflight (what the pop clients hold unacked) is per broker, as
    the clients count it. CONSUMER OFFSET `none`: the group has no committed offset there
    (its LAG counts the whole queue; where a consumer would start depends on
    consumeFromWhere). INFLIGHT `0 (no owner)`: no client holds the queue. OWNER of an orderly
    group's queue: its owner in the lock classification of `mqctl locks show`, with the state
    unless held (`10.0.0.8@2 (lock-failed)`, `... (hung)`).

    Tables: queues (what -o csv prints), topics, retry (--table NAME picks one).

    Example: mqctl group progress GID_ORDER --only-lagging --sort lag
    """
    from mqctl.views.progress_rows import progress_result, unanswered_of

    group = one_group(group, group_opt, example="mqctl group progress GID_ORDER")
    st = state(ctx)
    fmt = st.output(output)

    def once(c: Cluster) -> GroupProgress:
        return c.group_progress(group, topic=topic, clients=not no_clients, retry=not no_retry,
                                state_dir=state_dir)

    def render(p: GroupProgress) -> Result:
        return progress_result(p, only_lagging=only_lagging, sort=sort, retry=not no_retry)

    with cluster(st, namesrv, concurrency) as c:
        if watch is not None:
            return watch_loop(c, once, render, fmt, watch, count, "group progress", output)
        p = once(c)
    emit(render(p), fmt)
    # a member that did not answer leaves OWNER (and the clients' TPS) partial: exit 8
    raise_partial(p.failures, f"group progress {group}", unanswered_of(p))


def dlq(
    ctx: typer.Context,
    group: GroupArg = None,
    last: LastOpt = 20,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    group_opt: GroupOption = None,
) -> None:
    """The group's dead letters (%DLQ%GROUP): how many, the oldest and newest store time, and
    the last N with their original topic (RETRY_TOPIC), original id (ORIGIN_MESSAGE_ID), unique
    key and reconsume times, grouped by original topic. Read-only: the topic's stats, then
    pulls that commit nothing (at most --last messages per broker).

    Tables: last (what -o csv prints), byOriginalTopic. Example: mqctl group dlq GID_ORDER
    """
    from mqctl.message.rows import dlq_result

    group = one_group(group, group_opt, example="mqctl group dlq GID_ORDER")
    st = state(ctx)
    d: GroupDlq = read(st, namesrv, None, lambda c: c.group_dlq(group, last=last))
    emit(dlq_result(d), st.output(output))
    raise_partial(d.failures, f"group dlq {group}")


dlq_app = typer.Typer(
    cls=default_group("show"), no_args_is_help=False,
    help="The group's dead letters: show them (the default), resend them.")
dlq_app.command("show")(dlq)
group_app.add_typer(dlq_app, name="dlq")


def register(app: typer.Typer) -> None:
    app.add_typer(group_app, name="group")
