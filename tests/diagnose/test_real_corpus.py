"""The diagnose rules on what real RocketMQ 4.9.3 and 5.3.3 clients and brokers answered
(../shared/samples/real): the figures the simulated cluster does not produce itself, the
consume RT and TPS of a client's statusTable and the brokers' runtime info.

running-info/: ``ri-c`` consumes RI_T concurrently with 2 threads and sleeps 300 ms per
message (README); ``ri-o`` consumes RI_OT orderly with the default 20 threads."""

from __future__ import annotations

import json

import pytest
from conftest import REAL_CORPUS

from mqctl.diagnose import diagnose
from mqctl.diagnose.types import Reading
from mqctl.models import ConsumerConnection, ConsumerRunningInfo, TopicRoute
from mqctl.remoting import fastjson
from mqctl.views.members import ClientView, GroupMembers

VERSIONS = ("4.9.3", "5.3.3")


def exchange(v: str, rel: str) -> dict:
    return json.loads((REAL_CORPUS / v / rel).read_text())


def parsed(v: str, rel: str):
    return fastjson.loads(exchange(v, rel)["response"]["body_text"].encode())


def running_reading(v: str, kind: str) -> Reading:
    """One client's group as the recordings show it: its 203 connection list and its 307
    running info, read when the 307 request was sent."""
    group = "RI_G" if kind == "concurrent" else "RI_OG"
    rel = f"running-info/307_getConsumerRunningInfo_{kind}.json"
    info = ConsumerRunningInfo.from_body(parsed(v, rel))
    conn = ConsumerConnection.from_body(parsed(
        v, f"running-info/203_getConsumerConnectionList_{group}.json"))
    cid = conn.connections[0].client_id
    m = GroupMembers(group, [], {"broker-a": [cid]}, conn,
                     {cid: ClientView(cid, running=info)}, {}, [])
    return Reading(group, int(exchange(v, rel)["request"]["_sent_at_ms"]), members=m)


@pytest.mark.parametrize("v", VERSIONS)
def test_real_concurrent_client_with_two_threads_is_saturated(v):
    """2 threads x 300 ms: consumeOKTPS 6.47 (4.9.3) / 6.27 (5.3.3) x consumeRT 300.6 ms is
    1.94 / 1.88 busy threads of PROP_THREADPOOL_CORE_SIZE 2."""
    d = diagnose(running_reading(v, "concurrent"))
    sat = [f for f in d.findings if f.code == "threads-saturated"]
    assert len(sat) == 1
    vals = sat[0].values
    assert vals["pool"] == 2 and vals["batch"] == 1
    expected = {"4.9.3": 6.467097806520434 * 300.5979381443299 / 1000,
                "5.3.3": 6.266666666666667 * 300.5425531914894 / 1000}[v]
    assert vals["busy_threads"] == pytest.approx(expected, abs=0.01)
    assert vals["busy_threads"] >= 0.9 * 2


@pytest.mark.parametrize("v", VERSIONS)
def test_real_concurrent_client_is_not_at_its_flow_control_threshold(v):
    """cachedMsgCount at most 50 (the topic's 50 messages a queue) of pullThresholdForQueue
    1000, cachedMsgSizeInMiB 0 of 100, spans under consumeConcurrentlyMaxSpan 2000; every
    queue with cached messages consumed one less than 60 s before (not blocked)."""
    d = diagnose(running_reading(v, "concurrent"))
    codes = {f.code for f in d.findings}
    assert not {"flow-control", "consume-blocked", "consume-failing"} & codes
    status = {c.code: c.status for c in d.checks}
    assert status["flow-control"] == status["consume-blocked"] == "ok"


@pytest.mark.parametrize("v", VERSIONS)
def test_real_orderly_client_is_not_saturated(v):
    """13.3 msg/s x 300 ms = 4 busy threads; an orderly client consumes each of its 10 queues
    (8 + 2 retry) on one thread at a time: 4 of 10, not saturated."""
    d = diagnose(running_reading(v, "orderly"))
    assert "threads-saturated" not in {f.code for f in d.findings}
    assert "4.0/10" in next(c.detail for c in d.checks if c.code == "threads-saturated")


def broker_reading(v: str, *, runtime: dict | None = None,
                   slave: dict | None = None) -> Reading:
    """broker-a's real runtime info (28) and config (26), on the route of NC_T (105)."""
    table = dict(parsed(v, "other-requests/28_getBrokerRuntimeInfo.broker-a.json")["table"])
    table.update(runtime or {})
    text = exchange(v, "other-requests/26_getBrokerConfig.broker-a.json")["response"][
        "body_text"]
    config = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
    route = TopicRoute.from_body("NC_T", parsed(
        v, "other-requests/105_getRouteInfoByTopic_NC_T.namesrv.json"))
    r = Reading("G", int(exchange(v, "other-requests/28_getBrokerRuntimeInfo.broker-a.json")[
        "request"]["_sent_at_ms"]), routes={"NC_T": route})
    r.runtime = {"broker-a": {str(k): str(x) for k, x in table.items()}}
    r.broker_config = {"broker-a": config}
    if slave is not None:
        r.slave_runtime = {"broker-a": {**r.runtime["broker-a"], **slave}}
    return r


@pytest.mark.parametrize("v", VERSIONS)
def test_real_broker_runtime_is_healthy(v):
    d = diagnose(broker_reading(v))
    assert [f.code for f in d.findings] == []
    detail = next(c.detail for c in d.checks if c.code == "broker")
    assert "pullThreadPoolQueueHeadWaitTimeMills 0" in detail
    assert "pageCacheLockTimeMills 0" in detail


@pytest.mark.parametrize("v", VERSIONS)
def test_real_broker_thresholds_come_from_its_config(v):
    """The real keys, with values above the thresholds the real broker's config states
    (waitTimeMillsInPullQueue=5000, osPageCacheBusyTimeOutMills=1000; the HA gap is
    haSlaveFallbehindMax on 4.9.3, haMaxGapNotInSync on 5.3.3, 268435456 on both)."""
    real = parsed(v, "other-requests/28_getBrokerRuntimeInfo.broker-a.json")["table"]
    behind = int(real["commitLogMaxOffset"]) - 300_000_000
    d = diagnose(broker_reading(v, runtime={"pullThreadPoolQueueHeadWaitTimeMills": "5001",
                                            "pageCacheLockTimeMills": "1001"},
                                slave={"commitLogMaxOffset": str(behind)}))
    by = {f.code: f for f in d.findings}
    assert set(by) == {"broker-pull-busy", "broker-page-cache-busy", "slave-behind"}
    assert by["broker-pull-busy"].values["waitTimeMillsInPullQueue"] == 5000
    assert "waitTimeMillsInPullQueue 5,000 (GET_BROKER_CONFIG)" in by["broker-pull-busy"].title
    assert by["broker-page-cache-busy"].values["osPageCacheBusyTimeOutMills"] == 1000
    key = {"4.9.3": "haSlaveFallbehindMax", "5.3.3": "haMaxGapNotInSync"}[v]
    assert f"{key} 268,435,456 (GET_BROKER_CONFIG)" in by["slave-behind"].evidence[0].text
    assert by["slave-behind"].values["behind_bytes"] == 300_000_000
    # at the thresholds: not above them, no finding
    d = diagnose(broker_reading(v, runtime={"pullThreadPoolQueueHeadWaitTimeMills": "5000",
                                            "pageCacheLockTimeMills": "1000"},
                                slave={"commitLogMaxOffset": str(
                                    int(real["commitLogMaxOffset"]) - 268435456)}))
    assert d.findings == []
