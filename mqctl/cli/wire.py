"""``mqctl wire decode``: read tcpdump text, pcap files, hex dumps, raw frames and bodies."""

from __future__ import annotations

import typer

from mqctl.cli.common import emit, state
from mqctl.cli.options import CaptureFileArg, OutputOpt, WireAsOpt

app = typer.Typer(help="Decode captured RocketMQ frames and bodies.", no_args_is_help=True)

@app.command("decode")
def decode_cmd(
    ctx: typer.Context,
    file: CaptureFileArg,
    kind: WireAsOpt = "auto",
    output: OutputOpt = None,
) -> None:
    """Decode frames (header fields and parsed body) or a bare body.

    A capture (tcpdump text or pcap) lists every RocketMQ frame in it with its direction
    (src -> dst), reassembled across TCP segments, and pairs requests with responses by opaque.
    Bodies are shown parsed: fastjson documents, and the stored-message batch of a
    PULL_MESSAGE response as one row per message (topic, queue, offset, store time, keys, tags,
    body size, properties). Secret-like fields (SecurityToken, *secret*, *password*) are
    redacted.

    Input size: one raw frame or body is read up to the 16 MiB frame limit, a tcpdump text,
    pcap or hex capture up to 256 MiB; a larger input is refused (exit 2) before it is read.

    Example: tcpdump -i any -s 0 -nn -X port 10911 > cap.txt; mqctl wire decode cap.txt
    """
    from mqctl.render import Result
    from mqctl.wire import (
        Capture,
        capture_record,
        capture_view,
        decode_input,
        frame_view,
        machine_view,
        read_input,
        to_record,
    )

    st = state(ctx)
    d = decode_input(read_input(file, kind), kind)
    if isinstance(d, Capture):
        rec = capture_record(d)
        tables, notes = capture_view(rec)
        emit(Result(tables, data=rec, notes=notes), st.output(output))
        return
    rec = to_record(d)
    tables, notes = frame_view(rec, title=d.source_kind)
    machine, main = machine_view(rec, tables)
    emit(Result(tables + machine, data=rec, notes=notes, main=main), st.output(output))
