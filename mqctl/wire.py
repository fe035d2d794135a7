"""Decode captured frames and bodies (the codec's public face, used by ``mqctl wire decode``).

Inputs: tcpdump text (-x/-xx/-X/-XX) and pcap files (:mod:`mqctl.tcpdump`: many frames, with
direction and request/response pairs), a bare hex frame, a raw frame, or a bare body. Bodies are
fastjson documents, stored-message batches (PULL_MESSAGE responses,
:mod:`mqctl.remoting.message`) or text. Secret-like header fields and properties are redacted.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqctl import tcpdump
from mqctl.config import REDACTED
from mqctl.errors import BodyError, FrameError, ProtocolError, UsageError
from mqctl.remoting import fastjson
from mqctl.remoting.fastjson import dumps
from mqctl.remoting.frame import MAX_FRAME, RemotingCommand, decode
from mqctl.remoting.message import decode_messages, looks_like_messages
from mqctl.remoting.message import to_record as message_record
from mqctl.remoting.protocol import parse_hex_capture
from mqctl.render import Table, cols
from mqctl.tcpdump import Capture, CapturedFrame
from mqctl.versions import version_name

KINDS = ("auto", "tcpdump", "pcap", "hex", "frame", "body")


@dataclass(frozen=True)
class Decoded:
    command: RemotingCommand | None  # None for a bare body
    body: Any  # parsed body, or None
    body_text: str | None  # the body when it is not fastjson (shown as text)
    source_kind: str  # "hex frame", "raw frame", "body"
    body_format: str | None = None  # "fastjson", "messages", "text" or None (no body)
    body_error: str | None = None  # why a message batch stopped decoding early


def is_secret_key(key: str) -> bool:
    """Header fields and properties never shown: ACL's SecurityToken (an STS credential) and
    anything named like a secret key or password. AccessKey (an identifier) and Signature
    (an HMAC of the request, AclClientRPCHook) are not secrets and stay visible."""
    k = key.lower()
    return "secret" in k or "password" in k or k in ("securitytoken", "security_token")


def redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: (REDACTED if isinstance(k, str) and is_secret_key(k) and v is not None
                    else redact(v)) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


# The most ``wire decode`` reads (/dev/zero must not be read to 4 GB before a limit
# applies). One frame or bare body is at most the 16 MiB frame limit (NettyDecoder's
# frameMaxLength, counted with its prefix); a tcpdump text, pcap or hex capture can hold many
# frames (and text takes ~4 characters per byte), so it may be up to 256 MiB.
MAX_CAPTURE_INPUT = 256 * 1024 * 1024
SNIFF_BYTES = 65536


def input_limit(head: bytes, kind: str = "auto") -> int:
    """How many bytes an input whose first bytes are ``head`` may have."""
    if kind in ("frame", "body"):
        return MAX_FRAME
    if kind in ("tcpdump", "pcap", "hex") or tcpdump.is_pcap(head) or _is_text(head):
        return MAX_CAPTURE_INPUT
    return MAX_FRAME  # binary and not pcap: one raw frame or body


def _is_text(head: bytes) -> bool:
    """UTF-8 text without NUL or other control bytes (tab, CR and LF aside)."""
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the sniff boundary
            return False
    return not any(c < 32 and c not in (9, 10, 13) for c in head)


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise UsageError(f"unknown input kind {kind!r}", hint="use " + ", ".join(KINDS))


def read_input(path: str, kind: str = "auto") -> bytes:
    """The whole input, read in bounded steps: refused beyond :func:`input_limit`."""
    _check_kind(kind)
    if path == "-":
        return _read_bounded(sys.stdin.buffer, "stdin", kind)
    p = Path(path)
    try:
        with p.open("rb") as f:
            return _read_bounded(f, path, kind)
    except FileNotFoundError:
        raise UsageError(f"file not found: {path}",
                          hint="pass a capture or body file ('-' reads stdin)") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a capture file",
                          hint="pass one capture or body file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}",
                          hint="check the path and its permissions") from None


def _read_bounded(f: Any, name: str, kind: str) -> bytes:
    head = f.read(SNIFF_BYTES)
    limit = input_limit(head, kind)
    rest = f.read(limit + 1 - len(head)) if len(head) == SNIFF_BYTES else b""
    if len(head) + len(rest) > limit:
        what = ("a tcpdump text, pcap or hex capture" if limit == MAX_CAPTURE_INPUT
                else "one frame or body (the frame limit)")
        raise UsageError(
            f"{name}: input is larger than {limit} bytes, the most wire decode reads for {what}",
            hint=f"wire decode reads up to {MAX_FRAME >> 20} MiB for a raw frame or body and "
                 f"up to {MAX_CAPTURE_INPUT >> 20} MiB for a capture; cut the capture first "
                 "(e.g. tcpdump -r in.pcap -c 10000 -w part.pcap, or split the text at a "
                 "packet line)")
    return head + rest


def _looks_hex(data: bytes) -> bool:
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        return False
    stripped = "".join(text.split())
    if not stripped:
        return False
    allowed = set("0123456789abcdefABCDEFxX:#")
    # lines may carry offsets and an ASCII column; require mostly hex digits
    hexish = sum(1 for c in stripped if c in allowed)
    return hexish / len(stripped) > 0.6 and not stripped.startswith(("{", "["))


def _looks_frame(data: bytes) -> bool:
    """A frame: its 4-byte length prefix matches the size (the decoder judges the rest)."""
    if len(data) < 8:
        return False
    total = int.from_bytes(data[0:4], "big", signed=True)
    return total + 4 == len(data)


def parse_body(body: bytes) -> tuple[Any, str | None]:
    """Parsed body, or (None, text) when it is not a fastjson document."""
    if not body:
        return None, None
    try:
        return fastjson.loads(body), None
    except BodyError:
        return None, body.decode("utf-8", "replace")


def _decoded(cmd: RemotingCommand, kind: str) -> Decoded:
    batch = _message_batch(cmd.body, cmd, kind)
    if batch is not None:
        return batch
    body, text = parse_body(cmd.body)
    fmt = None if not cmd.body else ("text" if text is not None else "fastjson")
    return Decoded(cmd, body, redact_text(text) if text is not None else None, kind, fmt)


def _message_batch(data: bytes, cmd: RemotingCommand | None, kind: str) -> Decoded | None:
    """A stored-message batch (a PULL_MESSAGE response body), recognised by its magic code."""
    if not looks_like_messages(data):
        return None
    msgs, err = decode_messages(data)
    return Decoded(cmd, [message_record(m) for m in msgs], None, kind, "messages", err)


def redact_text(text: str) -> str:
    """A properties text body (``key=value`` lines, e.g. GET_BROKER_CONFIG): secret-like
    values are replaced."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        key, sep, value = line.partition("=")
        if sep and value.strip() and is_secret_key(key.strip()):
            lines[i] = f"{key}={REDACTED}"
    return "\n".join(lines)


def decode_input(data: bytes, kind: str = "auto") -> Decoded | Capture:
    """One frame or body (:class:`Decoded`), or the frames of a capture (:class:`Capture`)."""
    _check_kind(kind)
    if kind == "pcap" or (kind == "auto" and tcpdump.is_pcap(data)):
        return tcpdump.decode_pcap(data)
    if kind == "tcpdump":
        return tcpdump.decode_text_capture(data.decode("utf-8", "replace"))
    if kind == "auto" and _looks_text(data):
        text = data.decode("utf-8", "replace")
        if tcpdump.looks_tcpdump_text(text):
            packets = tcpdump.parse_tcpdump_text(text)
            if any(tcpdump.tcp_segment(p) for p in packets):
                return tcpdump.checked(tcpdump.frames_of(packets, "tcpdump text"))
            # 0x offsets but no IP/TCP headers: a hex dump of a bare frame, read below
    if kind == "hex" or (kind == "auto" and _looks_hex(data)):
        frame = parse_hex_capture(data.decode("ascii", "replace"))
        return _decoded(decode(frame), "hex frame")
    if kind == "frame" or (kind == "auto" and _looks_frame(data)):
        return _decoded(decode(data), "raw frame")
    batch = _message_batch(data, None, "body") if kind in ("auto", "body") else None
    if batch is not None:
        return batch
    if kind == "auto" and data[:1] not in (b"{", b"[") and data.strip()[:1] not in (b"{", b"["):
        # neither a frame nor a JSON body: explain both expectations
        if len(data) >= 4 and int.from_bytes(data[0:4], "big", signed=True) + 4 != len(data):
            try:
                decode(data)
            except FrameError as exc:
                raise FrameError(f"not a frame or a body: {exc.message}",
                                 hint="pass a hex capture, a raw frame, or a fastjson body "
                                      "file (--as to force one)") from None
    try:
        return Decoded(None, fastjson.loads(data), None, "body", "fastjson")
    except BodyError as exc:
        raise BodyError(exc.message, pos=exc.pos,
                        hint="the file is not a frame, so it was read as a fastjson body"
                        if kind == "auto" else None) from None


def _looks_text(data: bytes) -> bool:
    """Text that may hold tcpdump hex lines (``0x0000:``)."""
    head = data[:65536]
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the 64 KiB boundary
            return False
    return b"0x0" in head


def _shown_body(d: Decoded) -> Any:
    return redact(fastjson.to_plain(d.body)) if d.body is not None else d.body_text


def to_record(d: Decoded) -> dict[str, Any]:
    """JSON shape: header fields at top level under their protocol names, body under body."""
    body = _shown_body(d)
    if d.command is None:
        if d.body_format == "messages":
            return {"bodyFormat": "messages", "bodyError": d.body_error, "body": body}
        return {"body": body}
    return command_record(d.command, body, d.body_format, d.body_error)


def command_record(c: RemotingCommand, body: Any, body_format: str | None,
                   body_error: str | None) -> dict[str, Any]:
    return {
        "code": c.code,
        "codeName": c.code_name,
        "type": "response" if c.is_response else "request",
        "oneway": c.is_oneway,
        "serializeType": c.serialize_type.name,
        "flag": c.flag,
        "opaque": c.opaque,
        "language": c.language,
        "version": c.version,
        # MQVersion.Version name of the ordinal (mqctl/versions.py): 373 is V4_8_0
        "versionName": version_name(c.version) if isinstance(c.version, int) else None,
        "remark": c.remark,
        "extFields": redact(dict(c.ext_fields)) if c.ext_fields is not None else None,
        "bodyLength": len(c.body),
        "bodyFormat": body_format,
        "bodyError": body_error,
        "body": body,
    }


def frame_record(f: CapturedFrame, frames: list[CapturedFrame]) -> dict[str, Any]:
    """One frame of a capture: where it went, its pair, then the frame's own record."""
    d = _decoded(f.command, "capture")
    body = _shown_body(d)
    rec: dict[str, Any] = {"index": f.index, "time": f.time, "src": f.src, "dst": f.dst,
                           "segments": f.segments, "pair": f.pair}
    if f.command.is_response:
        req = frames[f.pair - 1].command if f.pair else None
        rec["requestCode"] = req.code if req else None
        rec["requestCodeName"] = req.code_name if req else None
    rec.update(command_record(f.command, body, d.body_format, d.body_error))
    return rec


def capture_record(cap: Capture) -> dict[str, Any]:
    return {"source": cap.source, "packets": cap.packets,
            "frames": [frame_record(f, cap.frames) for f in cap.frames], "notes": list(cap.notes)}


# ------------------------------------------------ the tables of ``mqctl wire decode`` (pure)

MESSAGE_COLUMNS = ("topic", "queueId", "queueOffset", "storeTime", "keys", "tags", "bodySize",
                   "properties")


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


def machine_view(rec: dict[str, Any], tables: list[Any]) -> tuple[list[Any], str]:
    """What ``-o csv`` prints for one frame or a bare body (one table): a frame's header fields
    followed by its body's leaves (``body.<path>``) as field/value rows; a bare body's message
    rows, or its leaves as path/value rows."""
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


def frame_view(rec: dict[str, Any], title: str) -> tuple[list[Any], list[str]]:
    fields = [{"field": k, "value": _version_text(rec) if k == "version" else v}
              for k, v in rec.items()
              if k not in ("body", "bodyError", "versionName")
              and not (k == "bodyFormat" and v is None)]
    tables = [Table(cols("field", "value"), fields, title=title, name="fields")] if rec.get(
        "code") is not None else []
    body_tables, notes = _body_view(rec, "")
    return tables + body_tables, notes


def _body_view(rec: dict[str, Any], where: str) -> tuple[list[Any], list[str]]:
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


def capture_view(rec: dict[str, Any]) -> tuple[list[Any], list[str]]:
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


__all__ = ["MESSAGE_COLUMNS", "Capture", "Decoded", "ProtocolError", "capture_record",
           "capture_view", "decode_input", "frame_view", "machine_view", "read_input",
           "redact", "to_record"]
