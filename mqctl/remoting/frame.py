"""RocketMQ remoting frames: ``RemotingCommand`` and its two header encodings (pure, no I/O).

Frame layout (``NettyEncoder``/``NettyDecoder``, ``RemotingCommand.encode``), big-endian::

    int32 totalLength   = 4 + headerLength + bodyLength   (does not count itself)
    int32 headerInfo    = (serializeType << 24) | headerLength
    header              JSON text (type 0) or ROCKETMQ binary (type 1, RocketMQSerializable)
    body                opaque bytes (usually fastjson text)
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any

from mqctl.errors import BodyError, FrameError, HeaderError
from mqctl.remoting.codes import (
    language_from_byte,
    language_to_byte,
    request_name,
    response_name,
)
from mqctl.remoting.fastjson import loads

MAX_FRAME = 16 * 1024 * 1024  # com.rocketmq.remoting.frameMaxLength default, incl. the prefix
RPC_TYPE_RESPONSE = 1 << 0
RPC_ONEWAY = 1 << 1
DEFAULT_VERSION = 479  # MQVersion.Version.V5_3_3.ordinal()


class SerializeType(IntEnum):
    JSON = 0
    ROCKETMQ = 1


@dataclass(frozen=True, slots=True)
class RemotingCommand:
    code: int
    flag: int = 0
    opaque: int = 0
    language: str = "PYTHON"
    version: int = DEFAULT_VERSION
    remark: str | None = None
    ext_fields: dict[str, str] | None = None
    body: bytes = b""
    serialize_type: SerializeType = SerializeType.JSON
    extra_header: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def is_response(self) -> bool:
        return bool(self.flag & RPC_TYPE_RESPONSE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & RPC_ONEWAY)

    @property
    def code_name(self) -> str:
        return response_name(self.code) if self.is_response else request_name(self.code)

    def ext(self, key: str, default: str | None = None) -> str | None:
        return (self.ext_fields or {}).get(key, default)

    def with_(self, **changes: Any) -> RemotingCommand:
        return replace(self, **changes)

    @classmethod
    def request(cls, code: int, ext_fields: dict[str, Any] | None = None, body: bytes = b"",
                *, oneway: bool = False, version: int = DEFAULT_VERSION,
                language: str = "PYTHON") -> RemotingCommand:
        return cls(code=int(code), flag=RPC_ONEWAY if oneway else 0, version=version,
                   language=language, ext_fields=stringify_ext(ext_fields), body=body)

    def response(self, code: int = 0, remark: str | None = None,
                 ext_fields: dict[str, Any] | None = None, body: bytes = b"",
                 *, language: str = "JAVA", version: int = DEFAULT_VERSION) -> RemotingCommand:
        """A response to this request: same opaque, response flag set."""
        return RemotingCommand(code=int(code), flag=RPC_TYPE_RESPONSE, opaque=self.opaque,
                               language=language, version=version, remark=remark,
                               ext_fields=stringify_ext(ext_fields), body=body,
                               serialize_type=self.serialize_type)


def stringify_ext(fields: dict[str, Any] | None) -> dict[str, str] | None:
    """Header fields travel as strings; None values are omitted (``makeCustomHeaderToNet``)."""
    if fields is None:
        return None
    out: dict[str, str] = {}
    for k, v in fields.items():
        if v is None:
            continue
        if isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, IntEnum):
            out[k] = str(int(v))
        else:
            out[k] = str(v)
    return out


# ---------------------------------------------------------------------------------------------
# JSON header


def encode_json_header(cmd: RemotingCommand) -> bytes:
    # fastjson writes keys sorted and omits nulls; we do the same for byte-identical frames
    h: dict[str, Any] = {"code": cmd.code}
    if cmd.ext_fields is not None:
        h["extFields"] = dict(cmd.ext_fields)
    h["flag"] = cmd.flag
    h["language"] = cmd.language
    h["opaque"] = cmd.opaque
    if cmd.remark is not None:
        h["remark"] = cmd.remark
    h["serializeTypeCurrentRPC"] = "JSON"
    h["version"] = cmd.version
    return json.dumps(h, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _as_int(h: dict[str, Any], key: str, default: int = 0) -> int:
    v = h.get(key, default)
    if v is None:
        return default
    if isinstance(v, bool):
        raise HeaderError(f"JSON header field {key!r} is a boolean, expected a number")
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str) and v.strip().lstrip("-").isascii() and \
            v.strip().lstrip("-").isdigit() and len(v.strip()) <= 20:
        return int(v)
    raise HeaderError(f"JSON header field {key!r} is not a number: {v!r}")


def decode_json_header(data: bytes) -> dict[str, Any]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise HeaderError(f"JSON header is not UTF-8 (bad byte at offset {exc.start})") from None
    try:
        h = json.loads(text)
    except (ValueError, RecursionError):
        # fastjson is lenient; accept what its parser accepts

        try:
            h = loads(text)
        except BodyError as exc:
            raise HeaderError(f"JSON header cannot be parsed: {exc.message}") from None
    if not isinstance(h, dict):
        raise HeaderError("JSON header is not an object")
    if "code" not in h:
        raise HeaderError("JSON header has no 'code'")
    ext = h.get("extFields")
    if ext is not None:
        if not isinstance(ext, dict):
            raise HeaderError("JSON header 'extFields' is not an object")
        ext = {str(k): _ext_value(v) for k, v in ext.items()}
    lang = h.get("language", "JAVA")
    if isinstance(lang, int) and not isinstance(lang, bool):
        lang = language_from_byte(lang)
    remark = h.get("remark")
    known = {"code", "flag", "opaque", "language", "version", "remark", "extFields",
             "serializeTypeCurrentRPC"}
    return {
        "code": _as_int(h, "code"),
        "flag": _as_int(h, "flag"),
        "opaque": _as_int(h, "opaque"),
        "language": str(lang) if lang is not None else "JAVA",
        "version": _as_int(h, "version"),
        "remark": None if remark is None else str(remark),
        "ext_fields": ext,
        "extra_header": {str(k): v for k, v in h.items() if k not in known},
    }


def _ext_value(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


# ---------------------------------------------------------------------------------------------
# ROCKETMQ binary header (RocketMQSerializable)


def encode_rocketmq_header(cmd: RemotingCommand) -> bytes:
    if not -32768 <= cmd.code <= 32767:
        raise HeaderError(f"code {cmd.code} does not fit the ROCKETMQ header (int16); use JSON")
    remark = cmd.remark.encode("utf-8") if cmd.remark else b""
    ext = b""
    if cmd.ext_fields:
        parts = []
        for k, v in cmd.ext_fields.items():
            if k is None or v is None:
                continue
            kb, vb = k.encode("utf-8"), v.encode("utf-8")
            parts.append(struct.pack(">H", len(kb)) + kb + struct.pack(">i", len(vb)) + vb)
        ext = b"".join(parts)
    if not -32768 <= cmd.version <= 32767:
        raise HeaderError(f"version {cmd.version} does not fit the ROCKETMQ header (int16)")
    return (struct.pack(">hBhii", cmd.code, language_to_byte(cmd.language), cmd.version,
                        _int32(cmd.opaque), _int32(cmd.flag))
            + struct.pack(">i", len(remark)) + remark + struct.pack(">i", len(ext)) + ext)


def _int32(v: int) -> int:
    if not -(2**31) <= v < 2**31:
        raise HeaderError(f"value {v} does not fit a 32-bit header field")
    return v


def decode_rocketmq_header(data: bytes) -> dict[str, Any]:
    n = len(data)
    if n < 21:
        raise HeaderError(f"ROCKETMQ header is {n} bytes, shorter than the 21-byte minimum")
    code, lang, version, opaque, flag = struct.unpack_from(">hBhii", data, 0)
    pos = 13
    (rlen,) = struct.unpack_from(">i", data, pos)
    pos += 4
    if rlen < 0 or rlen > n - pos:
        raise HeaderError(f"ROCKETMQ header remark length {rlen} exceeds the header")
    remark = _utf8(data[pos:pos + rlen], "remark") if rlen > 0 else None
    pos += rlen
    if pos + 4 > n:
        raise HeaderError("ROCKETMQ header is truncated before the extFields length")
    (elen,) = struct.unpack_from(">i", data, pos)
    pos += 4
    if elen < 0 or elen > n - pos:
        raise HeaderError(f"ROCKETMQ header extFields length {elen} exceeds the header")
    ext: dict[str, str] | None = None
    if elen > 0:
        ext = {}
        end = pos + elen
        while pos < end:
            if pos + 2 > end:
                raise HeaderError("ROCKETMQ header extFields entry is truncated (key length)")
            (klen,) = struct.unpack_from(">H", data, pos)
            pos += 2
            if pos + klen + 4 > end:
                raise HeaderError("ROCKETMQ header extFields entry is truncated (key)")
            key = _utf8(data[pos:pos + klen], "extFields key")
            pos += klen
            (vlen,) = struct.unpack_from(">i", data, pos)
            pos += 4
            if vlen < 0 or pos + vlen > end:
                raise HeaderError(f"ROCKETMQ header extFields value length {vlen} is invalid")
            ext[key] = _utf8(data[pos:pos + vlen], "extFields value")
            pos += vlen
    if pos != n:
        raise HeaderError(f"ROCKETMQ header has {n - pos} unexpected trailing bytes")
    return {"code": code, "flag": flag, "opaque": opaque, "language": language_from_byte(lang),
            "version": version, "remark": remark, "ext_fields": ext, "extra_header": {}}


def _utf8(b: bytes, what: str) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        raise HeaderError(f"ROCKETMQ header {what} is not UTF-8") from None


# ---------------------------------------------------------------------------------------------
# Frames


def encode(cmd: RemotingCommand) -> bytes:
    """Encode a command as a complete frame including the 4-byte length prefix."""
    if cmd.serialize_type == SerializeType.ROCKETMQ:
        header = encode_rocketmq_header(cmd)
    else:
        header = encode_json_header(cmd)
    if len(header) > 0xFFFFFF:
        raise FrameError(f"header of {len(header)} bytes exceeds the 24-bit header length")
    total = 4 + len(header) + len(cmd.body)
    if total + 4 > MAX_FRAME:
        raise FrameError(f"frame of {total + 4} bytes exceeds the {MAX_FRAME}-byte limit")
    return (struct.pack(">ii", total, (int(cmd.serialize_type) << 24) | len(header))
            + header + cmd.body)


def decode_payload(payload: bytes | bytearray | memoryview) -> RemotingCommand:
    """Decode a frame whose 4-byte total length has been stripped (as Netty's decoder does)."""
    payload = bytes(payload)
    if len(payload) < 4:
        raise FrameError(f"frame of {len(payload)} bytes is too short for the header length")
    (info,) = struct.unpack_from(">I", payload, 0)
    ser = (info >> 24) & 0xFF
    hlen = info & 0xFFFFFF
    if hlen > len(payload) - 4:
        raise FrameError(f"header length {hlen} exceeds the frame ({len(payload) - 4} bytes left)")
    header = payload[4:4 + hlen]
    body = payload[4 + hlen:]
    if ser == SerializeType.JSON:
        fields = decode_json_header(header)
    elif ser == SerializeType.ROCKETMQ:
        fields = decode_rocketmq_header(header)
    else:
        raise FrameError(f"unknown serialize type {ser} (expected 0=JSON or 1=ROCKETMQ)")
    return RemotingCommand(serialize_type=SerializeType(ser), body=body, **fields)


def decode(data: bytes | bytearray | memoryview) -> RemotingCommand:
    """Decode exactly one complete frame (with its length prefix)."""
    data = bytes(data)
    if len(data) < 8:
        raise FrameError(f"frame of {len(data)} bytes is shorter than the 8-byte minimum")
    (total,) = struct.unpack_from(">i", data, 0)
    if total < 4:
        raise FrameError(f"frame length {total} is smaller than 4")
    if total + 4 > MAX_FRAME:
        raise FrameError(f"frame length {total + 4} exceeds the {MAX_FRAME}-byte limit")
    if total + 4 > len(data):
        raise FrameError(f"frame is truncated: length says {total + 4} bytes, have {len(data)}")
    if total + 4 < len(data):
        raise FrameError(f"{len(data) - total - 4} bytes follow the frame")
    return decode_payload(data[4:])
