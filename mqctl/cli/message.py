"""``mqctl message``: show the message at an offset, find messages by key, unique key, id or
time, and track one across the groups of its topic (all read-only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from mqctl.cli.common import emit, raise_partial, read, state
from mqctl.cli.options import (
    BodyBytesOpt,
    BodyFileOpt,
    BrokerOpt,
    BrokerOption,
    KeyOpt,
    LimitOpt,
    MsgIdOpt,
    NamesrvOpt,
    OffsetOpt,
    OutputOpt,
    QueueIdOpt,
    QueueIdOption,
    TimeRangeOpt,
    TopicOpt,
    TopicReq,
    UniqueKeyOpt,
)

if TYPE_CHECKING:
    from mqctl.message.find import FindRequest, FindResult
    from mqctl.message.track_capture import TrackResult
    from mqctl.views.message import MessageAt

app = typer.Typer(help="Messages: the message at an offset, found by key, id or time, and "
                  "tracked across groups (read-only).", no_args_is_help=True)


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


def _request(topic: str | None, key: str | None, unique_key: str | None, msg_id: str | None,
             time: str | None, broker: str | None, queue: int | None, limit: int
             ) -> FindRequest:
    from mqctl.message.find import FindRequest, parse_time_range

    begin, end = parse_time_range(time)
    req = FindRequest(topic, key, unique_key, msg_id, begin, end, broker, queue, limit)
    req.check()
    return req


@app.command("find")
def find(
    ctx: typer.Context,
    topic: TopicOpt = None,
    key: KeyOpt = None,
    unique_key: UniqueKeyOpt = None,
    msg_id: MsgIdOpt = None,
    time: TimeRangeOpt = None,
    broker: BrokerOption = None,
    queue: QueueIdOption = None,
    limit: LimitOpt = 20,
    body_bytes: BodyBytesOpt = 48,
    body: BodyFileOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """Find messages: by --key (the brokers' index, on every broker of the topic), by
    --unique-key (the producer's id), by --msg-id (the offset message id: one
    VIEW_MESSAGE_BY_ID to the store host it names), or by --time FROM..TO on one queue (-b, -q:
    SEARCH_OFFSET_BY_TIMESTAMP, then pulls that commit nothing).

    Per message: broker, queue, offset, store time, born host, keys, tags, unique key,
    reconsume times, body size and an escaped preview (--body-bytes; `message show` for the
    whole record). The newest --limit are shown and the output says when it stopped there,
    and when a broker returned as many as its index gives per key (64; 32 for a unique key):
    there may be more, narrow --time. Example: mqctl message find -t TopicPay --key ORD-8812
    """
    from mqctl.message.body import write_body
    from mqctl.message.rows import find_result

    st = state(ctx)
    req = _request(topic, key, unique_key, msg_id, time, broker, queue, limit)
    res: FindResult = read(st, namesrv, None, lambda c: c.find_messages(req))
    written = write_body(res, body) if body is not None else None
    emit(find_result(res, body_bytes, body_file=body, body_written=written),
         st.output(output))
    raise_partial(res.failures, "messages")


@app.command("track")
def track(
    ctx: typer.Context,
    topic: TopicOpt = None,
    key: KeyOpt = None,
    unique_key: UniqueKeyOpt = None,
    msg_id: MsgIdOpt = None,
    time: TimeRangeOpt = None,
    output: OutputOpt = None,
    namesrv: NamesrvOpt = None,
) -> None:
    """What became of one message in every group of its topic: one row per group with its
    state, the evidence, the queue's owner and how long the message has waited.

    States: consumed (the committed offset is past it), waiting (with the messages ahead of
    it), filtered (the subscription expression does not take its tag: which one, from which
    client), retrying (a copy in %RETRY%group: reconsume times, next delay level),
    dead-lettered (a copy in %DLQ%group), broadcast: unknown (the offsets live in the
    clients), offline (no member), unknown (what was not read). A retry or DLQ copy outranks
    consumed: a message sent back moves the original offset on. Several matches: the newest
    is tracked. Example: mqctl message track -t TopicPay --key ORD-8812
    """
    from mqctl.message.rows import track_result

    st = state(ctx)
    req = _request(topic, key, unique_key, msg_id, time, None, None, 1)
    res: TrackResult = read(st, namesrv, None, lambda c: c.track_message(req))
    emit(track_result(res), st.output(output))
    raise_partial(res.failures, "groups")
