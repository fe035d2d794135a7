"""Test-side builders for captures: IP/TCP packets, link-layer wrappers, tcpdump text, pcap files
and RocketMQ's stored message layout. Written from the formats' documentation, independently
of mqctl's decoders (which the tests check against these)."""

from __future__ import annotations

import ipaddress
import struct
import zlib
from dataclasses import dataclass, field

from conftest import REAL_CORPUS

REAL = REAL_CORPUS


def tcp(sport: int, dport: int, seq: int, payload: bytes, *, ack: int = 1,
        options: bytes = b"\x01\x01\x08\x0a" + bytes(8)) -> bytes:
    """A TCP segment (RFC 9293): data offset counts the options (padded to 4 bytes)."""
    options += b"\x00" * (-len(options) % 4)
    doff = (20 + len(options)) // 4
    return (struct.pack(">HHIIBBHHH", sport, dport, seq & 0xFFFFFFFF, ack, doff << 4, 0x18,
                        64, 0, 0) + options + payload)


def ipv4(src: str, dst: str, segment: bytes, *, options: bytes = b"") -> bytes:
    ihl = (20 + len(options)) // 4
    return (struct.pack(">BBHHHBBH4s4s", 0x40 | ihl, 0, 20 + len(options) + len(segment), 1,
                        0x4000, 64, 6, 0, ipaddress.IPv4Address(src).packed,
                        ipaddress.IPv4Address(dst).packed) + options + segment)


def ipv6(src: str, dst: str, segment: bytes) -> bytes:
    return (struct.pack(">IHBB16s16s", 6 << 28, len(segment), 6, 64,
                        ipaddress.IPv6Address(src).packed, ipaddress.IPv6Address(dst).packed)
            + segment)


def ethertype(ip: bytes) -> int:
    return 0x0800 if ip[0] >> 4 == 4 else 0x86DD


def ethernet(ip: bytes) -> bytes:
    return bytes(12) + struct.pack(">H", ethertype(ip)) + ip  # lo: all-zero MACs


def linux_sll(ip: bytes) -> bytes:
    # DLT_LINUX_SLL: packet type, ARPHRD type, address length, 8-byte address, protocol
    return struct.pack(">HHH8sH", 0, 772, 6, bytes(8), ethertype(ip)) + ip


def linux_sll2(ip: bytes) -> bytes:
    return struct.pack(">HHIHBB8s", ethertype(ip), 0, 1, 772, 0, 6, bytes(8)) + ip


def bsd_null(ip: bytes) -> bytes:
    family = 2 if ip[0] >> 4 == 4 else 30
    return struct.pack("<I", family) + ip  # host byte order (little-endian here)


def tcpdump_text(packets: list[tuple[str, bytes]], ascii_column: bool) -> str:
    """Print packets the way ``tcpdump -x``/``-X`` does: a summary line, then 16 bytes per
    line as ``\\t0xOOOO:  hhhh hhhh ...`` (and the ASCII column for -X)."""
    out = ["# built by the test"]
    for summary, data in packets:
        out.append(summary)
        for off in range(0, len(data), 16):
            chunk = data[off:off + 16]
            groups = " ".join(chunk[i:i + 2].hex() for i in range(0, len(chunk), 2))
            line = f"\t0x{off:04x}:  {groups}"
            if ascii_column:
                text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
                line = f"\t0x{off:04x}:  {groups:<39}  {text}"
            out.append(line)
    return "\n".join(out) + "\n"


def pcap(packets: list[bytes], linktype: int, *, big_endian: bool = False) -> bytes:
    e = ">" if big_endian else "<"
    out = [struct.pack(e + "IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype)]
    for i, p in enumerate(packets):
        out.append(struct.pack(e + "IIII", 1795467349 + i, 1000 * i, len(p), len(p)) + p)
    return b"".join(out)


# ------------------------------------------------------------------------------------------
# RocketMQ's stored message (common/message/MessageDecoder.decode, MessageVersion,
# sysflag/MessageSysFlag; the layout a PULL_MESSAGE response body carries, message after message)

MAGIC_V1 = -626843481  # MessageDecoder.MESSAGE_MAGIC_CODE
MAGIC_V2 = -626843477  # MessageDecoder.MESSAGE_MAGIC_CODE_V2 (2-byte topic length)
COMPRESSED = 0x1
BORN_V6 = 0x1 << 4
STORE_V6 = 0x1 << 5


@dataclass
class Msg:
    topic: str
    queue_id: int
    queue_offset: int
    store_ts: int
    body: bytes = b"hello"
    properties: dict[str, str] = field(default_factory=dict)
    born_ts: int = 0
    born_host: tuple[str, int] = ("127.0.1.41", 40000)
    store_host: tuple[str, int] = ("127.0.0.1", 20911)
    commit_offset: int = 0
    reconsume: int = 0
    flag: int = 0
    v2: bool = False
    compress: bool = False


def encode_message(m: Msg) -> bytes:
    sys_flag = 0
    born_ip = ipaddress.ip_address(m.born_host[0]).packed
    store_ip = ipaddress.ip_address(m.store_host[0]).packed
    if len(born_ip) == 16:
        sys_flag |= BORN_V6
    if len(store_ip) == 16:
        sys_flag |= STORE_V6
    body = m.body
    if m.compress:
        sys_flag |= COMPRESSED
        body = zlib.compress(body)
    topic = m.topic.encode()
    props = "".join(f"{k}\x01{v}\x02" for k, v in m.properties.items()).encode()
    rest = (struct.pack(">iiiqqiq", zlib.crc32(m.body) & 0x7FFFFFFF, m.queue_id, m.flag,
                        m.queue_offset, m.commit_offset, sys_flag, m.born_ts)
            + born_ip + struct.pack(">i", m.born_host[1])
            + struct.pack(">q", m.store_ts) + store_ip + struct.pack(">i", m.store_host[1])
            + struct.pack(">iq", m.reconsume, 0)
            + struct.pack(">i", len(body)) + body
            + (struct.pack(">h", len(topic)) if m.v2 else struct.pack(">b", len(topic))) + topic
            + struct.pack(">h", len(props)) + props)
    magic = MAGIC_V2 if m.v2 else MAGIC_V1
    return struct.pack(">ii", 8 + len(rest), magic) + rest


def assert_clean_error(r, code: int, fragment: str) -> None:
    """One ``mqctl: error:`` line holding ``fragment``, the exit code, no traceback."""
    assert r.exit_code == code, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr and "Traceback" not in r.stdout
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith("mqctl: error:")]
    assert len(lines) == 1 and fragment in lines[0], r.stderr
    assert "hint:" in r.stderr, r.stderr
