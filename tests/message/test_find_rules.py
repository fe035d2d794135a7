"""`message find`'s rules on answers built byte by byte (no cluster): the client-side check of
what the index returned, de-duplication across brokers, the caps, and the offset message id."""

from __future__ import annotations

import asyncio
import io

import pytest
from wire_capture_helpers import Msg, encode_message

from mqctl.errors import UsageError
from mqctl.message.find import FindResult, find_by_key
from mqctl.message.ids import decode_offset_msg_id
from mqctl.message.rows import find_result
from mqctl.models import BrokerData, QueueData, TopicRoute
from mqctl.remoting.codes import ResponseCode
from mqctl.remoting.frame import RemotingCommand
from mqctl.render import emit


class FakeAdmin:
    """Two brokers; each answers QUERY_MESSAGE with the records given for its address."""

    concurrency = 4

    def __init__(self, answers: dict[str, list[Msg]]):
        self.answers = answers
        self.asked: list[tuple[str, dict]] = []

    async def topic_route(self, topic: str) -> TopicRoute:
        brokers = [BrokerData("c", name, {0: addr}) for name, addr in
                   (("broker-a", "10.0.0.1:10911"), ("broker-b", "10.0.0.2:10911"))]
        return TopicRoute(topic, tuple(brokers), tuple(
            QueueData(b.broker_name, 4, 4, 6) for b in brokers))

    async def query_message(self, addr, topic, key, **kw):
        self.asked.append((addr, kw))
        body = b"".join(encode_message(m) for m in self.answers.get(addr, []))
        code = ResponseCode.SUCCESS if body else ResponseCode.QUERY_NOT_FOUND
        return RemotingCommand(code=code, ext_fields={"indexLastUpdateTimestamp": "5000"},
                               body=body)


def _msg(topic="T", keys="K", uniq="U1", offset=1, store=("10.0.0.1", 10911), commit=100,
         ts=1000):
    return Msg(topic, 0, offset, ts, properties={"KEYS": keys, "UNIQ_KEY": uniq},
               store_host=store, commit_offset=commit)


def test_records_of_another_key_or_topic_are_dropped_and_one_record_counts_once():
    same = _msg()
    admin = FakeAdmin({
        "10.0.0.1:10911": [same, _msg(keys="OTHER", commit=200), _msg(topic="U", commit=300)],
        # broker-b answers the same stored record (same store host and commit-log offset)
        "10.0.0.2:10911": [same],
    })
    res = asyncio.run(find_by_key(admin, "T", "K"))  # type: ignore[arg-type]
    assert [f.message.commit_log_offset for f in res.messages] == [100]
    assert [(a.broker, a.returned, a.matched) for a in res.answers] == [
        ("broker-a", 3, 1), ("broker-b", 1, 1)]
    assert all(kw["max_num"] == 64 and kw["unique"] is False for _, kw in admin.asked)


def test_a_unique_key_stored_twice_is_two_records_and_said_so():
    admin = FakeAdmin({"10.0.0.1:10911": [_msg(commit=100, ts=1000)],
                       "10.0.0.2:10911": [_msg(store=("10.0.0.2", 10911), commit=100, ts=2000)]})
    res = asyncio.run(find_by_key(admin, "T", "U1", unique=True))  # type: ignore[arg-type]
    assert [f.broker for f in res.messages] == ["broker-b", "broker-a"]  # newest first
    assert res.duplicates == {"U1": 2}
    assert all(kw["max_num"] == 32 and kw["unique"] is True for _, kw in admin.asked)


def test_the_offset_message_id_names_the_store_host_and_the_commit_log_offset():
    d = decode_offset_msg_id("0A0000010000" + "2A9F" + "00000000000186A0")
    assert (d.addr, d.commit_log_offset) == ("10.0.0.1:10911", 100000)
    v6 = decode_offset_msg_id("20010DB8" + "0" * 24 + "00002A9F" + "0000000000000010")
    assert v6.addr == "[2001:db8::]:10911" and v6.commit_log_offset == 16
    for bad in ("", "XYZ", "0" * 31, "G" * 32):
        with pytest.raises(UsageError):
            decode_offset_msg_id(bad)


def test_cluster_text_is_escaped_before_a_terminal():
    res = FindResult("key", "T", "\x1b[31mK\x07", [], 20, 0)
    for fmt in ("table", "plain"):
        out = io.StringIO()
        emit(find_result(res), fmt, out)
        text = out.getvalue()
        assert "\x1b" not in text and "\x07" not in text and "\\x1b[31mK\\x07" in text
        assert "at most 64 record(s)" in text
