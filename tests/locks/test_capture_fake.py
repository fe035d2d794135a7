"""capture_locks / prepare_release / execute_release over an in-memory admin (no network).

The simulated-cluster tests (test_sim.py) cover the same paths over the wire; these pin the
orchestration: which admin calls are made, the state file between runs, unknown groups.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from locks.helpers import NOW, pq, running
from mqctl.admin import NotFoundError
from mqctl.errors import MqctlError, RefusedError
from mqctl.locks import LockStore, capture_locks, execute_release, prepare_release
from mqctl.models import (
    BrokerData,
    ClusterInfo,
    ConsumerConnection,
    ConsumerRunningInfo,
    ConsumeStats,
    MessageQueue,
    OffsetWrapper,
    QueueData,
    Subscription,
    TopicRoute,
)
from mqctl.remoting.codes import RequestCode

BA = BrokerData("c", "broker-a", {0: "127.0.0.1:10911"})
BB = BrokerData("c", "broker-b", {0: "127.0.0.1:10921"})
ROUTE = TopicRoute("T", (BA, BB), (QueueData("broker-a", 2, 2, 6), QueueData("broker-b", 2, 2, 6)))
RETRY = TopicRoute("%RETRY%G", (BA,), (QueueData("broker-a", 1, 1, 6),))


class FakeClient:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, dict, bytes]] = []

    async def invoke(self, addr, code, ext=None, body=b"", **kw):
        self.calls.append((addr, int(code), dict(ext or {}), body))


class FakeAdmin:
    """Just enough of mqctl.admin.Admin for capture_members and the lock capture."""

    concurrency = 4

    def __init__(self, infos: dict[str, ConsumerRunningInfo | MqctlError], *,
                 known: bool = True) -> None:
        self.infos = infos
        self.known = known
        self.client = FakeClient()
        self.called: list[str] = []

    async def group_brokers(self, group, topics=()):
        self.called.append("group_brokers")
        return [BA, BB]

    async def members_by_broker(self, group, brokers):
        self.called.append("members_by_broker")
        return {b.broker_name: sorted(self.infos) for b in brokers}

    async def connections_by_broker(self, group, brokers):
        self.called.append("connections_by_broker")
        if not self.infos:
            return {b.broker_name: None for b in brokers}
        conn = ConsumerConnection((), "CONSUME_PASSIVELY", "CLUSTERING",
                                  "CONSUME_FROM_LAST_OFFSET",
                                  {"T": Subscription("T", "*"),
                                   "%RETRY%G": Subscription("%RETRY%G", "*")})
        return {b.broker_name: conn for b in brokers}

    async def topic_route(self, topic, cached=True):
        self.called.append(f"topic_route:{topic}")
        if topic == "T":
            return ROUTE
        if topic == "%RETRY%G":
            return RETRY
        raise NotFoundError(f"topic {topic!r} has no route")

    async def running_infos(self, group, ids, brokers):
        self.called.append("running_infos")
        return {cid: self.infos[cid] for cid in ids}

    async def group_route(self, group):
        self.called.append("group_route")
        return RETRY if self.known else None

    async def cluster_info(self):
        self.called.append("cluster_info")
        return ClusterInfo({"broker-a": BA, "broker-b": BB}, {"c": ("broker-a", "broker-b")})

    async def consume_stats(self, group, addr, topic=None):
        self.called.append("consume_stats")
        return ConsumeStats({MessageQueue("T", "broker-a", 0): OffsetWrapper(10, 5, 5, 0)})

    async def subscription_groups(self, addr):
        self.called.append("subscription_groups")
        return ["OTHER"]


Q = MessageQueue("T", "broker-a", 1)
QR = MessageQueue("%RETRY%G", "broker-a", 0)


def infos(now: int) -> dict[str, ConsumerRunningInfo | MqctlError]:
    return {"a@1": running({MessageQueue("T", "broker-a", 0): pq(True, 1000, now=now),
                            MessageQueue("T", "broker-b", 0): pq(True, 1000, now=now),
                            QR: pq(True, 1000, now=now)}, topics=("T", "%RETRY%G")),
            "b@2": running({Q: pq(True, 1000, now=now),
                            MessageQueue("T", "broker-b", 1): pq(True, 1000, now=now)},
                           topics=("T", "%RETRY%G"))}


@pytest.fixture
def clock():
    from mqctl import timeparse

    t = {"now": NOW}
    timeparse.set_clock(lambda: t["now"])
    yield t
    timeparse.set_clock(None)


def test_capture_uses_only_reads_and_hides_retry_unless_asked(clock, tmp_path):
    admin = FakeAdmin(infos(NOW))
    store = LockStore(tmp_path, "127.0.0.1:9876")
    v = asyncio.run(capture_locks(admin, "G", store=store))
    assert v.topics == ("T",)
    assert v.summary()["held"] == 4 and len(v.queues) == 4
    assert admin.client.calls == []  # nothing sent through the client directly
    v2 = asyncio.run(capture_locks(admin, "G", store=store, include_retry=True))
    assert v2.topics == ("%RETRY%G", "T")
    assert v2.queue(QR).state.value == "held"
    v3 = asyncio.run(capture_locks(admin, "G", store=store, topic="%RETRY%G"))
    assert [q.mq for q in v3.queues] == [QR]
    assert json.loads(store.path("G").read_text())["clients"]["a@1"]["mqTable"]


def test_crash_between_runs_then_release_and_recheck(clock, tmp_path):
    store = LockStore(tmp_path, "127.0.0.1:9876")
    asyncio.run(capture_locks(FakeAdmin(infos(NOW)), "G", store=store))
    clock["now"] = NOW + 15_000
    after_crash = {"a@1": infos(NOW + 15_000)["a@1"]}  # b@2 crashed and left
    admin = FakeAdmin(after_crash)
    v = asyncio.run(capture_locks(admin, "G", store=store))
    q = v.queue(Q)
    assert q.state.value == "stale" and q.owner == "b@2"
    assert q.frees_at == NOW - 1000 + 60_000
    assert q.predicted == ("a@1",)
    plan, before = asyncio.run(prepare_release(admin, "G", "broker-a", 1, store=store))
    assert plan.holder == "b@2" and plan.broker_addr == "127.0.0.1:10911"
    assert before.queue(Q).state.value == "stale"
    assert admin.client.calls == []  # planning sends nothing
    after = asyncio.run(execute_release(admin, plan, store=store))
    [(addr, code, ext, body)] = admin.client.calls
    assert (addr, code) == ("127.0.0.1:10911", RequestCode.UNLOCK_BATCH_MQ)
    assert ext == {"bname": "broker-a"}
    assert json.loads(body) == {"consumerGroup": "G", "clientId": "b@2",
                                "mqSet": [{"topic": "T", "brokerName": "broker-a",
                                           "queueId": 1}], "onlyThisBroker": False}
    # the state file now records the release: the queue waits for a@1, no longer stale
    assert after.queue(Q).state.value == "lock-failed"
    assert after.queue(Q).owner == "a@1"


def test_release_refuses_live_renewing_holder(clock, tmp_path):
    admin = FakeAdmin(infos(NOW))
    with pytest.raises(RefusedError):
        asyncio.run(prepare_release(admin, "G", "broker-a", 1, store=None))
    plan, _ = asyncio.run(prepare_release(admin, "G", "broker-a", 1, store=None, force=True))
    assert plan.holder == "b@2" and plan.forced


def test_unknown_group_vs_offline_group(clock, tmp_path):
    with pytest.raises(NotFoundError) as ei:
        asyncio.run(capture_locks(FakeAdmin({}, known=False), "NOPE", store=None))
    assert "not known to any broker" in ei.value.message and ei.value.exit_code == 2
    admin = FakeAdmin({}, known=True)
    v = asyncio.run(capture_locks(admin, "G", store=None))
    assert v.kind == "offline" and not v.online
    assert any("offline" in n for n in v.notes)
    # the topics come from the offsets it has committed; nobody claims or is assigned them
    assert v.topics == ("T",) and v.summary()["unowned"] == 4


def test_unknown_topic_is_an_error_only_when_asked_for(clock):
    with pytest.raises(NotFoundError):
        asyncio.run(capture_locks(FakeAdmin(infos(NOW)), "G", topic="NOPE", store=None))
