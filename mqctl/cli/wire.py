"""``mqctl wire decode``: read tcpdump/hex captures, raw frames and bodies."""

from __future__ import annotations

from typing import Annotated

import typer

from mqctl.cli.common import OutputOpt, emit, state

app = typer.Typer(help="Decode captured RocketMQ frames and bodies.", no_args_is_help=True)


@app.command("decode")
def decode_cmd(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="Capture file: hex text (as tcpdump/xxd print "
                                             "it), raw frame bytes, or a bare body; '-' = stdin.")],
    kind: Annotated[str, typer.Option("--as", help="Input kind: auto, hex, frame or body.")
                    ] = "auto",
    output: OutputOpt = None,
) -> None:
    """Decode a frame (header fields and parsed body) or a bare fastjson body.

    Example: mqctl wire decode capture.hex -o json
    """
    from mqctl.remoting.fastjson import dumps
    from mqctl.render import Result, Table, cols
    from mqctl.wire import decode_input, read_input, to_record

    st = state(ctx)
    d = decode_input(read_input(file), kind)
    rec = to_record(d)
    fields = [{"field": k, "value": v} for k, v in rec.items() if k != "body"]
    body = rec.get("body")
    notes = []
    if isinstance(body, str):
        notes = ["body (not fastjson, shown as text):", body]
    elif body is not None:
        notes = ["body:", dumps(body, indent=2)]
    tables = [Table(cols("field", "value"), fields, title=f"{d.source_kind}")] if fields else []
    emit(Result(tables, data=rec, notes=notes), st.output(output))
