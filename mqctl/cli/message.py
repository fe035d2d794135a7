"""``mqctl message show``: the message at an offset, read without moving any group's offset."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import emit, read, state
from mqctl.cli.options import (
    BodyBytesOpt,
    BrokerOpt,
    NamesrvOpt,
    OffsetOpt,
    OutputOpt,
    QueueIdOpt,
    TopicReq,
)

if TYPE_CHECKING:
    from mqctl.views.message import MessageAt

app = typer.Typer(help="Messages: the message at an offset (read-only).", no_args_is_help=True)


@app.command("show")
def show(
    ctx: typer.Context,
    topic: TopicReq,
    broker: BrokerOpt,
    queue: QueueIdOpt,
    offset: OffsetOpt,
    body_bytes: BodyBytesOpt = 256,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """Show the message at an offset: store time, keys, tags, properties, born host, body
    size and the first bytes of the body (printable: other bytes as \\xNN).

    Reads with one PULL_MESSAGE as mqadmin queryMsgByOffset does: group TOOLS_CONSUMER (a
    group every broker holds for RocketMQ's tools), no commit flag, so no group's offset
    moves; and no heartbeat. An offset outside the queue's range is refused before anything is
    pulled (exit 2). Example: mqctl message show -t TopicPay -b broker-a -q 0 --offset 1200
    """
    from mqctl.views.message_rows import show_result

    st = state(ctx)
    at: MessageAt = read(st, namesrv, None, lambda c: c.message(topic, broker, queue, offset))
    emit(show_result(at, body_bytes), st.output(output))
