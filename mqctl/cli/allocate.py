"""``mqctl allocate``: which consumer will own which queue, before you deploy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import cluster, emit, pick_group, state
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
    pass

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
    from mqctl.allocate.workflow import AllocateRequest, offline, prepare, strategies

    group = pick_group(group_pos, group, example="mqctl allocate GID_PAY -t TopicPay")
    st = state(ctx)
    if list_strategies:
        emit(strategies(), st.output(output))
        return
    prepared = prepare(AllocateRequest(
        group=group, topic=topic, strategy=strategy, topology=topology, queues=queues,
        consumers=consumers, virtual_nodes=virtual_nodes, queue_config=queue_config,
        rooms=rooms, inner=inner, broker_room_regex=broker_room_regex,
        consumer_room_regex=consumer_room_regex, previous=previous,
        add=tuple(add_consumer or ()), remove=tuple(remove_consumer or ()), compare=compare,
        against_live=against_live, by_queue=by_queue))
    if prepared.request.live:
        with cluster(st, namesrv, concurrency) as c:
            outcome = c.allocate(prepared)
    else:
        outcome = offline(prepared)
    emit(outcome.result, st.output(output))
    err = outcome.error()
    if err is not None:
        raise err


def register(app: typer.Typer) -> None:
    app.command("allocate", help=HELP)(allocate)
