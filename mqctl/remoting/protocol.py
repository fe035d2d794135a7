"""Sans-IO pieces of the remoting protocol: stream framing, opaque ids, hex captures."""

from __future__ import annotations

import itertools
import re
import struct

from mqctl.errors import FrameError
from mqctl.remoting.frame import MAX_FRAME, RemotingCommand, decode_payload


class FrameReader:
    """Turns a byte stream into commands: ``feed(bytes) -> [RemotingCommand]``.

    Mirrors Netty's ``LengthFieldBasedFrameDecoder(maxFrame, 0, 4, 0, 4)``: a frame larger
    than ``max_frame`` (counted with its prefix) is refused before it is buffered.
    """

    __slots__ = ("_buf", "max_frame")

    def __init__(self, max_frame: int = MAX_FRAME):
        self._buf = bytearray()
        self.max_frame = max_frame

    def feed(self, data: bytes) -> list[RemotingCommand]:
        self._buf += data
        out: list[RemotingCommand] = []
        buf = self._buf
        pos = 0
        n = len(buf)
        while n - pos >= 4:
            (total,) = struct.unpack_from(">i", buf, pos)
            if total < 4:
                raise FrameError(f"frame length {total} is smaller than 4")
            if total + 4 > self.max_frame:
                head = bytes(buf[pos:pos + 4])
                if all(32 <= c < 127 for c in head):  # e.g. b"HTTP": not a remoting peer
                    raise FrameError(f"the peer does not speak RocketMQ remoting: it sent "
                                     f"{head.decode('ascii')!r}... (an HTTP server or proxy?)",
                                     hint="check that the address is a RocketMQ name server or "
                                          "broker (host:port, no http://)")
                if is_tls_record(head):
                    raise FrameError("the peer answered with a TLS record: it expects a TLS "
                                     "connection",
                                     hint="add --tls with --tls-ca FILE (or --tls-insecure, as "
                                          "the Java client trusts any certificate)")
                raise FrameError(f"frame of {total + 4} bytes exceeds the "
                                 f"{self.max_frame}-byte limit")
            if n - pos - 4 < total:
                break
            out.append(decode_payload(memoryview(buf)[pos + 4:pos + 4 + total]))
            pos += 4 + total
        if pos:
            del buf[:pos]
        return out

    @property
    def pending(self) -> int:
        return len(self._buf)


def is_tls_record(head: bytes) -> bool:
    """A TLS record header (RFC 8446 5.1): content type 20-23 (change_cipher_spec, alert,
    handshake, application_data), then version major 3. Never a remoting frame start: that
    length would be over 335 MB, far beyond the 16 MiB frame limit."""
    return len(head) >= 3 and head[0] in (20, 21, 22, 23) and head[1] == 3 and head[2] <= 4


class OpaqueCounter:
    """Per-connection request ids, like ``RemotingCommand.requestId`` (an incrementing int)."""

    __slots__ = ("_it",)

    def __init__(self, start: int = 0):
        self._it = itertools.count(start)

    def next(self) -> int:
        v = next(self._it)
        return v & 0x7FFFFFFF


_OFFSET = re.compile(r"^\s*(?:0x)?[0-9A-Fa-f]+:\s*")
_HEXCHARS = set("0123456789abcdefABCDEF")


def parse_hex_capture(text: str) -> bytes:
    """Read a hex dump: bare hex bytes (``samples/wire``), ``xxd`` or ``tcpdump -X`` lines.

    Offsets at the start of a line and the ASCII column after a double space are skipped.
    Raises :class:`FrameError` naming the line of a non-hex character or an odd digit count.
    """
    digits: list[str] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0] if raw.lstrip().startswith("#") else raw
        line = line.rstrip()
        if not line.strip():
            continue
        m = _OFFSET.match(line)
        if m and ":" in m.group(0):
            line = line[m.end():]
        line = line.strip()
        # an ASCII column follows the hex after two or more spaces (xxd, tcpdump -X)
        parts = re.split(r"\s{2,}", line)
        hexpart = parts[0]
        if len(parts) > 1 and all(all(c in _HEXCHARS or c.isspace() for c in p) for p in parts):
            hexpart = " ".join(parts)  # plain dump that happened to use wider spacing
        for tok in hexpart.split():
            tok = tok[2:] if tok.lower().startswith("0x") else tok
            bad = next((c for c in tok if c not in _HEXCHARS), None)
            if bad is not None:
                raise FrameError(f"hex capture line {lineno}: {bad!r} is not a hex digit")
            digits.append(tok)
    joined = "".join(digits)
    if not joined:
        raise FrameError("hex capture is empty")
    if len(joined) % 2:
        raise FrameError(f"hex capture has an odd number of digits ({len(joined)}): "
                         "the last byte is cut in half")
    return bytes.fromhex(joined)
