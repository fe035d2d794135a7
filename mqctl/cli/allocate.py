"""``mqctl allocate``: which consumer will own which queue, before you deploy."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import typer

from mqctl.cli.common import (
    emit,
    make_admin,
    pick_group,
    state,
    warn,
    with_client,
)
from mqctl.cli.options import (
    AddConsumerOpt,
    AgainstLiveOpt,
    AllocateQueuesOpt,
    BrokerRoomRegexOpt,
    ByQueueOpt,
    CompareOpt,
    ConcurrencyOpt,
    ConsumerRoomRegexOpt,
    ConsumersOpt,
    GroupArg,
    GroupOption,
    InnerOpt,
    ListStrategiesOpt,
    NamesrvOpt,
    OutputOpt,
    PreviousOpt,
    QueueConfigOpt,
    RemoveConsumerOpt,
    RoomsOpt,
    StrategyOpt,
    TopicOpt,
    TopologyOpt,
    VirtualNodesOpt,
)

if TYPE_CHECKING:
    from mqctl.allocate.live import LiveGroup, LiveReports, StrategyChoice
    from mqctl.allocate.preview import PreviewOptions
    from mqctl.render import Result

HELP = """\
Preview the queue allocation of a consumer group, exactly as RocketMQ's clients compute it.

Inputs: a topology file (--topology), shorthand (--queues broker-a:8,broker-b:8 --consumers 3;
a count generates ids 10.0.0.1@1, 10.0.0.2@2, ...), or the live cluster (--group G --topic T:
readable queues from the name server, member ids from every broker of the topic).

Live, the strategy is the one the clients report (allocateMessageQueueStrategy in their
running info), said in a note; clients that disagree are predicted per client, with a warning;
--strategy overrides. consistent-hash assumes the default 10 virtual nodes (--virtual-nodes).

What-if: --add-consumer / --remove-consumer / --compare STRATEGY show the queues that move.
--against-live compares the prediction with what each client reports owning.

Tables: consumers (queues with --by-queue); a what-if: moves (what -o csv prints), counts,
queues (--by-queue); live adds brokers and differences. --table NAME picks one.

\b
Examples:
  mqctl allocate --strategy avg --queues broker-a:8,broker-b:8 --consumers 3
  mqctl allocate -g GID_ORDER -t TopicOrder --add-consumer 10.0.0.9@9
  mqctl allocate -g GID_ORDER -t TopicOrder --against-live
"""


def allocate(
    ctx: typer.Context,
    strategy: StrategyOpt = None,
    topology: TopologyOpt = None,
    queues: AllocateQueuesOpt = None,
    consumers: ConsumersOpt = None,
    group: GroupOption = None,
    topic: TopicOpt = None,
    virtual_nodes: VirtualNodesOpt = None,
    queue_config: QueueConfigOpt = None,
    rooms: RoomsOpt = None,
    inner: InnerOpt = None,
    broker_room_regex: BrokerRoomRegexOpt = None,
    consumer_room_regex: ConsumerRoomRegexOpt = None,
    previous: PreviousOpt = None,
    add_consumer: AddConsumerOpt = None,
    remove_consumer: RemoveConsumerOpt = None,
    compare: CompareOpt = None,
    against_live: AgainstLiveOpt = False,
    by_queue: ByQueueOpt = False,
    list_strategies: ListStrategiesOpt = False,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
    concurrency: ConcurrencyOpt = None,
    group_pos: GroupArg = None,
) -> None:
    from mqctl.allocate import registry
    from mqctl.allocate.preview import PreviewOptions, build_params, offline_inputs, preview
    from mqctl.errors import PartialFailure, UsageError

    group = pick_group(group_pos, group, example="mqctl allocate GID_PAY -t TopicPay")
    st = state(ctx)
    if list_strategies:
        from mqctl.allocate.report import strategies_result

        infos = registry.infos()
        _plugin_warnings()
        emit(strategies_result(infos), st.output(output))
        return

    live_mode = topology is None and queues is None and consumers is None
    if live_mode and bool(group) != bool(topic):
        raise UsageError(f"the live cluster needs both --group and --topic (got only "
                         f"{'--group' if group else '--topic'})",
                         hint="e.g. mqctl allocate -g GID_PAY -t TopicPay; `mqctl consumers "
                              "GROUP` lists the topics a group subscribes to")
    if live_mode and not (group and topic):
        raise UsageError("nothing to allocate",
                         hint="give --topology FILE, or --queues and --consumers, or --group "
                              "and --topic to read the live cluster")
    if against_live and not live_mode:
        raise UsageError("--against-live needs live inputs",
                         hint="use --group G --topic T without --topology/--queues")
    topo = None
    file_topic = topic
    if not live_mode:
        topo = offline_inputs(topology=topology, queues=queues, consumers=consumers,
                              topic=topic, group=group)
        topics = {mq.topic for mq in topo.queues}
        if file_topic is None and len(topics) == 1:
            file_topic = next(iter(topics))  # for 'broker:queueId' in --queue-config/--previous
    opts = PreviewOptions(
        strategy=strategy or "avg",
        params=build_params(virtual_nodes=virtual_nodes, rooms=rooms,
                            queue_config=queue_config, inner=inner,
                            broker_room_regex=broker_room_regex,
                            consumer_room_regex=consumer_room_regex, previous=previous,
                            topic=file_topic),
        add=tuple(add_consumer or ()), remove=tuple(remove_consumer or ()), compare=compare,
        by_queue=by_queue)
    try:
        opts.check_strategies()
    finally:
        _plugin_warnings()

    live: LiveGroup | None = None
    reports: LiveReports | None = None
    choice: StrategyChoice | None = None
    if topo is None:
        assert group is not None and topic is not None
        from mqctl.allocate.live import check_subscribed, choose_strategy, pops

        live, reports = _read_live(st, namesrv, concurrency, group, topic)
        for w in check_subscribed(live, reports):  # exit 2 when no client subscribes
            warn(w)
        q_in, c_in, g_in = list(live.queues), list(live.consumers), group
        if not (pops(live, reports) or live.broadcasting):
            choice = choose_strategy(strategy, reports, consumers=c_in,
                                     virtual_nodes_given=virtual_nodes is not None)
            opts = _with_choice(opts, choice)
    else:
        q_in, c_in, g_in = list(topo.queues), list(topo.consumers), topo.group
    shown = reports if against_live else None
    if choice is not None and choice.strategy is None and not opts.what_if and c_in:
        assert live is not None
        result = _per_client_preview(q_in, c_in, g_in, opts, choice, live, shown)
    else:
        result, _ = preview(q_in, c_in, g_in, opts, live=live, reports=shown,
                            broadcasting=topo is not None and topo.broadcasting,
                            running=reports)
    if choice is not None:
        _add_choice(result, choice)
    emit(result, st.output(output))
    failures = [(f.broker, f.message) for f in (live.failures if live else ())]
    # without --against-live a silent client only leaves its strategy unknown (a note); a
    # pop group's table shows what each client pops from, so a silent one is a gap in it
    asked = shown if shown is not None else (reports if reports is not None and reports.pops
                                             else None)
    failures += sorted(asked.failures.items()) if asked is not None else []
    if failures:
        raise PartialFailure(f"{len(failures)} broker/client request(s) failed: "
                             + "; ".join(f"{w}: {m}" for w, m in failures[:5]),
                             failures, hint="the output above covers what answered")


def _plugin_warnings() -> None:
    from mqctl.allocate import registry

    for p in registry.problems:
        warn(p)


def _read_live(st: Any, namesrv: str | None, concurrency: int | None, group: str, topic: str
               ) -> tuple[LiveGroup, LiveReports | None]:
    """Route, member lists and each client's running info (its strategy; with
    --against-live also its queues). Read-only: GET_CONSUMER_RUNNING_INFO is forwarded by a
    broker to the client, one request per client."""
    settings = st.settings(namesrv=namesrv)

    async def go(client: Any) -> tuple[LiveGroup, LiveReports | None]:
        from mqctl.allocate.live import read_live_group, read_reports

        admin = make_admin(client, settings, concurrency)
        live = await read_live_group(admin, group, topic)
        reports = None
        if live.consumers and not live.pop and not live.broadcasting:
            reports = await read_reports(admin, group, set(live.consumers), live.route)
        return live, reports

    return with_client(st, settings, go)


def _with_choice(opts: PreviewOptions, choice: StrategyChoice) -> PreviewOptions:
    """The options with the strategy the clients run (the most common one for a what-if when
    they disagree); a client strategy mqctl cannot configure is a usage error that names it."""
    import dataclasses

    from mqctl.errors import UsageError

    name = choice.strategy
    if name is None:
        counts: dict[str, int] = {}
        for n in choice.per_client.values():
            counts[n] = counts.get(n, 0) + 1
        name = max(counts, key=lambda k: (counts[k], k))
    new = dataclasses.replace(opts, strategy=name)
    if choice.source == "clients":
        try:
            new.check_strategies()
            for n in choice.per_client.values():
                dataclasses.replace(opts, strategy=n).check_strategies()
        except UsageError as exc:
            raise UsageError(f"the clients run {', '.join(choice.names)}: {exc.message}",
                             hint=exc.hint or "pass --strategy to predict with another "
                             "strategy") from None
    return new


def _per_client_preview(queues: list[Any], consumers: list[str], group: str,
                        opts: PreviewOptions, choice: StrategyChoice, live: LiveGroup,
                        reports: LiveReports | None) -> Result:
    """Clients that disagree on the strategy: each client's share as it computes it."""
    from mqctl.allocate import report
    from mqctl.allocate.live import per_client_allocation
    from mqctl.allocate.plan import compare_with_reports

    alloc = per_client_allocation(queues, consumers, group, choice.per_client, opts.params)
    result = report.allocation_result(alloc, opts.by_queue)
    report.add_live(result, live)
    if reports is not None:
        report.add_differences(result, compare_with_reports(alloc, reports.owned), reports,
                               alloc)
    return result


def _add_choice(result: Result, choice: StrategyChoice) -> None:
    from mqctl.allocate.report import add_strategy_choice

    add_strategy_choice(result, choice)
    for w in choice.warnings:
        warn(w)


def register(app: typer.Typer) -> None:
    app.command("allocate", help=HELP)(allocate)
