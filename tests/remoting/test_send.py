"""SEND_MESSAGE's request header and answer as the Java producer builds and reads them
(MQClientAPIImpl.sendMessage, SendMessageRequestHeaderV2, MessageDecoder.messageProperties2String,
MQClientAPIImpl.processSendResponse)."""

from __future__ import annotations

from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.message import parse_offset_msg_id
from mqctl.remoting.send import (
    parse_send_response,
    properties_to_string,
    read_send_header,
    send_header,
)


def test_properties_are_name_value_pairs_with_the_two_separators():
    text = properties_to_string({"KEYS": "a b", "UNIQ_KEY": "0A", "TAGS": "TagA"})
    assert text == "KEYS\x01a b\x02UNIQ_KEY\x010A\x02TAGS\x01TagA\x02"
    assert properties_to_string({}) == ""


def test_the_v2_header_has_the_one_letter_names_and_reads_back():
    h = send_header(group="mqctl-resend", topic="%RETRY%G", queue_id=3,
                    properties={"UNIQ_KEY": "X"}, born_ms=1234, flag=7)
    assert h["a"] == "mqctl-resend" and h["b"] == "%RETRY%G" and h["c"] == "TBW102"
    assert h["d"] == 4 and h["e"] == 3 and h["g"] == 1234 and h["h"] == 7
    assert h["i"] == "UNIQ_KEY\x01X\x02" and h["j"] == 0 and h["m"] == "false"
    assert "producerGroup" not in h
    back = read_send_header({k: str(v) for k, v in h.items()})
    assert back["topic"] == "%RETRY%G" and back["queueId"] == "3"
    assert back["properties"] == "UNIQ_KEY\x01X\x02"
    v1 = send_header(group="g", topic="T", queue_id=0, properties={}, born_ms=1, v2=False)
    assert v1["topic"] == "T" and read_send_header({k: str(v) for k, v in v1.items()})[
        "producerGroup"] == "g"


def test_the_answer_is_read_with_its_send_status():
    ok = parse_send_response(ResponseCode.SUCCESS, {"msgId": "7F000001000027110000000000000100",
                                                    "queueId": "2", "queueOffset": "41"})
    assert (ok.status, ok.queue_id, ok.queue_offset) == ("SEND_OK", 2, 41)
    assert parse_offset_msg_id(ok.msg_id or "") == ("127.0.0.1:10001", 256)
    flush = parse_send_response(ResponseCode.FLUSH_DISK_TIMEOUT, {"queueOffset": "x"})
    assert flush.status == "FLUSH_DISK_TIMEOUT" and flush.queue_offset is None
    assert parse_send_response(99, None).status == "code 99"


def test_an_offset_message_id_is_parsed_or_refused():
    assert parse_offset_msg_id("not an id") is None
    assert parse_offset_msg_id("Z" * 32) is None
    v6 = "00000000000000000000000000000001" + "00002711" + "0000000000000010"
    assert parse_offset_msg_id(v6) == ("[::1]:10001", 16)
