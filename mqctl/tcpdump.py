"""Captures as operators paste them: tcpdump text (-x, -xx, -X, -XX) and classic pcap files.

Pure parsing (no I/O, no printing): packets -> link/IP/TCP headers stripped -> per-direction
TCP streams reassembled by sequence number -> RocketMQ frames, each with its direction, paired
request <-> response by opaque on the same connection (opaques are per connection:
``RemotingCommand.requestId`` is a client-side counter, the response copies it).

Formats read:
- tcpdump text: a summary line per packet, then ``\\t0xOOOO:  hhhh hhhh ...`` lines of 16 bytes
  (``-X`` adds an ASCII column after two spaces). ``-x``/``-X`` start at the network header;
  ``-xx``/``-XX`` include the link-layer header, whose kind the text does not name: it is
  recognised by its shape (Ethernet, Linux cooked v1/v2 as on ``-i any``, BSD loopback).
- pcap: the classic libpcap file (magic a1b2c3d4 / a1b23c4d for nanoseconds, either byte order),
  link types EN10MB (1), NULL (0), RAW (101, 12, 14), LOOP (108), LINUX_SLL (113), LINUX_SLL2 (276).
"""

from __future__ import annotations

import ipaddress
import re
import struct
from bisect import bisect_right
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mqctl.errors import FrameError, ProtocolError
from mqctl.remoting.frame import MAX_FRAME, RemotingCommand, decode_payload

# ---------------------------------------------------------------------------------------------
# packets


@dataclass(frozen=True, slots=True)
class Packet:
    data: bytes
    time: str | None = None  # as tcpdump printed it, or ISO UTC from a pcap record
    link: str | None = None  # "IP" (starts at the network header) or a pcap link-type name
    number: int = 0  # 1-based position in the capture


_HEX_LINE = re.compile(r"^\s*0x([0-9A-Fa-f]{4,8}):\s+(.*)$")
_TIME = re.compile(r"^(?:[0-9]{4}-[0-9]{2}-[0-9]{2}[ T])?[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
                   r"|^[0-9]{9,}\.[0-9]+")


_FIRST_LINE = re.compile(r"^\s*0x0{4,8}:\s")


def looks_tcpdump_text(text: str) -> bool:
    """tcpdump's hex lines: a ``0x0000:`` offset line (a summary line usually precedes it)."""
    return any(_FIRST_LINE.match(ln) for ln in text.splitlines()[:50])


def parse_tcpdump_text(text: str) -> list[Packet]:
    """Packets of ``tcpdump -x/-xx/-X/-XX`` output; summary and comment lines are skipped.

    A line whose offset does not continue the packet (a line lost when pasting) is an error:
    decoding the rest would misplace every later byte.
    """
    packets: list[Packet] = []
    cur: bytearray | None = None
    cur_time: str | None = None
    summary_time: str | None = None
    last_off = -1

    def flush() -> None:
        nonlocal cur
        if cur:
            packets.append(Packet(bytes(cur), cur_time, "IP", len(packets) + 1))
        cur = None

    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = _HEX_LINE.match(line)
        if m is None:  # a summary line starts the next packet
            flush()
            t = _TIME.match(line.strip())
            summary_time = t.group(0) if t else None
            continue
        off = int(m.group(1), 16)
        if off == 0:
            flush()
            cur, cur_time, last_off = bytearray(), summary_time, -1
            summary_time = None
        if cur is None:
            raise FrameError(f"tcpdump line {lineno}: offset 0x{off:04x} without a packet "
                             "start (0x0000)",
                             hint="paste whole packets: each starts at offset 0x0000")
        if off != len(cur):
            prev = f"0x{last_off:04x}" if last_off >= 0 else "the packet start"
            raise FrameError(f"tcpdump line {lineno}: offset 0x{off:04x} does not follow "
                             f"{prev} (a line is missing)",
                             hint="paste the capture without dropping lines")
        hexpart = m.group(2).strip().split("  ")[0]  # the ASCII column follows two spaces
        for tok in hexpart.split():
            if len(tok) % 2 or len(tok) > 8 or any(c not in "0123456789abcdefABCDEF"
                                                    for c in tok):
                raise FrameError(f"tcpdump line {lineno}: {tok!r} is not a group of hex bytes",
                                 hint="pass tcpdump -x/-xx/-X/-XX output as printed")
            cur += bytes.fromhex(tok)
        last_off = off
    flush()
    return packets


# pcap (https://www.tcpdump.org/manpages/pcap-savefile.5.html, linktypes.html)
_PCAP_MAGIC = {b"\xd4\xc3\xb2\xa1": ("<", 1_000_000), b"\xa1\xb2\xc3\xd4": (">", 1_000_000),
               b"\x4d\x3c\xb2\xa1": ("<", 1_000_000_000), b"\xa1\xb2\x3c\x4d": (">", 1_000_000_000)}
LINK_TYPES = {0: "NULL", 1: "EN10MB", 12: "RAW", 14: "RAW", 101: "RAW", 108: "LOOP",
              113: "LINUX_SLL", 276: "LINUX_SLL2"}


def is_pcap(data: bytes) -> bool:
    return data[:4] in _PCAP_MAGIC


def parse_pcap(data: bytes) -> list[Packet]:
    if len(data) < 24 or data[:4] not in _PCAP_MAGIC:
        raise FrameError("not a pcap file (no libpcap magic)",
                         hint="pcapng is not read: convert with 'tcpdump -r in.pcapng -w out.pcap'")
    e, per_sec = _PCAP_MAGIC[data[:4]]
    linktype = struct.unpack_from(e + "I", data, 20)[0] & 0x0FFFFFFF
    link = LINK_TYPES.get(linktype)
    if link is None:
        raise FrameError(f"pcap link type {linktype} is not supported",
                         hint="supported: " + ", ".join(
                             f"{n} ({t})" for t, n in sorted(LINK_TYPES.items())))
    packets: list[Packet] = []
    pos = 24
    while pos < len(data):
        n = len(packets) + 1
        if pos + 16 > len(data):
            raise FrameError(f"pcap record {n} is truncated (header)",
                             hint="the file was cut: capture again or cut at a record boundary")
        sec, frac, incl, _orig = struct.unpack_from(e + "IIII", data, pos)
        pos += 16
        if pos + incl > len(data):
            raise FrameError(f"pcap record {n} is truncated ({len(data) - pos} of {incl} bytes)",
                             hint="the file was cut: capture again or cut at a record boundary")
        ts = datetime.fromtimestamp(sec + frac / per_sec, tz=UTC)
        packets.append(Packet(data[pos:pos + incl], ts.strftime("%Y-%m-%dT%H:%M:%S.%fZ"), link, n))
        pos += incl
    return packets


# ---------------------------------------------------------------------------------------------
# headers


@dataclass(frozen=True, slots=True)
class Segment:
    src: str  # ip:port ([ip]:port for IPv6)
    dst: str
    seq: int
    payload: bytes
    time: str | None
    number: int


_ETH_IP = {0x0800, 0x86DD}


def _ip_at(data: bytes, pos: int) -> bool:
    """A plausible IPv4/IPv6 header carrying TCP starts at ``pos``."""
    if len(data) < pos + 20:
        return False
    v = data[pos] >> 4
    if v == 4:
        return (data[pos] & 0x0F) >= 5 and data[pos + 9] == 6
    if v == 6:
        return len(data) >= pos + 40
    return False


def _network_offset(data: bytes, link: str | None) -> int | None:
    """Where the IP header starts, from the pcap link type or, in text, from the shape."""
    if link == "EN10MB":
        pos = 14
        while len(data) >= pos and struct.unpack_from(">H", data, pos - 2)[0] in (0x8100, 0x88A8):
            pos += 4  # VLAN tags
        return pos
    if link in ("NULL", "LOOP"):
        return 4
    if link == "LINUX_SLL":
        return 16
    if link == "LINUX_SLL2":
        return 20
    if link == "RAW":
        return 0
    # tcpdump text: -x/-X start at IP; -xx/-XX start at the link header of the interface
    if _ip_at(data, 0):
        return 0
    candidates = [
        (14, len(data) >= 14 and struct.unpack_from(">H", data, 12)[0] in _ETH_IP),
        (16, len(data) >= 16 and struct.unpack_from(">H", data, 14)[0] in _ETH_IP),
        (20, len(data) >= 2 and struct.unpack_from(">H", data, 0)[0] in _ETH_IP),
        (4, len(data) >= 4 and (struct.unpack_from("<I", data, 0)[0] in (2, 24, 28, 30)
                                or struct.unpack_from(">I", data, 0)[0] in (2, 24, 28, 30))),
    ]
    for pos, shape in candidates:
        if shape and _ip_at(data, pos):
            return pos
    return None


def _addr(ip: bytes, port: int) -> str:
    a = ipaddress.ip_address(ip)
    return f"[{a}]:{port}" if a.version == 6 else f"{a}:{port}"


def tcp_segment(p: Packet) -> Segment | None:
    """The TCP segment of a packet (None: not TCP over IP, e.g. ARP or UDP)."""
    data = p.data
    pos = _network_offset(data, p.link)
    if pos is None or not _ip_at(data, pos):
        return None
    if data[pos] >> 4 == 4:
        ihl = (data[pos] & 0x0F) * 4
        total = struct.unpack_from(">H", data, pos + 2)[0]
        src, dst = data[pos + 12:pos + 16], data[pos + 16:pos + 20]
        end = pos + total if total else len(data)  # 0: TSO, the length is in the capture
        tcp_at = pos + ihl
    else:
        nxt = data[pos + 6]
        if nxt != 6:
            return None  # extension headers are not followed (RocketMQ over lo/LAN has none)
        plen = struct.unpack_from(">H", data, pos + 4)[0]
        src, dst = data[pos + 8:pos + 24], data[pos + 24:pos + 40]
        tcp_at = pos + 40
        end = tcp_at + plen if plen else len(data)
    end = min(end, len(data))  # a snap length cuts the packet; the stream notes the gap
    if tcp_at + 20 > end:
        return None
    sport, dport, seq = struct.unpack_from(">HHI", data, tcp_at)
    doff = (data[tcp_at + 12] >> 4) * 4  # the data offset covers the TCP options
    if doff < 20:
        return None
    return Segment(_addr(src, sport), _addr(dst, dport), seq, data[tcp_at + doff:end],
                   p.time, p.number)


# ---------------------------------------------------------------------------------------------
# streams and frames


@dataclass(slots=True)
class CapturedFrame:
    command: RemotingCommand
    src: str
    dst: str
    time: str | None  # time of the packet that completed the frame's first bytes
    segments: int
    index: int = 0  # 1-based, in the order the frames appear in the capture
    pair: int | None = None  # index of the request/response with the same opaque
    first_packet: int = 0


@dataclass(slots=True)
class Capture:
    source: str  # "tcpdump text" or "pcap"
    packets: int
    frames: list[CapturedFrame] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _plausible_frame_start(buf: bytes | bytearray, pos: int) -> bool:
    if len(buf) - pos < 8:
        return False
    total, info = struct.unpack_from(">iI", buf, pos)
    ser, hlen = info >> 24, info & 0xFFFFFF
    return total >= 4 and total + 4 <= MAX_FRAME and ser in (0, 1) and hlen <= total - 4


def _stream_frames(segs: list[Segment], notes: list[str]) -> list[CapturedFrame]:
    """Reassemble one direction by sequence number and cut it into frames."""
    src, dst = segs[0].src, segs[0].dst
    way = f"{src} -> {dst}"
    base = segs[0].seq
    # unwrap sequence numbers relative to the first segment (mod 2**32)
    rel = sorted(((_seq_delta(s.seq, base), s) for s in segs if s.payload),
                 key=lambda pair: pair[0])
    # runs of contiguous bytes; a retransmission overlapping what we have adds only its new
    # bytes. bounds[i]: where members[i]'s bytes start in the run's buffer
    runs: list[tuple[int, bytearray, list[Segment], list[int]]] = []
    for off, s in rel:
        if runs and off <= runs[-1][0] + len(runs[-1][1]):
            start, buf, members, bounds = runs[-1]
            new = s.payload[start + len(buf) - off:]
            if new:  # else a pure retransmission
                bounds.append(len(buf))
                buf += new
                members.append(s)
            continue
        if runs:
            gap = off - (runs[-1][0] + len(runs[-1][1]))
            notes.append(f"{way}: {gap} bytes were not captured (before packet {s.number})")
        runs.append((off, bytearray(s.payload), [s], [0]))
    out: list[CapturedFrame] = []
    for start, buf, members, bounds in runs:
        pos = 0
        if not _plausible_frame_start(buf, 0):
            # the capture began (or resumes after a gap) inside a frame: a later frame starts
            # at a segment boundary (senders write whole frames), so look only there
            nxt = next((i for i in bounds[1:] if _plausible_frame_start(buf, i)
                        and _whole_frame_at(buf, i)), None)
            skipped = len(buf) if nxt is None else nxt
            notes.append(f"{way}: {skipped} bytes at the start of packet {members[0].number} "
                         "are the tail of a frame whose start was not captured")
            if nxt is None:
                continue
            pos = nxt
        while pos < len(buf):
            left = len(buf) - pos
            if left < 8:
                notes.append(f"{way}: {left} bytes at the end are a cut frame prefix")
                break
            (total,) = struct.unpack_from(">i", buf, pos)
            if not _plausible_frame_start(buf, pos):
                notes.append(f"{way}: {left} bytes from stream offset {start + pos} "
                             f"are not a RocketMQ frame (length field {total})")
                break
            if total + 4 > left:
                notes.append(f"{way}: a frame of {total + 4} bytes is cut: {left} bytes "
                             f"captured, {total + 4 - left} bytes missing")
                break
            first = bisect_right(bounds, pos) - 1
            last = bisect_right(bounds, pos + 3 + total) - 1
            try:
                cmd = decode_payload(bytes(buf[pos + 4:pos + 4 + total]))
            except ProtocolError as exc:
                notes.append(f"{way}: frame at stream offset {start + pos} cannot be decoded: "
                             f"{exc.message}")
            else:
                out.append(CapturedFrame(cmd, src, dst, members[first].time, last - first + 1,
                                         first_packet=members[first].number))
            pos += 4 + total  # total >= 4: a plausible start
    return out


def _seq_delta(seq: int, base: int) -> int:
    """``seq - base`` across the 32-bit wrap (RFC 9293 sequence arithmetic)."""
    d = (seq - base) % (1 << 32)
    return d - (1 << 32) if d >= (1 << 31) else d


def _whole_frame_at(buf: bytes | bytearray, pos: int) -> bool:
    (total,) = struct.unpack_from(">i", buf, pos)
    if pos + 4 + total > len(buf):
        return True  # cannot check; accept a plausible start
    try:
        decode_payload(bytes(buf[pos + 4:pos + 4 + total]))
    except ProtocolError:
        return False
    return True


def frames_of(packets: list[Packet], source: str) -> Capture:
    """Frames of a capture, in capture order, with pairs and notes."""
    cap = Capture(source, len(packets))
    streams: dict[tuple[str, str], list[Segment]] = {}
    skipped = 0
    for p in packets:
        s = tcp_segment(p)
        if s is None:
            skipped += 1
            continue
        streams.setdefault((s.src, s.dst), []).append(s)
    if skipped:
        cap.notes.append(f"{skipped} packet(s) are not TCP over IPv4/IPv6 and were skipped")
    frames: list[CapturedFrame] = []
    for segs in streams.values():
        frames.extend(_stream_frames(segs, cap.notes))
    frames.sort(key=lambda f: f.first_packet)
    for i, f in enumerate(frames, 1):
        f.index = i
    _pair(frames, cap.notes)
    cap.frames = frames
    return cap


def _pair(frames: list[CapturedFrame], notes: list[str]) -> None:
    """Pair by (connection, opaque): a response answers the request of its opaque sent the
    other way on the same connection (NettyRemotingAbstract.processResponseCommand)."""
    requests: dict[tuple[str, str, int], CapturedFrame] = {}
    for f in frames:
        c = f.command
        if c.is_response:
            req = requests.pop((f.dst, f.src, c.opaque), None)
            if req is None:
                notes.append(f"#{f.index} response opaque {c.opaque} ({f.src} -> {f.dst}): "
                             "its request is not in the capture")
            else:
                f.pair, req.pair = req.index, f.index
        elif not c.is_oneway:
            requests[(f.src, f.dst, c.opaque)] = f
    for f in sorted(requests.values(), key=lambda f: f.index):
        notes.append(f"#{f.index} request {f.command.code_name} opaque {f.command.opaque}: "
                     "no response in the capture")


def decode_text_capture(text: str) -> Capture:
    return checked(frames_of(parse_tcpdump_text(text), "tcpdump text"))


def decode_pcap(data: bytes) -> Capture:
    return checked(frames_of(parse_pcap(data), "pcap"))


def checked(cap: Capture) -> Capture:
    if not cap.frames:
        why = "; ".join(cap.notes) if cap.notes else "no TCP payload"
        raise FrameError(f"no RocketMQ frame in the capture ({cap.packets} packet(s): {why})",
                         hint="capture the broker/namesrv port with 'tcpdump -i any -s 0 -X "
                              "port 10911' so packets carry their payload")
    return cap


__all__ = ["Capture", "CapturedFrame", "Packet", "Segment", "checked", "decode_pcap",
           "decode_text_capture", "frames_of", "is_pcap", "looks_tcpdump_text", "parse_pcap",
           "parse_tcpdump_text", "tcp_segment"]
