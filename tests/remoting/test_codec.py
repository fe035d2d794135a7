"""Frames, headers and the fastjson parser: golden cases, errors and property round trips."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mqctl.errors import BodyError, FrameError, HeaderError, ProtocolError
from mqctl.models import MessageQueue
from mqctl.remoting import fastjson
from mqctl.remoting.frame import (
    MAX_FRAME,
    RemotingCommand,
    SerializeType,
    decode,
    decode_payload,
    encode,
    encode_json_header,
)
from mqctl.remoting.protocol import FrameReader, parse_hex_capture

# ------------------------------------------------------------------------------ frames


def test_json_header_is_sorted_like_fastjson():
    cmd = RemotingCommand(code=105, opaque=7, language="JAVA", version=479,
                          ext_fields={"topic": "TopicTest"})
    assert encode_json_header(cmd) == (
        b'{"code":105,"extFields":{"topic":"TopicTest"},"flag":0,"language":"JAVA",'
        b'"opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}')


def test_request_stringifies_ext_fields_and_omits_none():
    cmd = RemotingCommand.request(14, {"queueId": 0, "setZeroIfNotFound": False, "x": None,
                                       "offset": 1533})
    assert cmd.ext_fields == {"queueId": "0", "setZeroIfNotFound": "false", "offset": "1533"}
    assert cmd.language == "PYTHON" and cmd.version == 479


def test_response_echoes_opaque():
    req = RemotingCommand.request(30, {"topic": "T"}).with_(opaque=41)
    resp = req.response(0, ext_fields={"offset": 5})
    assert resp.is_response and resp.opaque == 41 and resp.ext("offset") == "5"


@pytest.mark.parametrize("data, message", [
    (b"\x00\x00", "shorter than the 8-byte minimum"),
    (struct.pack(">ii", 2, 0), "smaller than 4"),
    (struct.pack(">ii", 100, 10) + b"{}", "truncated"),
    (struct.pack(">ii", 8, 50) + b"abcd", "header length 50 exceeds"),
    (struct.pack(">ii", 6, (7 << 24) | 2) + b"{}", "unknown serialize type 7"),
    (struct.pack(">ii", MAX_FRAME, 2) + b"{}", "exceeds the 16777216-byte limit"),
])
def test_malformed_frames(data, message):
    with pytest.raises(FrameError, match=message):
        decode(data)


@pytest.mark.parametrize("header, message", [
    (b"not json", "cannot be parsed"),
    (b"[1,2]", "not an object"),
    (b'{"flag":1}', "no 'code'"),
    (b'{"code":"abc"}', "'code' is not a number"),
    (b'{"code":1,"extFields":[1]}', "'extFields' is not an object"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_malformed_json_headers(header, message):
    payload = struct.pack(">I", len(header)) + header
    with pytest.raises(HeaderError, match=message):
        decode_payload(payload)


def _bin(code=0, lang=0, ver=1, opaque=1, flag=0, remark=b"", ext=b"", rlen=None, elen=None):
    return (struct.pack(">hBhii", code, lang, ver, opaque, flag)
            + struct.pack(">i", len(remark) if rlen is None else rlen) + remark
            + struct.pack(">i", len(ext) if elen is None else elen) + ext)


@pytest.mark.parametrize("header, message", [
    (b"\x00" * 10, "shorter than the 21-byte minimum"),
    (_bin(rlen=500), "remark length 500 exceeds"),
    (_bin(elen=-1), "extFields length -1"),
    (_bin(ext=b"\x00\x05ab"), "truncated"),
    (_bin(ext=struct.pack(">H", 1) + b"k" + struct.pack(">i", 9) + b"v"), "value length 9"),
    (_bin() + b"xx", "2 unexpected trailing bytes"),
])
def test_malformed_binary_headers(header, message):
    payload = struct.pack(">I", (1 << 24) | len(header)) + header
    with pytest.raises(HeaderError, match=message):
        decode_payload(payload)


def test_binary_header_unknown_language_kept():
    header = _bin(lang=99)
    cmd = decode_payload(struct.pack(">I", (1 << 24) | len(header)) + header)
    assert cmd.language == "UNKNOWN_99"
    assert decode(encode(cmd)).language == "UNKNOWN_99"


def test_binary_header_refuses_large_code():
    cmd = RemotingCommand(code=200050, serialize_type=SerializeType.ROCKETMQ)
    with pytest.raises(HeaderError, match="int16"):
        encode(cmd)


def test_frame_reader_reassembles_split_and_coalesced_frames():
    cmds = [RemotingCommand.request(i, {"k": str(i) * i}, b"body" * i).with_(opaque=i)
            for i in range(1, 6)]
    stream = b"".join(encode(c) for c in cmds)
    for chunk in (1, 3, 7, 64, len(stream)):
        r = FrameReader()
        got = []
        for i in range(0, len(stream), chunk):
            got.extend(r.feed(stream[i:i + chunk]))
        assert got == cmds
        assert r.pending == 0


def test_frame_reader_refuses_oversize_before_buffering():
    r = FrameReader()
    with pytest.raises(FrameError, match="exceeds"):
        r.feed(struct.pack(">i", 16 * 1024 * 1024))


def test_hex_capture_formats():
    raw = encode(RemotingCommand.request(30, {"topic": "T"}))
    spaced = " ".join(f"{b:02x}" for b in raw)
    assert parse_hex_capture(spaced) == raw
    # xxd style with offsets and ASCII column
    lines = []
    for off in range(0, len(raw), 16):
        chunk = raw[off:off + 16]
        groups = " ".join(chunk[i:i + 2].hex() for i in range(0, len(chunk), 2))
        text = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append(f"{off:08x}: {groups:<40}  {text}")
    assert parse_hex_capture("\n".join(lines)) == raw


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    ("00 01 0", "odd number of digits"),
    ("00 zz", "line 1: 'z' is not a hex digit"),
])
def test_hex_capture_errors(text, message):
    with pytest.raises(FrameError, match=message):
        parse_hex_capture(text)


# ------------------------------------------------------------------------------ fastjson


def test_fastjson_quirks():
    v = fastjson.loads('{"brokerAddrs":{0:"a:1",1:"b:2"},"n":-5,"f":1.0E-4,"t":true,'
                       '"x":null,"mq":{{"brokerName":"b","queueId":3,"topic":"T"}:7}}')
    assert v["brokerAddrs"] == {0: "a:1", 1: "b:2"}
    assert v["n"] == -5 and v["f"] == pytest.approx(1e-4) and v["t"] is True and v["x"] is None
    assert v["mq"] == {MessageQueue("T", "b", 3): 7}


def test_fastjson_ref_trailing_commas_identifiers_and_comments():
    v = fastjson.loads('{a:{"$ref":"$.b"},b:[1,2,],/* c */ "c":{"k":1,},}')
    assert v == {"a": {"$ref": "$.b"}, "b": [1, 2], "c": {"k": 1}}


def test_fastjson_value_with_comma_digit_colon_is_not_corrupted():
    # a regex that quotes `,5:` would corrupt this string; the tokenizer must not
    v = fastjson.loads('{"s":"a,5:b{1:2}","m":{5:"x"}}')
    assert v == {"s": "a,5:b{1:2}", "m": {5: "x"}}


def test_fastjson_non_mq_object_key_is_frozen():
    v = fastjson.loads('{{"a":1}:2,[1,2]:3}')
    keys = list(v)
    assert all(isinstance(k, fastjson.FrozenKey) for k in keys)
    assert keys[0].to_plain() == {"a": 1} and keys[1].to_plain() == [1, 2]


@pytest.mark.parametrize("text, message", [
    ("", "empty body"),
    ("{", "unterminated object"),
    ('{"a" 1}', "expected ':'"),
    ('{"a":1 "b":2}', "expected ',' or '}'"),
    ("[1 2]", "expected ',' or ']'"),
    ('"abc', "unterminated string"),
    ('"\\q"', "bad escape"),
    ('"\\u12"', "bad \\\\u escape"),
    ("{1.5:2}", "fractional number cannot be a map key"),
    ("nope", "unexpected word 'nope'"),
    ("{} x", "unexpected trailing data"),
    ("1e", "bad number"),
    ("[" * 300 + "]" * 300, "nesting deeper"),
])
def test_fastjson_errors_are_typed_with_position(text, message):
    with pytest.raises(BodyError, match=message) as ei:
        fastjson.loads(text)
    assert "line" in ei.value.message or "empty" in ei.value.message


def test_fastjson_non_utf8():
    with pytest.raises(BodyError, match="not UTF-8"):
        fastjson.loads(b'{"a":"\xff"}')


def test_mq_map_rejects_wrong_shapes():
    with pytest.raises(BodyError):
        fastjson.mq_map({"x": 1})
    with pytest.raises(BodyError):
        fastjson.mq_map([1, 2])
    with pytest.raises(BodyError):
        fastjson.mq_map(5)


def test_dumps_fastjson_matches_broker_form():
    body = {"offsetTable": {MessageQueue("T", "b", 1): {"consumerOffset": 1, "brokerOffset": 2},
                            MessageQueue("T", "b", 0): {"consumerOffset": 3,
                                                        "brokerOffset": 4}},
            "consumeTps": 0.0, "skip": None}
    assert fastjson.dumps_fastjson(body) == (
        '{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:'
        '{"brokerOffset":4,"consumerOffset":3},{"brokerName":"b","queueId":1,"topic":"T"}:'
        '{"brokerOffset":2,"consumerOffset":1}}}')
    assert fastjson.dumps_fastjson({"brokerAddrs": {1: "x", 0: "y"}}) == (
        '{"brokerAddrs":{0:"y",1:"x"}}')


# ------------------------------------------------------------------------------ properties

names = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=0x2FFF,
                                       blacklist_categories=("Cs",)), max_size=12)
mqs = st.builds(MessageQueue, names, names, st.integers(0, 1 << 20))
leaf = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1),
                 st.floats(allow_nan=False, allow_infinity=False), names)
values = st.recursive(leaf, lambda ch: st.one_of(
    st.lists(ch, max_size=4),
    st.dictionaries(names, ch, max_size=4),
    st.dictionaries(st.integers(-1000, 1000), ch, max_size=4),
    st.dictionaries(mqs, ch, max_size=3)), max_leaves=20)


def _drop_none_in_objects(v):
    if isinstance(v, dict):
        return {k: _drop_none_in_objects(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_drop_none_in_objects(x) for x in v]
    return v


@settings(max_examples=300, deadline=None)
@given(values)
def test_fastjson_round_trip(value):
    assert fastjson.loads(fastjson.dumps_fastjson(value)) == _drop_none_in_objects(value)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(names, st.one_of(names, st.integers(), st.booleans(), st.none()),
                       max_size=6))
def test_standard_json_writer_is_parseable_by_json(value):
    import json

    assert json.loads(fastjson.dumps(value)) == value


header_strings = st.text(max_size=40)
commands = st.builds(
    RemotingCommand,
    code=st.integers(-32768, 32767),
    flag=st.integers(0, 3),
    opaque=st.integers(0, 2**31 - 1),
    language=st.sampled_from(["JAVA", "PYTHON", "GO", "CPP", "DOTNET", "NODE_JS"]),
    version=st.integers(0, 32767),
    remark=st.one_of(st.none(), header_strings.filter(bool)),
    ext_fields=st.one_of(st.none(), st.dictionaries(header_strings.filter(bool),
                                                    header_strings.filter(bool),
                                                    min_size=1, max_size=5)),
    body=st.binary(max_size=64),
    serialize_type=st.sampled_from(list(SerializeType)),
)


@settings(max_examples=300, deadline=None)
@given(commands)
def test_frame_round_trip_both_header_types(cmd):
    assert decode(encode(cmd)) == cmd


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_decoders_raise_only_typed_errors(data):
    for fn in (decode, decode_payload, fastjson.loads):
        try:
            fn(data)
        except ProtocolError:
            pass
    r = FrameReader()
    try:
        r.feed(data)
    except ProtocolError:
        pass
