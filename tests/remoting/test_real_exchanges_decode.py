"""Every recorded exchange of the real corpus decodes through mqctl's codec and fastjson parser.

../shared/samples/real/<v>/**/NNN_*.json hold a request as sent and the response header
exactly as received, with the body as text and hex (README "Conventions"). Each response is
rebuilt into the frame the broker sent (its recorded ``_frame_total_length`` proves the bytes
are complete), decoded by ``mqctl.wire``, and its body must parse with mqctl's lenient fastjson
parser into the structure of ``body_text``: fastjson's non-standard JSON included (unquoted
integer keys, objects as keys). The broker store files (also fastjson) must parse too.
"""

from __future__ import annotations

import json
import struct

import pytest
from wire_capture_helpers import REAL

from mqctl.remoting import fastjson
from mqctl.remoting.fastjson import FrozenKey
from mqctl.remoting.frame import RemotingCommand, encode
from mqctl.wire import Decoded, decode_input, to_record

EXCHANGES = sorted(p for p in REAL.glob("*/**/*.json") if p.parent.name != "store-files")
STORE = sorted(REAL.glob("*/store-files/*.json"))


def load(path):
    return json.loads(path.read_text())


def response_frame(r):
    header = {k: v for k, v in r.items() if not k.startswith("_")
              and k not in ("body_text", "body_hex")}
    hbytes = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode()
    body = bytes.fromhex(r["body_hex"]) if r.get("body_hex") else b""
    total = 4 + len(hbytes) + len(body)
    return struct.pack(">ii", total, len(hbytes)) + hbytes + body, total, header


def test_the_corpus_is_there():
    assert len(EXCHANGES) == 122 and len(STORE) == 18


@pytest.mark.parametrize("path", EXCHANGES, ids=lambda p: str(p.relative_to(REAL)))
def test_recorded_response_decodes(path):
    r = load(path)["response"]
    frame, total, header = response_frame(r)
    assert total == r["_frame_total_length"]  # the recorded header and body are complete
    hlen = struct.unpack_from(">i", frame, 4)[0] & 0xFFFFFF
    assert fastjson.loads(frame[8:8 + hlen]) == header  # the header, read as fastjson too
    d = decode_input(frame)
    assert isinstance(d, Decoded) and d.command is not None
    c = d.command
    assert (c.code, c.flag, c.opaque, c.language, c.version) == (
        r["code"], r["flag"], r["opaque"], r["language"], r["version"])
    assert c.remark == r.get("remark") and c.is_response
    assert c.ext_fields == r.get("extFields")
    rec = to_record(d)
    text = r.get("body_text")
    if not r.get("body_hex"):
        assert text is None and rec["body"] is None and rec["bodyFormat"] is None
        return
    raw = bytes.fromhex(r["body_hex"])
    assert raw.decode("utf-8") == text
    if rec["bodyFormat"] == "text":  # GET_BROKER_CONFIG(26): a properties text
        assert r["code"] == 0 and path.name.startswith("26_")
        assert rec["body"] == text and "=" in text.splitlines()[0]
        return
    assert rec["bodyFormat"] == "fastjson"
    from_hex, from_text = fastjson.loads(raw), fastjson.loads(text)
    assert from_hex == from_text
    assert rec["body"] == fastjson.to_plain(from_text)


@pytest.mark.parametrize("path", EXCHANGES, ids=lambda p: str(p.relative_to(REAL)))
def test_recorded_request_round_trips(path):
    q = load(path)["request"]
    cmd = RemotingCommand(code=q["code"], flag=q["flag"], opaque=q["opaque"],
                          language=q["language"], version=q["version"],
                          ext_fields=q.get("extFields"))
    rec = to_record(decode_input(encode(cmd)))
    assert (rec["code"], rec["opaque"], rec["version"], rec["type"]) == (
        q["code"], q["opaque"], q["version"], "request")
    assert rec["extFields"] == q.get("extFields")
    # README: requests carry 399 (4.9.3) / 479 (5.3.3); the reset/ and running-info/
    # exchanges were in fact sent with 395 / 475. The broker always answers with its own.
    release, scenario = path.relative_to(REAL).parts[:2]
    sent = {"4.9.3": 399, "5.3.3": 479}[release]
    if scenario in ("reset", "running-info"):
        sent -= 4
    assert q["version"] == sent
    assert load(path)["response"]["version"] == {"4.9.3": 399, "5.3.3": 479}[release]


def keys_of(value):
    if isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from keys_of(v)
    elif isinstance(value, list):
        for v in value:
            yield from keys_of(v)


def test_non_standard_json_of_the_corpus_is_read():
    """The README's examples of fastjson's non-standard output, checked on the parsed bodies."""
    kinds = {"int": 0, "object": 0}
    for path in EXCHANGES:
        r = load(path)["response"]
        if not r.get("body_hex") or path.name.startswith("26_"):
            continue
        for k in keys_of(fastjson.loads(bytes.fromhex(r["body_hex"]))):
            if isinstance(k, int):
                kinds["int"] += 1
            elif not isinstance(k, str):
                kinds["object"] += 1
    assert kinds["int"] > 0 and kinds["object"] > 0, kinds
    # 208: {"brokerName":..,"queueId":..,"topic":..} object keys -> MessageQueue
    body = fastjson.loads(bytes.fromhex(load(
        REAL / "4.9.3/never-committed/208_getConsumeStats_NC_ONE.broker-a.json")["response"][
        "body_hex"]))
    mq = {(k.broker_name, k.queue_id): v["consumerOffset"]
          for k, v in body["offsetTable"].items()}
    assert mq == {("broker-a", 0): 25, ("broker-a", 1): 0, ("broker-a", 2): 0, ("broker-a", 3): 0}
    # 4.9.3 route: brokerAddrs {0:"127.0.0.1:21911"} (unquoted integer key); 5.3.3 quotes it
    route4 = fastjson.loads(load(REAL / "4.9.3/read-gt-write/105_getRouteInfoByTopic_RW_T."
                                        "namesrv.json")["response"]["body_text"])
    addrs = {a for b in route4["brokerDatas"] for a in b["brokerAddrs"]}
    assert addrs == {0}
    route5 = fastjson.loads(load(REAL / "5.3.3/read-gt-write/105_getRouteInfoByTopic_RW_T."
                                        "namesrv.json")["response"]["body_text"])
    assert {a for b in route5["brokerDatas"] for a in b["brokerAddrs"]} == {"0"}
    # 43 on 4.9.3: {"offsetTable":{"topic@group":{0:39,...}}}
    all_offsets = fastjson.loads(load(next(REAL.glob("4.9.3/other-requests/43_*.json")))[
        "response"]["body_text"])
    inner = next(iter(all_offsets["offsetTable"].values()))
    assert inner and all(isinstance(k, int) for k in inner)
    assert not any(isinstance(k, FrozenKey) for k in keys_of(all_offsets))


@pytest.mark.parametrize("path", STORE, ids=lambda p: str(p.relative_to(REAL)))
def test_store_files_parse(path):
    doc = fastjson.loads(path.read_bytes())
    assert isinstance(doc, dict) and doc
    if path.name.endswith("_consumerOffset.json"):
        tables = doc["offsetTable"].values()
        assert tables and all(isinstance(q, int) for t in tables for q in t)
