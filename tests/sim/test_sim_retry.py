"""The %RETRY% topic and its committed offset appear when a real client would make them.

Real RocketMQ: the broker creates ``%RETRY%<group>`` when a consumer of the group heartbeats
(ClientManageProcessor.heartBeat -> createTopicInSendMessageBackMethod); the committed retry
offset {0:0} comes from the client that owns the retry queue and persists it
(other-requests/43_*: "%RETRY%CL_G@CL_G":{0:0} on both versions). A group that never had a
consumer has neither (never-committed/mqadmin_consumerProgress_NC_NEVER.txt: no route for
%RETRY%NC_NEVER); NC_ONE, whose only client was assigned broker-a/0 alone, has the topic but
no retry offset (43_* and store-files/*_consumerOffset.json)."""

from __future__ import annotations

from typing import Any

import pytest
from test_sim_protocol import body, call

from mqctl.remoting.codes import RequestCode as C
from mqctl.remoting.codes import ResponseCode as R


def _scenario(version: str) -> dict[str, Any]:
    return {"name": "retry", "clock": {"mode": "manual"},
            "brokers": [{"name": "broker-a", "version": version},
                        {"name": "broker-b", "version": version}],
            "topics": [{"name": "T", "queues": 2, "rate": 0, "max_offset": 10}],
            "groups": [{"name": "G_ON", "topics": ["T"], "consumers": [
                           {"id": "10.0.0.1@1", "version": version},
                           {"id": "10.0.0.2@2", "version": version, "join_at": "30s"}]},
                       {"name": "G_NEVER", "topics": ["T"]}]}


def _offsets(s, broker: str) -> dict[str, dict[int, int]]:
    return body(call(s, broker, C.GET_ALL_CONSUMER_OFFSET))["offsetTable"]


@pytest.mark.parametrize("version", ["V4_9_3", "V5_3_3"])
def test_retry_offset_only_after_the_owner_commits(sim_factory, version):
    s = sim_factory(_scenario(version))
    # the first consumer heartbeated: the retry topic exists, nothing is committed yet
    route = call(s, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "%RETRY%G_ON"})
    assert route.code == R.SUCCESS
    for b in ("broker-a", "broker-b"):
        assert "%RETRY%G_ON@G_ON" not in _offsets(s, b)
    s.advance(6)  # the 5 s persistAll of the client owning both retry queues
    for b in ("broker-a", "broker-b"):
        assert _offsets(s, b)["%RETRY%G_ON@G_ON"] == {0: 0}


@pytest.mark.parametrize("version", ["V4_9_3", "V5_3_3"])
def test_a_group_that_never_had_a_consumer_has_no_retry_topic_or_offset(sim_factory, version):
    s = sim_factory(_scenario(version))
    s.advance(40)
    miss = call(s, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "%RETRY%G_NEVER"})
    assert miss.code == R.TOPIC_NOT_EXIST
    topics = body(call(s, "namesrv", C.GET_ALL_TOPIC_LIST_FROM_NAMESERVER))["topicList"]
    assert "%RETRY%G_NEVER" not in topics and "%RETRY%G_ON" in topics
    assert not any(k.startswith("%RETRY%G_NEVER") for k in _offsets(s, "broker-a"))


def test_a_consumer_joining_later_creates_the_retry_topic_when_it_starts(sim_factory):
    sc = _scenario("V5_3_3")
    sc["groups"].append({"name": "G_LATE", "topics": ["T"],
                         "consumers": [{"id": "10.0.0.3@3", "join_at": "60s"}]})
    s = sim_factory(sc)
    s.advance(30)
    miss = call(s, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "%RETRY%G_LATE"})
    assert miss.code == R.TOPIC_NOT_EXIST
    s.advance(31)
    assert call(s, "namesrv", C.GET_ROUTEINFO_BY_TOPIC, {"topic": "%RETRY%G_LATE"}).code == 0
