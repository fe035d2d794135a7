"""``mqctl wire decode``: read tcpdump text, pcap files, hex dumps, raw frames and bodies."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from mqctl.cli.common import OutputOpt, emit, state

app = typer.Typer(help="Decode captured RocketMQ frames and bodies.", no_args_is_help=True)

MESSAGE_COLUMNS = ("topic", "queueId", "queueOffset", "storeTime", "keys", "tags", "bodySize",
                   "properties")


@app.command("decode")
def decode_cmd(
    ctx: typer.Context,
    file: Annotated[str, typer.Argument(help="Capture file: tcpdump text (-x, -xx, -X, -XX "
                                             "as tcpdump prints it), a pcap file, a hex dump "
                                             "of one frame (xxd or bare hex), raw frame bytes, "
                                             "or a bare body; '-' = stdin.")],
    kind: Annotated[str, typer.Option("--as", help="Input kind: auto, tcpdump, pcap, hex, "
                                                   "frame or body.")] = "auto",
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
    from mqctl.wire import Capture, capture_record, decode_input, read_input, to_record

    st = state(ctx)
    d = decode_input(read_input(file, kind), kind)
    if isinstance(d, Capture):
        rec = capture_record(d)
        tables, notes = _capture_view(rec)
        emit(Result(tables, data=rec, notes=notes), st.output(output))
        return
    rec = to_record(d)
    tables, notes = _frame_view(rec, title=d.source_kind)
    machine, main = _machine_view(rec, tables)
    emit(Result(tables + machine, data=rec, notes=notes, main=main), st.output(output))


def _leaves(value: Any, path: str = "") -> list[tuple[str, Any]]:
    """A decoded body as (path, value) rows: ``offsetTable.MessageQueue [...]``, ``x[0].y``."""
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items()
                for leaf in _leaves(v, f"{path}.{k}" if path else str(k))]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in _leaves(v, f"{path}[{i}]")]
    if isinstance(value, (dict, list)):
        return [(path, "{}" if isinstance(value, dict) else "[]")]
    return [(path, value)]


def _machine_view(rec: dict[str, Any], tables: list[Any]) -> tuple[list[Any], str]:
    """What ``-o csv`` prints for one frame or a bare body (one table): a frame's header fields
    followed by its body's leaves (``body.<path>``) as field/value rows; a bare body's message
    rows, or its leaves as path/value rows."""
    from mqctl.render import Table, cols

    body = rec.get("body")
    if rec.get("code") is not None:
        fields: list[dict[str, Any]] = next((t.rows for t in tables if t.name == "fields"),
                                            [])
        rows = list(fields) + ([{"field": p, "value": v} for p, v in _leaves(body, "body")]
                               if body is not None else [])
        return [Table(cols("field", "value"), rows, name="frame", machine_only=True)], "frame"
    if rec.get("bodyFormat") == "messages" and isinstance(body, list):
        return [], "messages"
    rows = [{"path": p, "value": v} for p, v in _leaves(body)] if body is not None else []
    return [Table(cols("path", "value"), rows, name="body", machine_only=True)], "body"


def _frame_view(rec: dict[str, Any], title: str) -> tuple[list[Any], list[str]]:
    from mqctl.render import Table, cols

    fields = [{"field": k, "value": _version_text(rec) if k == "version" else v}
              for k, v in rec.items()
              if k not in ("body", "bodyError", "versionName")
              and not (k == "bodyFormat" and v is None)]
    tables = [Table(cols("field", "value"), fields, title=title, name="fields")] if rec.get(
        "code") is not None else []
    body_tables, notes = _body_view(rec, "")
    return tables + body_tables, notes


def _body_view(rec: dict[str, Any], where: str) -> tuple[list[Any], list[str]]:
    from mqctl.remoting.fastjson import dumps
    from mqctl.render import Table, cols

    body, fmt = rec.get("body"), rec.get("bodyFormat")
    notes: list[str] = []
    tables = []
    label = f"{where} body" if where else "body"
    if fmt == "messages" and isinstance(body, list):
        tables.append(Table(cols(*MESSAGE_COLUMNS), body,
                            title=f"{label}: {len(body)} stored message(s)", name="messages"))
        if rec.get("bodyError"):
            notes.append(f"{label}: the message batch stops early: {rec['bodyError']}")
    elif isinstance(body, str):
        notes = [f"{label} (not fastjson, shown as text):", body]
    elif body is not None:
        notes = [f"{label}:", dumps(body, indent=2)]
    return tables, notes


def _capture_view(rec: dict[str, Any]) -> tuple[list[Any], list[str]]:
    from mqctl.render import Table, cols

    rows = []
    tables: list[Any] = []
    notes: list[str] = []
    for f in rec["frames"]:
        rows.append({"#": f["index"], "time": f["time"], "from": f["src"], "to": f["dst"],
                     "type": f["type"] + (" oneway" if f["oneway"] else ""),
                     "code": f"{f['codeName']} ({f['code']})", "opaque": f["opaque"],
                     "pair": f"#{f['pair']}" if f["pair"] else None,
                     "body": f"{f['bodyLength']} B {f['bodyFormat'] or ''}".strip()})
        if notes:
            notes.append("")
        notes.append(_frame_heading(f))
        if f["remark"] is not None:
            notes.append(f"  remark: {f['remark']}")
        if f["extFields"] is not None:
            ext = ", ".join(f"{k}={v}" for k, v in f["extFields"].items()) or "{}"
            notes.append(f"  extFields: {ext}")
        body_tables, body_notes = _body_view(f, f"#{f['index']}")
        tables += body_tables
        notes += [f"  {line}" for n in body_notes for line in n.splitlines()]
    title = f"{rec['source']}: {rec['packets']} packet(s), {len(rec['frames'])} frame(s)"
    frames = Table(cols("#", "time", "from", "to", "type", "code", "opaque", "pair", "body"),
                   rows, title=title, name="frames")
    if rec["notes"]:
        notes += ["", "capture notes:"] + [f"  {n}" for n in rec["notes"]]
    return [frames, *tables], notes


def _version_text(rec: dict[str, Any]) -> str:
    """``373 (V4_8_0)``: the ordinal with its RocketMQ version name (MQVersion.Version)."""
    name = rec.get("versionName")
    return f"{rec.get('version')} ({name})" if name else str(rec.get("version"))


def _frame_heading(f: dict[str, Any]) -> str:
    head = (f"#{f['index']} {f['time'] or ''} {f['src']} -> {f['dst']} {f['type']}"
            f"{' (oneway)' if f['oneway'] else ''} {f['codeName']} ({f['code']}) "
            f"opaque {f['opaque']}, {f['language']} version {_version_text(f)}")
    if f["pair"] and f["type"] == "response":
        head += f", answers #{f['pair']} {f['requestCodeName']} ({f['requestCode']})"
    elif f["pair"]:
        head += f", answered by #{f['pair']}"
    return head
