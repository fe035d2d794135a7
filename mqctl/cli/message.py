"""``mqctl message show``: the message at an offset, read without moving any group's offset."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from mqctl.cli.common import NamesrvOpt, OutputOpt, emit, state, with_client

if TYPE_CHECKING:
    from mqctl.render import Result
    from mqctl.views.message import MessageAt

app = typer.Typer(help="Messages: the message at an offset (read-only).", no_args_is_help=True)


def show_result(at: MessageAt, body_bytes: int) -> Result:
    from mqctl.render import Column, Result, Table
    from mqctl.timeparse import format_local
    from mqctl.views.message import TOOLS_CONSUMER_GROUP, message_record, printable

    rec = message_record(at, body_bytes)
    m = at.message
    assert m is not None
    body_cell = (rec["bodyHead"] if rec["bodyHead"] is not None else rec["bodyNote"]) or ""
    if rec["bodyTruncated"]:
        body_cell += f" … ({rec['bodyHeadBytes']} of {rec['uncompressedBodySize']} bytes)"
    fields = [
        ("topic", printable(m.topic.encode())),
        ("broker", at.mq.broker_name),
        ("queue id", str(m.queue_id)),
        ("queue offset", str(m.queue_offset)),
        ("store time", f"{format_local(m.store_timestamp)} ({rec['storeTime']})"),
        ("born time", f"{format_local(m.born_timestamp)} ({rec['bornTime']})"),
        ("born host", m.born_host),
        ("store host", m.store_host),
        ("keys", printable(" ".join(m.keys).encode()) or "-"),
        ("tags", printable(m.tags.encode()) if m.tags else "-"),
        ("msg id", m.msg_id),
        ("commit log offset", str(m.commit_log_offset)),
        ("unique key", printable(m.properties.get("UNIQ_KEY", "").encode()) or "-"),
        ("reconsume times", str(m.reconsume_times)),
        ("body size", f"{len(m.body)} bytes" + (
            f" stored, {m.compression} compressed"
            + (f" ({rec['uncompressedBodySize']} bytes plain)"
               if rec["uncompressedBodySize"] is not None else "") if m.compressed else "")),
        ("body", body_cell or "(empty)"),
    ]
    frows = [{"field": k, "value": v} for k, v in fields]
    prows = [{"name": printable(k.encode()), "value": printable(v.encode())}
             for k, v in sorted(m.properties.items())]
    notes = [f"read with one PULL_MESSAGE as group {TOOLS_CONSUMER_GROUP} without the commit "
             f"flag: no group's offset moved (queue {at.mq.broker_name}/{at.mq.queue_id} "
             f"holds offsets {at.min_offset} to {at.max_offset - 1})"]
    return Result([Table([Column("field", "FIELD"), Column("value", "VALUE")], frows,
                         title=f"message at {at.mq.topic} {at.mq.broker_name}/"
                               f"{at.mq.queue_id} offset {at.offset}", name="message"),
                   Table([Column("name", "PROPERTY"), Column("value", "VALUE")], prows,
                         title="properties", name="properties")],
                  data=rec, notes=notes)


@app.command("show")
def show(
    ctx: typer.Context,
    topic: Annotated[str, typer.Option("--topic", "-t", help="Topic.")],
    broker: Annotated[str, typer.Option("--broker", "-b", help="Broker name (as `mqctl "
                                        "route TOPIC` lists it).")],
    queue: Annotated[int, typer.Option("--queue", "-q", "--queue-id", min=0,
                                       help="Queue id.")],
    offset: Annotated[int, typer.Option("--offset", min=0, help="Queue offset (no short "
                                        "form: -o is the output format everywhere).")],
    body_bytes: Annotated[int, typer.Option("--body-bytes", min=0, help="How many bytes of "
                                            "the body to show.")] = 256,
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
    from mqctl.views.message import read_message

    st = state(ctx)
    settings = st.settings(namesrv=namesrv)

    async def go(client: Any) -> MessageAt:
        from mqctl.admin import Admin

        admin = Admin(client, settings.namesrv, concurrency=settings.concurrency)
        return await read_message(admin, topic, broker, queue, offset)

    at = with_client(st, settings, go)
    emit(show_result(at, body_bytes), st.output(output))
