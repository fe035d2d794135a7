"""Decode captured frames and bodies (the codec's public face, used by ``mqctl wire decode``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mqctl.errors import BodyError, FrameError, ProtocolError, UsageError
from mqctl.remoting import fastjson
from mqctl.remoting.frame import RemotingCommand, decode
from mqctl.remoting.protocol import parse_hex_capture


@dataclass(frozen=True)
class Decoded:
    command: RemotingCommand | None  # None for a bare body
    body: Any  # parsed body, or None
    body_text: str | None  # the body when it is not fastjson (shown as text)
    source_kind: str  # "hex frame", "raw frame", "body"


def read_input(path: str) -> bytes:
    import sys

    if path == "-":
        return sys.stdin.buffer.read()
    p = Path(path)
    try:
        return p.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"file not found: {path}",
                          hint="pass a capture or body file ('-' reads stdin)") from None
    except IsADirectoryError:
        raise UsageError(f"{path} is a directory, not a capture file",
                          hint="pass one capture or body file") from None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}",
                          hint="check the path and its permissions") from None


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


def decode_input(data: bytes, kind: str = "auto") -> Decoded:
    if kind not in ("auto", "frame", "hex", "body"):
        raise UsageError(f"unknown input kind {kind!r}", hint="use auto, frame, hex or body")
    if kind == "hex" or (kind == "auto" and _looks_hex(data)):
        frame = parse_hex_capture(data.decode("ascii", "replace"))
        cmd = decode(frame)
        body, text = parse_body(cmd.body)
        return Decoded(cmd, body, text, "hex frame")
    if kind == "frame" or (kind == "auto" and _looks_frame(data)):
        cmd = decode(data)
        body, text = parse_body(cmd.body)
        return Decoded(cmd, body, text, "raw frame")
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
        return Decoded(None, fastjson.loads(data), None, "body")
    except BodyError as exc:
        raise BodyError(exc.message, pos=exc.pos,
                        hint="the file is not a frame, so it was read as a fastjson body"
                        if kind == "auto" else None) from None


def to_record(d: Decoded) -> dict[str, Any]:
    """JSON shape: header fields at top level under their protocol names, body under body."""
    body = fastjson.to_plain(d.body) if d.body is not None else d.body_text
    if d.command is None:
        return {"body": body}
    c = d.command
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
        "remark": c.remark,
        "extFields": dict(c.ext_fields) if c.ext_fields is not None else None,
        "bodyLength": len(c.body),
        "body": body,
    }


__all__ = ["Decoded", "decode_input", "read_input", "to_record", "ProtocolError"]
