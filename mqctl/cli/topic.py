"""``mqctl topic status`` and ``mqctl topic consumers`` (read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import OptionalWatchCommand, emit, raise_partial, read, state, watch_view
from mqctl.cli.options import (
    ConcurrencyOpt,
    CountOpt,
    IncludeSystemOpt,
    NamesrvOpt,
    OutputOpt,
    TopicArg,
    WatchOpt,
)

if TYPE_CHECKING:
    from mqctl.views.topic import TopicConsumers, TopicStatus

app = typer.Typer(help="Topic views: queue offsets and store times, the groups consuming it.",
                  no_args_is_help=True)


@app.command("status", cls=OptionalWatchCommand)
def status(
    ctx: typer.Context,
    topic: TopicArg,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
    watch: WatchOpt = None,
    count: CountOpt = None,
) -> None:
    """Per queue: min and max offset, messages held and the store time of the last message
    (LAST UPDATED), as mqadmin topicStatus (GET_TOPIC_STATS_INFO on every broker).

    Unlike mqadmin, queues beyond a 4.x broker's write queues are listed too. `-` is unknown:
    an empty queue has no last message. Example: mqctl topic status TopicPay
    """
    from mqctl.views.topic_rows import status_result

    st = state(ctx)
    if watch is not None:
        return watch_view(st, namesrv, concurrency, lambda c: c.topic_status(topic),
                          status_result, output, watch, count, "topic status")
    s: TopicStatus = read(st, namesrv, concurrency, lambda c: c.topic_status(topic))
    emit(status_result(s), st.output(output))
    raise_partial(s.failures, f"topic status {topic}")


@app.command("consumers")
def consumers(
    ctx: typer.Context,
    topic: TopicArg,
    include_system: IncludeSystemOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
) -> None:
    """The groups consuming a topic (QUERY_TOPIC_CONSUME_BY_WHO on every broker), each with
    its lag on this topic, members and subscription.

    A group is listed when it is online with a subscription to the topic or has committed
    offsets on it, so an offline group keeps appearing with its lag. A name the brokers list
    that is not a group (5.3.3 lists the topic's own name) is dropped, and the notes say so.
    LAG is the group's total on this topic over every broker (GET_CONSUME_STATS), `-` when
    none could be read.
    Example: mqctl topic consumers TopicPay
    """
    from mqctl.views.topic_rows import consumers_result

    st = state(ctx)
    c: TopicConsumers = read(st, namesrv, concurrency,
                             lambda cl: cl.topic_consumers(topic, include_system=include_system))
    emit(consumers_result(c), st.output(output))
    lag_fail = [g.group for g in c.groups if g.lag_not_included]
    if c.failures or c.config_failures:
        raise_partial([*c.failures, *c.config_failures], f"topic consumers {topic}")
    if lag_fail:
        from mqctl.errors import PartialFailure

        raise PartialFailure(f"the lag of {len(lag_fail)} group(s) misses some brokers: "
                             f"{', '.join(lag_fail[:5])}",
                             [(g, "consume stats") for g in lag_fail],
                             hint="see LAG NOT INCLUDED above; check those brokers")
