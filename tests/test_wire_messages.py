"""PULL_MESSAGE response bodies: the stored message batch.

The corpus holds no recorded PULL_MESSAGE response, so the batches here are built by an encoder
written in this test from RocketMQ's documented layout (common/message/MessageDecoder.decode,
MessageVersion, sysflag/MessageSysFlag in 4.9.3 and 5.3.3), then read back by mqctl.
"""

from __future__ import annotations

import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from wire_capture_helpers import Msg, encode_message, ipv4, tcp, tcpdump_text

from mqctl.remoting.frame import RemotingCommand, encode
from mqctl.remoting.message import decode_messages, looks_like_messages
from mqctl.wire import decode_input, to_record

T0 = 1795467349123  # 2026-11-23T20:55:49.123Z

MSGS = [
    Msg("NC_T", 2, 24, T0, b"order-24", {"KEYS": "k24 order-24", "TAGS": "TagA",
                                         "UNIQ_KEY": "7F00012A", "MIN_OFFSET": "0"}),
    Msg("NC_T", 2, 25, T0 + 7, b"x" * 300, {"TAGS": "TagB"}, compress=True),
    # a 5.x v2 record (2-byte topic length) from an IPv6 producer to an IPv6 broker
    Msg("NC_T6", 3, 7, T0 + 9, b"", {"KEYS": "only", "SecretKeyLike": "s3cr3t"},
        born_host=("fd00::41", 51000), store_host=("fd00::1", 30911), v2=True),
]


def pull_exchange(body: bytes):
    req = RemotingCommand.request(11, {"consumerGroup": "NC_ONE", "topic": "NC_T", "queueId": 2,
                                       "queueOffset": 24, "maxMsgNums": 32, "sysFlag": 2,
                                       "commitOffset": 0, "suspendTimeoutMillis": 15000,
                                       "subscription": "*", "subVersion": 0},
                                  version=399, language="JAVA").with_(opaque=42)
    resp = req.response(0, ext_fields={"suggestWhichBrokerId": 0, "nextBeginOffset": 26,
                                       "minOffset": 0, "maxOffset": 26}, body=body,
                        version=399)
    return req, resp


def check_messages(got):
    assert [m["topic"] for m in got] == ["NC_T", "NC_T", "NC_T6"]
    assert [(m["queueId"], m["queueOffset"]) for m in got] == [(2, 24), (2, 25), (3, 7)]
    assert [m["storeTimestamp"] for m in got] == [T0, T0 + 7, T0 + 9]
    assert got[0]["storeTime"] == "2026-11-23T20:55:49.123Z"
    assert [m["keys"] for m in got] == [["k24", "order-24"], [], ["only"]]
    assert [m["tags"] for m in got] == ["TagA", "TagB", None]
    assert got[0]["properties"]["UNIQ_KEY"] == "7F00012A"
    assert got[0]["bodySize"] == 8 and got[0]["uncompressedBodySize"] == 8
    assert got[1]["compression"] == "ZLIB" and got[1]["uncompressedBodySize"] == 300
    assert got[1]["bodySize"] < 300
    assert got[2]["bodySize"] == 0 and got[2]["magicVersion"] == 2
    assert got[2]["bornHost"] == "[fd00::41]:51000" and got[2]["storeHost"] == "[fd00::1]:30911"
    assert got[0]["bornHost"] == "127.0.1.41:40000" and got[0]["storeHost"] == "127.0.0.1:20911"
    # MessageDecoder.createMessageId: store ip + port + commit-log offset, upper-case hex
    assert got[0]["msgId"] == "7F000001000051AF0000000000000000"
    assert got[2]["properties"]["SecretKeyLike"] == "<redacted>"


def pull_capture_text() -> str:
    """A PULL_MESSAGE request and its found response (split over two segments) as tcpdump -X
    prints them; docs/examples/wire/pull_message_built_-X.txt is this text."""
    body = b"".join(encode_message(m) for m in MSGS)
    req, resp = pull_exchange(body)
    raw, sent = encode(resp), encode(req)
    pk = [("127.0.1.41.40000 > 127.0.0.1.20911", ipv4("127.0.1.41", "127.0.0.1",
                                                      tcp(40000, 20911, 1, sent))),
          ("127.0.0.1.20911 > 127.0.1.41.40000", ipv4("127.0.0.1", "127.0.1.41",
                                                      tcp(20911, 40000, 1, raw[:700]))),
          ("127.0.0.1.20911 > 127.0.1.41.40000", ipv4("127.0.0.1", "127.0.1.41",
                                                      tcp(20911, 40000, 701, raw[700:])))]
    return tcpdump_text([(f"20:55:49.20{i}000 IP {way}: Flags [P.], length {len(p) - 52}", p)
                         for i, (way, p) in enumerate(pk)], True).replace(
        "# built by the test", "# built by tests/test_wire_messages.py (no real PULL_MESSAGE "
                               "was recorded): tcpdump -nn -X layout")


def test_pull_response_in_a_capture(cli, tmp_path):
    f = tmp_path / "pull.txt"
    f.write_text(pull_capture_text())
    r = cli(["wire", "decode", str(f), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    resp_rec = r.json["frames"][1]
    assert resp_rec["requestCodeName"] == "PULL_MESSAGE" and resp_rec["pair"] == 1
    assert resp_rec["extFields"]["nextBeginOffset"] == "26"
    assert resp_rec["bodyFormat"] == "messages" and resp_rec["bodyError"] is None
    check_messages(resp_rec["body"])
    assert "s3cr3t" not in r.stdout
    plain = cli(["wire", "decode", str(f), "-o", "plain"]).stdout
    assert "#2 body: 3 stored message(s)" in plain
    assert "TagA" in plain and "k24, order-24" in plain and "s3cr3t" not in plain


def test_pull_response_as_a_frame_and_as_a_bare_body(cli, tmp_path):
    body = b"".join(encode_message(m) for m in MSGS)
    _, resp = pull_exchange(body)
    rec = to_record(decode_input(encode(resp)))  # no request: recognised by the magic code
    assert rec["bodyFormat"] == "messages"
    check_messages(rec["body"])
    f = tmp_path / "body.bin"
    f.write_bytes(body)
    r = cli(["wire", "decode", str(f), "-o", "json"])
    assert r.exit_code == 0, r.stderr
    check_messages(r.json["body"])


def test_a_broken_batch_keeps_the_good_messages_and_says_where(tmp_path):
    good = encode_message(MSGS[0])
    bad = bytearray(encode_message(MSGS[1]))
    struct.pack_into(">i", bad, 4, 0x12345678)  # magic code destroyed
    msgs, err = decode_messages(good + bytes(bad))
    assert [m.queue_offset for m in msgs] == [24]
    assert err == f"message 2 at byte {len(good)}: magic code 305419896 is neither v1 " \
                  "(-626843481) nor v2 (-626843477)"
    msgs, err = decode_messages(good + good[:-5])
    assert len(msgs) == 1 and err is not None and "message 2" in err
    assert not looks_like_messages(b'{"consumeTps":0.0}' * 10)


hosts = st.one_of(st.ip_addresses(v=4), st.ip_addresses(v=6)).map(str)
prop_text = st.text(st.characters(blacklist_characters="\x01\x02",
                                  blacklist_categories=("Cs",)), max_size=20)


@st.composite
def messages(draw):
    v2 = draw(st.booleans())
    topic = draw(st.text(st.characters(whitelist_categories=("L", "N")), min_size=1,
                         max_size=300 if v2 else 40).filter(
        lambda t: len(t.encode()) <= (32767 if v2 else 127)))
    props = draw(st.dictionaries(prop_text.filter(lambda k: k != "" and
                                                  "secret" not in k.lower()
                                                  and "password" not in k.lower()),
                                 prop_text, max_size=4))
    return Msg(topic, draw(st.integers(0, 2**31 - 1)), draw(st.integers(0, 2**62)),
               draw(st.integers(0, 2**41)), draw(st.binary(max_size=64)), props,
               born_ts=draw(st.integers(0, 2**41)),
               born_host=(draw(hosts), draw(st.integers(0, 65535))),
               store_host=(draw(hosts), draw(st.integers(0, 65535))),
               commit_offset=draw(st.integers(0, 2**62)), reconsume=draw(st.integers(0, 16)),
               v2=v2, compress=draw(st.booleans()))


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(messages(), min_size=1, max_size=4))
def test_round_trip(batch):
    body = b"".join(encode_message(m) for m in batch)
    assert looks_like_messages(body)
    got, err = decode_messages(body)
    assert err is None and len(got) == len(batch)
    for g, m in zip(got, batch, strict=True):
        assert (g.topic, g.queue_id, g.queue_offset, g.store_timestamp) == (
            m.topic, m.queue_id, m.queue_offset, m.store_ts)
        assert (g.born_timestamp, g.commit_log_offset, g.reconsume_times) == (
            m.born_ts, m.commit_offset, m.reconsume)
        # string2messageProperties drops a pair with an empty value
        assert g.properties == {k: v for k, v in m.properties.items() if v}
        assert g.plain_body() == m.body and g.compressed == m.compress
        assert g.version == (2 if m.v2 else 1)
        born = g.born_host.rsplit(":", 1)
        assert born[0].strip("[]") == m.born_host[0] and int(born[1]) == m.born_host[1]
