"""``mqctl topics``: the topics the name server knows, with their kind (read-only)."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, raise_partial, read, state
from mqctl.cli.options import MatchOpt, NamesrvOpt, OutputOpt, TopicKind, TopicKindOpt


def topics(
    ctx: typer.Context,
    kind: TopicKindOpt = TopicKind.normal,
    match: MatchOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """List topics known to the name server, with their kind (normal, retry, dlq, system),
    queue count and, on 5.x, message type.

    Kinds follow RocketMQ's TopicValidator: system includes the topics named after each
    cluster and broker (shown as kind cluster / broker) and <cluster>_REPLY_TOPIC; --kind all
    lists every topic the name server returns, as mqadmin topicList does. QUEUES: read queues
    summed over the master brokers that have the topic (GET_ALL_TOPIC_CONFIG, one request per
    broker); TYPE: the 5.x topic attribute message.type (NORMAL, FIFO, DELAY, TRANSACTION;
    NORMAL when unset), `-` on 4.x (no message types). --match is case-insensitive.

    Example: mqctl topics --kind all --match pay
    """
    from mqctl.admin import BrokerFailure
    from mqctl.views.topics import topics_result

    st = state(ctx)
    t = read(st, namesrv, None, lambda c: c.topics())
    emit(topics_result(t.names, t.info, t.configs, kind.value, match), st.output(output))
    raise_partial([v for v in t.configs.values() if isinstance(v, BrokerFailure)], "topics")


def register(app: typer.Typer) -> None:
    app.command("topics")(topics)
