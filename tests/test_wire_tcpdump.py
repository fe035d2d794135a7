"""`mqctl wire decode` of tcpdump text (-x, -xx, -X, -XX) and pcap files.

Ground truth: the real captures in ../shared/samples/real/<v>/pcap-text (tcpdump -i lo of
RocketMQ 4.9.3 and 5.3.3 brokers, namesrv, clients and mqadmin). Link layers, IPv6 and
segmentation that the corpus does not contain are built here from the corpus packets.
"""

from __future__ import annotations

import itertools
import re
import struct

import pytest
from wire_capture_helpers import (
    REAL,
    assert_clean_error,
    bsd_null,
    ethernet,
    ipv4,
    ipv6,
    linux_sll,
    linux_sll2,
    pcap,
    tcp,
    tcpdump_text,
)

from mqctl.remoting.frame import RemotingCommand, encode

PCAP_TEXT = sorted(REAL.glob("*/pcap-text/*"))


def decode_json(cli, path, *extra):
    r = cli(["wire", "decode", str(path), "-o", "json", *extra])
    assert r.exit_code == 0, r.stderr
    return r.json


def corpus_packets(path):
    """The IP packets of a corpus ``-x`` file, read here independently of mqctl."""
    packets, cur = [], None
    for line in path.read_text().splitlines():
        m = re.match(r"\s+0x([0-9a-f]{4}):\s+(.*)$", line)
        if m:
            cur += bytes.fromhex(m.group(2).split("  ")[0].replace(" ", ""))
        elif line and not line.startswith("#"):
            cur = bytearray()
            packets.append((line, cur))
    return [(s, bytes(b)) for s, b in packets]


def tcp_of(ip_packet):
    ihl = (ip_packet[0] & 0x0F) * 4
    return ip_packet[ihl:]


def frame_summary(d):
    return [(f["src"], f["dst"], f["type"], f["code"], f["opaque"]) for f in d["frames"]]


# ------------------------------------------------------------------------------------------
# the real captures


def expect_heartbeat_493(d):
    req, other = d["frames"]
    assert (req["src"], req["dst"]) == ("127.0.0.1:60794", "127.0.0.1:20911")
    assert req["time"] in ("20:55:49.143763", "2026-11-23T20:55:49.143763Z")
    assert (req["code"], req["codeName"], req["type"]) == (34, "HEART_BEAT", "request")
    assert (req["opaque"], req["version"], req["language"]) == (18, 399, "JAVA")
    assert req["extFields"] is None  # 4.9.3 sends no extFields key
    assert req["body"]["clientID"] == "127.0.1.41@nc1"
    groups = [c["groupName"] for c in req["body"]["consumerDataSet"]]
    assert groups == ["NC_ONE"]
    topics = {s["topic"] for s in req["body"]["consumerDataSet"][0]["subscriptionDataSet"]}
    assert topics == {"NC_T", "%RETRY%NC_ONE"}
    assert req["bodyLength"] == 660 - 4 - 4 - 97 and req["pair"] is None
    # the second frame is not the heartbeat's answer: opaque 20, a later request's response
    assert (other["src"], other["dst"]) == ("127.0.0.1:20911", "127.0.0.1:60794")
    assert (other["type"], other["code"], other["opaque"]) == ("response", 0, 20)
    assert other["extFields"] == {"offset": "0"} and other["pair"] is None
    notes = " ".join(d["notes"])
    assert "opaque 18" in notes and "opaque 20" in notes


def expect_heartbeat_533(d):
    req, notify = d["frames"]
    assert (req["src"], req["dst"]) == ("127.0.0.1:52178", "127.0.0.1:30911")
    assert (req["code"], req["opaque"], req["version"]) == (34, 11, 479)
    assert req["extFields"] == {}  # 5.3.3 sends "extFields":{}
    assert req["body"]["clientID"] == "127.0.2.41@nc1"
    # the broker's one-way NOTIFY_CONSUMER_IDS_CHANGED to the client
    assert (notify["src"], notify["dst"]) == ("127.0.0.1:30911", "127.0.0.1:52178")
    assert (notify["code"], notify["codeName"], notify["oneway"]) == (
        40, "NOTIFY_CONSUMER_IDS_CHANGED", True)
    assert notify["extFields"] == {"consumerGroup": "NC_ONE"} and notify["pair"] is None


MQ_KEY = re.compile(r"MessageQueue \[topic=(.+), brokerName=(.+), queueId=(\d+)\]")


def queue_table(body):
    """offsetTable keyed by (broker, queue): the JSON output keys a MessageQueue object key
    by its Java toString(), as mqctl's other outputs do."""
    out = {}
    for k, v in body["offsetTable"].items():
        m = MQ_KEY.fullmatch(k)
        assert m, k
        out[(m[2], int(m[3]))] = v
    return out


def offsets(body):
    return {q: v["consumerOffset"] for q, v in queue_table(body).items()}


def expect_208_mqadmin_493(d):
    req, resp = d["frames"]
    assert (req["code"], req["codeName"], req["opaque"], req["version"]) == (
        208, "GET_CONSUME_STATS", 6, 399)
    # the stock tools' ACL hook signs although the broker runs without ACL; no topic
    assert set(req["extFields"]) == {"consumerGroup", "AccessKey", "Signature"}
    assert req["extFields"]["consumerGroup"] == "NC_ONE"
    assert req["extFields"]["AccessKey"] == "rocketmq2"
    assert req["extFields"]["Signature"] == "zB8Vbc3n4hicut2XUX62/6JPOe8="
    assert (resp["type"], resp["code"], resp["opaque"]) == ("response", 0, 6)
    assert req["pair"] == 2 and resp["pair"] == 1
    assert resp["requestCode"] == 208 and resp["requestCodeName"] == "GET_CONSUME_STATS"
    assert resp["body"]["consumeTps"] == 0.625
    offs = offsets(resp["body"])
    assert offs[("broker-a", 0)] == 25
    assert {offs[("broker-a", q)] for q in (1, 2, 3)} == {0}


def expect_208_python_493(d):
    req, resp = d["frames"]
    assert req["extFields"] == {"consumerGroup": "NC_NEVER", "topic": "NC_T"}
    assert (req["opaque"], resp["opaque"], resp["pair"]) == (377553, 377553, 1)
    assert resp["body"]["consumeTps"] == 0.0
    assert set(offsets(resp["body"]).values()) == {0}
    assert len(resp["body"]["offsetTable"]) == 4


def expect_208_mqadmin_533(d):
    req, resp = d["frames"]
    assert req["extFields"] == {"consumerGroup": "NC_ONE"}  # 5.3.3 mqadmin: no ACL fields
    assert (req["code"], req["opaque"], req["version"]) == (208, 4, 479)
    assert (resp["code"], resp["opaque"], resp["pair"]) == (0, 4, 1)
    assert resp["body"]["consumeTps"] == pytest.approx(0.8333333333333334)
    table = queue_table(resp["body"])
    assert table[("broker-a", 0)]["consumerOffset"] == 25
    assert "pullOffset" in table[("broker-a", 0)]  # 5.x adds pullOffset


EXPECT = {
    ("4.9.3", "heartbeat_consumer"): expect_heartbeat_493,
    ("5.3.3", "heartbeat_consumer"): expect_heartbeat_533,
    ("4.9.3", "get_consume_stats_208_from_mqadmin"): expect_208_mqadmin_493,
    ("4.9.3", "get_consume_stats_208_from_python_with_topic"): expect_208_python_493,
    ("5.3.3", "get_consume_stats_208_from_mqadmin"): expect_208_mqadmin_533,
}


def capture_key(path):
    return path.parent.parent.name, re.sub(r"(_-[xX]\.txt|\.pcap)$", "", path.name)


def test_every_pcap_text_file_has_expectations():
    assert len(PCAP_TEXT) == 14
    assert {capture_key(p) for p in PCAP_TEXT} == set(EXPECT)


@pytest.mark.parametrize("path", PCAP_TEXT, ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_real_capture_decodes(cli, path):
    d = decode_json(cli, path)
    assert d["source"] == ("pcap" if path.suffix == ".pcap" else "tcpdump text")
    assert d["packets"] == 2
    EXPECT[capture_key(path)](d)


@pytest.mark.parametrize("path", sorted(REAL.glob("*/pcap-text/*_-x.txt")),
                         ids=lambda p: f"{p.parent.parent.name}/{p.name}")
def test_x_and_X_and_pcap_forms_agree(cli, path):
    base = path.name[:-len("_-x.txt")]
    x = decode_json(cli, path)
    big_x = decode_json(cli, path.with_name(base + "_-X.txt"))
    assert x["frames"] == big_x["frames"]
    pcap_file = path.with_name(base + ".pcap")
    if pcap_file.exists():
        p = decode_json(cli, pcap_file)
        strip = [{k: v for k, v in f.items() if k != "time"} for f in p["frames"]]
        assert strip == [{k: v for k, v in f.items() if k != "time"} for f in x["frames"]]


def test_human_output_lists_frames_and_direction(cli):
    path = REAL / "4.9.3/pcap-text/get_consume_stats_208_from_mqadmin_-X.txt"
    r = cli(["wire", "decode", str(path), "-o", "plain"])
    assert r.exit_code == 0, r.stderr
    assert "127.0.0.1:33680 -> 127.0.0.1:20911" in r.stdout
    assert "GET_CONSUME_STATS" in r.stdout and "rocketmq2" in r.stdout
    assert re.search(r"#2 .*response.*opaque 6.*answers #1", r.stdout), r.stdout


# ------------------------------------------------------------------------------------------
# link layers, IPv6 and TCP/IP options that the corpus does not hold


@pytest.fixture(scope="module")
def hb_packets():
    return corpus_packets(REAL / "4.9.3/pcap-text/heartbeat_consumer_-x.txt")


@pytest.fixture(scope="module")
def hb_expected():
    from conftest import run_cli

    return decode_json(run_cli, REAL / "4.9.3/pcap-text/heartbeat_consumer_-x.txt")["frames"]


@pytest.mark.parametrize("wrap", [ethernet, linux_sll, linux_sll2, bsd_null],
                         ids=["ethernet", "linux_sll", "linux_sll2", "null"])
@pytest.mark.parametrize("ascii_column", [False, True], ids=["-xx", "-XX"])
def test_link_layer_text(cli, tmp_path, hb_packets, hb_expected, wrap, ascii_column):
    text = tcpdump_text([(s, wrap(p)) for s, p in hb_packets], ascii_column)
    f = tmp_path / "c.txt"
    f.write_text(text)
    assert decode_json(cli, f)["frames"] == hb_expected


@pytest.mark.parametrize("wrap, linktype", [
    (ethernet, 1), (linux_sll, 113), (linux_sll2, 276), (bsd_null, 0), (lambda p: p, 101),
    (lambda p: struct.pack(">I", 2) + p, 108)],
    ids=["EN10MB", "LINUX_SLL", "LINUX_SLL2", "NULL", "RAW", "LOOP"])
@pytest.mark.parametrize("big_endian", [False, True], ids=["le", "be"])
def test_pcap_link_types(cli, tmp_path, hb_packets, hb_expected, wrap, linktype, big_endian):
    f = tmp_path / "c.pcap"
    f.write_bytes(pcap([wrap(p) for _, p in hb_packets], linktype, big_endian=big_endian))
    d = decode_json(cli, f)
    assert [{k: v for k, v in fr.items() if k != "time"} for fr in d["frames"]] == [
        {k: v for k, v in fr.items() if k != "time"} for fr in hb_expected]
    assert d["frames"][0]["time"].startswith("2026-11-23T")


def test_ipv6_and_options(cli, tmp_path, hb_packets):
    """IPv6 (no IHL: fixed 40 bytes), TCP options of another length (data offset 10),
    IPv4 options (IHL 6): the payload is found through the header lengths."""
    seg = [tcp_of(p) for _, p in hb_packets]
    payloads = [s[(s[12] >> 4) * 4:] for s in seg]
    opts = bytes([2, 4, 0xFF, 0xD7, 4, 2, 8, 10]) + bytes(8) + bytes([1, 3, 3, 7])
    pk6 = [ipv6("::1", "::1", tcp(60794, 20911, 1000, payloads[0], options=opts)),
           ipv6("::1", "::1", tcp(20911, 60794, 5000, payloads[1]))]
    f = tmp_path / "v6.txt"
    f.write_text(tcpdump_text([("20:55:49.1 IP6 ::1.60794 > ::1.20911: tcp 660", pk6[0]),
                               ("20:55:49.2 IP6 ::1.20911 > ::1.60794: tcp 131", pk6[1])],
                              True))
    d = decode_json(cli, f)
    assert frame_summary(d) == [("[::1]:60794", "[::1]:20911", "request", 34, 18),
                                ("[::1]:20911", "[::1]:60794", "response", 0, 20)]
    pk4 = [ipv4("10.0.0.5", "10.0.0.9", tcp(5, 20911, 7, payloads[0], options=opts),
                options=bytes([1, 1, 1, 0]))]
    f.write_text(tcpdump_text([("x", pk4[0])], False))
    d = decode_json(cli, f)
    assert frame_summary(d) == [("10.0.0.5:5", "10.0.0.9:20911", "request", 34, 18)]


# ------------------------------------------------------------------------------------------
# reassembly: a frame over several segments, several frames in one segment, pairing


def frames_bytes(*cmds):
    return [encode(c) for c in cmds]


def test_reassembly_and_pairing(cli, tmp_path):
    req1 = RemotingCommand.request(208, {"consumerGroup": "G1"}, version=399)
    req1 = req1.with_(opaque=7)
    req2 = RemotingCommand.request(14, {"consumerGroup": "G1", "topic": "T", "queueId": 3},
                                   version=399).with_(opaque=8)
    big = b'{"consumeTps":1.5,"offsetTable":{}, "pad":"' + b"x" * 3000 + b'"}'
    resp1 = req1.response(0, body=big, version=399)
    resp2 = req2.response(22, remark="Not found", version=399)
    c2s = encode(req1) + encode(req2)  # two frames in one segment
    s2c = encode(resp2) + encode(resp1)  # the answers out of request order
    n2 = len(encode(resp2))
    cut = [0, 50, n2 + 100, n2 + 1500, len(s2c)]  # resp2 over 2 segments, resp1 over 3
    pieces = [(s2c[a:b], 9000 + a) for a, b in itertools.pairwise(cut)]
    pk = [ipv4("127.0.0.1", "127.0.0.1", tcp(40000, 20911, 100, c2s))]
    order = [pieces[2], pieces[0], pieces[1], pieces[1], pieces[3]]  # out of order + retransmit
    pk += [ipv4("127.0.0.1", "127.0.0.1", tcp(20911, 40000, seq, data)) for data, seq in order]
    pk.append(ipv4("127.0.0.1", "127.0.0.1", tcp(40000, 20911, 100 + len(c2s), b"")))  # ACK
    f = tmp_path / "r.txt"
    f.write_text(tcpdump_text([(f"21:00:00.00000{i} IP a > b: len", p)
                               for i, p in enumerate(pk)], True))
    d = decode_json(cli, f)
    assert d["packets"] == 7
    assert frame_summary(d) == [
        ("127.0.0.1:40000", "127.0.0.1:20911", "request", 208, 7),
        ("127.0.0.1:40000", "127.0.0.1:20911", "request", 14, 8),
        ("127.0.0.1:20911", "127.0.0.1:40000", "response", 22, 8),
        ("127.0.0.1:20911", "127.0.0.1:40000", "response", 0, 7)]
    f1, f2, f3, f4 = d["frames"]
    assert (f1["pair"], f2["pair"], f3["pair"], f4["pair"]) == (4, 3, 2, 1)
    assert f4["segments"] == 3 and f3["segments"] == 2 and f1["segments"] == 1
    assert f4["body"]["pad"] == "x" * 3000 and f4["requestCodeName"] == "GET_CONSUME_STATS"
    assert f3["remark"] == "Not found" and f3["requestCode"] == 14
    assert d["notes"] == []


def test_missing_segment_is_named_and_the_rest_decodes(cli, tmp_path):
    req = RemotingCommand.request(208, {"consumerGroup": "G"}).with_(opaque=1)
    big = encode(req.response(0, body=b'{"a":"' + b"y" * 2000 + b'"}'))
    small = encode(RemotingCommand.request(34, body=b"{}").with_(opaque=2))
    pk = [ipv4("127.0.0.1", "127.0.0.1", tcp(20911, 5, 1, big[:1000])),
          # big[1000:] was not captured
          ipv4("127.0.0.1", "127.0.0.1", tcp(20911, 5, 1 + len(big), small))]
    f = tmp_path / "gap.txt"
    f.write_text(tcpdump_text([("s", p) for p in pk], False))
    d = decode_json(cli, f)
    assert frame_summary(d) == [("127.0.0.1:20911", "127.0.0.1:5", "request", 34, 2)]
    notes = " ".join(d["notes"])
    assert f"{len(big) - 1000} bytes" in notes and "127.0.0.1:20911 -> 127.0.0.1:5" in notes


# ------------------------------------------------------------------------------------------
# bad input: one line, a hint, no traceback


def test_capture_errors(cli, tmp_path, hb_packets):
    text = tcpdump_text([(s, p) for s, p in hb_packets], True).splitlines()
    missing = tmp_path / "missing-line.txt"
    missing.write_text("\n".join(text[:4] + text[5:]) + "\n")
    assert_clean_error(cli(["wire", "decode", str(missing)]), 4,
                       "offset 0x0030 does not follow 0x0010")
    acks = tmp_path / "acks.txt"
    acks.write_text(tcpdump_text([("s", ipv4("127.0.0.1", "127.0.0.1", tcp(1, 2, 3, b"")))],
                                 False))
    assert_clean_error(cli(["wire", "decode", str(acks)]), 4, "no RocketMQ frame")
    bad_link = tmp_path / "link.pcap"
    bad_link.write_bytes(pcap([hb_packets[0][1]], 105))
    assert_clean_error(cli(["wire", "decode", str(bad_link)]), 4, "link type 105")
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(pcap([p for _, p in hb_packets], 101)[:-10])
    assert_clean_error(cli(["wire", "decode", str(cut)]), 4, "pcap record 2 is truncated")


def test_secrets_stay_redacted(cli, tmp_path):
    req = RemotingCommand.request(208, {"consumerGroup": "G", "AccessKey": "ak1",
                                        "SecurityToken": "tok-123", "Signature": "c2ln"})
    f = tmp_path / "acl.txt"
    f.write_text(tcpdump_text([("s", ipv4("127.0.0.1", "127.0.0.1",
                                          tcp(1, 2, 3, encode(req))))], True))
    r = cli(["wire", "decode", str(f), "-o", "json"])
    ext = r.json["frames"][0]["extFields"]
    assert ext["SecurityToken"] == "<redacted>" and "tok-123" not in r.stdout
    assert ext["AccessKey"] == "ak1" and ext["Signature"] == "c2ln"
    r = cli(["wire", "decode", str(f), "-o", "plain"])
    assert "tok-123" not in r.stdout and "ak1" in r.stdout
    # a properties text body (GET_BROKER_CONFIG answers one) keeps its secret values out too
    resp = RemotingCommand(code=0, flag=1, opaque=1, body=b"brokerName=broker-a\n"
                           b"tlsServerKeyPassword=hunter2\nlistenPort=10911\n")
    f.write_bytes(encode(resp))
    r = cli(["wire", "decode", str(f), "-o", "json"])
    assert r.json["body"] == ("brokerName=broker-a\ntlsServerKeyPassword=<redacted>\n"
                              "listenPort=10911\n")


def test_single_frame_inputs_still_decode(cli, tmp_path):
    """The old inputs (a bare hex frame, a raw frame) keep their one-frame output."""
    raw = tmp_path / "f.bin"
    raw.write_bytes(encode(RemotingCommand.request(30, {"topic": "T"})))
    d = decode_json(cli, raw)
    assert d["code"] == 30 and "frames" not in d


def test_capture_that_starts_inside_a_frame(cli, tmp_path):
    """tcpdump started while a frame was on the wire: its tail is named and skipped, the next
    frame (at a segment boundary) decodes."""
    first = encode(RemotingCommand.request(34, body=b'{"clientID":"a"}').with_(opaque=1))
    second = encode(RemotingCommand.request(208, {"consumerGroup": "G"}).with_(opaque=2))
    pk = [ipv4("127.0.0.1", "127.0.0.1", tcp(5, 20911, 500, first[30:])),
          ipv4("127.0.0.1", "127.0.0.1", tcp(5, 20911, 500 + len(first) - 30, second))]
    f = tmp_path / "mid.txt"
    f.write_text(tcpdump_text([("s", p) for p in pk], True))
    d = decode_json(cli, f)
    assert frame_summary(d) == [("127.0.0.1:5", "127.0.0.1:20911", "request", 208, 2)]
    assert any(f"{len(first) - 30} bytes at the start of packet 1" in n for n in d["notes"])


def test_real_mqadmin_signature_verifies_with_the_stock_tools_secret(cli):
    """The 4.9.3 mqadmin request is signed with distribution/conf/tools.yml's public default
    (rocketmq2 / 12345678): mqctl's ACL signing (remoting/acl.py) computes the same HMAC."""
    from mqctl.remoting.acl import verify

    d = decode_json(cli, REAL / "4.9.3/pcap-text/get_consume_stats_208_from_mqadmin_-x.txt")
    ext = d["frames"][0]["extFields"]
    assert verify(ext, b"", "12345678")
    assert not verify(ext, b"", "12345679")


def test_a_short_tail_after_a_frame_is_named_not_looped_on(cli, tmp_path):
    """4-7 bytes after the last frame whose length field is negative: a cut prefix."""
    frame = encode(RemotingCommand.request(34, body=b"{}").with_(opaque=3))
    pk = [ipv4("127.0.0.1", "127.0.0.1", tcp(5, 20911, 1, frame + b"\xff\xff\xff\xf0\x00"))]
    f = tmp_path / "tail.txt"
    f.write_text(tcpdump_text([("s", pk[0])], False))
    d = decode_json(cli, f)
    assert frame_summary(d) == [("127.0.0.1:5", "127.0.0.1:20911", "request", 34, 3)]
    assert any("5 bytes at the end are a cut frame prefix" in n for n in d["notes"])
